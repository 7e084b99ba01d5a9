/* SPDX-License-Identifier: MIT */
/* The threads behind ll_fs_read_cb and ll_fs_write_cb: with one worker,
 * calls start and call back in the order they were made, from outside the
 * loop and from its callbacks alike; ll_loop_set_fs_workers bounds how
 * many run at once, lowered or raised while the pool has threads; a call
 * on an fd closed before it runs calls back -EBADF; closing or releasing
 * a loop with many calls queued and running calls back none of them
 * afterwards, loses no started one's write, and a new loop's pool works
 * after it. The one bound holds for both forms together: with reads of
 * both forms and a stat blocked at once, no more than the bound run, and
 * every one completes; a loop closed or released with both forms in
 * flight calls back neither afterwards. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "net_util.h"
#include "block_file.h"
#include "thread_probe.h"

static char data_path[64];

enum { BLOCK = 512, BLOCKS = 64 };

struct order {
    ll_loop loop;
    int fd;
    int done[BLOCKS * 2]; /* the block each callback read, in callback order */
    int n, bad, chained;
    struct job {
        struct order *o;
        int block;
        unsigned char buf[BLOCK];
    } jobs[BLOCKS * 2];
};

static void order_read(ll_loop loop, int result, void *arg) {
    struct job *j = arg;
    struct order *o = j->o;
    if (loop != o->loop || result != BLOCK || j->buf[0] != (unsigned char)j->block ||
        j->buf[BLOCK - 1] != (unsigned char)j->block)
        o->bad++;
    o->done[o->n++] = j->block;
    /* The first callback queues a second round from inside the loop. */
    if (o->n == 1 && !o->chained) {
        o->chained = 1;
        for (int i = 0; i < BLOCKS; i++) {
            struct job *k = &o->jobs[BLOCKS + i];
            k->o = o;
            k->block = i;
            if (ll_fs_read_cb(loop, o->fd, k->buf, BLOCK, (int64_t)i * BLOCK, order_read, k) != 0)
                o->bad++;
        }
    }
}

/* One worker: FIFO start, and completions called back in that order. */
static void test_order_with_one_worker(void) {
    static struct order o;
    memset(&o, 0, sizeof o);
    o.loop = new_loop();
    CHECK_EQ_INT(ll_loop_set_fs_workers(o.loop, 1), 0);
    o.fd = open(data_path, O_RDONLY);
    CHECK(o.fd >= 0);
    for (int i = 0; i < BLOCKS; i++) {
        struct job *j = &o.jobs[i];
        j->o = &o;
        j->block = BLOCKS - 1 - i; /* a descending order: not the file's */
        CHECK_EQ_INT(ll_fs_read_cb(o.loop, o.fd, j->buf, BLOCK, (int64_t)j->block * BLOCK, order_read, j), 0);
    }
    CHECK_EQ_INT(ll_loop_run(o.loop, LL_RUN_DEFAULT), 0); /* returns once every read called back */
    CHECK_EQ_INT(o.n, 2 * BLOCKS);
    CHECK_EQ_INT(o.bad, 0);
    int in_order = 1;
    for (int i = 0; i < BLOCKS; i++)
        in_order &= o.done[i] == BLOCKS - 1 - i && o.done[BLOCKS + i] == i;
    CHECK(in_order);
    close(o.fd);
    ll_release(o.loop);
}

struct outcome {
    int calls, result;
};

static void record(ll_loop loop, int result, void *arg) {
    (void)loop;
    struct outcome *o = arg;
    o->calls++;
    o->result = result;
}

/* An fd closed after the call was made and before a worker ran it: the
 * callback's -EBADF, and the pool goes on. */
