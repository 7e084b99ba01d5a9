/* SPDX-License-Identifier: MIT */
/* StreamTransport.write and is_closing of the Python binding, in C
 * (llpy.h: llpy_stream_bind, llpy_stream_write_method,
 * llpy_stream_is_closing_method). asyncpg's protocol (Cython) and
 * asyncio's StreamWriter call transport.write once per message; in
 * Python that is a frame or two (write, then _write_other for asyncpg's
 * memoryviews) around the write builtin (write.c), entered from C each
 * time.
 *
 * Only the common cases are done here, each exactly as the Python write
 * does it; whatever needs a check this file does not make (another type,
 * empty data, after write_eof or close, gathered bytes already held, a
 * buffer that is not C-contiguous, keywords) calls the Python write
 * (the layout's fallback), so that asyncio's errors and warnings stay
 * Python's. Like soon.c this reads and writes the binding's own slots, at
 * offsets the binding finds by writing a marker through each slot. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "llpy.h"

static llpy_stream_layout layout;
static int stream_bound;
static int (*list_append)(PyObj *, PyObj *);
static void (*err_clear)(void);
static ptrdiff_t (*tuple_size)(PyObj *);
static PyObj *(*no_memory)(void);
static ptrdiff_t (*list_size)(PyObj *);
static PyObj *(*list_get)(PyObj *, ptrdiff_t);
static int (*list_set_slice)(PyObj *, ptrdiff_t, ptrdiff_t, PyObj *);
static int (*str_equals)(PyObj *, const char *);

int llpy_stream_bind(const llpy_stream_layout *l) {
    if (l == NULL || !llpy_bound)
        return LL_EINVAL;
    void *const objs[] = {l->transport_type, l->loop_type, l->fallback, l->written_name,
                          l->bytes_type, l->bytearray_type, l->memoryview_type, l->false_,
                          l->true_, l->none, l->zero, l->list_append, l->err_clear,
                          l->tuple_size, l->no_memory, l->list_type, l->list_size,
                          l->list_get, l->list_set_slice, l->flush_one, l->flush_failed,
                          l->extra_fallback, l->no_extra, l->unknown, l->str_type,
                          l->str_equals, l->writelines_fallback};
    for (size_t i = 0; i < sizeof objs / sizeof objs[0]; i++)
        if (objs[i] == NULL)
            return LL_EINVAL;
    if (l->concat_max < 0 || !llpy_offsets_ok(l->slot, LLPY_STREAM_SLOTS, l->size) ||
        !llpy_offsets_ok(l->loop_slot, LLPY_STREAM_LOOP_SLOTS, l->loop_size))
        return LL_EINVAL;
    if (stream_bound)
        return memcmp(&layout, l, sizeof layout) == 0 ? 0 : LL_EINVAL;
    layout = *l;
    list_append = (int (*)(PyObj *, PyObj *))l->list_append;
    err_clear = (void (*)(void))l->err_clear;
    tuple_size = (ptrdiff_t(*)(PyObj *))l->tuple_size;
    no_memory = (PyObj * (*)(void)) l->no_memory;
    list_size = (ptrdiff_t(*)(PyObj *))l->list_size;
    list_get = (PyObj * (*)(PyObj *, ptrdiff_t)) l->list_get;
    list_set_slice = (int (*)(PyObj *, ptrdiff_t, ptrdiff_t, PyObj *))l->list_set_slice;
    str_equals = (int (*)(PyObj *, const char *))l->str_equals;
    stream_bound = 1;
    return 0;
}

#define TSLOT(t, i) LLPY_SLOT(t, layout.slot[i])
#define LSLOT(loop, i) LLPY_SLOT(loop, layout.loop_slot[i])

/* Store value (a new reference, not NULL) in slot i of t. */
static void set_slot(PyObj *t, int i, PyObj *value) {
    PyObj *old = TSLOT(t, i);
    TSLOT(t, i) = value;
    llpy_py.decref(old); /* (Py_DecRef: NULL is fine, an unset slot) */
}

static PyObj *none(void) {
    llpy_py.incref(layout.none);
    return layout.none;
}

/* The Python method fn(transport, *args, **kw): asyncio's checks, errors
 * and warnings, and every case not done here. */
