/* SPDX-License-Identifier: MIT */
/* ll_fs_watch and ll_fs_poll (libuv's uv_fs_event and uv_fs_poll): a
 * change and a rename in a watched directory, create and delete in a
 * subdirectory and a new subdirectory with a file in it (LL_FS_RECURSIVE),
 * the polling watcher's modify/disappear/appear, cancel and release from
 * inside the callback, a deleted root ending its watcher, ll_loop_close,
 * and bad input. Events are waited for with a deadline, never a sleep. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "libloop.h"
#include "check.h"

#define MAX_EVENTS 256

typedef struct {
    int n;
    char path[MAX_EVENTS][128];
    int events[MAX_EVENTS];
    int status[MAX_EVENTS];
    ll_handle w;       /* the id the callback got */
    int cancel_self;   /* ll_handle_cancel(w) on the first event */
    int release_self;  /* ll_release(w) on the first event */
    int stopped_in_cb; /* ll_handle_cancelled(w) during the last call */
} log_t;

static void on_event(ll_loop loop, ll_handle w, const char *path, int events, int status, void *arg) {
    (void)loop;
    log_t *g = arg;
    if (g->n < MAX_EVENTS) {
        snprintf(g->path[g->n], sizeof g->path[0], "%s", path ? path : "(null)");
        g->events[g->n] = events;
        g->status[g->n] = status;
        g->n++;
    }
    g->w = w;
    g->stopped_in_cb = ll_handle_cancelled(w);
    if (g->cancel_self)
        CHECK_EQ_INT(ll_handle_cancel(w), 0);
    if (g->release_self)
        CHECK_EQ_INT(ll_release(w), 0);
}

/* Whether g has an event for path with a bit of kind and the status. */
static int has(const log_t *g, const char *path, int kind, int status) {
    for (int i = 0; i < g->n; i++)
        if (strcmp(g->path[i], path) == 0 && (g->events[i] & kind) && g->status[i] == status)
            return 1;
    return 0;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void tick(ll_loop loop, void *arg) { (void)loop, (void)arg; }

/* Run the loop until g has the event, for at most 20 s (the machine may be
 * loaded); report which event never came. */
#define WAIT_FOR(loop, g, path, kind, status) wait_for(loop, g, path, kind, status, __LINE__)
static int wait_for(ll_loop loop, const log_t *g, const char *path, int kind, int status, int line) {
    double end = now_s() + 20;
    while (!has(g, path, kind, status)) {
        if (now_s() > end) {
            CHECK_FAIL_AT(__FILE__, line, "no event %s kind %d status %d (%d events)", path, kind, status, g->n);
            return 0;
        }
        ll_call_later(loop, 0.01, tick, NULL, NULL);
        ll_loop_run_once(loop, LL_RUN_ONCE);
    }
    check_passed++;
    return 1;
}

/* Run the loop for about secs (to show that nothing comes). */
static void run_for(ll_loop loop, double secs) {
    double end = now_s() + secs;
    while (now_s() < end) {
        ll_call_later(loop, 0.01, tick, NULL, NULL);
        ll_loop_run_once(loop, LL_RUN_ONCE);
    }
}

static char tmpdir[256];

static void make_tmpdir(void) {
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/llfsw.XXXXXX", base && *base ? base : "/tmp");
    CHECK(mkdtemp(tmpdir) != NULL);
}

static void join(char *out, size_t n, const char *rel) { snprintf(out, n, "%s/%s", tmpdir, rel); }

static void write_file(const char *rel, const char *data) {
    char p[512];
    join(p, sizeof p, rel);
    FILE *f = fopen(p, "w");
    CHECK(f != NULL);
    if (f) {
        fputs(data, f);
        fclose(f);
    }
}

static void rm_rf(const char *path) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
    CHECK_EQ_INT(system(cmd), 0);
}

