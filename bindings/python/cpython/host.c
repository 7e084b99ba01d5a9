/* SPDX-License-Identifier: MIT */
/* The host-queue trampoline of the Python binding (llpy_host_run, llpy.h):
 * libloop calls it once per iteration with call_soon work, and per
 * request on a request/response client. A ctypes CFUNCTYPE trampoline
 * converts the two arguments to Python objects, builds their tuple and
 * converts the result back at each call; this one calls the loop's round
 * with no arguments and reads its truth. */
#include <string.h>

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

/* ---- the round itself (llpy_host_round_method) ------------------------------
 * The binding's _host_run (scheduling.py) without its Python frame: the
 * flag writes, the first round of handles and the end of the batch in C;
 * the rare branches (debug mode, no round in C, more queued after the
 * first round, an exception to stash, gathered writes, the signal watch)
 * call the binding's Python, by name, as _host_run does. */

static llpy_host_layout host_layout;
static int host_bound;
static struct {
    ptrdiff_t (*size)(PyObj *);
    PyObj *(*inplace_add)(PyObj *, PyObj *);
    PyObj *(*inplace_sub)(PyObj *, PyObj *);
    long long (*long_as_i64)(PyObj *);
} host_fn;

int llpy_host_bind(const llpy_host_layout *l) {
    if (l == NULL || !llpy_bound)
        return LL_EINVAL;
    void *const objs[] = {l->host_run_name, l->run_ready_name, l->flush_name, l->sig_watch_name,
                          l->stash, l->false_, l->true_, l->none, l->one, l->size,
                          l->inplace_add, l->inplace_sub, l->long_as_i64};
    for (size_t i = 0; i < sizeof objs / sizeof objs[0]; i++)
        if (objs[i] == NULL)
            return LL_EINVAL;
    if (!llpy_offsets_ok(l->loop_slot, LLPY_HOST_LOOP_SLOTS, l->loop_size))
        return LL_EINVAL;
    if (host_bound)
        return memcmp(&host_layout, l, sizeof host_layout) == 0 ? 0 : LL_EINVAL;
    host_layout = *l;
    host_fn.size = (ptrdiff_t(*)(PyObj *))l->size;
    host_fn.inplace_add = (PyObj * (*)(PyObj *, PyObj *)) l->inplace_add;
    host_fn.inplace_sub = (PyObj * (*)(PyObj *, PyObj *)) l->inplace_sub;
    host_fn.long_as_i64 = (long long (*)(PyObj *))l->long_as_i64;
    host_bound = 1;
    return 0;
}

#define HSLOT(loop, i) LLPY_SLOT(loop, host_layout.loop_slot[i])

/* loop.<slot> = value (a new reference to value is stored; the old one is
 * dropped after, as STORE_ATTR does). */
static void host_set(PyObj *loop, int i, PyObj *value) {
    PyObj **slot = &HSLOT(loop, i);
    PyObj *old = *slot;
    llpy_py.incref(value);
    *slot = value;
    if (old != NULL)
        llpy_py.decref(old);
}

/* bool(loop.<slot>): 1, 0, or -1 with an exception set (an empty slot
 * raises AttributeError in Python; here it is the Python round's case). */
static int host_true(PyObj *loop, int i) {
    PyObj *v = HSLOT(loop, i);
    if (v == host_layout.true_)
        return 1;
    if (v == host_layout.false_)
        return 0;
    return llpy_py.is_true(v);
}

/* loop.<name>(*args): 0, or -1 with an exception set. */
static int host_call(PyObj *loop, PyObj *name, PyObj *a, PyObj *b) {
    PyObj *args[3] = {loop, a, b};
    size_t n = a == NULL ? 1 : b == NULL ? 2 : 3;
    PyObj *r = llpy_py.call_method(name, args, n, NULL);
    if (r == NULL)
        return -1;
    llpy_py.decref(r);
    return 0;
}

/* The try block of _host_run in its common case: the first round in C
 * (run_handles(n)) with its count, then _run_ready(ready, 1) when more
 * is queued. 0, or -1 with an exception set. */
static int host_first_round(PyObj *loop, PyObj *ready, PyObj *run_handles) {
    ptrdiff_t n = host_fn.size(ready); /* n = len(ready) */
    if (n < 0)
        return -1;
    PyObj *pn = llpy_py.long_from_i64(n);
    if (pn == NULL)
        return -1;
    /* self._n_callbacks += n */
    PyObj *count = host_fn.inplace_add(HSLOT(loop, LLPY_HOST_N_CALLBACKS), pn);
    if (count == NULL) {
        llpy_py.decref(pn);
        return -1;
    }
    host_set(loop, LLPY_HOST_N_CALLBACKS, count);
    /* self._n_callbacks -= self._run_handles(n): the count is read before
     * the round, as the augmented assignment does (count still holds it). */
    PyObj *cancelled = llpy_py.call(run_handles, &pn, 1, NULL);
    llpy_py.decref(pn);
    if (cancelled == NULL) {
        llpy_py.decref(count);
        return -1;
    }
    PyObj *left = host_fn.inplace_sub(count, cancelled);
    llpy_py.decref(count);
    llpy_py.decref(cancelled);
    if (left == NULL)
        return -1;
    host_set(loop, LLPY_HOST_N_CALLBACKS, left);
    llpy_py.decref(left);
    int more = llpy_py.is_true(ready); /* if ready: */
    if (more < 0)
        return -1;
    return more ? host_call(loop, host_layout.run_ready_name, ready, host_layout.one) : 0;
}

