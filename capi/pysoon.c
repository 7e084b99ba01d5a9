/* SPDX-License-Identifier: MIT */
/* call_soon of the Python binding's loop and its round of handles, in C
 * (include/libloop/python.h, ll_py_soon_method, ll_py_run_method). asyncio's Task and Future call loop.call_soon for
 * every step and every done callback; a Python call_soon is a Python frame
 * entered from C each time, and inside a request it runs cold: aiohttp (
 * three call_soon a request) with the server on one CPU went from 0.96× to
 * 1.00× uvloop's requests/s with call_soon in C (bench/python/README.md).
 *
 * Unlike pyhot.c this touches object memory, but only its own binding's:
 * the slots of its Handle class (written in a Handle it has just made) and
 * three slots of its loop class (read), at offsets the binding finds at
 * bind time by writing a marker through each slot. The CPython API is
 * still reached only through function pointers. */
#include <stdlib.h>
#include <string.h>

#include "pyapi.h"

typedef struct {
    PyObj *(*alloc)(PyObj *, ptrdiff_t);
    PyObj *(*tuple_new)(ptrdiff_t);
    int (*tuple_set)(PyObj *, ptrdiff_t, PyObj *);
    ptrdiff_t (*tuple_size)(PyObj *);
    PyObj *(*context_copy)(void);
    int (*callable)(PyObj *);
    PyObj *(*no_memory)(void);
    int (*str_equals)(PyObj *, const char *);
    int (*exc_matches)(PyObj *);
    PyObj *(*call_object)(PyObj *, PyObj *, PyObj *);
} soon_api;

static ll_py_soon_layout layout;
static soon_api fn;
static int soon_bound;

#define SLOT(obj, off) (*(PyObj **)((char *)(obj) + (off)))

/* The offsets are pointer-aligned, past the object header (refcount and
 * type), inside the object and distinct from each other. */
static int offsets_ok(const ptrdiff_t *off, int n, ptrdiff_t size) {
    for (int i = 0; i < n; i++) {
        if (off[i] < (ptrdiff_t)(2 * sizeof(void *)) || off[i] % (ptrdiff_t)sizeof(void *) != 0 ||
            off[i] > size - (ptrdiff_t)sizeof(void *))
            return 0;
        for (int j = 0; j < i; j++)
            if (off[j] == off[i])
                return 0;
    }
    return 1;
}

int ll_py_soon_bind(const ll_py_soon_layout *l) {
    if (l == NULL || !ll__py_bound)
        return LL_EINVAL;
    void *const objs[] = {l->handle_type, l->fallback, l->signal_name, l->context_name, l->false_,
                          l->true_, l->none, l->alloc, l->tuple_new, l->tuple_set,
                          l->tuple_size, l->context_copy, l->callable, l->no_memory,
                          l->str_equals, l->exc_matches, l->call_object, l->report,
                          l->exit_types};
    for (size_t i = 0; i < sizeof objs / sizeof objs[0]; i++)
        if (objs[i] == NULL)
            return LL_EINVAL;
    if (!offsets_ok(l->handle_slot, LL_PY_HANDLE_SLOTS, l->handle_size) ||
        !offsets_ok(l->loop_slot, LL_PY_LOOP_SLOTS, l->loop_size))
        return LL_EINVAL;
    if (soon_bound)
        return memcmp(&layout, l, sizeof layout) == 0 ? 0 : LL_EINVAL;
    layout = *l;
    fn.alloc = (PyObj * (*)(PyObj *, ptrdiff_t)) l->alloc;
    fn.tuple_new = (PyObj * (*)(ptrdiff_t)) l->tuple_new;
    fn.tuple_set = (int (*)(PyObj *, ptrdiff_t, PyObj *))l->tuple_set;
    fn.tuple_size = (ptrdiff_t(*)(PyObj *))l->tuple_size;
    fn.context_copy = (PyObj * (*)(void)) l->context_copy;
    fn.callable = (int (*)(PyObj *))l->callable;
    fn.no_memory = (PyObj * (*)(void)) l->no_memory;
    fn.str_equals = (int (*)(PyObj *, const char *))l->str_equals;
    fn.exc_matches = (int (*)(PyObj *))l->exc_matches;
    fn.call_object = (PyObj * (*)(PyObj *, PyObj *, PyObj *)) l->call_object;
    soon_bound = 1;
    return 0;
}

