/* SPDX-License-Identifier: MIT */
/* Processes under load: 8 MiB through `cat` (stdin written with
 * back-pressure, stdout read back and checksummed, closing stdin gives
 * cat its EOF), a child that closes its stdout early and goes on running,
 * 8 MiB written to a child that never reads (paused, then killed: nothing
 * hangs), and 1,000 spawn/kill cycles with no fd or zombie left. */
#include <errno.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proc_helpers.h"

#define TOTAL (8u << 20)
#define CHUNK (48u << 10)

struct feeder {
    struct plog log;
    unsigned char *data;
    size_t sent;
    int paused;
    int closed_stdin;
    size_t max_buffered;
    ll_transport in;
};

/* Writes chunks until the buffer passes the high-water mark (the
 * LL_PAUSE_WRITING it causes arrives as an event later: the writer stops on
 * the buffer size, and goes on at LL_RESUME_WRITING); closes stdin at the
 * end. */
#define HIGH (64u << 10)
static void feed(struct feeder *f) {
    size_t buffered = 0;
    while (f->sent < TOTAL) {
        CHECK_EQ_INT(ll_transport_get_write_buffer_size(f->in, &buffered), 0);
        if (buffered > HIGH)
            break;
        size_t n = TOTAL - f->sent < CHUNK ? TOTAL - f->sent : CHUNK;
        CHECK_EQ_INT(ll_transport_write(f->in, f->data + f->sent, n), 0);
        f->sent += n;
        CHECK_EQ_INT(ll_transport_get_write_buffer_size(f->in, &buffered), 0);
        if (buffered > f->max_buffered)
            f->max_buffered = buffered;
    }
    if (f->sent == TOTAL && !f->closed_stdin) {
        f->closed_stdin = 1;
        CHECK_EQ_INT(ll_transport_close(f->in), 0); /* flushes, then cat sees EOF */
    }
}

static int feeder_fn(ll_loop loop, const ll_event *ev, void *arg) {
    struct feeder *f = arg;
    int r = plog_fn(loop, ev, &f->log);
    if (ev->fd == 0 && ev->kind == LL_PAUSE_WRITING) {
        f->paused = 1;
    } else if (ev->fd == 0 && ev->kind == LL_RESUME_WRITING) {
        CHECK_EQ_INT(f->paused, 1); /* a resume follows a pause */
        f->paused = 0;
        feed(f);
    }
    return r;
}

static int feeder_done(void *arg) {
    struct feeder *f = arg;
    return f->log.exited && f->log.lost[0] && f->log.lost[1];
}

static void test_cat_8mib_with_back_pressure(void) {
    ll_loop loop = new_loop();
    static struct feeder f;
    memset(&f, 0, sizeof f);
    f.data = malloc(TOTAL);
    CHECK(f.data != NULL);
    uint32_t x = 12345;
    for (size_t i = 0; i < TOTAL; i++) {
        x = x * 1103515245u + 12345u;
        f.data[i] = (unsigned char)(x >> 16);
    }
    uint64_t want = sum_bytes(0, 0, f.data, TOTAL);

    const char *const argv[] = {"cat", NULL};
    ll_process_options o = {.file = "cat", .argv = argv,
                            .stdio = {LL_STDIO_PIPE, LL_STDIO_PIPE, LL_STDIO_INHERIT}};
    ll_process p = 0;
    CHECK_EQ_INT(ll_spawn(loop, &o, feeder_fn, &f, &p), 0);
    CHECK_EQ_INT(ll_process_pipe(p, 0, &f.in), 0);
    CHECK_EQ_INT(ll_transport_can_write_eof(f.in), 1);
    /* The read side of the child's stdin is the child's: writing only. */
    CHECK_EQ_INT(ll_transport_is_reading(f.in), 0);
    feed(&f);
    CHECK(f.sent < TOTAL); /* 8 MiB never fit the pipe at once */
    RUN_UNTIL(loop, feeder_done, &f, 20);

    CHECK_EQ_INT(f.sent, TOTAL);
    CHECK_EQ_INT(f.log.total[1], TOTAL);
    CHECK(f.log.sum[1] == want);
    CHECK(f.log.pause[0] >= 1);
    CHECK(f.log.resume[0] >= 1);
    CHECK(f.log.pause[0] - f.log.resume[0] <= 1);
    /* The buffer stays near the high-water mark: the writer waited. */
    CHECK(f.max_buffered <= HIGH + CHUNK);
    CHECK_EQ_INT(f.log.made[0], 1);
    CHECK_EQ_INT(f.log.lost[0], 1);
    CHECK_EQ_INT(f.log.lost_code[0], 0);
    CHECK_EQ_INT(f.log.eof[1], 1);
    CHECK_EQ_INT(f.log.exited, 1);
    CHECK_EQ_INT(f.log.code, 0); /* cat ended on its EOF, not a signal */
    ll_transport t = 0;
    CHECK_EQ_INT(ll_process_pipe(p, 0, &t), LL_ECLOSED);
    ll_release(p);
    free(f.data);
    ll_release(loop);
}