static void test_fd_closed_while_queued(void) {
    ll_loop loop = new_loop();
    CHECK_EQ_INT(ll_loop_set_fs_workers(loop, 1), 0);
    int p[2];
    CHECK_EQ_INT(pipe(p), 0);
    char busy_buf[4], buf[4];
    struct outcome busy = {0}, late = {0};
    CHECK_EQ_INT(ll_fs_read_cb(loop, p[0], busy_buf, sizeof busy_buf, -1, record, &busy), 0);
    double dl = now_s() + 5;
    while (!thread_in_read(p[0]) && now_s() < dl)
        usleep(1000);
    CHECK(thread_in_read(p[0]));
    int fd = open(data_path, O_RDONLY);
    CHECK(fd >= 0);
    CHECK_EQ_INT(ll_fs_read_cb(loop, fd, buf, sizeof buf, 0, record, &late), 0);
    close(fd); /* before the only worker is free */
    CHECK_EQ_INT(write(p[1], "go", 2), 2);
    RUN_UNTIL(loop, busy.calls == 1 && late.calls == 1, 5.0);
    CHECK_EQ_INT(busy.result, 2);
    CHECK_EQ_INT(late.result, -EBADF);
    STILL_RUNS(loop);
    close(p[0]);
    close(p[1]);
    ll_release(loop);
}

/* The bound holds for the callback form's threads: raised, as many reads
 * block at once as it allows; lowered with threads idle, no more. */
static void test_bound_changes(void) {
    ll_loop loop = new_loop();
    enum { N = 3 };
    int p[N][2];
    char bufs[N][4];
    struct outcome o[N];
    memset(o, 0, sizeof o);
    for (int i = 0; i < N; i++)
        CHECK_EQ_INT(pipe(p[i]), 0);
    /* Default bound (4): three reads of empty pipes block at once. */
    for (int i = 0; i < N; i++)
        CHECK_EQ_INT(ll_fs_read_cb(loop, p[i][0], bufs[i], sizeof bufs[i], -1, record, &o[i]), 0);
    double dl = now_s() + 5;
    while ((!thread_in_read(p[0][0]) || !thread_in_read(p[1][0]) || !thread_in_read(p[2][0])) && now_s() < dl)
        usleep(1000);
    CHECK(thread_in_read(p[0][0]) && thread_in_read(p[1][0]) && thread_in_read(p[2][0]));
    for (int i = 0; i < N; i++)
        CHECK_EQ_INT(write(p[i][1], "x", 1), 1);
    RUN_UNTIL(loop, o[0].calls + o[1].calls + o[2].calls == N, 5.0);

    /* Lowered to 1 with the three threads idle: one read at a time, in
     * the order made. */
    CHECK_EQ_INT(ll_loop_set_fs_workers(loop, 1), 0);
    memset(o, 0, sizeof o);
    for (int i = 0; i < N; i++)
        CHECK_EQ_INT(ll_fs_read_cb(loop, p[i][0], bufs[i], sizeof bufs[i], -1, record, &o[i]), 0);
    dl = now_s() + 5;
    while (!thread_in_read(p[0][0]) && now_s() < dl)
        usleep(1000);
    usleep(20 * 1000); /* time for a wrongly started second read to block */
    CHECK(thread_in_read(p[0][0]));
    CHECK_EQ_INT(threads_in_read(p[1][0]) + threads_in_read(p[2][0]), 0);
    CHECK_EQ_INT(write(p[0][1], "a", 1), 1);
    dl = now_s() + 5;
    while (!thread_in_read(p[1][0]) && now_s() < dl)
        usleep(1000);
    CHECK(thread_in_read(p[1][0]));
    CHECK_EQ_INT(threads_in_read(p[2][0]), 0);

    /* Raised again: the third starts beside the second. */
    CHECK_EQ_INT(ll_loop_set_fs_workers(loop, 2), 0);
    CHECK_EQ_INT(ll_loop_set_fs_workers(loop, 1), 0); /* back down: the started ones run on */
    CHECK_EQ_INT(ll_loop_set_fs_workers(loop, 2), 0);
    spin(loop, 1);
    struct outcome kick = {0};
    char kb[1];
    int z = open("/dev/zero", O_RDONLY);
    CHECK_EQ_INT(ll_fs_read_cb(loop, z, kb, 1, 0, record, &kick), 0); /* a submit makes the second thread */
    dl = now_s() + 5;
    while (!thread_in_read(p[2][0]) && now_s() < dl) {
        usleep(1000);
        spin(loop, 1);
    }
    CHECK(thread_in_read(p[2][0]));
    CHECK_EQ_INT(write(p[1][1], "b", 1), 1);
    CHECK_EQ_INT(write(p[2][1], "c", 1), 1);
    RUN_UNTIL(loop, o[0].calls + o[1].calls + o[2].calls == N && kick.calls == 1, 5.0);
    CHECK_EQ_INT(o[0].result + o[1].result + o[2].result, N);
    close(z);
    for (int i = 0; i < N; i++) {
        close(p[i][0]);
        close(p[i][1]);
    }
    ll_release(loop);
}