static PyObj *fallback_to(PyObj *fn, PyObj *t, PyObj *const *args, ptrdiff_t nargs,
                          PyObj *kwnames) {
    ptrdiff_t nkw = kwnames != NULL ? tuple_size(kwnames) : 0;
    if (nkw < 0)
        return NULL;
    PyObj *small[4], **all = small;
    size_t total = (size_t)(nargs + nkw) + 1;
    if (total > sizeof small / sizeof small[0]) {
        all = malloc(total * sizeof *all);
        if (all == NULL)
            return no_memory();
    }
    all[0] = t;
    for (ptrdiff_t i = 0; i < nargs + nkw; i++)
        all[i + 1] = args[i];
    PyObj *r = llpy_py.call(fn, all, (size_t)nargs + 1, kwnames);
    if (all != small)
        free(all);
    return r;
}

/* The Python write(transport, *args, **kw). */
static PyObj *fallback(PyObj *t, PyObj *const *args, ptrdiff_t nargs, PyObj *kwnames) {
    return fallback_to(layout.fallback, t, args, nargs, kwnames);
}

/* What follows a write: _cbuf = 0 for 0 (sent, nothing buffered), else
 * transport._written(r) (buffered, over the high-water mark, an error). */
static PyObj *written(PyObj *t, int64_t r) {
    if (r == 0) {
        llpy_py.incref(layout.zero);
        set_slot(t, LLPY_STREAM_CBUF, layout.zero);
        return none();
    }
    PyObj *n = llpy_py.long_from_i64(r);
    if (n == NULL)
        return NULL;
    PyObj *args[2] = {t, n};
    PyObj *res = llpy_py.call_method(layout.written_name, args, 2, NULL);
    llpy_py.decref(n);
    return res;
}

/* Whether len bytes fit the transport's gather limit (_gather_max): 0
 * also when it has none or it is not a size (the Python write decides). */
static int within_gather_max(PyObj *t, ptrdiff_t len) {
    PyObj *max = TSLOT(t, LLPY_STREAM_GATHER_MAX);
    if (max == NULL)
        return 0;
    unsigned long long most = llpy_py.long_as_u64(max);
    if (most == (unsigned long long)-1 && llpy_py.err_occurred() != NULL) {
        err_clear();
        return 0;
    }
    return (unsigned long long)len <= most;
}

/* Keep bytes data (len bytes) as the batch's first gathered write, as
 * the Python write does inside the trampoline: 1 when kept, 0 when the
 * Python write must decide (the C buffer not empty, closing, too big),
 * -1 with an exception set. */
static int gather(PyObj *t, PyObj *loop, PyObj *data, ptrdiff_t len) {
    if (TSLOT(t, LLPY_STREAM_CBUF) != layout.zero || TSLOT(t, LLPY_STREAM_CLOSING) != layout.false_)
        return 0;
    if (!within_gather_max(t, len))
        return 0;
    PyObj *wq = LSLOT(loop, LLPY_STREAM_LOOP_WQ);
    if (wq == NULL)
        return 0;
    PyObj *n = llpy_py.long_from_i64(len);
    if (n == NULL)
        return -1;
    if (list_append(wq, t) < 0) {
        llpy_py.decref(n);
        return -1;
    }
    llpy_py.incref(data);
    set_slot(t, LLPY_STREAM_WPEND, data);
    set_slot(t, LLPY_STREAM_WPEND_N, n);
    return 1;
}

/* Join tail (len bytes, not empty, a bytes object's) to the bytes object t gathered
 * (pend), as the Python write does for a second small write of a batch
 * (an HTTP body after its headers): 1 when joined, 0 when the Python
 * write must decide (another type, too big, not in the trampoline, the C
 * buffer not empty, closing), -1 with an exception set. */
