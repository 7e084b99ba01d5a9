# SPDX-License-Identifier: MIT
"""Timers: call_later/call_at, the timer store and the timer trampoline.

Crossings: scheduling a timer costs 0, unless its deadline is the earliest
(then 1, ll_call_at, to re-arm libloop's single wake-up timer); firing
costs 1 per iteration with due timers, whatever their number, plus 1 to
re-arm. Cancelling costs 0 (asyncio's lazy cancellation).

The store keeps each pending TimerHandle in one of two places:
- the run (`_run`): a deque of handles whose deadlines never decrease, in
  scheduling order. A timer joins it when its deadline is >= the run's
  last one, or when the run and the heap are both empty. Most programs
  schedule timers in deadline order (one delay, sleeps, timeouts), and such
  a timer then costs one deque slot beyond its handle, as asyncio's heap
  slot does: no (when, seq, handle) tuple, no sequence number (those were
  96 bytes a timer; a million timers, ~92 MiB).
- the heap (`_timers`): (when, seq, handle) tuples for the others; seq
  keeps equal deadlines in scheduling order, and tuples compare in C.
Invariant: while the run is not empty, every heap deadline is below the
run's last one (a push needs `when < run[-1]._when`, the run restarts only
when the heap is empty, a purge keeps the run's last entry). So of two
equal deadlines, one in the run and one in the heap, the run's was
scheduled first: ties go to the run.
"""

import collections
import heapq
import time

from . import _lib
from ._lib import check
from .handles import TimerHandle
from .scheduling import _trim_own_frames
from asyncio import events
import contextvars

_new = object.__new__
_copy_context = contextvars.copy_context
_monotonic = time.monotonic
_heappush = heapq.heappush
_heappop = heapq.heappop
_MAX_WAKE = 86400.0   # arm libloop's wake-up timer at most a day ahead