/* The Python call_soon(loop, *args, **kw) for everything but the plain
 * case: its checks, errors and debug handles stay asyncio's. */
static PyObj *fallback(PyObj *loop, PyObj *const *args, ptrdiff_t nargs, PyObj *kwnames) {
    ptrdiff_t nkw = kwnames != NULL ? fn.tuple_size(kwnames) : 0;
    if (nkw < 0)
        return NULL;
    PyObj *small[9], **all = small;
    size_t total = (size_t)(nargs + nkw) + 1;
    if (total > sizeof small / sizeof small[0]) {
        all = malloc(total * sizeof *all);
        if (all == NULL)
            return fn.no_memory();
    }
    all[0] = loop;
    memcpy(all + 1, args, (total - 1) * sizeof *all);
    PyObj *r = ll__py_api.call(layout.fallback, all, (size_t)nargs + 1, kwnames);
    if (all != small)
        free(all);
    return r;
}

/* call_soon(callback, *args, context=None), self being the loop. */
static PyObj *py_call_soon(PyObj *loop, PyObj *const *args, ptrdiff_t nargs, PyObj *kwnames) {
    PyObj *context = layout.none;
    if (kwnames != NULL) {
        /* context=: the name is the interned str from Python callers, and
         * CPython's own static one from asyncio's C Task and Future. */
        PyObj *kw = fn.tuple_size(kwnames) == 1 ? ll__py_api.tuple_get(kwnames, 0) : NULL;
        if (kw == NULL || (kw != layout.context_name && fn.str_equals(kw, "context") != 0))
            return fallback(loop, args, nargs, kwnames);
        context = args[nargs];
    }
    PyObj *append = SLOT(loop, layout.loop_slot[LL_PY_LOOP_READY_APPEND]);
    if (nargs < 1 || SLOT(loop, layout.loop_slot[LL_PY_LOOP_SOON_SLOW]) != layout.false_ ||
        append == NULL || !fn.callable(args[0]))
        return fallback(loop, args, nargs, kwnames);

    /* Everything that allocates comes before the Handle (made tracked by
     * the GC with its slots empty): nothing can run between its making
     * and its filling. */
    PyObj *cargs = fn.tuple_new(nargs - 1);
    if (cargs == NULL)
        return NULL;
    for (ptrdiff_t i = 1; i < nargs; i++) {
        ll__py_api.incref(args[i]);
        fn.tuple_set(cargs, i - 1, args[i]); /* (steals; cannot fail on a new tuple) */
    }
    if (context == layout.none) {
        context = fn.context_copy();
        if (context == NULL) {
            ll__py_api.decref(cargs);
            return NULL;
        }
    } else {
        ll__py_api.incref(context);
    }
    PyObj *h = fn.alloc(layout.handle_type, 0);
    if (h == NULL) {
        ll__py_api.decref(cargs);
        ll__py_api.decref(context);
        return NULL;
    }
    const ptrdiff_t *off = layout.handle_slot;
    PyObj *const vals[LL_PY_HANDLE_SLOTS] = {
        [LL_PY_HANDLE_CONTEXT] = context,    [LL_PY_HANDLE_LOOP] = loop,
        [LL_PY_HANDLE_CALLBACK] = args[0],   [LL_PY_HANDLE_ARGS] = cargs,
        [LL_PY_HANDLE_CANCELLED] = layout.false_, [LL_PY_HANDLE_REPR] = layout.none,
        [LL_PY_HANDLE_SOURCE_TRACEBACK] = layout.none,
    };
    for (int i = 0; i < LL_PY_HANDLE_SLOTS; i++) {
        if (i != LL_PY_HANDLE_CONTEXT && i != LL_PY_HANDLE_ARGS)
            ll__py_api.incref(vals[i]); /* (context and cargs: ours already) */
        SLOT(h, off[i]) = vals[i];
    }

    PyObj *r = ll__py_api.call(append, &h, 1, NULL);
    if (r == NULL) {
        ll__py_api.decref(h);
        return NULL;
    }
    ll__py_api.decref(r);
    if (SLOT(loop, layout.loop_slot[LL_PY_LOOP_SIGNALLED]) != layout.true_) {
        r = ll__py_api.call_method(layout.signal_name, &loop, 1, NULL);
        if (r == NULL) {
            ll__py_api.decref(h);
            return NULL;
        }
        ll__py_api.decref(r);
    }
    return h;
}

