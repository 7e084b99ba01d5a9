# SPDX-License-Identifier: MIT
"""The hot path: call_soon/call_soon_threadsafe and the host-queue and
thread-safe trampolines libloop calls (timers are in timers.py).

Crossings (ctypes calls or callbacks) per operation, steady state:
- call_soon: 0. The handle goes to a Python deque; ll_loop_host_ready is
  called only when libloop does not yet know the deque has work (at most
  once per iteration, and never from inside the host-queue trampoline).
- one loop iteration with call_soon work: 1 (the host-queue trampoline,
  which runs every handle queued before it), or 1/64 when nothing but
  call_soon work exists (see _run_ready).
- timers: see timers.py.
- call_soon_threadsafe: 1 per burst (ll_call_soon_threadsafe posts one
  drain; later posts see the drain pending and only append).
Handles are built inline with object.__new__ (no __init__ call): this is
the single most frequent allocation of an asyncio program.
"""

import contextvars
import heapq
import itertools
import os
import time

from . import _lib
from ._lib import check
from .handles import Handle, report_callback_error, run_debug
from asyncio import events

_new = object.__new__
_islice = itertools.islice


def _pop_all(popleft):
    """An iterator that pops the deque's head at each step (in C)."""
    return iter(popleft, None)   # a handle is never None

_copy_context = contextvars.copy_context
_monotonic = time.monotonic
_heappop = heapq.heappop
_VIRTUAL_ITERATIONS = 64


_OWN_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _trim_own_frames(tb):
    """Drop libloop's own frames from the end of a debug-mode source
    traceback, so that it ends at the caller, as asyncio's does."""
    while tb and tb[-1].filename.startswith(_OWN_DIR):
        del tb[-1]


