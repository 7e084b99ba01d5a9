/* SPDX-License-Identifier: MIT */
/* The round of handles of the Python binding's loop, in C (llpy.h,
 * llpy_run_method): the host-queue trampoline's loop over the ready deque,
 * asyncio's Handle._run for each, without a Python frame per handle. It
 * reads the slots llpy_soon_bind told soon.c about. */
#include "llpy.h"

/* callback(*args), args a tuple: from a stack array up to eight. */
static PyObj *call_with(PyObj *callback, PyObj *args) {
    ptrdiff_t n = llpy_soon_fn.tuple_size(args);
    if (n < 0)
        return NULL;
    if (n > 8)
        return llpy_soon_fn.call_object(callback, args, NULL);
    PyObj *items[8];
    for (ptrdiff_t i = 0; i < n; i++)
        items[i] = llpy_py.tuple_get(args, i);
    return llpy_py.call(callback, items, (size_t)n, NULL);
}

/* handle's callback inside its context, as Handle._run and Context.run:
 * 0, or -1 with the exception set. The slots are read as borrowed
 * references and held for the call: a callback that cancels its own handle
 * (Handle.cancel clears _callback and _args) must not free itself, its
 * arguments or its context while it runs, as on asyncio's stack. */
static int run_one(PyObj *h) {
    const ptrdiff_t *off = llpy_layout.handle_slot;
    PyObj *ctx = LLPY_SLOT(h, off[LLPY_HANDLE_CONTEXT]);
    PyObj *cb = LLPY_SLOT(h, off[LLPY_HANDLE_CALLBACK]);
    PyObj *args = LLPY_SLOT(h, off[LLPY_HANDLE_ARGS]);
    if (ctx == NULL || cb == NULL || args == NULL) /* (a handle never filled: cannot be queued) */
        return 0;
    llpy_py.incref(ctx);
    llpy_py.incref(cb);
    llpy_py.incref(args);
    int rc = -1;
    if (llpy_py.ctx_enter(ctx) == 0) {
        PyObj *r = call_with(cb, args);
        int exited = llpy_py.ctx_exit(ctx);
        if (r != NULL) {
            llpy_py.decref(r);
            rc = exited < 0 ? -1 : 0;
        }
    }
    llpy_py.decref(args);
    llpy_py.decref(cb);
    llpy_py.decref(ctx);
    return rc;
}

/* A callback's exception to report(loop, handle, exc); SystemExit and
 * KeyboardInterrupt stay set. 0, or -1 with an exception set. */
static int reported(PyObj *loop, PyObj *h) {
    if (llpy_soon_fn.exc_matches(llpy_layout.exit_types))
        return -1;
    PyObj *lead[2] = {loop, h};
    PyObj *r = llpy_pass_exception(llpy_layout.report, lead, 2);
    if (r == NULL)
        return -1;
    llpy_py.decref(r);
    return 0;
}

/* run_handles(n), self being the loop. */
static PyObj *py_run_handles(PyObj *loop, PyObj *const *args, ptrdiff_t nargs) {
    PyObj *popleft = LLPY_SLOT(loop, llpy_layout.loop_slot[LLPY_LOOP_READY_POPLEFT]);
    if (nargs != 1 || popleft == NULL)
        return llpy_py.long_from_i64(LL_EINVAL);
    unsigned long long n = llpy_py.long_as_u64(args[0]);
    if (n == (unsigned long long)-1 && llpy_py.err_occurred() != NULL)
        return NULL;
    long long cancelled = 0;
    for (unsigned long long i = 0; i < n; i++) {
        PyObj *h = llpy_py.call(popleft, NULL, 0, NULL);
        if (h == NULL)
            return NULL; /* (the deque emptied under the round: Python's would raise too) */
        if (LLPY_SLOT(h, llpy_layout.handle_slot[LLPY_HANDLE_CANCELLED]) == llpy_layout.true_) {
            cancelled++;
        } else if (run_one(h) < 0 && reported(loop, h) < 0) {
            llpy_py.decref(h);
            return NULL;
        }
        llpy_py.decref(h);
    }
    return llpy_py.long_from_i64(cancelled);
}

static const py_method_def run_def = {
    "run_handles", py_run_handles, METH_FASTCALL,
    "run_handles(n): run the next n ready handles; how many were cancelled"};

const void *llpy_run_method(void) { return llpy_soon_bound ? &run_def : NULL; }
