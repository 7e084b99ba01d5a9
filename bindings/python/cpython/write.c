/* SPDX-License-Identifier: MIT */
/* The builtin transport.write() of the Python binding (llpy_write_method,
 * llpy_write_buffer_method, llpy.h): ll_transport_write_async_packed for an
 * int id and a bytes object (or any C-contiguous buffer), without ctypes'
 * argument conversion and libffi's call. On the
 * loop's thread, to a socket with nothing buffered, that is a send() from
 * C inside libloop, with no entry into its Go runtime. */
#include "llpy.h"

/* write(id, data): ll_transport_write_async_packed for a bytes object. */
static PyObj *py_write(PyObj *self, PyObj *const *args, ptrdiff_t nargs) {
    (void)self;
    if (nargs != 2)
        return llpy_py.long_from_i64(LL_EINVAL);
    unsigned long long t = llpy_py.long_as_u64(args[0]);
    if (t == (unsigned long long)-1 && llpy_py.err_occurred() != NULL)
        return NULL;
    char *buf;
    ptrdiff_t len;
    if (llpy_py.bytes_as(args[1], &buf, &len) < 0)
        return NULL;
    return llpy_py.long_from_i64(llpy_ll.write_async_packed(t, buf, (size_t)len));
}

static const py_method_def write_def = {
    "transport_write", py_write, METH_FASTCALL,
    "transport_write(id, data): ll_transport_write_async_packed's result"};

const void *llpy_write_method(void) { return llpy_bound ? &write_def : NULL; }

/* write_buffer(id, data): the same for any C-contiguous buffer, read in
 * place (a bytearray or memoryview from a protocol's own buffer is not
 * copied into a bytes object first; libloop copies what it keeps). */
static PyObj *py_write_buffer(PyObj *self, PyObj *const *args, ptrdiff_t nargs) {
    (void)self;
    if (nargs != 2)
        return llpy_py.long_from_i64(LL_EINVAL);
    unsigned long long t = llpy_py.long_as_u64(args[0]);
    if (t == (unsigned long long)-1 && llpy_py.err_occurred() != NULL)
        return NULL;
    struct llpy_buffer view;
    if (llpy_py.get_buffer(args[1], &view, LLPY_PYBUF_SIMPLE) < 0)
        return NULL;
    int64_t r = llpy_ll.write_async_packed(t, view.buf, (size_t)view.len);
    llpy_py.buffer_release(&view);
    return llpy_py.long_from_i64(r);
}

static const py_method_def write_buffer_def = {
    "transport_write_buffer", py_write_buffer, METH_FASTCALL,
    "transport_write_buffer(id, data): ll_transport_write_async_packed's result for a buffer"};

const void *llpy_write_buffer_method(void) { return llpy_bound ? &write_buffer_def : NULL; }
