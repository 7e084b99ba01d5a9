/* SPDX-License-Identifier: MIT */
/* The ABI's struct layouts, which the bindings read by offset (the purego
 * binding's bindings/go/events.go and stats.go, the Python binding's _netlib.py and stats.py): a
 * change here must change them too. */
#include <stddef.h>

#include "libloop.h"
#include "check.h"

static void event_layout(void) {
    CHECK_EQ_INT(offsetof(ll_event, kind), 0);
    CHECK_EQ_INT(offsetof(ll_event, code), 4);
    CHECK_EQ_INT(offsetof(ll_event, fd), 8);
    CHECK_EQ_INT(offsetof(ll_event, transport), 16);
    CHECK_EQ_INT(offsetof(ll_event, data), 24);
    CHECK_EQ_INT(offsetof(ll_event, len), 32);
    CHECK_EQ_INT(offsetof(ll_event, addr), 40);
    CHECK_EQ_INT(offsetof(ll_event, addrlen), 48);
    CHECK_EQ_INT(offsetof(ll_event, result), 52);
    CHECK_EQ_INT(offsetof(ll_event, arg), 56);
    CHECK_EQ_INT(sizeof(ll_event), 64);
}

static void process_options_layout(void) {
    CHECK_EQ_INT(offsetof(ll_process_options, file), 0);
    CHECK_EQ_INT(offsetof(ll_process_options, argv), 8);
    CHECK_EQ_INT(offsetof(ll_process_options, env), 16);
    CHECK_EQ_INT(offsetof(ll_process_options, cwd), 24);
    CHECK_EQ_INT(offsetof(ll_process_options, stdio), 32);
    CHECK_EQ_INT(offsetof(ll_process_options, flags), 44);
    CHECK_EQ_INT(sizeof(ll_process_options), 48);
}

static void loop_stats_layout(void) {
    CHECK_EQ_INT(offsetof(struct ll_loop_stats, size), 0);
    CHECK_EQ_INT(offsetof(struct ll_loop_stats, iterations), 8);
    CHECK_EQ_INT(offsetof(struct ll_loop_stats, events), 16);
    CHECK_EQ_INT(offsetof(struct ll_loop_stats, callbacks), 24);
    CHECK_EQ_INT(offsetof(struct ll_loop_stats, idle_ns), 32);
    CHECK_EQ_INT(offsetof(struct ll_loop_stats, running_ns), 40);
    CHECK_EQ_INT(offsetof(struct ll_loop_stats, ready), 48);
    CHECK_EQ_INT(offsetof(struct ll_loop_stats, timers), 56);
    CHECK_EQ_INT(offsetof(struct ll_loop_stats, fds), 64);
    CHECK_EQ_INT(offsetof(struct ll_loop_stats, tasks), 72);
    CHECK_EQ_INT(sizeof(struct ll_loop_stats), 80);
    CHECK_EQ_INT(LL_LOOP_STATS_V1_SIZE, 80);
}

int main(void) {
    RUN_TEST(event_layout);
    RUN_TEST(process_options_layout);
    RUN_TEST(loop_stats_layout);
    return CHECK_REPORT();
}
