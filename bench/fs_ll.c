/* SPDX-License-Identifier: MIT */
/* File reads with libloop on its file pool (bench/fs_common.h): by default
 * ll_fs_read_cb, whose completion callback gets the byte count and submits
 * the next read (libuv's request callback); built with -DFS_LL_FUTURE
 * (fs_llf), ll_fs_read with a done callback on each read's future that
 * reads its result, releases it and submits the next. */
#include "libloop.h"

#include "fs_common.h"

struct slot {
    unsigned char *buf;
    int64_t off;
};

static ll_loop loop;
static struct slot slots[FS_MAX_DEPTH];

static void submit(struct slot *s);

/* A read of slot s is done with n bytes or -errno. */
static void completed(struct slot *s, long n) {
    fs_check(s->buf, s->off, n);
    fs_completed++;
    if (fs_issued < fs_n)
        submit(s);
    else if (fs_completed == fs_issued)
        ll_loop_stop(loop);
}

#ifdef FS_LL_FUTURE
#define FS_LL_NAME "libloop-future"
static void on_read(ll_future f, void *arg) {
    uintptr_t v = 0;
    int rc = ll_future_result(f, &v);
    ll_release(f);
    completed(arg, rc == 0 ? (long)v : rc);
}

static void submit(struct slot *s) {
    ll_future f = 0;
    s->off = fs_offset(fs_issued++);
    if (ll_fs_read(loop, fs_fd, s->buf, (size_t)fs_size, s->off, &f) != 0 ||
        ll_future_add_done_callback(f, on_read, s) != 0)
        abort();
}
#else
#define FS_LL_NAME "libloop"
static void on_read(ll_loop l, int result, void *arg) {
    (void)l;
    completed(arg, result);
}

static void submit(struct slot *s) {
    s->off = fs_offset(fs_issued++);
    if (ll_fs_read_cb(loop, fs_fd, s->buf, (size_t)fs_size, s->off, on_read, s) != 0)
        abort();
}
#endif

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
    int rc = fs_report(FS_LL_NAME, start, end);
    ll_loop_close(loop);
    ll_release(loop);
    return rc;
}