enum { MANY = 200 };
struct many {
    ll_loop loop;
    int fd, calls, after_close;
    int closed;
    unsigned char bufs[MANY][BLOCK];
};

static void many_read(ll_loop loop, int result, void *arg) {
    (void)loop;
    (void)result;
    struct many *m = arg;
    m->calls++;
    if (m->closed)
        m->after_close++;
}

/* Many reads queued and running, the loop closed (close = 1) or released
 * without a close: no callback afterwards, nothing crashes, and a new
 * loop's pool works (the pool's C record is reused). */
static void close_with_jobs(int close_first) {
    static struct many m;
    memset(&m, 0, sizeof m);
    m.loop = new_loop();
    m.fd = open(data_path, O_RDONLY);
    CHECK(m.fd >= 0);
    for (int i = 0; i < MANY; i++)
        CHECK_EQ_INT(ll_fs_read_cb(m.loop, m.fd, m.bufs[i], BLOCK, (int64_t)(i % BLOCKS) * BLOCK, many_read, &m), 0);
    ll_loop_run_once(m.loop, LL_RUN_NOWAIT); /* some may call back here */
    int before = m.calls;
    m.closed = 1;
    if (close_first)
        CHECK_EQ_INT(ll_loop_close(m.loop), 0);
    ll_release(m.loop);
    usleep(20 * 1000);
    CHECK_EQ_INT(m.after_close, 0);
    CHECK_EQ_INT(m.calls, before);
    CHECK(m.calls <= MANY);
    close(m.fd);

    /* A new loop reads through its own pool. */
    ll_loop loop = new_loop();
    int fd = open(data_path, O_RDONLY);
    unsigned char b[BLOCK];
    struct outcome o = {0};
    CHECK_EQ_INT(ll_fs_read_cb(loop, fd, b, BLOCK, 5 * BLOCK, record, &o), 0);
    CHECK_EQ_INT(ll_loop_run(loop, LL_RUN_DEFAULT), 0);
    CHECK_EQ_INT(o.calls, 1);
    CHECK_EQ_INT(o.result, BLOCK);
    CHECK_EQ_INT(b[0], 5);
    close(fd);
    ll_release(loop);
}

static void test_close_with_jobs_in_flight(void) { close_with_jobs(1); }
static void test_release_with_jobs_in_flight(void) { close_with_jobs(0); }

/* A write through the pool that was running when the loop closed is
 * whole in the file afterwards (close waited for it). */
static void test_close_waits_for_writes(void) {
    ll_loop loop = new_loop();
    char wpath[64];
    snprintf(wpath, sizeof wpath, "/tmp/ll_fspool_w_XXXXXX");
    int fd = mkstemp(wpath);
    CHECK(fd >= 0);
    enum { W = 64, WLEN = 64 * 1024 };
    static char data[WLEN];
    memset(data, 'w', sizeof data);
    struct outcome o[W];
    memset(o, 0, sizeof o);
    for (int i = 0; i < W; i++)
        CHECK_EQ_INT(ll_fs_write_cb(loop, fd, data, WLEN, (int64_t)i * WLEN, record, &o[i]), 0);
    CHECK_EQ_INT(ll_loop_close(loop), 0);
    /* Every write a worker started is complete: the file is a run of whole
     * writes from offset 0 with holes only where writes were withdrawn. */
    struct stat st;
    CHECK_EQ_INT(fstat(fd, &st), 0);
    CHECK_EQ_INT((int)(st.st_size % WLEN), 0);
    static char back[WLEN];
    int whole = 1;
    for (off_t off = 0; off < st.st_size; off += WLEN) {
        CHECK_EQ_INT((int)pread(fd, back, WLEN, off), WLEN);
        whole &= back[0] == back[WLEN - 1] && (back[0] == 'w' || back[0] == 0);
    }
    CHECK(whole);
    int calls = 0;
    for (int i = 0; i < W; i++)
        calls += o[i].calls;
    CHECK_EQ_INT(calls, 0);
    close(fd);
    unlink(wpath);
    ll_release(loop);
}

