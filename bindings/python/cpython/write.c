/* SPDX-License-Identifier: MIT */
/* The builtin transport.write() of the Python binding (llpy_write_method,
 * llpy.h): ll_transport_write_async_packed for an int id and a bytes
 * object, without ctypes' argument conversion and libffi's call. On the
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