/* Closing stdin early: cat exits 0 and the data written before arrives. */
static void test_close_stdin_gives_eof(void) {
    ll_loop loop = new_loop();
    static struct plog l;
    memset(&l, 0, sizeof l);
    const char *const argv[] = {"cat", NULL};
    ll_process p = 0;
    CHECK_EQ_INT(spawn3(loop, argv, LL_STDIO_PIPE, LL_STDIO_PIPE, LL_STDIO_INHERIT, &l, &p), 0);
    ll_transport in = 0;
    CHECK_EQ_INT(ll_process_pipe(p, 0, &in), 0);
    CHECK_EQ_INT(ll_transport_write(in, "abc\n", 4), 0);
    CHECK_EQ_INT(ll_transport_close(in), 0);
    CHECK_EQ_INT(ll_transport_close(in), 0); /* again: nothing */
    CHECK_EQ_INT(ll_transport_write(in, "x", 1), LL_ECLOSED);
    struct plog_done d = {&l, 3};
    RUN_UNTIL(loop, plog_all_done, &d, 10);
    CHECK_EQ_STR(l.out[1], "abc\n");
    CHECK_EQ_INT(l.code, 0);
    CHECK_EQ_INT(ll_transport_write(in, "x", 1), LL_EBADHANDLE); /* after LL_CONNECTION_LOST */
    ll_release(p);
    ll_release(loop);
}

/* A child that exits without reading what was written: the buffered data
 * ends the pipe with -EPIPE (asyncio's BrokenPipeError), and the host is
 * not killed by SIGPIPE. */
