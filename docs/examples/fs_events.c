/* SPDX-License-Identifier: MIT */
/* fs_events.c — a recursive watcher sees a file made in a new
 * subdirectory, named relative to the watched directory; a polling watcher
 * sees the same file change; a deleted root ends its watcher with ENOENT. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "must.h"

static char root[] = "/tmp/fs_events.XXXXXX";
static char file[128];
static int saw_file, saw_change, saw_gone;

static void on_watch(ll_loop loop, ll_handle w, const char *path, int events, int status, void *arg) {
    (void)loop, (void)w, (void)arg;
    if (status == 0 && strcmp(path, "sub/f") == 0 && (events & LL_FS_RENAME))
        saw_file = 1;                      /* relative to root, even in a new subdirectory */
    if (status == -ENOENT)
        saw_gone = 1;                      /* the root is gone; the watcher has stopped */
}

static void on_poll(ll_loop loop, ll_handle w, const char *path, int events, int status, void *arg) {
    (void)loop, (void)w, (void)path, (void)arg;
    if (status == 0 && (events & LL_FS_CHANGE))
        saw_change = 1;
}

static void tick(ll_loop loop, void *arg) { (void)loop, (void)arg; }

/* Run iterations until *flag is set (at most ~20 s). */
static void run_until(ll_loop loop, const int *flag) {
    for (int i = 0; i < 2000 && !*flag; i++) {
        MUST(ll_call_later(loop, 0.01, tick, NULL, NULL));
        MUST(ll_loop_run_once(loop, LL_RUN_ONCE));
    }
}

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    EXPECT(f != NULL);
    fputs(text, f);
    fclose(f);
}

int main(void) {
    ll_loop loop;
    ll_handle watcher, poller;
    char sub[96];
    EXPECT(mkdtemp(root) != NULL);
    snprintf(sub, sizeof sub, "%s/sub", root);
    snprintf(file, sizeof file, "%s/sub/f", root);
    MUST(ll_loop_new(&loop));
    MUST(ll_fs_watch(loop, root, LL_FS_RECURSIVE, on_watch, NULL, &watcher));

    EXPECT(mkdir(sub, 0755) == 0);
    write_file(file, "1");               /* made at once: reported all the same */
    run_until(loop, &saw_file);
    EXPECT(saw_file);

    MUST(ll_fs_poll(loop, file, 0.05, on_poll, NULL, &poller));
    write_file(file, "22");              /* size and mtime change */
    run_until(loop, &saw_change);
    EXPECT(saw_change);
    MUST(ll_release(poller));

    EXPECT(unlink(file) == 0 && rmdir(sub) == 0 && rmdir(root) == 0);
    run_until(loop, &saw_gone);
    EXPECT(saw_gone && ll_handle_cancelled(watcher) == 1);
    MUST(ll_release(watcher));
    MUST(ll_release(loop));
    printf("fs_events: new file seen as sub/f, a change polled, the root's removal ended the watcher\n");
    return 0;
}
