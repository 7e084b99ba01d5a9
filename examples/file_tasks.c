/* SPDX-License-Identifier: MIT */
/*
 * file_tasks.c — counting the lines of files with tasks and the file pool.
 *
 * A task per file opens it (ll_fs_open), reads it in 64 KiB chunks
 * (ll_fs_read, each awaited with ll_task_await), counts its newlines, and
 * closes it (ll_fs_close). Three tasks run at once on one loop thread
 * while their reads run on the file pool's workers; ll_gather waits for
 * all of them. Each task owns its read buffer and touches it only between
 * a read's completion and the next read: while a read is pending the
 * buffer is the worker's.
 *
 * The program writes its three input files itself (into a temporary
 * directory), checks the counts, and removes them.
 *
 * Build:  cc file_tasks.c -Iinclude -Lbuild -lloop -lpthread
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libloop.h"

static void must(int rc, const char *what) {
    if (rc < 0) {
        fprintf(stderr, "file_tasks: %s failed: %s (%s)\n", what, ll_err_name(rc), ll_strerror(rc));
        exit(1);
    }
}

enum { CHUNK = 64 * 1024 };

struct counter {
    const char *path;
    int state, fd;
    int64_t off;
    long lines, bytes;
    ll_future pending; /* the call this task awaits */
    char buf[CHUNK];
};

/* The value of the future this step was woken by (released), or the task
 * fails with the call's -errno. */
static int take(ll_task task, struct counter *c, uintptr_t *v) {
    int rc = ll_future_result(c->pending, v);
    ll_release(c->pending);
    c->pending = 0;
    if (rc != 0)
        ll_task_raise(task, rc, "file call failed", 0, NULL);
    return rc;
}

static void count_step(ll_task task, void *arg) {
    struct counter *c = arg;
    ll_loop loop;
    uintptr_t v = 0;
    must(ll_future_get_loop(task, &loop), "get loop");
    switch (c->state) {
    case 0: /* open */
        must(ll_fs_open(loop, c->path, O_RDONLY, 0, &c->pending), "ll_fs_open");
        c->state = 1;
        ll_task_await(task, c->pending);
        return;
    case 1: /* opened: the first read */
        if (take(task, c, &v) != 0)
            return;
        c->fd = (int)v;
        break;
    case 2: /* a chunk came in: count it, read the next */
        if (take(task, c, &v) != 0)
            return;
        if (v == 0) { /* end of file */
            must(ll_fs_close(loop, c->fd, &c->pending), "ll_fs_close");
            c->state = 3;
            ll_task_await(task, c->pending);
            return;
        }
        for (uintptr_t i = 0; i < v; i++)
            c->lines += c->buf[i] == '\n';
        c->bytes += (long)v;
        c->off += (int64_t)v;
        break;
    case 3: /* closed */
        if (take(task, c, &v) == 0)
            ll_task_return(task, (uintptr_t)c->lines, NULL);
        return;
    }
    must(ll_fs_read(loop, c->fd, c->buf, sizeof c->buf, c->off, &c->pending), "ll_fs_read");
    c->state = 2;
    ll_task_await(task, c->pending);
}

int main(void) {
    char dir[] = "/tmp/ll_file_tasks_XXXXXX";
    if (mkdtemp(dir) == NULL)
        return 1;
    static const long want[] = {10, 100000, 0};
    char paths[3][64];
    for (int i = 0; i < 3; i++) { /* the inputs: want[i] lines each */
        snprintf(paths[i], sizeof paths[i], "%s/input%d.txt", dir, i);
        FILE *fp = fopen(paths[i], "w");
        for (long k = 0; k < want[i]; k++)
            fprintf(fp, "line %ld\n", k);
        fclose(fp);
    }

    ll_loop loop;
    must(ll_loop_new(&loop), "ll_loop_new");
    struct counter *cs = calloc(3, sizeof *cs);
    ll_future tasks[3], all;
    for (int i = 0; i < 3; i++) {
        cs[i].path = paths[i];
        must(ll_task_new(loop, count_step, &cs[i], &tasks[i]), "ll_task_new");
    }
    must(ll_gather(loop, 3, tasks, 0, &all), "ll_gather");
    must(ll_loop_run_until_complete(loop, all), "run");
    must(ll_future_result(all, NULL), "a counting task");
    int ok = 1;
    for (int i = 0; i < 3; i++) {
        uintptr_t lines = 0;
        must(ll_future_result(tasks[i], &lines), "result");
        printf("%s: %lu lines, %ld bytes\n", paths[i], (unsigned long)lines, cs[i].bytes);
        ok &= (long)lines == want[i];
        ll_release(tasks[i]);
        unlink(paths[i]);
    }
    ll_release(all);
    rmdir(dir);
    free(cs);
    must(ll_loop_close(loop), "ll_loop_close");
    ll_release(loop);
    return ok ? 0 : 1;
}
