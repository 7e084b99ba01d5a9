/* SPDX-License-Identifier: MIT */
/*
 * bind_tables.h — the tables llpy_bind takes, for the binding's C tests:
 * libloop's functions from the libloop.so the test links, and a C-API
 * table of harmless stand-ins for a test that calls none of them.
 */
#ifndef LIBLOOP_TEST_BIND_TABLES_H
#define LIBLOOP_TEST_BIND_TABLES_H

#include "libloop.h"
#include "llpy.h"

/* libloop's functions, from the libloop.so this test links. */
static void *const ll_table[LLPY_LL_COUNT] = {
    [LLPY_TRANSPORT_WRITE_ASYNC_PACKED] = (void *)ll_transport_write_async_packed,
    [LLPY_EVENT_WITHHOLD] = (void *)ll_event_withhold,
    [LLPY_LOOP_HOST_READY] = (void *)ll_loop_host_ready,
};

static void stub(void) {}

/* A table of non-NULL entries: llpy_bind only stores it, nothing in such
 * a test calls any of them. */
static inline void *const *api_table_of_stubs(void) {
    static void *table[LLPY_PY_COUNT];
    for (int i = 0; i < LLPY_PY_COUNT; i++)
        table[i] = (void *)stub;
    return table;
}

#endif
