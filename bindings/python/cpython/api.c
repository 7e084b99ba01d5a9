/* SPDX-License-Identifier: MIT */
/* The tables the binding hands over (llpy_bind, llpy.h): CPython's C API
 * from ctypes.pythonapi and libloop's two functions from the libloop.so
 * it opened; and the one helper the sink and the handle round share. */
#include <string.h>

#include "llpy.h"

llpy_py_api llpy_py;
llpy_ll_api llpy_ll;
int llpy_bound;

int llpy_interface(void) { return LLPY_INTERFACE; }

/* Whether fns holds n entries, none NULL. */
static int all_set(void *const *fns, size_t n, size_t want) {
    if (fns == NULL || n != want)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (fns[i] == NULL)
            return 0;
    return 1;
}

int llpy_bind(void *const *py, size_t npy, void *const *ll, size_t nll) {
    if (!all_set(py, npy, LLPY_PY_COUNT) || !all_set(ll, nll, LLPY_LL_COUNT))
        return LL_EINVAL;
    if (llpy_bound)
        return memcmp(&llpy_py, py, sizeof llpy_py) == 0 && memcmp(&llpy_ll, ll, sizeof llpy_ll) == 0
                   ? 0
                   : LL_EINVAL;
    memcpy(&llpy_py, py, sizeof llpy_py);
    memcpy(&llpy_ll, ll, sizeof llpy_ll);
    llpy_bound = 1;
    return 0;
}

PyObj *llpy_pass_exception(PyObj *fn, PyObj *const *lead, size_t n) {
    PyObj *type = NULL, *value = NULL, *tb = NULL;
    llpy_py.err_fetch(&type, &value, &tb);
    llpy_py.err_normalize(&type, &value, &tb);
    if (value != NULL && tb != NULL)
        llpy_py.set_traceback(value, tb);
    PyObj *r = NULL;
    if (value != NULL && n < 3) {
        PyObj *args[3];
        for (size_t i = 0; i < n; i++)
            args[i] = lead[i];
        args[n] = value;
        r = llpy_py.call(fn, args, n + 1, NULL);
    }
    if (type != NULL)
        llpy_py.decref(type);
    if (value != NULL)
        llpy_py.decref(value);
    if (tb != NULL)
        llpy_py.decref(tb);
    return r;
}
