/* SPDX-License-Identifier: MIT */
/* File reads and writes with a completion callback (ll_fs_read_cb,
 * ll_fs_write_cb in include/libloop/fs.h): the byte count or -errno in the
 * callback's result, on the loop thread, with the loop's id and the
 * caller's arg; reads chained from callbacks with several in flight; a
 * pending call keeps ll_loop_run going; closing the loop withdraws queued
 * calls (their callbacks never run) and waits for a started one; bad input
 * is refused and calls back nothing. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "net_util.h"
#include "thread_probe.h"

static char dir[64];

/* One call's outcome as its callback saw it. */
struct outcome {
    int calls;
    int result;
    ll_loop loop;
    pthread_t thread;
};

static void record(ll_loop loop, int result, void *arg) {
    struct outcome *o = arg;
    o->calls++;
    o->result = result;
    o->loop = loop;
    o->thread = pthread_self();
}

/* Runs loop until o's callback ran; its result. */
static int wait_cb(ll_loop loop, struct outcome *o) {
    RUN_UNTIL(loop, o->calls > 0, 5.0);
    CHECK_EQ_INT(o->calls, 1);
    CHECK(pthread_equal(o->thread, pthread_self()));
    CHECK_EQ_INT(o->loop, loop);
    return o->result;
}

#define READ_CB(loop, fd, buf, len, off)                                                         \
    __extension__({                                                                              \
        struct outcome o_ = {0};                                                                 \
        CHECK_EQ_INT(ll_fs_read_cb((loop), (fd), (buf), (len), (off), record, &o_), 0);          \
        wait_cb((loop), &o_);                                                                    \
    })

#define WRITE_CB(loop, fd, buf, len, off)                                                        \
    __extension__({                                                                              \
        struct outcome o_ = {0};                                                                 \
        CHECK_EQ_INT(ll_fs_write_cb((loop), (fd), (buf), (len), (off), record, &o_), 0);         \
        wait_cb((loop), &o_);                                                                    \
    })

static void test_round_trip(void) {
    ll_loop loop = new_loop();
    char path[128];
    snprintf(path, sizeof path, "%s/round", dir);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0);
    enum { N = 8192 };
    unsigned char *out = malloc(N), *in = malloc(N);
    for (int i = 0; i < N; i++)
        out[i] = (unsigned char)(i * 13);
    CHECK_EQ_INT(WRITE_CB(loop, fd, out, N, -1), N); /* at the position, which advances */
    CHECK_EQ_INT(lseek(fd, 0, SEEK_CUR), N);
    CHECK_EQ_INT(WRITE_CB(loop, fd, "WXYZ", 4, 10), 4); /* at an offset: the position stays */
    CHECK_EQ_INT(lseek(fd, 0, SEEK_CUR), N);
    memcpy(out + 10, "WXYZ", 4);
    memset(in, 0, N);
    CHECK_EQ_INT(READ_CB(loop, fd, in, N, 0), N);
    CHECK(memcmp(in, out, N) == 0);
    CHECK_EQ_INT(READ_CB(loop, fd, in, N, -1), 0); /* at the end of the file */
    CHECK_EQ_INT(READ_CB(loop, fd, in, 100, N - 3), 3);
    CHECK_EQ_INT(lseek(fd, 0, SEEK_SET), 0);
    memset(in, 0, N);
    CHECK_EQ_INT(READ_CB(loop, fd, in, 5, -1), 5);
    CHECK_EQ_INT(lseek(fd, 0, SEEK_CUR), 5);
    CHECK(memcmp(in, out, 5) == 0);
    close(fd);
    unlink(path);
    free(out);
    free(in);
    ll_release(loop);
}

static void test_failures(void) {
    ll_loop loop = new_loop();
    char buf[16];
    CHECK_EQ_INT(READ_CB(loop, 9999, buf, sizeof buf, 0), -EBADF);
    CHECK_EQ_INT(WRITE_CB(loop, 9999, buf, sizeof buf, -1), -EBADF);
    CHECK_EQ_INT(READ_CB(loop, -1, buf, sizeof buf, 0), -EBADF);
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    CHECK(fd >= 0);
    CHECK_EQ_INT(READ_CB(loop, fd, buf, sizeof buf, 0), -EISDIR);
    close(fd);
    fd = open("/dev/null", O_RDONLY);
    CHECK_EQ_INT(WRITE_CB(loop, fd, buf, sizeof buf, -1), -EBADF); /* not open for writing */
    close(fd);
    STILL_RUNS(loop);
    ll_release(loop);
}

