/* SPDX-License-Identifier: MIT */
/*
 * tour.c — a first tour of libloop from C.
 *
 * libloop is an asyncio-style event loop. You create a loop, hand it
 * callbacks (to run soon, after a delay, or when a file descriptor is
 * ready), and run it; it calls them back on the thread that runs it.
 *
 * This program shows, in about 150 ms:
 *   1. timers: ll_call_later with different delays, and one cancelled;
 *   2. file descriptors: a writer callback feeds a pipe, a reader drains it;
 *   3. threads: another pthread posts a callback with ll_call_soon_threadsafe,
 *      which wakes the loop up even while it is blocked waiting;
 *   4. stopping: a last timer calls ll_loop_stop and run_forever returns.
 *
 * Build:  cc tour.c -Iinclude -Lbuild -lloop -lpthread
 * Every libloop function that can fail returns an int: >= 0 is success,
 * < 0 an error code that ll_err_name()/ll_strerror() describe.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libloop.h"

/* Abort with a readable message if a libloop call failed. */
static void must(int rc, const char *what) {
    if (rc < 0) {
        fprintf(stderr, "tour: %s failed: %s (%s)\n", what, ll_err_name(rc), ll_strerror(rc));
        exit(1);
    }
}

/* Everything the callbacks share. The loop never looks inside `void *arg`:
 * it is ours, passed back untouched. */
struct tour {
    ll_loop loop;
    double start;   /* loop time when we began */
    int pipefd[2];  /* [0] read end, [1] write end */
    int events;     /* how many things happened, checked at the end */
};

static struct tour T;

/* Prints one line stamped with the loop's clock (seconds since start). */
static void say(const char *what) {
    printf("[%6.3f s] %s\n", ll_loop_time(T.loop) - T.start, what);
    T.events++;
}

/* ---- 1. timers ----------------------------------------------------------- */

/* A plain callback: ll_callback is void (*)(ll_loop, void *arg). */
static void on_timer(ll_loop loop, void *arg) {
    (void)loop;
    say((const char *)arg);
}

static void on_cancelled_timer(ll_loop loop, void *arg) {
    (void)loop;
    (void)arg;
    say("this never prints: the timer was cancelled");
}

/* ---- 2. a pipe ----------------------------------------------------------- */

/* Called when the write end is writable: write once, then stop watching
 * (a writer stays armed, and would be called every iteration, until removed). */
static void on_writable(ll_loop loop, int fd, void *arg) {
    (void)arg;
    const char msg[] = "hello through a pipe";
    if (write(fd, msg, sizeof msg - 1) != (ssize_t)(sizeof msg - 1)) {
        perror("write");
        exit(1);
    }
    must(ll_remove_writer(loop, fd), "ll_remove_writer");
    say("writer: the pipe is writable, wrote a message and removed the writer");
}

/* Called when the read end has data (level-triggered: again and again
 * while unread data remains). */
static void on_readable(ll_loop loop, int fd, void *arg) {
    (void)arg;
    char buf[64];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    if (n <= 0) {
        perror("read");
        exit(1);
    }
    buf[n] = '\0';
    char line[128];
    snprintf(line, sizeof line, "reader: got \"%s\", removing the reader", buf);
    say(line);
    must(ll_remove_reader(loop, fd), "ll_remove_reader"); /* returns 1: one was removed */
}

/* ---- 3. another thread ----------------------------------------------------- */

/* Runs on the loop's thread, although another thread scheduled it. */
static void from_thread(ll_loop loop, void *arg) {
    (void)loop;
    say((const char *)arg);
}

static void *worker(void *arg) {
    (void)arg;
    usleep(20 * 1000); /* by now the loop is blocked waiting for its timers */
    /* ll_call_soon_threadsafe is the one scheduling call that is safe from
     * any thread: it queues the callback and wakes the loop. */
    must(ll_call_soon_threadsafe(T.loop, from_thread, "thread: a worker thread posted this (ll_call_soon_threadsafe)"),
         "ll_call_soon_threadsafe");
    return NULL;
}

/* ---- 4. stopping ----------------------------------------------------------- */

static void on_stop(ll_loop loop, void *arg) {
    (void)arg;
    say("stop: calling ll_loop_stop; run_forever returns after this iteration");
    must(ll_loop_stop(loop), "ll_loop_stop");
}

int main(void) {
    printf("libloop %s — a tour\n", ll_version_string());

    /* A loop is an opaque id; 0 is never valid. */
    must(ll_loop_new(&T.loop), "ll_loop_new");
    T.start = ll_loop_time(T.loop);

    /* 1. Timers run in deadline order, whatever the order we schedule them in. */
    must(ll_call_later(T.loop, 0.100, on_timer, "timer: 100 ms", NULL), "ll_call_later");
    must(ll_call_later(T.loop, 0.050, on_timer, "timer: 50 ms", NULL), "ll_call_later");
    /* Ask for a handle (the last argument) to be able to cancel it. */
    ll_handle doomed;
    must(ll_call_later(T.loop, 0.070, on_cancelled_timer, NULL, &doomed), "ll_call_later");
    must(ll_handle_cancel(doomed), "ll_handle_cancel");
    printf("[%6.3f s] timer: 70 ms scheduled and cancelled (cancelled = %d)\n",
           ll_loop_time(T.loop) - T.start, ll_handle_cancelled(doomed));
    /* A handle is ours until we release it; releasing does not cancel. */
    must(ll_release(doomed), "ll_release");

    /* 2. Watch both ends of a pipe. */
    if (pipe(T.pipefd) != 0) {
        perror("pipe");
        return 1;
    }
    must(ll_add_reader(T.loop, T.pipefd[0], on_readable, NULL), "ll_add_reader");
    must(ll_add_writer(T.loop, T.pipefd[1], on_writable, NULL), "ll_add_writer");

    /* 3. A thread that will post a callback in 20 ms. */
    pthread_t th;
    if (pthread_create(&th, NULL, worker, NULL) != 0) {
        fprintf(stderr, "tour: pthread_create failed\n");
        return 1;
    }

    /* 4. The last timer stops the loop. */
    must(ll_call_later(T.loop, 0.150, on_stop, NULL, NULL), "ll_call_later");

    /* Run until ll_loop_stop. Every callback above runs on this thread. */
    must(ll_loop_run_forever(T.loop), "ll_loop_run_forever");
    pthread_join(th, NULL);

    /* ll_release closes the loop (dropping anything still scheduled) and
     * frees its id. Our fds are ours to close. */
    must(ll_release(T.loop), "ll_release");
    close(T.pipefd[0]);
    close(T.pipefd[1]);

    /* writer, reader, thread, two timers, stop */
    if (T.events != 6) {
        fprintf(stderr, "tour: expected 6 events, saw %d\n", T.events);
        return 1;
    }
    printf("done: %d events\n", T.events);
    return 0;
}