static void test_change_and_rename(void) {
    ll_loop loop = 0;
    ll_handle w = 0;
    log_t *g = calloc(1, sizeof *g);
    make_tmpdir();
    write_file("a", "1");
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    CHECK_EQ_INT(ll_fs_watch(loop, tmpdir, 0, on_event, g, &w), 0);
    CHECK(w != 0);
    write_file("a", "22");
    WAIT_FOR(loop, g, "a", LL_FS_CHANGE, 0);
    CHECK_EQ_INT(g->w, w);
    char a[512], b[512];
    join(a, sizeof a, "a");
    join(b, sizeof b, "b");
    CHECK_EQ_INT(rename(a, b), 0);
    WAIT_FOR(loop, g, "a", LL_FS_RENAME, 0);
    WAIT_FOR(loop, g, "b", LL_FS_RENAME, 0);
    CHECK_EQ_INT(ll_handle_cancelled(w), 0);
    CHECK_EQ_INT(ll_handle_cancel(w), 0);
    CHECK_EQ_INT(ll_handle_cancelled(w), 1);
    int n = g->n;
    write_file("b", "333");
    run_for(loop, 0.1);
    CHECK_EQ_INT(g->n, n); /* cancelled: nothing more */
    CHECK_EQ_INT(ll_release(w), 0);
    CHECK_EQ_INT(ll_handle_cancelled(w), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_loop_close(loop), 0);
    CHECK_EQ_INT(ll_release(loop), 0);
    rm_rf(tmpdir);
    free(g);
}

static void test_recursive(void) {
    ll_loop loop = 0;
    ll_handle w = 0;
    log_t *g = calloc(1, sizeof *g);
    char p[512];
    make_tmpdir();
    join(p, sizeof p, "sub");
    CHECK_EQ_INT(mkdir(p, 0755), 0);
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    CHECK_EQ_INT(ll_fs_watch(loop, tmpdir, LL_FS_RECURSIVE, on_event, g, &w), 0);
    write_file("sub/f", "1");
    WAIT_FOR(loop, g, "sub/f", LL_FS_RENAME, 0);
    g->n = 0;
    join(p, sizeof p, "sub/f");
    CHECK_EQ_INT(unlink(p), 0);
    WAIT_FOR(loop, g, "sub/f", LL_FS_RENAME, 0);
    /* A new directory and a file in it straight away. */
    join(p, sizeof p, "new");
    CHECK_EQ_INT(mkdir(p, 0755), 0);
    write_file("new/g", "1");
    WAIT_FOR(loop, g, "new", LL_FS_RENAME, 0);
    WAIT_FOR(loop, g, "new/g", LL_FS_RENAME, 0);
    write_file("new/g", "22");
    WAIT_FOR(loop, g, "new/g", LL_FS_CHANGE, 0);
    CHECK_EQ_INT(ll_release(w), 0);
    CHECK_EQ_INT(ll_loop_close(loop), 0);
    CHECK_EQ_INT(ll_release(loop), 0);
    rm_rf(tmpdir);
    free(g);
}

static void test_poll(void) {
    ll_loop loop = 0;
    ll_handle w = 0;
    log_t *g = calloc(1, sizeof *g);
    char p[512];
    make_tmpdir();
    join(p, sizeof p, "p");
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    CHECK_EQ_INT(ll_fs_poll(loop, p, 0.02, on_event, g, &w), 0);
    CHECK_EQ_INT(g->n, 0); /* the missing path is reported from the loop, not from ll_fs_poll */
    WAIT_FOR(loop, g, p, LL_FS_RENAME, -ENOENT);
    write_file("p", "1");
    WAIT_FOR(loop, g, p, LL_FS_RENAME, 0); /* appeared */
    write_file("p", "22");
    WAIT_FOR(loop, g, p, LL_FS_CHANGE, 0); /* modified */
    g->n = 0;
    CHECK_EQ_INT(unlink(p), 0);
    WAIT_FOR(loop, g, p, LL_FS_RENAME, -ENOENT); /* disappeared */
    CHECK_EQ_INT(ll_handle_cancelled(w), 0);    /* a poller goes on */
    CHECK_EQ_INT(ll_handle_cancel(w), 0);
    int n = g->n;
    write_file("p", "333");
    run_for(loop, 0.1);
    CHECK_EQ_INT(g->n, n);
    CHECK_EQ_INT(ll_release(w), 0);
    CHECK_EQ_INT(ll_loop_close(loop), 0);
    CHECK_EQ_INT(ll_release(loop), 0);
    rm_rf(tmpdir);
    free(g);
}

