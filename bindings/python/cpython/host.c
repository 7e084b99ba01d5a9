/* SPDX-License-Identifier: MIT */
/* The host-queue trampoline of the Python binding (llpy_host_run, llpy.h):
 * libloop calls it once per iteration with call_soon work, and per
 * request on a request/response client. A ctypes CFUNCTYPE trampoline
 * converts the two arguments to Python objects, builds their tuple and
 * converts the result back at each call; this one calls the loop's round
 * with no arguments and reads its truth. */
#include "llpy.h"

int llpy_host_run(ll_loop loop, void *fn) {
    (void)loop;
    if (!llpy_bound || fn == NULL)
        return 0;
    int state = llpy_py.gil_ensure();
    PyObj *r = llpy_py.call(fn, NULL, 0, NULL);
    int more = 0;
    if (r == NULL) {
        llpy_py.write_unraisable(fn); /* as ctypes reports a trampoline's error */
    } else {
        more = llpy_py.is_true(r);
        llpy_py.decref(r);
        if (more < 0) {
            llpy_py.write_unraisable(fn);
            more = 0;
        }
    }
    llpy_py.gil_release(state);
    return more;
}
