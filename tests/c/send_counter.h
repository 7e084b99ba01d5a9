/* SPDX-License-Identifier: MIT */
/*
 * send_counter.h — counts the library's C write fast path: the program
 * that includes this (once) defines send(), which libloop.so's C code
 * calls (the executable's symbol comes first), while Go writes with raw
 * system calls. c_sends counts the sends made on main_thread (set it
 * first); other threads' sends pass through uncounted.
 */
#ifndef LIBLOOP_TEST_SEND_COUNTER_H
#define LIBLOOP_TEST_SEND_COUNTER_H

#include <pthread.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

static int c_sends;
static pthread_t main_thread;

ssize_t send(int fd, const void *buf, size_t len, int flags) {
    if (pthread_equal(pthread_self(), main_thread))
        c_sends++;
    return syscall(SYS_sendto, fd, buf, len, flags, NULL, 0);
}

#endif