struct mixed {
    int cbs, cb_bytes, futs_done, fut_bytes, bad, after_close, closed;
};

static void mixed_read(ll_loop loop, int result, void *arg) {
    (void)loop;
    struct mixed *m = arg;
    m->cbs++;
    if (m->closed)
        m->after_close++;
    if (result == 1)
        m->cb_bytes++;
    else
        m->bad++;
}

static void mixed_done(ll_future fut, void *arg) {
    struct mixed *m = arg;
    m->futs_done++;
    if (m->closed)
        m->after_close++;
    uintptr_t n = 0;
    if (ll_future_result(fut, &n) == 0 && n == 1)
        m->fut_bytes++;
    else
        m->bad++;
}

/* Queues n one-byte reads of fd into bufs, alternately in the callback
 * form (mixed_read) and the future form (mixed_done on each future, kept
 * in futs): how many futures it made. */
static int queue_mixed_reads(ll_loop loop, int fd, char (*bufs)[1], int n, struct mixed *m,
                             ll_future *futs) {
    int nfut = 0;
    for (int i = 0; i < n; i++) {
        if (i % 2 == 0) {
            CHECK_EQ_INT(ll_fs_read_cb(loop, fd, bufs[i], 1, -1, mixed_read, m), 0);
        } else {
            CHECK_EQ_INT(ll_fs_read(loop, fd, bufs[i], 1, -1, &futs[nfut]), 0);
            CHECK_EQ_INT(ll_future_add_done_callback(futs[nfut], mixed_done, m), 0);
            nfut++;
        }
    }
    return nfut;
}

/* One bound for both forms: ll_fs_read_cb and ll_fs_read (the future form)
 * on one empty pipe, alternately, 3x the bound: at most the bound's
 * threads block in read at once (two pools would block twice as many),
 * and each byte written completes one read of either form, none lost. A
 * stat queued behind them waits its turn and completes too. */
static void test_one_bound_for_both_forms(void) {
    enum { N = 3, M = 3 * N };
    ll_loop loop = new_loop();
    CHECK_EQ_INT(ll_loop_set_fs_workers(loop, N), 0);
    int p[2];
    CHECK_EQ_INT(pipe(p), 0);
    static char bufs[M][1];
    static struct mixed m;
    memset(&m, 0, sizeof m);
    ll_future futs[M];
    int nfut = queue_mixed_reads(loop, p[0], bufs, M, &m, futs);
    struct stat st;
    ll_future stat_fut;
    CHECK_EQ_INT(ll_fs_stat(loop, data_path, &st, &stat_fut), 0);
    double dl = now_s() + 5;
    while (threads_in_read(p[0]) < N && now_s() < dl)
        usleep(1000);
    int most = threads_in_read(p[0]);
    CHECK_EQ_INT(most, N);
    for (int i = 0; i < 20; i++) { /* time for a wrongly started one to block */
        usleep(2000);
        int in = threads_in_read(p[0]);
        most = in > most ? in : most;
    }
    /* One byte a time: a read of either form completes, the next starts. */
    for (int i = 0; i < M; i++) {
        CHECK_EQ_INT(write(p[1], "x", 1), 1);
        int before = m.cbs + m.futs_done;
        RUN_UNTIL(loop, m.cbs + m.futs_done == before + 1, 5.0);
        int in = threads_in_read(p[0]);
        most = in > most ? in : most;
    }
    CHECK_EQ_INT(most, N);
    RUN_UNTIL(loop, ll_future_done(stat_fut) == 1, 5.0);
    CHECK_EQ_INT(ll_future_result(stat_fut, NULL), 0);
    CHECK_EQ_INT((int)st.st_size, BLOCK * BLOCKS);
    CHECK_EQ_INT(m.cbs, (M + 1) / 2);
    CHECK_EQ_INT(m.futs_done, M / 2);
    CHECK_EQ_INT(m.cb_bytes + m.fut_bytes, M);
    CHECK_EQ_INT(m.bad, 0);
    CHECK_EQ_INT(threads_in_read(p[0]), 0);
    for (int i = 0; i < nfut; i++)
        ll_release(futs[i]);
    ll_release(stat_fut);
    close(p[0]);
    close(p[1]);
    ll_release(loop);
}

