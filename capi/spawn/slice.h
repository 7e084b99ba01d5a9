/* SPDX-License-Identifier: MIT */
/* Internal: a short scheduler slice for the thread that spawns, while its
 * vfork-style child runs (vfork_linux.c). Not installed. */
#ifndef LIBLOOP_SPAWN_SLICE_H
#define LIBLOOP_SPAWN_SLICE_H

#include <stdint.h>

/* The kernel's struct sched_attr, first version (48 bytes). */
struct ll__sattr {
    uint32_t size, policy;
    uint64_t flags;
    int32_t nice;
    uint32_t priority;
    uint64_t runtime, deadline, period;
};

/* Gives the calling thread the kernel's shortest slice (EEVDF's custom
 * slice, Linux 6.12+) and fills *back with what puts it back: 1 if it did,
 * 0 if it left the thread alone (no custom slices here, a policy other
 * than SCHED_OTHER (SCHED_BATCH never preempts on wakeup), a thread that
 * resets its children's scheduling on fork, a refusal). */
int ll__slice_shorten(struct ll__sattr *back);

/* Puts the calling thread's attributes back from *back. One raw system
 * call: safe in a vfork child. */
void ll__slice_restore(const struct ll__sattr *back);

#endif
