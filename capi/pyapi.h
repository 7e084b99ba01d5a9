/* SPDX-License-Identifier: MIT */
/* The CPython C API as the binding hands it over (ll_py_bind), shared by
 * the C side of the Python hot path (pyhot.c: the sink and write();
 * pysoon.c: call_soon). Internal to capi. */
#ifndef LIBLOOP_CAPI_PYAPI_H
#define LIBLOOP_CAPI_PYAPI_H

#include <stddef.h>
#include "libloop/python.h"

typedef void PyObj; /* a PyObject, never looked into */

/* The C API's signatures (CPython 3.9+; stable since). */
typedef struct {
    int (*gil_ensure)(void);
    void (*gil_release)(int);
    PyObj *(*long_from_u64)(unsigned long long);
    unsigned long long (*long_as_u64)(PyObj *);
    PyObj *(*long_from_i64)(long long);
    PyObj *(*dict_get)(PyObj *, PyObj *);
    PyObj *(*tuple_get)(PyObj *, ptrdiff_t);
    PyObj *(*bytes_from)(const char *, ptrdiff_t);
    int (*bytes_as)(PyObj *, char **, ptrdiff_t *);
    int (*ctx_enter)(PyObj *);
    int (*ctx_exit)(PyObj *);
    PyObj *(*call_method)(PyObj *, PyObj *const *, size_t, PyObj *);
    PyObj *(*call)(PyObj *, PyObj *const *, size_t, PyObj *);
    void (*incref)(PyObj *);
    void (*decref)(PyObj *);
    void (*err_fetch)(PyObj **, PyObj **, PyObj **);
    void (*err_normalize)(PyObj **, PyObj **, PyObj **);
    int (*set_traceback)(PyObj *, PyObj *);
    PyObj *(*err_occurred)(void);
    void (*write_unraisable)(PyObj *);
} py_api;

_Static_assert(sizeof(py_api) == LL_PY_API_COUNT * sizeof(void *), "one pointer per ll_py_api index");

extern __attribute__((visibility("hidden"))) py_api ll__py_api; /* ll_py_bind's table */
extern __attribute__((visibility("hidden"))) int ll__py_bound; /* ll_py_bind took it */

/* Calls fn(*lead, exc) (n < 3) with the exception set now: taken,
 * normalized, its traceback attached. fn's result, or NULL: fn raised (its
 * exception is set) or no exception was set (none is). */
__attribute__((visibility("hidden"))) PyObj *ll__py_pass_exception(PyObj *fn, PyObj *const *lead,
                                                                   size_t n);

/* PY_VECTORCALL_ARGUMENTS_OFFSET: the callee may use args[-1]. */
#define CALL_OFFSET ((size_t)1 << (8 * sizeof(size_t) - 1))
#define METH_FASTCALL 0x0080
#define METH_KEYWORDS 0x0002

/* A METH_FASTCALL function (METH_KEYWORDS ones are cast to it, as CPython
 * itself does), and CPython's PyMethodDef (its layout is stable ABI). */
typedef PyObj *(*py_fastcall)(PyObj *, PyObj *const *, ptrdiff_t);
typedef struct {
    const char *name;
    py_fastcall meth;
    int flags;
    const char *doc;
} py_method_def;

#endif /* LIBLOOP_CAPI_PYAPI_H */