/* Both forms blocked on a pipe and more queued when the loop closes
 * (close = 1) or is released: neither a callback nor a done callback
 * runs afterwards, and the futures read as cancelled or pending, not as
 * a crash. The close wakes the blocked reads by writing the pipe from
 * another thread once the loop waits for them. */
struct unblock {
    int fd, n;
};
static void *unblock_later(void *arg) {
    struct unblock *u = arg;
    usleep(50 * 1000);
    for (int i = 0; i < u->n; i++)
        if (write(u->fd, "y", 1) != 1)
            break;
    return NULL;
}

static void close_mixed(int close_first) {
    enum { N = 2, M = 4 * N };
    ll_loop loop = new_loop();
    CHECK_EQ_INT(ll_loop_set_fs_workers(loop, N), 0);
    int p[2];
    CHECK_EQ_INT(pipe(p), 0);
    static char bufs[M][1];
    static struct mixed m;
    memset(&m, 0, sizeof m);
    ll_future futs[M];
    int nfut = queue_mixed_reads(loop, p[0], bufs, M, &m, futs);
    double dl = now_s() + 5;
    while (threads_in_read(p[0]) < N && now_s() < dl)
        usleep(1000);
    CHECK_EQ_INT(threads_in_read(p[0]), N);
    /* The started reads end only when written to: the close waits for them. */
    struct unblock u = {p[1], N};
    pthread_t t;
    CHECK_EQ_INT(pthread_create(&t, NULL, unblock_later, &u), 0);
    m.closed = 1;
    if (close_first)
        CHECK_EQ_INT(ll_loop_close(loop), 0);
    for (int i = 0; i < nfut; i++)
        ll_release(futs[i]);
    ll_release(loop);
    pthread_join(t, NULL);
    usleep(20 * 1000);
    CHECK_EQ_INT(m.after_close, 0);
    CHECK_EQ_INT(m.cbs + m.futs_done, 0);
    CHECK_EQ_INT(threads_in_read(p[0]), 0); /* the withdrawn reads never ran */
    char rest[M];
    CHECK_EQ_INT(fcntl(p[0], F_SETFL, O_NONBLOCK), 0);
    CHECK_EQ_INT((int)read(p[0], rest, sizeof rest), -1); /* the started reads took both bytes */
    close(p[0]);
    close(p[1]);
}

static void test_close_with_both_forms_in_flight(void) { close_mixed(1); }
static void test_release_with_both_forms_in_flight(void) { close_mixed(0); }

int main(void) {
    snprintf(data_path, sizeof data_path, "/tmp/ll_fspool_XXXXXX");
    make_block_file(data_path, BLOCK, BLOCKS);
    RUN_TEST(test_order_with_one_worker);
    RUN_TEST(test_fd_closed_while_queued);
    RUN_TEST(test_bound_changes);
    RUN_TEST(test_close_with_jobs_in_flight);
    RUN_TEST(test_release_with_jobs_in_flight);
    RUN_TEST(test_close_waits_for_writes);
    RUN_TEST(test_one_bound_for_both_forms);
    RUN_TEST(test_close_with_both_forms_in_flight);
    RUN_TEST(test_release_with_both_forms_in_flight);
    unlink(data_path);
    return CHECK_REPORT();
}
