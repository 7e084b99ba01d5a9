/* SPDX-License-Identifier: MIT */
/* File reads with libuv's uv_fs_read on its thread pool (bench/fs_common.h). */
#include <uv.h>

#include "fs_common.h"

struct slot {
    uv_fs_t req;
    unsigned char *buf;
    int64_t off;
};

static uv_loop_t *loop;
static struct slot slots[FS_MAX_DEPTH];

static void on_read(uv_fs_t *req);

static void submit(struct slot *s) {
    s->off = fs_offset(fs_issued++);
    uv_buf_t b = uv_buf_init((char *)s->buf, (unsigned)fs_size);
    if (uv_fs_read(loop, &s->req, fs_fd, &b, 1, s->off, on_read) != 0)
        abort();
}

static void on_read(uv_fs_t *req) {
    struct slot *s = (struct slot *)req;
    fs_check(s->buf, s->off, (long)req->result);
    uv_fs_req_cleanup(req);
    fs_completed++;
    if (fs_issued < fs_n)
        submit(s);
}

int main(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "version") == 0) {
        printf("%s\n", uv_version_string());
        return 0;
    }
    fs_args(argc, argv);
    loop = uv_default_loop();
    for (long i = 0; i < fs_depth; i++)
        slots[i].buf = malloc((size_t)fs_size);
    /* Warm up: the pool's threads start at the first request. One read,
     * as fs_ll.c's (the whole N here would double every count per read
     * taken over the process, callgrind's and strace's). */
    long n = fs_n;
    fs_n = 1;
    submit(&slots[0]);
    uv_run(loop, UV_RUN_DEFAULT);
    fs_n = n;
    fs_issued = fs_completed = fs_bad = 0;

    bench_mark start = bench_mark_now();
    for (long i = 0; i < fs_depth; i++)
        submit(&slots[i]);
    uv_run(loop, UV_RUN_DEFAULT);
    bench_mark end = bench_mark_now();
    return fs_report("libuv", start, end);
}
