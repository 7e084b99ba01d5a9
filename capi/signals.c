/* SPDX-License-Identifier: MIT */
/* The C side of signals: one async-signal-safe handler for every signal a
 * loop watches. It writes the signal number (one byte) to the signal pipe
 * of each loop watching it; the loop reads the pipe and runs the callbacks
 * (libloop/signal.go). Registration happens on loop threads under a mutex;
 * the handler reads the table without locking (plain int loads). */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "signals.h"

#define MAX_SIG 65
#define MAX_WATCHERS 64 /* loops watching one signal */

static volatile int watchers[MAX_SIG][MAX_WATCHERS]; /* write fds, -1 when free */
static int nwatchers[MAX_SIG];
static struct sigaction saved[MAX_SIG]; /* the host's disposition, restored at the last removal */
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static int table_ready;

static void on_signal(int sig, siginfo_t *info, void *ctx) {
    (void)info;
    (void)ctx;
    int saved_errno = errno;
    if (sig > 0 && sig < MAX_SIG) {
        unsigned char b = (unsigned char)sig;
        for (int i = 0; i < MAX_WATCHERS; i++) {
            int fd = watchers[sig][i];
            if (fd >= 0) {
                ssize_t r = write(fd, &b, 1); /* full pipe: this delivery is dropped */
                (void)r;
            }
        }
    }
    errno = saved_errno;
}

static void init_table(void) {
    if (table_ready)
        return;
    for (int s = 0; s < MAX_SIG; s++)
        for (int i = 0; i < MAX_WATCHERS; i++)
            watchers[s][i] = -1;
    table_ready = 1;
}

int ll__signal_watch(int sig, int fd) {
    int rc = 0;
    pthread_mutex_lock(&table_lock);
    init_table();
    int slot = -1;
    for (int i = 0; i < MAX_WATCHERS; i++) {
        if (watchers[sig][i] == fd) {
            pthread_mutex_unlock(&table_lock);
            return 0; /* this loop watches sig already */
        }
        if (slot < 0 && watchers[sig][i] < 0)
            slot = i;
    }
    if (slot < 0) {
        rc = -ENOSPC;
    } else {
        if (nwatchers[sig] == 0) {
            struct sigaction sa;
            memset(&sa, 0, sizeof sa);
            sa.sa_sigaction = on_signal;
            sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
            sigemptyset(&sa.sa_mask);
            if (sigaction(sig, &sa, &saved[sig]) != 0)
                rc = -errno;
        }
        if (rc == 0) {
            watchers[sig][slot] = fd;
            nwatchers[sig]++;
        }
    }
    pthread_mutex_unlock(&table_lock);
    return rc;
}

int ll__signal_unwatch(int sig, int fd) {
    int removed = 0;
    pthread_mutex_lock(&table_lock);
    init_table();
    for (int i = 0; i < MAX_WATCHERS; i++) {
        if (watchers[sig][i] == fd) {
            watchers[sig][i] = -1;
            removed = 1;
            if (--nwatchers[sig] == 0)
                sigaction(sig, &saved[sig], NULL);
            break;
        }
    }
    pthread_mutex_unlock(&table_lock);
    return removed;
}
