/* SPDX-License-Identifier: MIT */
/* fs_callback.c — a file streamed with ll_fs_read_cb: four reads in
 * flight, each completion callback getting its byte count (or -errno) and
 * submitting the next read into the same buffer; no future to read or
 * release. The loop runs until no read is pending (LL_RUN_DEFAULT). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "must.h"

enum { CHUNK = 4096, DEPTH = 4 };

struct reader {
    ll_loop loop;
    int fd;
    int64_t next;    /* the offset of the next read to submit */
    long total;      /* bytes read */
    long newlines;   /* '\n' bytes seen */
    int failed;      /* a read's -errno, if any */
    char buf[DEPTH][CHUNK];
};

static struct reader r;

static void on_read(ll_loop loop, int result, void *arg);

static void submit(char *buf) {
    int64_t off = r.next;
    r.next += CHUNK;
    MUST(ll_fs_read_cb(r.loop, r.fd, buf, CHUNK, off, on_read, buf)); /* buf is the worker's now */
}

static void on_read(ll_loop loop, int result, void *arg) {
    (void)loop;
    char *buf = arg; /* ... and ours again */
    if (result < 0) {
        r.failed = result; /* -EBADF, -EIO ... */
        return;
    }
    r.total += result;
    for (int i = 0; i < result; i++)
        r.newlines += buf[i] == '\n';
    if (result == CHUNK) /* not the end yet: read on */
        submit(buf);
}

int main(void) {
    char path[] = "/tmp/ll_docs_fscb_XXXXXX";
    int wfd = mkstemp(path);
    EXPECT(wfd >= 0);
    static const char line[] = "one line of the file\n"; /* 21 bytes */
    for (int i = 0; i < 1000; i++)
        EXPECT(write(wfd, line, sizeof line - 1) == (ssize_t)(sizeof line - 1));
    close(wfd);

    MUST(ll_loop_new(&r.loop));
    r.fd = open(path, O_RDONLY);
    EXPECT(r.fd >= 0);
    for (int i = 0; i < DEPTH; i++)
        submit(r.buf[i]);
    MUST(ll_loop_run(r.loop, LL_RUN_DEFAULT)); /* returns once no read is pending */
    EXPECT(r.failed == 0 && r.total == 21000 && r.newlines == 1000);

    /* A failure is the callback's -errno. */
    MUST(ll_fs_read_cb(r.loop, -1, r.buf[0], CHUNK, 0, on_read, r.buf[0]));
    MUST(ll_loop_run(r.loop, LL_RUN_DEFAULT));
    EXPECT(r.failed == -EBADF);

    printf("%ld bytes, %ld lines\n", r.total, r.newlines);
    close(r.fd);
    unlink(path);
    MUST(ll_loop_close(r.loop));
    MUST(ll_release(r.loop));
    return 0;
}
