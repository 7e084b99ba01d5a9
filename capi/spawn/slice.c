/* SPDX-License-Identifier: MIT */
/* A short slice around a vfork-style spawn (Linux).
 *
 * Why: the parent of a CLONE_VFORK child sleeps until the child execs. The
 * kernel places the new child on the other CPU when this one is busy with
 * the parent, and there, with the default slice (~1.4 ms here), it waits
 * behind whatever runs (500 spawns, 16 at a time: behind other children, 0.3-0.9 ms, perf sched
 * timehist) while the parent's CPU, with nothing else queued, idles: 14-19%
 * of that run's CPU time idle against 0% for libev's fork(), which never waits.
 * A task that asks for a shorter slice gets an earlier deadline and so
 * preempts the running task when it wakes (EEVDF, Linux 6.12+). The child
 * inherits the attribute from the parent at the clone, runs at once, and
 * puts the thread's own attributes back just before execve; the parent,
 * woken by that exec, also preempts and puts its own back when clone
 * returns. What the program exec'd gets is what the spawning thread had.
 * Asking for a shorter slice needs no privilege; it changes no priority,
 * only how soon the thread runs once it is runnable.
 *
 * A slice of the kernel's default is given back as "no custom slice"
 * (runtime 0), not as a custom slice of the same length: the default's
 * length is learned once, by the first restore. */
#ifdef __linux__
#define _GNU_SOURCE
#include <sched.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "slice.h"

#ifndef SYS_sched_setattr
#define SYS_sched_setattr 314
#endif
#ifndef SYS_sched_getattr
#define SYS_sched_getattr 315
#endif

#define SHORTEST_SLICE 100000ULL /* ns: the kernel's lower clamp (0.1 ms) */
#define FLAG_RESET_ON_FORK 0x01ULL

/* 0: not known yet; -1: no custom slices here, never again; else the
 * kernel's default slice in ns. */
static long long base_slice;

static long set_attr(const struct ll__sattr *a) {
    return syscall(SYS_sched_setattr, 0, a, 0);
}

static long get_attr(struct ll__sattr *a) {
    return syscall(SYS_sched_getattr, 0, a, sizeof *a, 0);
}

int ll__slice_shorten(struct ll__sattr *back) {
    long long base = __atomic_load_n(&base_slice, __ATOMIC_RELAXED);
    if (base < 0)
        return 0;
    struct ll__sattr cur = {0};
    /* A thread that resets its children's scheduling on fork is left
     * alone: the child's restore would give the program the parent's
     * attributes, which such a fork does not. */
    if (get_attr(&cur) != 0 || cur.policy != SCHED_OTHER || (cur.flags & FLAG_RESET_ON_FORK))
        return 0;
    if (cur.runtime == 0) { /* a kernel that reports no slice has none to set */
        __atomic_store_n(&base_slice, -1, __ATOMIC_RELAXED);
        return 0;
    }
    struct ll__sattr fast = cur;
    fast.size = sizeof fast;
    fast.flags = 0;
    fast.runtime = SHORTEST_SLICE;
    if (set_attr(&fast) != 0) {
        __atomic_store_n(&base_slice, -1, __ATOMIC_RELAXED);
        return 0;
    }
    *back = fast;
    back->runtime = cur.runtime;
    if (base == 0) {
        /* Learn the default: no custom slice, then read what it gives. */
        struct ll__sattr probe = fast, seen = {0};
        probe.runtime = 0;
        if (set_attr(&probe) == 0 && get_attr(&seen) == 0 && seen.runtime > 0) {
            base = (long long)seen.runtime;
            __atomic_store_n(&base_slice, base, __ATOMIC_RELAXED);
        }
        set_attr(&fast);
    }
    if (base > 0 && back->runtime == (uint64_t)base)
        back->runtime = 0;
    return 1;
}

void ll__slice_restore(const struct ll__sattr *back) {
    set_attr(back);
}
#endif