/* host_round(), self being the loop. */
static PyObj *py_host_round(PyObj *loop, PyObj *const *args, ptrdiff_t nargs) {
    (void)args;
    if (nargs != 0)
        return llpy_py.long_from_i64(LL_EINVAL);
    PyObj *run_handles = HSLOT(loop, LLPY_HOST_RUN_HANDLES);
    PyObj *ready = HSLOT(loop, LLPY_HOST_READY);
    int debug = HSLOT(loop, LLPY_HOST_DEBUG) == NULL ? 1 : host_true(loop, LLPY_HOST_DEBUG);
    if (debug < 0)
        return NULL;
    /* Debug mode, no round in C, or a slot never set: the Python round,
     * which sets the flags itself (a debug round times each handle). */
    if (debug || run_handles == NULL || run_handles == host_layout.none || ready == NULL ||
        HSLOT(loop, LLPY_HOST_N_CALLBACKS) == NULL || HSLOT(loop, LLPY_HOST_WQ) == NULL ||
        HSLOT(loop, LLPY_HOST_SIG_ON) == NULL || HSLOT(loop, LLPY_HOST_SIG_FD) == NULL ||
        HSLOT(loop, LLPY_HOST_IO_OPEN) == NULL) {
        PyObj *self[1] = {loop};
        PyObj *r = llpy_py.call_method(host_layout.host_run_name, self, 1, NULL);
        return r;
    }
    /* Held for the round: a callback may replace the loop's slots. */
    llpy_py.incref(ready);
    llpy_py.incref(run_handles);
    host_set(loop, LLPY_HOST_SIGNALLED, host_layout.true_);
    host_set(loop, LLPY_HOST_AWAKE, host_layout.true_); /* thread-safe posts need no wake-up meanwhile */
    host_set(loop, LLPY_HOST_GATHER, host_layout.true_); /* small writes wait for the batch's end */
    if (host_first_round(loop, ready, run_handles) < 0) {
        /* except BaseException as exc: self._stash(exc) */
        PyObj *r = llpy_pass_exception(host_layout.stash, &loop, 1);
        if (r == NULL) {
            llpy_py.decref(run_handles);
            llpy_py.decref(ready);
            return NULL;
        }
        llpy_py.decref(r);
    }
    llpy_py.decref(run_handles);
    /* Invariant kept (_host_run's comment): _awake goes down before the
     * queue is looked at, so a post from another thread either lands
     * before the look below (more) or sees _awake down and posts a drain
     * (the GIL orders the two; only the calls below can release it). */
    host_set(loop, LLPY_HOST_AWAKE, host_layout.false_);
    host_set(loop, LLPY_HOST_GATHER, host_layout.false_);
    int wq = host_true(loop, LLPY_HOST_WQ);
    if (wq > 0)
        wq = host_call(loop, host_layout.flush_name, NULL, NULL);
    if (wq < 0) {
        llpy_py.decref(ready);
        return NULL;
    }
    /* Invariant kept: _signalled goes down before the look too, and is set
     * again only from what the look saw. A signal handler (Python runs
     * them between two calls: the flush above may run one; len() below
     * runs none, being C) that queues a callback either lands before the
     * look (more) or sees _signalled down and calls ll_loop_host_ready
     * itself, which libloop keeps whatever this returns. */
    host_set(loop, LLPY_HOST_SIGNALLED, host_layout.false_);
    ptrdiff_t queued = host_fn.size(ready); /* more = len(ready) > 0 */
    llpy_py.decref(ready);
    if (queued < 0)
        return NULL;
    PyObj *more = queued > 0 ? host_layout.true_ : host_layout.false_;
    if (queued > 0)
        host_set(loop, LLPY_HOST_SIGNALLED, host_layout.true_);
    /* if (more is self._sig_on and self._sig_fd >= 0
     *         and not (more and self._io_open)): self._sig_watch(not more)
     * (with a transport or listener open, _sig_watch(False) keeps the watch:
     * a busy client's rounds that end with more queued skip the call) */
    int io_open = 0;
    if (more == HSLOT(loop, LLPY_HOST_SIG_ON) && queued > 0) {
        io_open = host_true(loop, LLPY_HOST_IO_OPEN);
        if (io_open < 0)
            return NULL;
    }
    if (more == HSLOT(loop, LLPY_HOST_SIG_ON) && !io_open) {
        long long fd = host_fn.long_as_i64(HSLOT(loop, LLPY_HOST_SIG_FD));
        if (fd == -1 && llpy_py.err_occurred() != NULL)
            return NULL;
        if (fd >= 0 &&
            host_call(loop, host_layout.sig_watch_name,
                      queued > 0 ? host_layout.false_ : host_layout.true_, NULL) < 0)
            return NULL;
    }
    llpy_py.incref(more);
    return more;
}

static const py_method_def host_round_def = {
    "host_round", py_host_round, METH_FASTCALL,
    "host_round(): the loop's round of ready handles; whether more are queued"};

const void *llpy_host_round_method(void) { return host_bound ? &host_round_def : NULL; }