/* Reads chained from callbacks, DEPTH in flight, each slot into its own
 * buffer: the way a C host streams a file. */
enum { DEPTH = 8, CHUNK = 1024, CHUNKS = 256 };
struct stream {
    ll_loop loop;
    int fd, issued, completed, bad;
    struct slot {
        struct stream *s;
        int64_t off;
        char buf[CHUNK];
    } slots[DEPTH];
};

static void stream_read(ll_loop loop, int result, void *arg);

static void stream_submit(struct slot *sl) {
    struct stream *s = sl->s;
    sl->off = (int64_t)s->issued++ * CHUNK;
    memset(sl->buf, 0, CHUNK);
    if (ll_fs_read_cb(s->loop, s->fd, sl->buf, CHUNK, sl->off, stream_read, sl) != 0)
        s->bad++;
}

static void stream_read(ll_loop loop, int result, void *arg) {
    struct slot *sl = arg;
    struct stream *s = sl->s;
    if (loop != s->loop || result != CHUNK || sl->buf[0] != (char)('A' + (sl->off / CHUNK) % 26) ||
        sl->buf[CHUNK - 1] != sl->buf[0])
        s->bad++;
    s->completed++;
    if (s->issued < CHUNKS)
        stream_submit(sl);
}

static void test_stream(void) {
    ll_loop loop = new_loop();
    char path[128];
    snprintf(path, sizeof path, "%s/stream", dir);
    FILE *fp = fopen(path, "w");
    CHECK(fp != NULL);
    for (int c = 0; c < CHUNKS; c++)
        for (int i = 0; i < CHUNK; i++)
            fputc('A' + c % 26, fp);
    fclose(fp);
    static struct stream s;
    memset(&s, 0, sizeof s);
    s.loop = loop;
    s.fd = open(path, O_RDONLY);
    CHECK(s.fd >= 0);
    for (int i = 0; i < DEPTH; i++) {
        s.slots[i].s = &s;
        stream_submit(&s.slots[i]);
    }
    RUN_UNTIL(loop, s.completed == CHUNKS, 10.0);
    CHECK_EQ_INT(s.completed, CHUNKS);
    CHECK_EQ_INT(s.bad, 0);
    close(s.fd);
    unlink(path);
    ll_release(loop);
}

/* libuv's uv_run(UV_RUN_DEFAULT): a pending call keeps the loop running
 * until its callback has run, and then the loop ends by itself. */
static void test_keeps_loop_alive(void) {
    ll_loop loop = new_loop();
    int p[2];
    CHECK_EQ_INT(pipe(p), 0);
    CHECK_EQ_INT(write(p[1], "data", 4), 4);
    char buf[8] = {0};
    struct outcome o = {0};
    CHECK_EQ_INT(ll_fs_read_cb(loop, p[0], buf, sizeof buf, -1, record, &o), 0);
    CHECK_EQ_INT(ll_loop_run(loop, LL_RUN_DEFAULT), 0);
    CHECK_EQ_INT(o.calls, 1);
    CHECK_EQ_INT(o.result, 4);
    CHECK(memcmp(buf, "data", 4) == 0);
    close(p[0]);
    close(p[1]);
    ll_release(loop);
}

struct late_write {
    int fd;
    int ok;
};

/* Writes to the pipe a while after the loop began to close. */
static void *write_later(void *arg) {
    struct late_write *w = arg;
    usleep(100 * 1000);
    w->ok = write(w->fd, "late", 4) == 4;
    return NULL;
}

/* One worker, blocked reading an empty pipe; a read of a file queued
 * behind it. ll_loop_close withdraws the queued read (it never runs: the
 * file position stays, the buffer is untouched) and waits for the started
 * one, which fills its buffer; neither calls back on the closed loop. */