static int concat(PyObj *t, PyObj *pend, const char *tail, ptrdiff_t len) {
    PyObj *loop = TSLOT(t, LLPY_STREAM_LOOP);
    if (LLPY_TYPE(pend) != layout.bytes_type || loop == NULL || LLPY_TYPE(loop) != layout.loop_type ||
        LSLOT(loop, LLPY_STREAM_LOOP_GATHER) != layout.true_ ||
        TSLOT(t, LLPY_STREAM_CBUF) != layout.zero || TSLOT(t, LLPY_STREAM_CLOSING) != layout.false_)
        return 0;
    char *head, *out;
    ptrdiff_t hlen;
    if (llpy_py.bytes_as(pend, &head, &hlen) < 0)
        return -1;
    ptrdiff_t n = hlen + len;
    if (n > layout.concat_max)
        return 0;
    if (!within_gather_max(t, n))
        return 0;
    PyObj *nobj = llpy_py.long_from_i64(n);
    if (nobj == NULL)
        return -1;
    PyObj *joined = llpy_py.bytes_from(NULL, n);
    if (joined == NULL || llpy_py.bytes_as(joined, &out, &n) < 0) {
        llpy_py.decref(joined);
        llpy_py.decref(nobj);
        return -1;
    }
    memcpy(out, head, (size_t)hlen);
    memcpy(out + hlen, tail, (size_t)len);
    set_slot(t, LLPY_STREAM_WPEND, joined);
    set_slot(t, LLPY_STREAM_WPEND_N, nobj);
    return 1;
}

/* write(data): bytes, bytearray or a C-contiguous memoryview to a
 * transport that may write and holds nothing gathered, or bytes joined to
 * the bytes it gathered (llpy.h). */
static PyObj *stream_write(PyObj *t, PyObj *const *args, ptrdiff_t nargs, PyObj *kwnames) {
    if (nargs != 1 || kwnames != NULL || TSLOT(t, LLPY_STREAM_EOF) != layout.false_ ||
        TSLOT(t, LLPY_STREAM_LOST) != layout.false_)
        return fallback(t, args, nargs, kwnames);
    PyObj *pend = TSLOT(t, LLPY_STREAM_WPEND);
    if (pend != layout.none) {
        if (pend == NULL || LLPY_TYPE(args[0]) != layout.bytes_type)
            return fallback(t, args, nargs, kwnames);
        char *buf;
        ptrdiff_t len;
        if (llpy_py.bytes_as(args[0], &buf, &len) < 0)
            return NULL;
        if (len == 0)
            return none();
        int joined = concat(t, pend, buf, len);
        if (joined != 0)
            return joined > 0 ? none() : NULL;
        return fallback(t, args, nargs, kwnames);
    }
    PyObj *data = args[0], *type = LLPY_TYPE(data), *loop = TSLOT(t, LLPY_STREAM_LOOP);
    PyObj *id = TSLOT(t, LLPY_STREAM_TID);
    if (id == NULL || loop == NULL || LLPY_TYPE(loop) != layout.loop_type)
        return fallback(t, args, nargs, kwnames);
    unsigned long long tid = llpy_py.long_as_u64(id);
    if (tid == (unsigned long long)-1 && llpy_py.err_occurred() != NULL)
        return NULL;
    if (type == layout.bytes_type) {
        char *buf;
        ptrdiff_t len;
        if (llpy_py.bytes_as(data, &buf, &len) < 0)
            return NULL;
        if (len == 0)
            return none();
        PyObj *on = LSLOT(loop, LLPY_STREAM_LOOP_GATHER);
        if (on == layout.true_) {
            int kept = gather(t, loop, data, len);
            if (kept != 0)
                return kept > 0 ? none() : NULL;
            return fallback(t, args, nargs, kwnames);
        }
        if (on != layout.false_)
            return fallback(t, args, nargs, kwnames);
        return written(t, llpy_ll.write_async_packed(tid, buf, (size_t)len));
    }
    if (type != layout.bytearray_type && type != layout.memoryview_type)
        return fallback(t, args, nargs, kwnames);
    /* (never gathered, as in Python: the caller may change its buffer) */
    struct llpy_buffer view;
    if (llpy_py.get_buffer(data, &view, LLPY_PYBUF_SIMPLE) < 0) {
        err_clear(); /* not C-contiguous, released: Python says or copies */
        return fallback(t, args, nargs, kwnames);
    }
    if (view.len == 0) {
        llpy_py.buffer_release(&view);
        return none();
    }
    int64_t r = llpy_ll.write_async_packed(tid, view.buf, (size_t)view.len);
    llpy_py.buffer_release(&view);
    return written(t, r);
}

