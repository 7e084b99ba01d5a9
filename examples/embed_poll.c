/* SPDX-License-Identifier: MIT */
/*
 * embed_poll.c — libloop inside a host's own poll() loop.
 *
 * Some programs already have a main loop (a GUI toolkit, a game loop, a
 * server written around poll()) and want libloop's timers, transports and
 * tasks without handing the thread over to ll_loop_run_forever. libloop
 * gives such a host what libuv gives it (uv_backend_fd,
 * uv_backend_timeout, prepare and check handles):
 *
 *   ll_loop_backend_fd(loop)    an fd that polls readable while libloop
 *                               has I/O (or a wakeup from another thread);
 *   ll_loop_next_timeout(loop)  how long the host may sleep: ms to the
 *                               next timer, 0 if work is ready, -1 if none;
 *   ll_loop_run_once(loop, LL_RUN_NOWAIT)  one iteration, never blocking;
 *   ll_hook_add(loop, LL_HOOK_PREPARE / LL_HOOK_CHECK, ...)  code of the
 *                               host run just before / after libloop polls.
 *
 * The host below watches its own pipe (its "UI events") and the backend fd
 * in one poll(), sleeps exactly as long as libloop allows, and runs one
 * libloop iteration after every wakeup. libloop meanwhile runs a repeating
 * timer (re-armed from its callback), a reader on another pipe, and a
 * callback posted from another thread. It ends after about 120 ms.
 *
 * Build:  cc examples/embed_poll.c -Iinclude -Lbuild -lloop -lpthread
 */
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "libloop.h"

static void must(int rc, const char *what) {
    if (rc < 0) {
        fprintf(stderr, "%s: %s (%s)\n", what, ll_strerror(rc), ll_err_name(rc));
        exit(1);
    }
}

static int ticks, host_events, loop_reads, posted, prepares, checks;
static int loop_pipe[2], host_pipe[2];

/* A timer every 20 ms, five times: the host sleeps between them. */
static void on_tick(ll_loop loop, void *arg) {
    (void)arg;
    if (++ticks < 5)
        must(ll_call_later(loop, 0.02, on_tick, NULL, NULL), "ll_call_later");
    if (ticks == 2) /* something for libloop's reader, and for the host */
        if (write(loop_pipe[1], "L", 1) != 1 || write(host_pipe[1], "H", 1) != 1)
            exit(1);
}

static void on_loop_read(ll_loop loop, int fd, void *arg) {
    (void)loop, (void)arg;
    char c;
    if (read(fd, &c, 1) == 1)
        loop_reads++;
}

static void on_post(ll_loop loop, void *arg) {
    (void)loop, (void)arg;
    posted++;
}

/* Another thread posts while the host sleeps in poll(): the backend fd
 * wakes it. */
static void *poster(void *arg) {
    usleep(30000);
    must(ll_call_soon_threadsafe(*(ll_loop *)arg, on_post, NULL), "ll_call_soon_threadsafe");
    return NULL;
}

static void on_prepare(ll_loop loop, void *arg) { (void)loop, (void)arg, prepares++; }
static void on_check(ll_loop loop, void *arg) { (void)loop, (void)arg, checks++; }

int main(void) {
    ll_loop loop;
    ll_handle prepare, check;
    must(ll_loop_new(&loop), "ll_loop_new");
    if (pipe(loop_pipe) != 0 || pipe(host_pipe) != 0)
        return 1;
    must(ll_add_reader(loop, loop_pipe[0], on_loop_read, NULL), "ll_add_reader");
    must(ll_call_later(loop, 0.02, on_tick, NULL, NULL), "ll_call_later");
    must(ll_hook_add(loop, LL_HOOK_PREPARE, on_prepare, NULL, &prepare), "ll_hook_add");
    must(ll_hook_add(loop, LL_HOOK_CHECK, on_check, NULL, &check), "ll_hook_add");
    int bfd = ll_loop_backend_fd(loop);
    must(bfd, "ll_loop_backend_fd");
    pthread_t th;
    if (pthread_create(&th, NULL, poster, &loop) != 0)
        return 1;

    /* The host's loop. */
    int wakeups = 0;
    while (ticks < 5 || posted == 0) {
        int timeout = ll_loop_next_timeout(loop); /* -1: only I/O can wake libloop */
        if (timeout < -1)
            must(timeout, "ll_loop_next_timeout");
        struct pollfd fds[2] = {{.fd = host_pipe[0], .events = POLLIN}, {.fd = bfd, .events = POLLIN}};
        if (poll(fds, 2, timeout) < 0)
            return 1;
        wakeups++;
        if (fds[0].revents & POLLIN) { /* the host's own event */
            char c;
            if (read(host_pipe[0], &c, 1) == 1)
                host_events++;
        }
        /* Whatever woke the host, let libloop run what is due: its I/O
         * (the backend fd), its timers (the timeout), its posts. */
        must(ll_loop_run_once(loop, LL_RUN_NOWAIT), "ll_loop_run_once");
    }
    pthread_join(th, NULL);
    printf("ticks %d, libloop reads %d, host events %d, posts %d, host wakeups %d, prepare %d, check %d\n",
           ticks, loop_reads, host_events, posted, wakeups, prepares, checks);
    /* One prepare and one check per libloop iteration, one iteration per
     * wakeup; a dozen or so wakeups for 5 ticks, a read and a post: the
     * host never spun. */
    int ok = ticks == 5 && loop_reads == 1 && host_events == 1 && posted == 1 && prepares == wakeups &&
             checks == wakeups && wakeups < 50;
    must(ll_release(prepare), "ll_release");
    must(ll_release(check), "ll_release");
    must(ll_release(loop), "ll_release");
    close(loop_pipe[0]), close(loop_pipe[1]), close(host_pipe[0]), close(host_pipe[1]);
    return ok ? 0 : 1;
}
