/* SPDX-License-Identifier: MIT */
#include "cloop.h"

/* The loop clock in C: CLOCK_MONOTONIC (Go's nanotime) minus the core's
 * own base, handed over once (ll__set_clock_base): C's "now" is the loop's
 * to the nanosecond, so a timer made here is neither early nor late. The
 * reads are inline, in cloop.h. */
int64_t ll__clock_base;

void ll__set_clock_base(int64_t base) { __atomic_store_n(&ll__clock_base, base, __ATOMIC_RELEASE); }
