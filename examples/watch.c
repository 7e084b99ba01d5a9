/* SPDX-License-Identifier: MIT */
/* Watch a directory tree and print what changes, from the header alone.
 *
 *   watch [-r] PATH           ll_fs_watch (-r: LL_FS_RECURSIVE), until Ctrl-C
 *   watch -p SECONDS PATH     ll_fs_poll every SECONDS, until Ctrl-C
 *   watch                     a demo: watches a temporary directory while a
 *                             timer makes, changes, renames and deletes files
 *                             in it, then removes it (which ends the watcher)
 *
 *   libuv:    uv_fs_event_start, uv_fs_poll_start
 *   Node.js:  fs.watch(path, {recursive: true}), fs.watchFile
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libloop.h"

static void on_event(ll_loop loop, ll_handle w, const char *path, int events, int status, void *arg) {
    (void)w, (void)arg;
    printf("%-28s %s%s%s\n", *path ? path : "(everything)", events & LL_FS_RENAME ? "rename " : "",
           events & LL_FS_CHANGE ? "change " : "", status ? ll_err_name(status) : "");
    fflush(stdout);
    if (ll_handle_cancelled(w) == 1)
        ll_loop_stop(loop); /* the watched path is gone: its watcher has stopped (a poller goes on) */
}

static void on_sigint(ll_loop loop, void *arg) {
    (void)arg;
    ll_loop_stop(loop);
}

/* The demo's script: one step per timer tick. */
static char dir[] = "/tmp/llwatch.XXXXXX";
static int step;

static void path_of(char *out, size_t n, const char *rel) { snprintf(out, n, "%s/%s", dir, rel); }

static void demo_step(ll_loop loop, void *arg) {
    char a[128], b[128];
    FILE *f;
    (void)arg;
    switch (step++) {
    case 0:
        path_of(a, sizeof a, "sub");
        mkdir(a, 0755);
        path_of(a, sizeof a, "sub/notes.txt");
        if ((f = fopen(a, "w")) != NULL)
            fputs("hello\n", f), fclose(f);
        break;
    case 1:
        path_of(a, sizeof a, "sub/notes.txt");
        if ((f = fopen(a, "a")) != NULL)
            fputs("more\n", f), fclose(f);
        break;
    case 2:
        path_of(a, sizeof a, "sub/notes.txt");
        path_of(b, sizeof b, "sub/renamed.txt");
        rename(a, b);
        break;
    case 3:
        path_of(a, sizeof a, "sub/renamed.txt");
        unlink(a);
        path_of(a, sizeof a, "sub");
        rmdir(a);
        rmdir(dir);
        return; /* the watcher reports the removal and the loop stops */
    }
    ll_call_later(loop, 0.05, demo_step, NULL, NULL);
}

int main(int argc, char **argv) {
    int recursive = 0;
    double interval = 0;
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-r") == 0)
            recursive = 1;
        else if (strcmp(argv[i], "-p") == 0 && i + 1 < argc)
            interval = atof(argv[++i]);
        else
            path = argv[i];
    }
    ll_loop loop;
    ll_handle w;
    int rc = ll_loop_new(&loop);
    if (rc < 0)
        return fprintf(stderr, "ll_loop_new: %s\n", ll_strerror(rc)), 1;
    if (path == NULL) {
        if (mkdtemp(dir) == NULL)
            return perror("mkdtemp"), 1;
        path = dir;
        recursive = 1;
        ll_call_later(loop, 0.05, demo_step, NULL, NULL);
    } else {
        ll_add_signal_handler(loop, SIGINT, on_sigint, NULL);
    }
    if (interval > 0)
        rc = ll_fs_poll(loop, path, interval, on_event, NULL, &w);
    else
        rc = ll_fs_watch(loop, path, recursive ? LL_FS_RECURSIVE : 0, on_event, NULL, &w);
    if (rc < 0) {
        fprintf(stderr, "watch %s: %s (%s)\n", path, ll_strerror(rc), ll_err_name(rc));
        ll_release(loop);
        return 1;
    }
    printf("watching %s%s\n", path, interval > 0 ? " by polling" : recursive ? " and its subdirectories" : "");
    ll_loop_run_forever(loop);
    ll_release(w);
    ll_release(loop);
    return 0;
}