static const py_method_def soon_def = {
    "call_soon", (py_fastcall)(void (*)(void))py_call_soon, METH_FASTCALL | METH_KEYWORDS,
    "call_soon(callback, *args, context=None): schedule callback(*args) (in C)"};

const void *ll_py_soon_method(void) { return soon_bound ? &soon_def : NULL; }

/* ---- the round of handles (ll_py_run_method) ------------------------------ */

/* callback(*args), args a tuple: from a stack array up to eight. */
static PyObj *call_with(PyObj *callback, PyObj *args) {
    ptrdiff_t n = fn.tuple_size(args);
    if (n < 0)
        return NULL;
    if (n > 8)
        return fn.call_object(callback, args, NULL);
    PyObj *items[8];
    for (ptrdiff_t i = 0; i < n; i++)
        items[i] = ll__py_api.tuple_get(args, i);
    return ll__py_api.call(callback, items, (size_t)n, NULL);
}

/* handle's callback inside its context, as Handle._run and Context.run:
 * 0, or -1 with the exception set. The slots are read as borrowed
 * references and held for the call: a callback that cancels its own handle
 * (Handle.cancel clears _callback and _args) must not free itself, its
 * arguments or its context while it runs, as on asyncio's stack. */
static int run_one(PyObj *h) {
    const ptrdiff_t *off = layout.handle_slot;
    PyObj *ctx = SLOT(h, off[LL_PY_HANDLE_CONTEXT]);
    PyObj *cb = SLOT(h, off[LL_PY_HANDLE_CALLBACK]);
    PyObj *args = SLOT(h, off[LL_PY_HANDLE_ARGS]);
    if (ctx == NULL || cb == NULL || args == NULL) /* (a handle never filled: cannot be queued) */
        return 0;
    ll__py_api.incref(ctx);
    ll__py_api.incref(cb);
    ll__py_api.incref(args);
    int rc = -1;
    if (ll__py_api.ctx_enter(ctx) == 0) {
        PyObj *r = call_with(cb, args);
        int exited = ll__py_api.ctx_exit(ctx);
        if (r != NULL) {
            ll__py_api.decref(r);
            rc = exited < 0 ? -1 : 0;
        }
    }
    ll__py_api.decref(args);
    ll__py_api.decref(cb);
    ll__py_api.decref(ctx);
    return rc;
}

/* A callback's exception to report(loop, handle, exc); SystemExit and
 * KeyboardInterrupt stay set. 0, or -1 with an exception set. */
static int reported(PyObj *loop, PyObj *h) {
    if (fn.exc_matches(layout.exit_types))
        return -1;
    PyObj *lead[2] = {loop, h};
    PyObj *r = ll__py_pass_exception(layout.report, lead, 2);
    if (r == NULL)
        return -1;
    ll__py_api.decref(r);
    return 0;
}

/* run_handles(n), self being the loop. */
static PyObj *py_run_handles(PyObj *loop, PyObj *const *args, ptrdiff_t nargs) {
    PyObj *popleft = SLOT(loop, layout.loop_slot[LL_PY_LOOP_READY_POPLEFT]);
    if (nargs != 1 || popleft == NULL)
        return ll__py_api.long_from_i64(LL_EINVAL);
    unsigned long long n = ll__py_api.long_as_u64(args[0]);
    if (n == (unsigned long long)-1 && ll__py_api.err_occurred() != NULL)
        return NULL;
    long long cancelled = 0;
    for (unsigned long long i = 0; i < n; i++) {
        PyObj *h = ll__py_api.call(popleft, NULL, 0, NULL);
        if (h == NULL)
            return NULL; /* (the deque emptied under the round: Python's would raise too) */
        if (SLOT(h, layout.handle_slot[LL_PY_HANDLE_CANCELLED]) == layout.true_) {
            cancelled++;
        } else if (run_one(h) < 0 && reported(loop, h) < 0) {
            ll__py_api.decref(h);
            return NULL;
        }
        ll__py_api.decref(h);
    }
    return ll__py_api.long_from_i64(cancelled);
}

static const py_method_def run_def = {
    "run_handles", py_run_handles, METH_FASTCALL,
    "run_handles(n): run the next n ready handles; how many were cancelled"};

const void *ll_py_run_method(void) { return soon_bound ? &run_def : NULL; }
