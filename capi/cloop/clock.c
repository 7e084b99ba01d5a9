/* SPDX-License-Identifier: MIT */
#include <time.h>
#include "cloop.h"

/* The loop clock in C: CLOCK_MONOTONIC (Go's nanotime) minus the core's
 * own base, handed over once (ll__set_clock_base): C's "now" is the loop's
 * to the nanosecond, so a timer made here is neither early nor late. */
static int64_t clock_base;

void ll__set_clock_base(int64_t base) { __atomic_store_n(&clock_base, base, __ATOMIC_RELEASE); }

int64_t ll__clock_raw(void) {
    struct timespec ts;
#ifdef __APPLE__
    clock_gettime(CLOCK_UPTIME_RAW, &ts); /* Go's nanotime there: mach_absolute_time */
#else
    clock_gettime(CLOCK_MONOTONIC, &ts);
#endif
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t ll__clock_now(void) { return ll__clock_raw() - __atomic_load_n(&clock_base, __ATOMIC_ACQUIRE); }