/* A callback cancels or releases its own watcher: it hears nothing more,
 * though several events were read together. */
static void test_cancel_in_callback(void) {
    ll_loop loop = 0;
    ll_handle w1 = 0, w2 = 0;
    log_t *g1 = calloc(1, sizeof *g1), *g2 = calloc(1, sizeof *g2);
    make_tmpdir();
    g1->cancel_self = 1;
    g2->release_self = 1;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    CHECK_EQ_INT(ll_fs_watch(loop, tmpdir, 0, on_event, g1, &w1), 0);
    CHECK_EQ_INT(ll_fs_watch(loop, tmpdir, 0, on_event, g2, &w2), 0);
    write_file("x", "1");
    write_file("y", "1");
    write_file("z", "1");
    WAIT_FOR(loop, g1, "x", LL_FS_RENAME, 0);
    WAIT_FOR(loop, g2, "x", LL_FS_RENAME, 0);
    run_for(loop, 0.1);
    CHECK_EQ_INT(g1->n, 1);
    CHECK_EQ_INT(g2->n, 1);
    CHECK_EQ_INT(ll_handle_cancelled(w1), 1);
    CHECK_EQ_INT(ll_handle_cancelled(w2), LL_EBADHANDLE); /* released */
    CHECK_EQ_INT(ll_release(w1), 0);
    CHECK_EQ_INT(ll_loop_close(loop), 0);
    CHECK_EQ_INT(ll_release(loop), 0);
    rm_rf(tmpdir);
    free(g1);
    free(g2);
}

/* Deleting the watched directory: an event with -ENOENT, and the watcher
 * has stopped. */
static void test_root_deleted(void) {
    ll_loop loop = 0;
    ll_handle w = 0;
    log_t *g = calloc(1, sizeof *g);
    char root[512];
    make_tmpdir();
    join(root, sizeof root, "root");
    CHECK_EQ_INT(mkdir(root, 0755), 0);
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    CHECK_EQ_INT(ll_fs_watch(loop, root, LL_FS_RECURSIVE, on_event, g, &w), 0);
    CHECK_EQ_INT(rmdir(root), 0);
    WAIT_FOR(loop, g, "root", LL_FS_RENAME, -ENOENT);
    CHECK_EQ_INT(g->stopped_in_cb, 1); /* stopped already when its last event is told */
    CHECK_EQ_INT(ll_handle_cancelled(w), 1);
    CHECK_EQ_INT(ll_release(w), 0);
    CHECK_EQ_INT(ll_loop_close(loop), 0);
    CHECK_EQ_INT(ll_release(loop), 0);
    rm_rf(tmpdir);
    free(g);
}

static ll_loop wt_loop;
static int wt_rc;

static void *other_thread(void *arg) {
    ll_handle w = 0;
    (void)arg;
    wt_rc = ll_fs_watch(wt_loop, tmpdir, 0, on_event, NULL, &w);
    return NULL;
}

static void try_from_other_thread(ll_loop loop, void *arg) {
    pthread_t th;
    (void)loop, (void)arg;
    pthread_create(&th, NULL, other_thread, NULL);
    pthread_join(th, NULL);
}