static const py_method_def write_def = {
    "write", (py_fastcall)(void (*)(void))stream_write, METH_FASTCALL | METH_KEYWORDS,
    "write(data): write data to the transport (asyncio.WriteTransport.write)"};

const void *llpy_stream_write_method(void) { return stream_bound ? &write_def : NULL; }

/* writelines(list_of_data): a list of bytes objects as one write() of
 * their concatenation (llpy.h). The items are borrowed while no Python
 * code runs (size reads and copies only), so the list cannot change under
 * the loops. */
static PyObj *stream_writelines(PyObj *t, PyObj *const *args, ptrdiff_t nargs, PyObj *kwnames) {
    if (nargs != 1 || kwnames != NULL || LLPY_TYPE(t) != layout.transport_type ||
        LLPY_TYPE(args[0]) != layout.list_type)
        return fallback_to(layout.writelines_fallback, t, args, nargs, kwnames);
    PyObj *list = args[0];
    ptrdiff_t n = list_size(list), total = 0;
    if (n < 0)
        return NULL;
    for (ptrdiff_t i = 0; i < n; i++) {
        PyObj *item = list_get(list, i);
        char *buf;
        ptrdiff_t len;
        if (item == NULL)
            return NULL;
        if (LLPY_TYPE(item) != layout.bytes_type)
            return fallback_to(layout.writelines_fallback, t, args, nargs, kwnames);
        if (llpy_py.bytes_as(item, &buf, &len) < 0)
            return NULL;
        if (len > PTRDIFF_MAX - total)
            return no_memory();
        total += len;
    }
    PyObj *data;
    if (n == 1) { /* (b''.join of one bytes object is that object) */
        data = list_get(list, 0);
        llpy_py.incref(data);
    } else {
        char *out;
        ptrdiff_t size;
        data = llpy_py.bytes_from(NULL, total);
        if (data == NULL || llpy_py.bytes_as(data, &out, &size) < 0) {
            llpy_py.decref(data);
            return NULL;
        }
        for (ptrdiff_t i = 0; i < n; i++) {
            char *buf;
            ptrdiff_t len;
            if (llpy_py.bytes_as(list_get(list, i), &buf, &len) < 0) {
                llpy_py.decref(data);
                return NULL;
            }
            memcpy(out, buf, (size_t)len);
            out += len;
        }
    }
    PyObj *r = stream_write(t, &data, 1, NULL);
    llpy_py.decref(data);
    return r;
}

static const py_method_def writelines_def = {
    "writelines", (py_fastcall)(void (*)(void))stream_writelines, METH_FASTCALL | METH_KEYWORDS,
    "writelines(list_of_data): write a list of data to the transport "
    "(asyncio.WriteTransport.writelines)"};

const void *llpy_stream_writelines_method(void) { return stream_bound ? &writelines_def : NULL; }

/* Send t's gathered bytes object pend (a new reference, taken from
 * _wpend): write()'s write and what follows it. */
static PyObj *flush_bytes(PyObj *t, PyObj *pend) {
    PyObj *r = NULL;
    unsigned long long tid = llpy_py.long_as_u64(TSLOT(t, LLPY_STREAM_TID));
    char *buf;
    ptrdiff_t len;
    if (!(tid == (unsigned long long)-1 && llpy_py.err_occurred() != NULL) &&
        llpy_py.bytes_as(pend, &buf, &len) == 0)
        r = written(t, llpy_ll.write_async_packed(tid, buf, (size_t)len));
    llpy_py.decref(pend);
    return r;
}

