/* SPDX-License-Identifier: MIT */
/* call_soon of the Python binding's loop, in C (llpy.h: llpy_soon_bind,
 * llpy_soon_method; the round of handles is handles.c). asyncio's Task and
 * Future call loop.call_soon for every step and every done callback; a
 * Python call_soon is a Python frame entered from C each time, and inside
 * a request it runs cold: an aiohttp server (three call_soon a request) on
 * one CPU went from 0.96x to 1.00x uvloop's requests/s with call_soon in C
 * (bench/python/README.md).
 *
 * Unlike sink.c this touches object memory, but only its own binding's:
 * the slots of its Handle class (written in a Handle it has just made) and
 * three slots of its loop class (read), at offsets the binding finds at
 * bind time by writing a marker through each slot. The CPython API is
 * still reached only through function pointers. */
#include <stdlib.h>
#include <string.h>

#include "llpy.h"

llpy_soon_layout llpy_layout;
llpy_soon_api llpy_soon_fn;
int llpy_soon_bound;

/* The offsets are pointer-aligned, past the object header (refcount and
 * type), inside the object and distinct from each other. */
int llpy_offsets_ok(const ptrdiff_t *off, int n, ptrdiff_t size) {
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

int llpy_soon_bind(const llpy_soon_layout *l) {
    if (l == NULL || !llpy_bound)
        return LL_EINVAL;
    void *const objs[] = {l->handle_type, l->fallback, l->signal_name, l->context_name, l->false_,
                          l->true_, l->none, l->alloc, l->tuple_new, l->tuple_set,
                          l->tuple_size, l->context_copy, l->callable, l->no_memory,
                          l->str_equals, l->exc_matches, l->call_object, l->report,
                          l->exit_types};
    for (size_t i = 0; i < sizeof objs / sizeof objs[0]; i++)
        if (objs[i] == NULL)
            return LL_EINVAL;
    if (!llpy_offsets_ok(l->handle_slot, LLPY_HANDLE_SLOTS, l->handle_size) ||
        !llpy_offsets_ok(l->loop_slot, LLPY_LOOP_SLOTS, l->loop_size))
        return LL_EINVAL;
    if (llpy_soon_bound)
        return memcmp(&llpy_layout, l, sizeof llpy_layout) == 0 ? 0 : LL_EINVAL;
    llpy_layout = *l;
    llpy_soon_fn.alloc = (PyObj * (*)(PyObj *, ptrdiff_t)) l->alloc;
    llpy_soon_fn.tuple_new = (PyObj * (*)(ptrdiff_t)) l->tuple_new;
    llpy_soon_fn.tuple_set = (int (*)(PyObj *, ptrdiff_t, PyObj *))l->tuple_set;
    llpy_soon_fn.tuple_size = (ptrdiff_t(*)(PyObj *))l->tuple_size;
    llpy_soon_fn.context_copy = (PyObj * (*)(void)) l->context_copy;
    llpy_soon_fn.callable = (int (*)(PyObj *))l->callable;
    llpy_soon_fn.no_memory = (PyObj * (*)(void)) l->no_memory;
    llpy_soon_fn.str_equals = (int (*)(PyObj *, const char *))l->str_equals;
    llpy_soon_fn.exc_matches = (int (*)(PyObj *))l->exc_matches;
    llpy_soon_fn.call_object = (PyObj * (*)(PyObj *, PyObj *, PyObj *)) l->call_object;
    llpy_soon_bound = 1;
    return 0;
}

/* The Python call_soon(loop, *args, **kw) for everything but the plain
 * case: its checks, errors and debug handles stay asyncio's. */
static PyObj *fallback(PyObj *loop, PyObj *const *args, ptrdiff_t nargs, PyObj *kwnames) {
    ptrdiff_t nkw = kwnames != NULL ? llpy_soon_fn.tuple_size(kwnames) : 0;
    if (nkw < 0)
        return NULL;
    PyObj *small[9], **all = small;
    size_t total = (size_t)(nargs + nkw) + 1;
    if (total > sizeof small / sizeof small[0]) {
        all = malloc(total * sizeof *all);
        if (all == NULL)
            return llpy_soon_fn.no_memory();
    }
    all[0] = loop;
    memcpy(all + 1, args, (total - 1) * sizeof *all);
    PyObj *r = llpy_py.call(llpy_layout.fallback, all, (size_t)nargs + 1, kwnames);
    if (all != small)
        free(all);
    return r;
}

/* loop._signal() in C: ll_loop_host_ready(loop._id), then loop._signalled
 * = True (a Python frame and a ctypes call less per request on a
 * request/response client). An id that is not an int, or a failing
 * ll_loop_host_ready, goes to the Python method, whose handling stays the
 * one place that decides. 0, or -1 with an exception set. */
static int signal(PyObj *loop) {
    PyObj *id = LLPY_SLOT(loop, llpy_layout.loop_slot[LLPY_LOOP_ID]);
    if (id != NULL) {
        unsigned long long lid = llpy_py.long_as_u64(id);
        if (lid == (unsigned long long)-1 && llpy_py.err_occurred() != NULL)
            return -1;
        if (llpy_ll.host_ready(lid) == 0) {
            PyObj **slot = &LLPY_SLOT(loop, llpy_layout.loop_slot[LLPY_LOOP_SIGNALLED]);
            PyObj *old = *slot;
            llpy_py.incref(llpy_layout.true_);
            *slot = llpy_layout.true_;
            if (old != NULL)
                llpy_py.decref(old);
            return 0;
        }
    }
    PyObj *r = llpy_py.call_method(llpy_layout.signal_name, &loop, 1, NULL);
    if (r == NULL)
        return -1;
    llpy_py.decref(r);
    return 0;
}

/* call_soon(callback, *args, context=None), self being the loop. */
static PyObj *py_call_soon(PyObj *loop, PyObj *const *args, ptrdiff_t nargs, PyObj *kwnames) {
    PyObj *context = llpy_layout.none;
    if (kwnames != NULL) {
        /* context=: the name is the interned str from Python callers, and
         * CPython's own static one from asyncio's C Task and Future. */
        PyObj *kw = llpy_soon_fn.tuple_size(kwnames) == 1 ? llpy_py.tuple_get(kwnames, 0) : NULL;
        if (kw == NULL || (kw != llpy_layout.context_name && llpy_soon_fn.str_equals(kw, "context") != 0))
            return fallback(loop, args, nargs, kwnames);
        context = args[nargs];
    }
    PyObj *append = LLPY_SLOT(loop, llpy_layout.loop_slot[LLPY_LOOP_READY_APPEND]);
    if (nargs < 1 || LLPY_SLOT(loop, llpy_layout.loop_slot[LLPY_LOOP_SOON_SLOW]) != llpy_layout.false_ ||
        append == NULL || !llpy_soon_fn.callable(args[0]))
        return fallback(loop, args, nargs, kwnames);

    /* Everything that allocates comes before the Handle (made tracked by
     * the GC with its slots empty): nothing can run between its making
     * and its filling. */
    PyObj *cargs = llpy_soon_fn.tuple_new(nargs - 1);
    if (cargs == NULL)
        return NULL;
    for (ptrdiff_t i = 1; i < nargs; i++) {
        llpy_py.incref(args[i]);
        llpy_soon_fn.tuple_set(cargs, i - 1, args[i]); /* (steals; cannot fail on a new tuple) */
    }
    if (context == llpy_layout.none) {
        context = llpy_soon_fn.context_copy();
        if (context == NULL) {
            llpy_py.decref(cargs);
            return NULL;
        }
    } else {
        llpy_py.incref(context);
    }
    PyObj *h = llpy_soon_fn.alloc(llpy_layout.handle_type, 0);
    if (h == NULL) {
        llpy_py.decref(cargs);
        llpy_py.decref(context);
        return NULL;
    }
    const ptrdiff_t *off = llpy_layout.handle_slot;
    PyObj *const vals[LLPY_HANDLE_SLOTS] = {
        [LLPY_HANDLE_CONTEXT] = context,    [LLPY_HANDLE_LOOP] = loop,
        [LLPY_HANDLE_CALLBACK] = args[0],   [LLPY_HANDLE_ARGS] = cargs,
        [LLPY_HANDLE_CANCELLED] = llpy_layout.false_, [LLPY_HANDLE_REPR] = llpy_layout.none,
        [LLPY_HANDLE_SOURCE_TRACEBACK] = llpy_layout.none,
    };
    for (int i = 0; i < LLPY_HANDLE_SLOTS; i++) {
        if (i != LLPY_HANDLE_CONTEXT && i != LLPY_HANDLE_ARGS)
            llpy_py.incref(vals[i]); /* (context and cargs: ours already) */
        LLPY_SLOT(h, off[i]) = vals[i];
    }

    PyObj *r = llpy_py.call(append, &h, 1, NULL);
    if (r == NULL) {
        llpy_py.decref(h);
        return NULL;
    }
    llpy_py.decref(r);
    if (LLPY_SLOT(loop, llpy_layout.loop_slot[LLPY_LOOP_SIGNALLED]) != llpy_layout.true_ &&
        signal(loop) < 0) {
        llpy_py.decref(h);
        return NULL;
    }
    return h;
}

static const py_method_def soon_def = {
    "call_soon", (py_fastcall)(void (*)(void))py_call_soon, METH_FASTCALL | METH_KEYWORDS,
    "call_soon(callback, *args, context=None): schedule callback(*args) (in C)"};

const void *llpy_soon_method(void) { return llpy_soon_bound ? &soon_def : NULL; }