static void test_bad_input(void) {
    ll_loop loop = 0;
    ll_handle w = 0;
    log_t *g = calloc(1, sizeof *g);
    char p[512];
    make_tmpdir();
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    CHECK_EQ_INT(ll_fs_watch(loop, NULL, 0, on_event, g, &w), LL_EINVAL);
    CHECK_EQ_INT(ll_fs_watch(loop, "", 0, on_event, g, &w), LL_EINVAL);
    CHECK_EQ_INT(ll_fs_watch(loop, tmpdir, 0, NULL, g, &w), LL_EINVAL);
    CHECK_EQ_INT(ll_fs_watch(loop, tmpdir, 0, on_event, g, NULL), LL_EINVAL);
    CHECK_EQ_INT(ll_fs_watch(loop, tmpdir, 0x100, on_event, g, &w), LL_EINVAL);
    join(p, sizeof p, "missing");
    CHECK_EQ_INT(ll_fs_watch(loop, p, 0, on_event, g, &w), -ENOENT);
    CHECK_EQ_STR(ll_err_name(-ENOENT), "ENOENT");
    CHECK_EQ_INT(ll_fs_watch(0, tmpdir, 0, on_event, g, &w), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_fs_poll(loop, NULL, 1, on_event, g, &w), LL_EINVAL);
    CHECK_EQ_INT(ll_fs_poll(loop, tmpdir, 1, NULL, g, &w), LL_EINVAL);
    CHECK_EQ_INT(ll_fs_poll(loop, tmpdir, 1, on_event, g, NULL), LL_EINVAL);
    CHECK_EQ_INT(ll_fs_poll(loop, tmpdir, 0, on_event, g, &w), LL_EINVAL);
    CHECK_EQ_INT(ll_fs_poll(loop, tmpdir, -1, on_event, g, &w), LL_EINVAL);
    CHECK_EQ_INT(ll_fs_poll(loop, tmpdir, NAN, on_event, g, &w), LL_EINVAL);
    CHECK_EQ_INT(ll_fs_poll(loop, tmpdir, INFINITY, on_event, g, &w), LL_EINVAL);
    /* Cancel and release of ids that are not watchers. */
    CHECK_EQ_INT(ll_handle_cancel(loop), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_handle_cancel(0), LL_EBADHANDLE);
    /* From another thread while the loop runs. */
    wt_loop = loop;
    wt_rc = 0;
    CHECK_EQ_INT(ll_call_soon(loop, try_from_other_thread, NULL, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(wt_rc, LL_EWRONGTHREAD);
    /* A closed loop; its watchers stop, their ids stay until released. */
    ll_handle live = 0, poll = 0;
    CHECK_EQ_INT(ll_fs_watch(loop, tmpdir, 0, on_event, g, &live), 0);
    CHECK_EQ_INT(ll_fs_poll(loop, tmpdir, 1, on_event, g, &poll), 0);
    CHECK_EQ_INT(ll_loop_close(loop), 0);
    CHECK_EQ_INT(ll_handle_cancelled(live), 1);
    CHECK_EQ_INT(ll_handle_cancelled(poll), 1);
    CHECK_EQ_INT(ll_handle_cancel(live), 0);
    CHECK_EQ_INT(ll_release(live), 0);
    CHECK_EQ_INT(ll_release(poll), 0);
    CHECK_EQ_INT(ll_fs_watch(loop, tmpdir, 0, on_event, g, &w), LL_ECLOSED);
    CHECK_EQ_INT(ll_fs_poll(loop, tmpdir, 1, on_event, g, &w), LL_ECLOSED);
    CHECK_EQ_INT(ll_release(loop), 0);
    CHECK_EQ_INT(ll_fs_watch(loop, tmpdir, 0, on_event, g, &w), LL_EBADHANDLE);
    CHECK_EQ_INT(g->n, 0);
    rm_rf(tmpdir);
    free(g);
}

int main(void) {
    RUN_TEST(test_change_and_rename);
    RUN_TEST(test_recursive);
    RUN_TEST(test_poll);
    RUN_TEST(test_cancel_in_callback);
    RUN_TEST(test_root_deleted);
    RUN_TEST(test_bad_input);
    return CHECK_REPORT();
}
