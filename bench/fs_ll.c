/* SPDX-License-Identifier: MIT */
/* File reads with libloop's ll_fs_read on its file pool (bench/fs_common.h):
 * each read's future has a done callback that checks it, releases it and
 * submits the next, as a C host without tasks drives a file. */
#include "libloop.h"

#include "fs_common.h"

struct slot {
    unsigned char *buf;
    int64_t off;
};

static ll_loop loop;
static struct slot slots[FS_MAX_DEPTH];

static void on_read(ll_future f, void *arg);

static void submit(struct slot *s) {
    ll_future f = 0;
    s->off = fs_offset(fs_issued++);
    if (ll_fs_read(loop, fs_fd, s->buf, (size_t)fs_size, s->off, &f) != 0 ||
        ll_future_add_done_callback(f, on_read, s) != 0)
        abort();
}

static void on_read(ll_future f, void *arg) {
    struct slot *s = arg;
    uintptr_t v = 0;
    int rc = ll_future_result(f, &v);
    fs_check(s->buf, s->off, rc == 0 ? (long)v : rc);
    ll_release(f);
    fs_completed++;
    if (fs_issued < fs_n)
        submit(s);
    else if (fs_completed == fs_issued)
        ll_loop_stop(loop);
}

int main(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "version") == 0) {
        printf("%s\n", ll_version_string());
        return 0;
    }
    fs_args(argc, argv);
    if (ll_loop_new(&loop) != 0)
        return 2;
    for (long i = 0; i < fs_depth; i++)
        slots[i].buf = malloc((size_t)fs_size);
    /* Warm up: the pool's threads start at the first request. */
    long n = fs_n;
    fs_n = 1;
    submit(&slots[0]);
    ll_loop_run_forever(loop);
    fs_n = n;
    fs_issued = fs_completed = fs_bad = 0;

    bench_mark start = bench_mark_now();
    for (long i = 0; i < fs_depth; i++)
        submit(&slots[i]);
    ll_loop_run_forever(loop);
    bench_mark end = bench_mark_now();
    int rc = fs_report("libloop", start, end);
    ll_loop_close(loop);
    ll_release(loop);
    return rc;
}
