/* SPDX-License-Identifier: MIT */
/*
 * bench/post_queue.h — W6 for libuv and libev: neither library queues
 * callbacks posted from another thread (uv_async_send / ev_async_send only
 * wake the loop, and coalesce), so a host writes this queue itself: a
 * mutex-protected array of (fn, arg), appended by the posting thread,
 * which then sends the async wakeup; the loop's async callback takes the
 * whole array under the lock and runs it. That is what libloop's
 * ll_call_soon_threadsafe does inside the library.
 */
#ifndef BENCH_POST_QUEUE_H
#define BENCH_POST_QUEUE_H

#include <pthread.h>
#include <stdlib.h>

typedef struct post_item {
    void (*fn)(void *);
    void *arg;
} post_item;

typedef struct post_queue {
    pthread_mutex_t mu;
    post_item *items;
    long n, cap;
} post_queue;

static inline void post_queue_init(post_queue *q) {
    pthread_mutex_init(&q->mu, NULL);
    q->items = NULL;
    q->n = q->cap = 0;
}

/* Append one call; 0 on success. */
static inline int post_queue_push(post_queue *q, void (*fn)(void *), void *arg) {
    pthread_mutex_lock(&q->mu);
    if (q->n == q->cap) {
        long ncap = q->cap ? q->cap * 2 : 256;
        post_item *items = realloc(q->items, (size_t)ncap * sizeof *items);
        if (items == NULL) {
            pthread_mutex_unlock(&q->mu);
            return -1;
        }
        q->items = items;
        q->cap = ncap;
    }
    q->items[q->n].fn = fn;
    q->items[q->n].arg = arg;
    q->n++;
    pthread_mutex_unlock(&q->mu);
    return 0;
}

/* Take everything queued and run it, in order (on the loop's thread). */
static inline void post_queue_run(post_queue *q) {
    pthread_mutex_lock(&q->mu);
    post_item *items = q->items;
    long n = q->n;
    q->items = NULL;
    q->n = q->cap = 0;
    pthread_mutex_unlock(&q->mu);
    for (long i = 0; i < n; i++)
        items[i].fn(items[i].arg);
    free(items);
}

#endif