/* _flush_writes() of a loop (llpy.h). */
static PyObj *stream_flush(PyObj *loop, PyObj *unused) {
    (void)unused;
    PyObj *wq = LSLOT(loop, LLPY_STREAM_LOOP_WQ);
    llpy_py.incref(layout.false_);
    PyObj *old = LSLOT(loop, LLPY_STREAM_LOOP_GATHER);
    LSLOT(loop, LLPY_STREAM_LOOP_GATHER) = layout.false_;
    llpy_py.decref(old);
    if (wq == NULL || LLPY_TYPE(wq) != layout.list_type)
        return none(); /* (a loop whose _init_network has not run: nothing gathered) */
    llpy_py.incref(wq);
    PyObj *res = NULL;
    /* (the size read each time: a transport's _written may gather more) */
    for (ptrdiff_t i = 0; i < list_size(wq); i++) {
        PyObj *t = list_get(wq, i);
        if (t == NULL)
            goto out;
        PyObj *pend = LLPY_TYPE(t) == layout.transport_type ? TSLOT(t, LLPY_STREAM_WPEND) : NULL;
        if (pend == layout.none)
            continue; /* sent early (close, a big write) or lost meanwhile */
        llpy_py.incref(t);
        PyObj *r;
        if (pend != NULL && LLPY_TYPE(pend) == layout.bytes_type) {
            TSLOT(t, LLPY_STREAM_WPEND) = layout.none; /* (its reference now pend's) */
            llpy_py.incref(layout.none);
            r = flush_bytes(t, pend);
            if (r == NULL) {
                PyObj *lead[2] = {loop, t};
                r = llpy_pass_exception(layout.flush_failed, lead, 2);
            }
        } else {
            PyObj *args[2] = {loop, t};
            r = llpy_py.call(layout.flush_one, args, 2, NULL);
        }
        llpy_py.decref(t);
        if (r == NULL)
            goto out;
        llpy_py.decref(r);
    }
    if (list_set_slice(wq, 0, list_size(wq), NULL) == 0)
        res = none();
out:
    llpy_py.decref(wq);
    return res;
}

static const py_method_def flush_def = {
    "_flush_writes", (py_fastcall)(void (*)(void))stream_flush, METH_NOARGS,
    "_flush_writes(): send every transport's gathered bytes (the end of a trampoline)"};

const void *llpy_stream_flush_method(void) { return stream_bound ? &flush_def : NULL; }

/* is_closing(): the _closing slot. */
static PyObj *stream_is_closing(PyObj *t, PyObj *unused) {
    (void)unused;
    PyObj *closing = TSLOT(t, LLPY_STREAM_CLOSING);
    if (closing == NULL)
        closing = layout.false_; /* (set in __init__: only a half-made transport) */
    llpy_py.incref(closing);
    return closing;
}

static const py_method_def is_closing_def = {
    "is_closing", (py_fastcall)(void (*)(void))stream_is_closing, METH_NOARGS,
    "is_closing(): whether the transport is closing or closed"};

const void *llpy_stream_is_closing_method(void) { return stream_bound ? &is_closing_def : NULL; }

/* get_extra_info(name, default=None): the common cases (llpy.h). */
static PyObj *stream_extra_info(PyObj *t, PyObj *const *args, ptrdiff_t nargs, PyObj *kwnames) {
    if (nargs < 1 || nargs > 2 || kwnames != NULL || TSLOT(t, LLPY_STREAM_EXTRA) != layout.no_extra ||
        LLPY_TYPE(args[0]) != layout.str_type)
        return fallback_to(layout.extra_fallback, t, args, nargs, kwnames);
    PyObj *name = args[0], *value;
    if (str_equals(name, "peername") == 0)
        value = TSLOT(t, LLPY_STREAM_PEERNAME);
    else if (str_equals(name, "sockname") == 0)
        value = TSLOT(t, LLPY_STREAM_SOCKNAME);
    else if (str_equals(name, "socket") == 0)
        value = NULL; /* (made when first asked, from the fd: Python's) */
    else
        value = nargs == 2 ? args[1] : layout.none;
    if (value == NULL || value == layout.unknown)
        return fallback_to(layout.extra_fallback, t, args, nargs, kwnames);
    llpy_py.incref(value);
    return value;
}

static const py_method_def extra_info_def = {
    "get_extra_info", (py_fastcall)(void (*)(void))stream_extra_info,
    METH_FASTCALL | METH_KEYWORDS,
    "get_extra_info(name, default=None): information about the transport "
    "(asyncio.BaseTransport.get_extra_info)"};

const void *llpy_stream_extra_info_method(void) { return stream_bound ? &extra_info_def : NULL; }
