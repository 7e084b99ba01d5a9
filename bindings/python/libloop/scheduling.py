# SPDX-License-Identifier: MIT
"""The hot path: call_soon/call_later/call_at/call_soon_threadsafe and the
trampolines libloop calls.

Crossings (ctypes calls or callbacks) per operation, steady state:
- call_soon: 0. The handle goes to a Python deque; ll_loop_host_ready is
  called only when libloop does not yet know the deque has work (at most
  once per iteration, and never from inside the host-queue trampoline).
- one loop iteration with call_soon work: 1 (the host-queue trampoline,
  which runs every handle queued before it), or 1/64 when nothing but
  call_soon work exists (see _run_ready).
- call_later/call_at: 0, unless the new deadline is the earliest: then 1
  (ll_call_at re-arms libloop's single wake-up timer).
- timers firing: 1 per iteration that has due timers (the timer trampoline
  runs all of them), plus 1 to re-arm for the next deadline.
- call_soon_threadsafe: 1 per burst (ll_call_soon_threadsafe posts one
  drain; later posts see the drain pending and only append).
Handles are built inline with object.__new__ (no __init__ call): this is
the single most frequent allocation of an asyncio program.
"""

import contextvars
import heapq
import os
import time

from . import _lib
from ._lib import check
from .handles import Handle, TimerHandle, report_callback_error, run_debug
from asyncio import events

