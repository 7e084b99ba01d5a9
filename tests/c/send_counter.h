/* SPDX-License-Identifier: MIT */
/*
 * send_counter.h — counts the library's C write fast path: the program
 * that includes this (once) defines ll__count_direct_send, which
 * libloop.so's C fast path calls (a weak reference there) before each of
 * its sends, a raw system call; Go's writes do not call it. c_sends counts
 * the sends made on main_thread (set it first); other threads' sends go
 * uncounted.
 */
#ifndef LIBLOOP_TEST_SEND_COUNTER_H
#define LIBLOOP_TEST_SEND_COUNTER_H

#include <pthread.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

static int c_sends;
static pthread_t main_thread;

void ll__count_direct_send(void);
void ll__count_direct_send(void) {
    if (pthread_equal(pthread_self(), main_thread))
        c_sends++;
}

#endif