class SchedulingMixin:
    """Scheduling methods and trampolines of libloop.EventLoop."""

    def time(self):
        """The loop clock: time.monotonic(), as asyncio's (an instance
        attribute makes it a builtin call, see EventLoop.__init__)."""
        return _monotonic()

    def call_soon(self, callback, *args, context=None):
        """Schedule callback(*args) for the next iteration (FIFO).

        With the hot path's C side, each loop's call_soon is a builtin doing
        the plain case of this in C (cpython/soon.c, bound in
        EventLoop.__init__); this method is then its fallback."""
        # The most frequent call of an asyncio program (a task step is one):
        # every bytecode here counts, so closed and debug share one flag
        # (_soon_slow) and the append is a bound method kept on the loop.
        if self._soon_slow:
            if self._closed:
                raise RuntimeError('Event loop is closed')
            return self._call_soon_debug(callback, args, context,
                                         'call_soon')
        if not callable(callback):
            self._check_callback(callback, 'call_soon')
        h = _new(Handle)
        h._context = _copy_context() if context is None else context
        h._loop = self
        h._callback = callback
        h._args = args
        h._cancelled = False
        h._repr = None
        h._source_traceback = None
        self._ready_append(h)
        if not self._signalled:
            self._signal()
        return h

    def _call_soon_debug(self, callback, args, context, method):
        self._check_thread()
        self._check_callback(callback, method)
        handle = events.Handle(callback, args, self, context)
        _trim_own_frames(handle._source_traceback)
        self._ready.append(handle)
        if not self._signalled:
            self._signal()
        return handle

    def _signal(self):
        # Tell libloop the host queue has work: _signalled stays set until
        # the trampoline runs, so this crosses at most once per iteration.
        # The call goes first: a KeyboardInterrupt landing between the two
        # lines then costs one extra ll_loop_host_ready, not a lost wake-up.
        _lib.ll_loop_host_ready(self._id)
        self._signalled = True

    def call_soon_threadsafe(self, callback, *args, context=None):
        """Schedule callback(*args) from any thread and wake the loop."""
        if self._soon_slow:     # closed or debug
            if self._closed:
                raise RuntimeError('Event loop is closed')
            # asyncio's Handle: it records where it was made
            self._check_callback(callback, 'call_soon_threadsafe')
            h = events.Handle(callback, args, self, context)
            _trim_own_frames(h._source_traceback)
        else:
            if not callable(callback):
                self._check_callback(callback, 'call_soon_threadsafe')
            h = _new(Handle)
            h._context = _copy_context() if context is None else context
            h._loop = self
            h._callback = callback
            h._args = args
            h._cancelled = False
            h._repr = None
            h._source_traceback = None
        # Straight into the ready queue, as asyncio does (a deque append is
        # atomic under the GIL). A wake-up is needed only when the loop may
        # block: not while the host-queue trampoline runs (_awake), which
        # looks at the queue again after clearing _awake, and not when a
        # drain is already posted (wake-ups coalesce, callbacks never).
        self._ready_append(h)
        if not self._awake and not self._ts_posted:
            self._ts_posted = True
            rc = _lib.ll_call_soon_threadsafe(self._id, self._c_ts, None)
            if rc < 0 and not self._closed:
                check(rc, "ll_call_soon_threadsafe")
        return h

    # ---- trampolines (libloop calls them on the loop thread) --------------

    def _host_run(self, _loop_id=None, _arg=None):
        # (called with no arguments by the C trampoline, _hotpath.host_queue_fn)
        ready = self._ready
        self._signalled = True
        self._awake = True   # thread-safe posts need no wake-up meanwhile
        self._gather = True  # small writes wait for the end of this batch
        try:
            if self._debug:
                n = len(ready)
                while n:
                    n -= 1
                    h = ready.popleft()
                    if not h._cancelled:
                        self._n_callbacks += 1
                        run_debug(self, h)
                    # Dropped now, as asyncio's _run_once does: a frame
                    # that outlives this call keeps its locals (see
                    # handles.run_debug).
                    h = None
            elif self._run_handles is not None:
                # The first round here, in C (handles.c), one Python frame
                # less per iteration; _run_ready only when more is queued.
                n = len(ready)
                self._n_callbacks += n     # (as _run_ready counts)
                self._n_callbacks -= self._run_handles(n)
                if ready:
                    self._run_ready(ready, 1)
            else:
                self._run_ready(ready)
        except BaseException as exc:
            self._stash(exc)
        # _awake goes down before the queue is looked at: a post from
        # another thread either lands before the look (more) or sees
        # _awake down and posts a drain (the GIL orders the two).
        self._awake = False
        self._gather = False
        if self._wq:
            self._flush_writes()
        # _signalled too, and for the same reason: a signal handler (Python
        # runs them between two calls, so after len() too) that queues a
        # callback either lands before the look (more) or sees _signalled
        # down and calls ll_loop_host_ready itself, which libloop keeps
        # whatever this returns. Set from more after the look, the flag would
        # hide a callback queued between the two: lost until another event.
        self._signalled = False
        more = len(ready) > 0
        if more:
            self._signalled = True
        # (with a transport or listener open, _sig_watch(False) keeps the
        # watch: skipped then, as host.c's round does)
        if more is self._sig_on and self._sig_fd >= 0 and not (more and self._io_open):
            self._sig_watch(not more)
        return more

    def _run_ready(self, ready, done=0):
        # Runs exactly the handles queued at entry (one iteration; done=1:
        # the caller ran that round already, so only the next ones). When the
        # next libloop iteration provably could do nothing but call this
        # trampoline again -- no fd to poll, no timer due, no thread-safe
        # post, no stop -- it runs that iteration here instead, saving a
        # crossing (up to _VIRTUAL_ITERATIONS per crossing): same order,
        # same one-iteration-per-call_soon-generation rule as asyncio.
        # An open transport or listener is an fd libloop polls (not in
        # _readers/_writers): then a round stands for an iteration only if
        # libloop's poll would find nothing, which poll(2) on its selector fd
        # tells without consuming it (~0.4 us, against ~2 us for a crossing
        # into libloop's own iteration); else its events would wait. That
        # poll sees the signal wake-up socket too when it is watched (it
        # stays watched while one is open: readers.py), so only without an
        # open one does a watched socket end the rounds.
        # A loop with a task machine sets the budget to 1: its task steps
        # wait in libloop's own ready queue, which this cannot see.
        # The handles are popped by C (islice over iter(popleft, None): no
        # bytecode per pop), and a handle without arguments is called
        # without building `(callback, *args)`: ~140 -> ~75 ns per handle
        # (a million-handle micro-benchmark; uvloop's Cython: ~60).
        run_handles = self._run_handles   # the round in C, or None
        pop_all = _pop_all(ready.popleft) if run_handles is None else None
        armed = self._armed
        budget = self._virtual_iterations - done
        while True:
            if done:        # (the caller's round: straight to the checks)
                done = 0
            else:
                n = len(ready)
                # Metrics (stats.py): counted per round, not per callback; a
                # cancelled handle is taken back on its own (rare) path.
                self._n_callbacks += n
                if run_handles is not None:     # the loop below, in C (handles.c)
                    self._n_callbacks -= run_handles(n)
                else:
                    for h in _islice(pop_all, n):
                        if h._cancelled:
                            self._n_callbacks -= 1
                            continue
                        try:
                            args = h._args
                            if not args:
                                h._context.run(h._callback)
                            elif len(args) == 1:
                                h._context.run(h._callback, args[0])
                            else:
                                h._context.run(h._callback, *args)
                        except (SystemExit, KeyboardInterrupt):
                            raise
                        except BaseException as exc:
                            report_callback_error(self, h, exc)
                    h = None   # (the last one too: see _host_run)
                budget -= 1
            if (not ready or not budget or self._stopping or self._ts_posted
                    or (self._sig_on and not self._io_open) or self._debug
                    or (self._io_open and self._backend_ready(0))
                    or self._fds_watched
                    or (armed and armed[0] <= _monotonic())):
                return
            if self._wq:
                # The end of the iteration this round stood for: its
                # gathered writes go now, as _host_run's end sends them.
                self._flush_writes()
                self._gather = True
            self._n_virtual += 1    # the next round stands for an iteration

    def _run_handle(self, h):
        if self._debug:
            run_debug(self, h)
            return
        try:
            h._context.run(h._callback, *h._args)
        except (SystemExit, KeyboardInterrupt):
            raise
        except BaseException as exc:
            report_callback_error(self, h, exc)

    def _ts_fire(self, _loop_id, _arg):
        # The drain posted by call_soon_threadsafe: the handles are already
        # in the ready queue; make sure libloop runs the host queue.
        try:
            self._ts_posted = False
            if self._ready and not self._signalled:
                self._signal()
        except BaseException as exc:
            self._stash(exc)

    def _resync(self):
        # At the start of every run: make the Python-side bookkeeping true
        # again. A signal handler's KeyboardInterrupt can land between any
        # two calls of a trampoline, or at its first instruction (ctypes then
        # reports it to sys.unraisablehook and the body never runs), so the
        # previous run may have ended with a flag or the armed list out of
        # step with libloop. Each repair errs toward one extra crossing,
        # never toward a lost wake-up.
        self._ts_posted = False     # a racing post re-posts its drain
        self._awake = False         # (an interrupted trampoline left it on)
        ready = self._ready
        self._signalled = False     # libloop may have dropped the request
        self._gather = False        # (an interrupted trampoline left it on)
        self._fds_sync()            # (an interrupt between a change and its sync)
        self._io_sync()
        if self._wq:
            self._flush_writes()
        if ready:
            self._signal()
        # Deadlines already past: their libloop timer fired (its trampoline
        # may not have run), or will fire in the first iteration anyway.
        now = _monotonic()
        armed = self._armed
        while armed and armed[0] <= now:
            _heappop(armed)
        self._arm_next()

    def _stash(self, exc):
        # SystemExit/KeyboardInterrupt inside a trampoline: stop the loop and
        # re-raise from run_forever, as asyncio lets them propagate.
        if self._pending_exc is None:
            self._pending_exc = exc
        self._stopping = True
        _lib.ll_loop_stop(self._id)
