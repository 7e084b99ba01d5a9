/* SPDX-License-Identifier: MIT */
/* Go's calls of one host function pointer (a free, a work function, an
 * exception handler, a host run): cgo cannot call a C function pointer
 * itself, so each has a one-line trampoline here. */
#include "cloop.h"

void ll__call_exception_handler(uintptr_t fn, uint64_t loop, ll_error_context *ctx, uintptr_t arg) {
    ((ll_exception_handler)fn)(loop, ctx, (void *)arg);
}

void ll__call_free(uintptr_t fn, uintptr_t value) { ((ll_free_fn)fn)(value); }

uintptr_t ll__call_work(uintptr_t fn, uintptr_t arg, int *err) {
    *err = 0;
    return ((ll_work_fn)fn)((void *)arg, err);
}

void ll__call_queued_work(uintptr_t fn, uintptr_t arg) { ((ll_queue_work_fn)fn)((void *)arg); }

int ll__call_host_run(uintptr_t fn, uint64_t loop, uintptr_t arg) {
    return ((ll_host_run_fn)fn)(loop, (void *)arg);
}