_new = object.__new__
_copy_context = contextvars.copy_context
_monotonic = time.monotonic
_heappush = heapq.heappush
_heappop = heapq.heappop
_MAX_WAKE = 86400.0   # arm libloop's wake-up timer at most a day ahead
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
        """The loop clock (libloop's monotonic clock), in seconds."""
        return _monotonic() + self._clock_offset

    def call_soon(self, callback, *args, context=None):
        """Schedule callback(*args) for the next iteration (FIFO)."""
        if self._closed:
            raise RuntimeError('Event loop is closed')
        if self._debug:
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
        self._ready.append(h)
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

    def call_later(self, delay, callback, *args, context=None):
        """Schedule callback(*args) after delay seconds; a TimerHandle."""
        if delay is None:
            raise TypeError('delay must not be None')
        return self._call_at(_monotonic() + self._clock_offset + delay,
                             callback, args, context, 'call_later')

    def call_at(self, when, callback, *args, context=None):
        """Schedule callback(*args) at loop time when; a TimerHandle."""
        if when is None:
            raise TypeError("when cannot be None")
        return self._call_at(when, callback, args, context, 'call_at')

    def _call_at(self, when, callback, args, context, method):
        if self._closed:
            raise RuntimeError('Event loop is closed')
        if when != when:
            raise ValueError("when must not be NaN")
        if self._debug:
            self._check_thread()
            self._check_callback(callback, method)
            h = events.TimerHandle(when, callback, args, self, context)
            _trim_own_frames(h._source_traceback)
        else:
            if not callable(callback):
                self._check_callback(callback, method)
            h = _new(TimerHandle)
            h._context = _copy_context() if context is None else context
            h._loop = self
            h._callback = callback
            h._args = args
            h._cancelled = False
            h._repr = None
            h._source_traceback = None
            h._when = when
        h._scheduled = True
        _heappush(self._timers, (when, next(self._timer_seq), h))
        armed = self._armed
        if not armed or when < armed[0]:
            self._arm(when)
        elif self._timer_cancelled_count > 50:
            self._maybe_purge()
        return h

    def _arm(self, when):
        limit = _monotonic() + self._clock_offset + _MAX_WAKE
        if when > limit:
            when = limit
        # Arm first, then record: an interruption between the two leaves an
        # unrecorded wake-up (one harmless extra _timer_fire), never a
        # recorded one libloop does not have (timers that never fire).
        check(_lib.ll_call_at(self._id, when, self._c_timer, None, None),
              "ll_call_at")
        _heappush(self._armed, when)

    def _arm_next(self):
        # Make sure libloop wakes the loop for the earliest timer.
        timers = self._timers
        armed = self._armed
        if timers and (not armed or timers[0][0] < armed[0]):
            self._arm(timers[0][0])

    def _timer_handle_cancelled(self, handle):
        if handle._scheduled:
            self._timer_cancelled_count += 1

    def _maybe_purge(self):
        # asyncio's rule: rebuild the heap when over half is cancelled.
        if 2 * self._timer_cancelled_count <= len(self._timers):
            return
        kept = []
        for entry in self._timers:
            if entry[2]._cancelled:
                entry[2]._scheduled = False
            else:
                kept.append(entry)
        heapq.heapify(kept)
        self._timers = kept
        self._timer_cancelled_count = 0

    def call_soon_threadsafe(self, callback, *args, context=None):
        """Schedule callback(*args) from any thread and wake the loop."""
        if self._closed:
            raise RuntimeError('Event loop is closed')
        if self._debug or not callable(callback):
            self._check_callback(callback, 'call_soon_threadsafe')
        if self._debug:  # asyncio's Handle: it records where it was made
            handle = events.Handle(callback, args, self, context)
            _trim_own_frames(handle._source_traceback)
        else:
            handle = Handle(callback, args, self, context)
        self._ts.append(handle)
        if not self._ts_posted:
            # Coalesce wake-ups, never callbacks: one drain per burst.
            self._ts_posted = True
            rc = _lib.ll_call_soon_threadsafe(self._id, self._c_ts, None)
            if rc < 0 and not self._closed:
                check(rc, "ll_call_soon_threadsafe")
        return handle

    # ---- trampolines (libloop calls them on the loop thread) --------------

    def _host_run(self, _loop_id, _arg):
        ready = self._ready
        self._signalled = True
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
            else:
                self._run_ready(ready)
        except BaseException as exc:
            self._stash(exc)
        self._gather = False
        if self._wq:
            self._flush_writes()
        more = len(ready) > 0
        self._signalled = more
        if more is self._sig_on and self._sig_fd >= 0:
            self._sig_watch(not more)
        return more

    def _run_ready(self, ready):
        # Runs exactly the handles queued at entry (one iteration). When the
        # next libloop iteration provably could do nothing but call this
        # trampoline again -- no fd to poll, no timer due, no thread-safe
        # post, no stop -- it runs that iteration here instead, saving a
        # crossing (up to _VIRTUAL_ITERATIONS per crossing): same order,
        # same one-iteration-per-call_soon-generation rule as asyncio.
        # A loop with a task machine sets the budget to 1: its task steps
        # wait in libloop's own ready queue, which this cannot see.
        popleft = ready.popleft
        armed = self._armed
        budget = self._virtual_iterations
        while True:
            n = len(ready)
            # Metrics (stats.py): counted per round, not per callback; a
            # cancelled handle is taken back on its own (rare) path.
            self._n_callbacks += n
            while n:
                n -= 1
                h = popleft()
                if h._cancelled:
                    self._n_callbacks -= 1
                    continue
                try:
                    h._context.run(h._callback, *h._args)
                except (SystemExit, KeyboardInterrupt):
                    raise
                except BaseException as exc:
                    report_callback_error(self, h, exc)
            budget -= 1
            if (not ready or not budget or self._stopping or self._ts_posted
                    or self._ts or self._sig_on or self._debug
                    or len(self._readers) + len(self._writers)
                    > (self._sig_fd >= 0)
                    or (armed and armed[0] <= _monotonic() + self._clock_offset)):
                return
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

    def _timer_fire(self, _loop_id, _arg):
        due = ()
        i = 0
        try:
            now = _monotonic() + self._clock_offset
            armed = self._armed
            while armed and armed[0] <= now:
                _heappop(armed)
            timers = self._timers
            end = now + self._clock_resolution
            due = []
            while timers and timers[0][0] < end:
                h = _heappop(timers)[2]
                h._scheduled = False
                if h._cancelled:
                    self._timer_cancelled_count -= 1
                else:
                    due.append(h)
            self._n_callbacks += len(due)
            for h in due:
                i += 1
                if not h._cancelled:
                    self._run_handle(h)
                else:
                    self._n_callbacks -= 1
        except BaseException as exc:
            # SystemExit/KeyboardInterrupt from a callback, or from a signal
            # handler between two lines: run_forever raises it.
            self._stash(exc)
        finally:
            # Whatever was raised, the heap keeps its wake-up and the due
            # timers not run yet go first in the next run (asyncio leaves
            # them at the head of its _ready).
            if i < len(due):
                self._ready.extendleft(reversed(due[i:]))
                if not self._signalled:
                    self._signal()
            self._arm_next()

    def _ts_fire(self, _loop_id, _arg):
        try:
            self._ts_posted = False
            ts = self._ts
            ready = self._ready
            while ts:
                ready.append(ts.popleft())
            if ready and not self._signalled:
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
        self._ts_posted = False     # before draining: a racing post re-posts
        ts = self._ts
        ready = self._ready
        while ts:
            ready.append(ts.popleft())
        self._signalled = False     # libloop may have dropped the request
        self._gather = False        # (an interrupted trampoline left it on)
        if self._wq:
            self._flush_writes()
        if ready:
            self._signal()
        # Deadlines already past: their libloop timer fired (its trampoline
        # may not have run), or will fire in the first iteration anyway.
        now = _monotonic() + self._clock_offset
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