static void test_write_to_exited_reader(void) {
    ll_loop loop = new_loop();
    static struct plog l;
    memset(&l, 0, sizeof l);
    const char *const argv[] = {"sleep", "0.1", NULL};
    ll_process p = 0;
    CHECK_EQ_INT(spawn3(loop, argv, LL_STDIO_PIPE, LL_STDIO_DEVNULL, LL_STDIO_INHERIT, &l, &p), 0);
    ll_transport in = 0;
    CHECK_EQ_INT(ll_process_pipe(p, 0, &in), 0);
    static char buf[256 << 10];
    CHECK_EQ_INT(ll_transport_write(in, buf, sizeof buf), 0);
    struct plog_done d = {&l, 1};
    RUN_UNTIL(loop, plog_all_done, &d, 10);
    CHECK_EQ_INT(l.lost[0], 1);
    CHECK_EQ_INT(l.lost_code[0], -EPIPE);
    CHECK_EQ_INT(l.code, 0);
    CHECK_EQ_INT(ll_transport_write(in, "x", 1), LL_EBADHANDLE); /* after LL_CONNECTION_LOST */
    ll_release(p);
    ll_release(loop);
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A child that closes its stdout and goes on running: the stdout pipe gets
 * LL_EOF_RECEIVED and LL_CONNECTION_LOST while the child still runs; its
 * exit comes later (when the host closes its stdin, its `read` ends). */
static int lost1(void *arg) { return ((struct plog *)arg)->lost[1] > 0; }

static void test_stdout_closed_early(void) {
    ll_loop loop = new_loop();
    static struct plog l;
    memset(&l, 0, sizeof l);
    const char *const argv[] = {"sh", "-c", "echo before; exec 1>&-; read x; exit 7", NULL};
    ll_process p = 0;
    CHECK_EQ_INT(spawn3(loop, argv, LL_STDIO_PIPE, LL_STDIO_PIPE, LL_STDIO_INHERIT, &l, &p), 0);
    RUN_UNTIL(loop, lost1, &l, 10);
    CHECK_EQ_INT(l.lost[1], 1);
    CHECK_EQ_STR(l.out[1], "before\n");
    CHECK_EQ_INT(l.eof[1], 1);
    CHECK_EQ_INT(l.lost_code[1], 0);
    CHECK_EQ_INT(l.exited, 0); /* still running: it waits on its stdin */
    int rc = 0;
    CHECK_EQ_INT(ll_process_returncode(p, &rc), LL_ESTATE);
    ll_transport t = 0;
    CHECK_EQ_INT(ll_process_pipe(p, 1, &t), LL_ECLOSED);
    /* A little later it is still running. */
    for (int i = 0; i < 5; i++)
        ll_loop_run_once(loop, LL_RUN_NOWAIT);
    CHECK_EQ_INT(l.exited, 0);
    CHECK_EQ_INT(ll_process_send_signal(p, 0), 0);
    /* Now let it go: its read sees EOF, it exits 7. */
    ll_transport in = 0;
    CHECK_EQ_INT(ll_process_pipe(p, 0, &in), 0);
    CHECK_EQ_INT(ll_transport_close(in), 0);
    struct plog_done d = {&l, 3};
    RUN_UNTIL(loop, plog_all_done, &d, 10);
    CHECK_EQ_INT(l.exited, 1);
    CHECK_EQ_INT(l.code, 7);
    CHECK_EQ_INT(l.lost[1], 1); /* once */
    CHECK_EQ_INT(l.made[1], 1);
    CHECK_EQ_INT(l.bad_fd, 0);
    ll_release(p);
    ll_release(loop);
}

/* 8 MiB written to a child that never reads its stdin: every write is
 * taken (buffered) without blocking, LL_PAUSE_WRITING comes, nothing
 * resumes; killing the child ends the pipe (-EPIPE: the reader is gone)
 * and brings the exit; the loop goes on. */
static int paused0(void *arg) { return ((struct plog *)arg)->pause[0] > 0; }

static void test_never_reading_child(void) {
    ll_loop loop = new_loop();
    static struct plog l;
    memset(&l, 0, sizeof l);
    const char *const argv[] = {"sleep", "30", NULL};
    ll_process p = 0;
    CHECK_EQ_INT(spawn3(loop, argv, LL_STDIO_PIPE, LL_STDIO_DEVNULL, LL_STDIO_INHERIT, &l, &p), 0);
    ll_transport in = 0;
    CHECK_EQ_INT(ll_process_pipe(p, 0, &in), 0);
    unsigned char *chunk = calloc(1, CHUNK);
    CHECK(chunk != NULL);
    double t0 = now();
    int bad_writes = 0;
    for (size_t sent = 0; sent < TOTAL; sent += CHUNK)
        if (ll_transport_write(in, chunk, CHUNK) != 0)
            bad_writes++;
    CHECK_EQ_INT(bad_writes, 0);
    CHECK(now() - t0 < 5.0); /* never blocked on the full pipe */
    size_t buffered = 0;
    CHECK_EQ_INT(ll_transport_get_write_buffer_size(in, &buffered), 0);
    /* At most a pipe's worth (64 KiB here, 1 MiB at most) went to the kernel. */
    CHECK(buffered >= TOTAL - (1u << 20));
    RUN_UNTIL(loop, paused0, &l, 10);
    CHECK_EQ_INT(l.pause[0], 1);
    /* Nothing moves while the child does not read. */
    for (int i = 0; i < 5; i++)
        ll_loop_run_once(loop, LL_RUN_NOWAIT);
    CHECK_EQ_INT(l.resume[0], 0);
    CHECK_EQ_INT(l.lost[0], 0);
    CHECK_EQ_INT(l.exited, 0);

    CHECK_EQ_INT(ll_process_kill(p), 0);
    struct plog_done d = {&l, 1};
    RUN_UNTIL(loop, plog_all_done, &d, 10);
    CHECK_EQ_INT(l.exited, 1);
    CHECK_EQ_INT(l.code, -SIGKILL);
    CHECK_EQ_INT(l.lost[0], 1);
    CHECK_EQ_INT(l.lost_code[0], -EPIPE);
    CHECK_EQ_INT(l.resume[0], 0);
    CHECK_EQ_INT(ll_transport_write(in, "x", 1), LL_EBADHANDLE); /* after LL_CONNECTION_LOST */
    check_still_runs(loop);
    free(chunk);
    ll_release(p);
    ll_release(loop);
}

#define CYCLES 1000

static void test_spawn_kill_cycles(void) {
    ll_loop loop = new_loop();
    static struct plog l;
    int fds_before = -1;
    double t0 = now();
    int last_pid = 0, failed = 0;
    for (int i = 0; i < CYCLES + 1 && !failed; i++) {
        if (i == 1) { /* after one warm-up cycle, whatever it set up once */
            fds_before = count_fds();
            t0 = now();
        }
        memset(&l, 0, sizeof l);
        const char *const argv[] = {"sleep", "10", NULL};
        ll_process p = 0;
        /* A pipe too, so every cycle makes and ends a transport. */
        if (spawn3(loop, argv, LL_STDIO_DEVNULL, LL_STDIO_PIPE, LL_STDIO_DEVNULL, &l, &p) != 0 ||
            ll_process_pid(p, &last_pid) != 0 || ll_process_kill(p) != 0) {
            failed = 1;
            break;
        }
        struct plog_done d = {&l, 2};
        if (!RUN_UNTIL(loop, plog_all_done, &d, 5) || l.code != -SIGKILL)
            failed = 1;
        ll_release(p);
    }
    double took = now() - t0;
    CHECK_EQ_INT(failed, 0);
    CHECK_EQ_INT(count_fds(), fds_before);
    errno = 0;
    CHECK_EQ_INT(waitpid(-1, NULL, WNOHANG), -1); /* no child at all is left */
    CHECK_EQ_INT(errno, ECHILD);
    /* No bound on the total: each cycle has its own (5 s), a hang fails
     * there; the rate is bench/'s business, not a unit test's. */
    printf("%d spawn/kill cycles in %.2f s\n", CYCLES, took);
    check_still_runs(loop);
    ll_release(loop);
}

int main(void) {
    alarm(90); /* a hang is a failure, never a stuck suite */
    RUN_TEST(test_cat_8mib_with_back_pressure);
    RUN_TEST(test_close_stdin_gives_eof);
    RUN_TEST(test_write_to_exited_reader);
    RUN_TEST(test_stdout_closed_early);
    RUN_TEST(test_never_reading_child);
    RUN_TEST(test_spawn_kill_cycles);
    return CHECK_REPORT();
}