static void test_close_withdraws(void) {
    ll_loop loop = new_loop();
    CHECK_EQ_INT(ll_loop_set_fs_workers(loop, 1), 0);
    int p[2];
    CHECK_EQ_INT(pipe(p), 0);
    char busy_buf[8] = {0}, queued_buf[8] = {0};
    struct outcome busy = {0}, queued = {0};
    CHECK_EQ_INT(ll_fs_read_cb(loop, p[0], busy_buf, sizeof busy_buf, -1, record, &busy), 0);
    double dl = now_s() + 5;
    while (!thread_in_read(p[0]) && now_s() < dl)
        usleep(1000);
    CHECK(thread_in_read(p[0]));
    int fd = open("/dev/zero", O_RDONLY);
    CHECK(fd >= 0);
    memset(queued_buf, 'q', sizeof queued_buf);
    CHECK_EQ_INT(ll_fs_read_cb(loop, fd, queued_buf, sizeof queued_buf, -1, record, &queued), 0);
    struct late_write w = {.fd = p[1]};
    pthread_t th;
    CHECK_EQ_INT(pthread_create(&th, NULL, write_later, &w), 0);
    CHECK_EQ_INT(ll_loop_close(loop), 0); /* returns once the started read is done */
    CHECK(memcmp(busy_buf, "late", 4) == 0);
    pthread_join(th, NULL);
    CHECK(w.ok);
    CHECK_EQ_INT(queued_buf[0], 'q'); /* /dev/zero was never read */
    CHECK_EQ_INT(busy.calls, 0);
    CHECK_EQ_INT(queued.calls, 0);
    close(fd);
    close(p[0]);
    close(p[1]);
    ll_release(loop);
}

struct other_thread {
    ll_loop loop;
    int rc;
    struct outcome *o;
};

static void *read_from_other_thread(void *arg) {
    struct other_thread *t = arg;
    static char buf[4];
    t->rc = ll_fs_read_cb(t->loop, 0, buf, sizeof buf, 0, record, t->o);
    return NULL;
}

static void call_from_thread_cb(ll_loop loop, void *arg) {
    (void)loop;
    pthread_t th;
    if (pthread_create(&th, NULL, read_from_other_thread, arg) == 0)
        pthread_join(th, NULL);
}

static void test_bad_input(void) {
    ll_loop loop = new_loop();
    char buf[8];
    struct outcome o = {0};
    CHECK_EQ_INT(ll_fs_read_cb(loop, 0, NULL, 8, 0, record, &o), LL_EINVAL);
    CHECK_EQ_INT(ll_fs_read_cb(loop, 0, buf, 8, 0, NULL, &o), LL_EINVAL);
    CHECK_EQ_INT(ll_fs_read_cb(loop, 0, buf, (size_t)-1, 0, record, &o), LL_EINVAL); /* a negative length */
    CHECK_EQ_INT(ll_fs_read_cb(loop, 0, buf, (size_t)LL_FS_MAX_IO + 1, 0, record, &o), LL_EINVAL);
    CHECK_EQ_INT(ll_fs_read_cb(loop, 0, buf, 8, -2, record, &o), LL_EINVAL);
    CHECK_EQ_INT(ll_fs_write_cb(loop, 1, NULL, 8, 0, record, &o), LL_EINVAL);
    CHECK_EQ_INT(ll_fs_write_cb(loop, 1, buf, 8, 0, NULL, &o), LL_EINVAL);
    CHECK_EQ_INT(ll_fs_write_cb(loop, 1, buf, (size_t)-8, 0, record, &o), LL_EINVAL);
    CHECK_EQ_INT(ll_fs_write_cb(loop, 1, buf, 8, -5, record, &o), LL_EINVAL);
    CHECK_EQ_INT(ll_fs_read_cb(0, 0, buf, 8, 0, record, &o), LL_EBADHANDLE);
    STILL_RUNS(loop);
    spin(loop, 5);
    CHECK_EQ_INT(o.calls, 0); /* no refused call calls back */

    /* Debug mode: another thread's call is refused while the loop runs. */
    struct other_thread ot = {.loop = loop, .o = &o};
    CHECK_EQ_INT(ll_loop_set_debug(loop, 1), 0);
    CHECK_EQ_INT(ll_call_soon(loop, call_from_thread_cb, &ot, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(ot.rc, LL_EWRONGTHREAD);
    spin(loop, 5);
    CHECK_EQ_INT(o.calls, 0);

    CHECK_EQ_INT(ll_loop_close(loop), 0);
    CHECK_EQ_INT(ll_fs_read_cb(loop, 0, buf, 8, 0, record, &o), LL_ECLOSED);
    CHECK_EQ_INT(ll_fs_write_cb(loop, 1, buf, 8, 0, record, &o), LL_ECLOSED);
    CHECK_EQ_INT(o.calls, 0);
    ll_release(loop);
}

int main(void) {
    snprintf(dir, sizeof dir, "/tmp/ll_fscb_XXXXXX");
    if (mkdtemp(dir) == NULL)
        return 1;
    RUN_TEST(test_round_trip);
    RUN_TEST(test_failures);
    RUN_TEST(test_stream);
    RUN_TEST(test_keeps_loop_alive);
    RUN_TEST(test_close_withdraws);
    RUN_TEST(test_bad_input);
    rmdir(dir);
    return CHECK_REPORT();
}