class TimersMixin:
    """Timer methods and the timer trampoline of libloop.EventLoop."""

    def _init_timers(self):
        self._timers = []                  # heap of (when, seq, handle)
        self._run = collections.deque()    # handles in deadline order
        self._timer_seq = 0
        self._timer_cancelled_count = 0
        self._firing = False               # no purge while a fire pops the run
        self._armed = []                   # deadlines libloop will wake for
        self._c_timer = _lib.CALLBACK(self._timer_fire)

    def call_later(self, delay, callback, *args, context=None):
        """Schedule callback(*args) after delay seconds; a TimerHandle."""
        if delay is None:
            raise TypeError('delay must not be None')
        return self._call_at(_monotonic() + delay,
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
        run = self._run
        if run and when >= run[-1]._when or not run and not self._timers:
            run.append(h)
        else:
            # Into the heap (inline: a timer shorter than one already
            # pending, such as a pool's idle timer under a run's timeout,
            # comes here every time).
            seq = self._timer_seq
            self._timer_seq = seq + 1
            _heappush(self._timers, (when, seq, h))
        armed = self._armed
        if not armed or when < armed[0]:
            self._arm(when)
        elif self._timer_cancelled_count > 50:
            self._maybe_purge()
        return h

    def _arm(self, when):
        limit = _monotonic() + _MAX_WAKE
        if when > limit:
            when = limit
        # Arm first, then record: an interruption between the two leaves an
        # unrecorded wake-up (one harmless extra _timer_fire), never a
        # recorded one libloop does not have (timers that never fire).
        # libloop's deadline is on its own clock (_clock_offset ahead).
        check(_lib.ll_call_at(self._id, when + self._clock_offset,
                              self._c_timer, None, None),
              "ll_call_at")
        _heappush(self._armed, when)

    def _next_deadline(self):
        """The earliest pending deadline (cancelled timers included), or
        None."""
        timers = self._timers
        run = self._run
        if run:
            first = run[0]._when
            return timers[0][0] if timers and timers[0][0] < first else first
        return timers[0][0] if timers else None

    def _arm_next(self):
        # Make sure libloop wakes the loop for the earliest timer.
        first = self._next_deadline()
        armed = self._armed
        if first is not None and (not armed or first < armed[0]):
            self._arm(first)

    def _n_timers(self):
        """How many timers are scheduled and not cancelled."""
        return (len(self._timers) + len(self._run)
                - self._timer_cancelled_count)

    def _clear_timers(self):
        self._timers.clear()
        self._run.clear()
        self._armed.clear()
        self._timer_cancelled_count = 0

    def _timer_handle_cancelled(self, handle):
        if handle._scheduled:
            self._timer_cancelled_count += 1

    def _maybe_purge(self):
        # asyncio's rule: rebuild when over half is cancelled. Not while a
        # fire pops the run (it counted the due entries in place).
        run = self._run
        if (self._firing or 2 * self._timer_cancelled_count
                <= len(self._timers) + len(run)):
            return
        kept = []
        for entry in self._timers:
            if entry[2]._cancelled:
                entry[2]._scheduled = False
            else:
                kept.append(entry)
        heapq.heapify(kept)
        self._timers = kept
        left = 0
        if run:
            # The run's last entry stays, cancelled or not: the invariant
            # (heap deadlines below it) must hold.
            last = run.pop()
            live = []
            for h in run:
                if h._cancelled:
                    h._scheduled = False
                else:
                    live.append(h)
            run.clear()
            run.extend(live)
            run.append(last)
            left = last._cancelled
        self._timer_cancelled_count = left

    # ---- the trampoline (libloop calls it on the loop thread) -------------

    def _timer_fire(self, _loop_id, _arg):
        if self._pending_exc is not None:
            # A callback raised SystemExit/KeyboardInterrupt earlier in this
            # iteration: asyncio runs nothing more before run_forever
            # raises it. A later fire (another wake-up due in the same
            # iteration) leaves the due timers for the next run -- where a
            # loop.stop among them must stop that run, not this one. Its
            # wake-up is spent: unrecord it, and arm for the first timer.
            now = _monotonic()
            armed = self._armed
            while armed and armed[0] <= now:
                _heappop(armed)
            self._arm_next()
            return
        due = ()
        i = k = 0
        run = self._run
        try:
            now = _monotonic()
            armed = self._armed
            while armed and armed[0] <= now:
                _heappop(armed)
            timers = self._timers
            end = now + self._clock_resolution
            self._firing = True
            if timers and timers[0][0] < end:
                due = self._pop_due_merged(end)
                self._n_callbacks += len(due)
                for h in due:
                    i += 1
                    if not h._cancelled:
                        self._run_handle(h)
                    else:
                        self._n_callbacks -= 1
            else:
                # Only the run has due timers: they are its first k
                # entries. Run them from there, without a list of them.
                for h in run:
                    if h._when >= end:
                        break
                    k += 1
                self._n_callbacks += k
                popleft = run.popleft
                while i < k:
                    h = popleft()
                    i += 1
                    h._scheduled = False
                    if h._cancelled:
                        self._timer_cancelled_count -= 1
                        self._n_callbacks -= 1
                    else:
                        self._run_handle(h)
        except BaseException as exc:
            # SystemExit/KeyboardInterrupt from a callback, or from a signal
            # handler between two lines: run_forever raises it.
            self._stash(exc)
        finally:
            self._firing = False
            # Whatever was raised, the heap keeps its wake-up and the due
            # timers not run yet go first in the next run (asyncio leaves
            # them at the head of its _ready).
            rest = list(due[i:]) if i < len(due) else []
            while i < k and run:
                h = run.popleft()
                i += 1
                h._scheduled = False
                if h._cancelled:
                    self._timer_cancelled_count -= 1
                else:
                    rest.append(h)
            if rest:
                self._ready.extendleft(reversed(rest))
                if not self._signalled:
                    self._signal()
            self._arm_next()

    def _pop_due_merged(self, end):
        # Due timers of both places, in deadline order (ties: the run's
        # first, see the module docstring); cancelled ones are dropped.
        timers = self._timers
        run = self._run
        due = []
        while True:
            if run and run[0]._when < end and not (
                    timers and timers[0][0] < run[0]._when):
                h = run.popleft()
            elif timers and timers[0][0] < end:
                h = _heappop(timers)[2]
            else:
                return due
            h._scheduled = False
            if h._cancelled:
                self._timer_cancelled_count -= 1
            else:
                due.append(h)
