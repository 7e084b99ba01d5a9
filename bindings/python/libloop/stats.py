# SPDX-License-Identifier: MIT
"""Loop metrics: loop.stats() and loop.event_loop_utilization().

libloop's core counts iterations, poll events, idle and running time
(ll_loop_stats). This Python loop keeps its own ready deque and timer heap,
so stats() adds what only Python sees: handles run from them (counted per
round, not per callback), iterations run inside one host-queue call, and
the lengths of its queues. asyncio and uvloop have no such API; libuv has
uv_metrics_info and uv_metrics_idle_time; event_loop_utilization() is
Node's performance.eventLoopUtilization().
"""

import asyncio
import ctypes
from dataclasses import dataclass

from . import _lib
from ._lib import check

__all__ = ["LoopStats", "ELU"]


@dataclass(frozen=True)
class LoopStats:
    """A snapshot of a loop's metrics; totals count from the loop's creation."""
    iterations: int   # loop iterations (asyncio's _run_once calls)
    events: int       # I/O readiness events reported by the poll
    callbacks: int    # callbacks run: Python handles and libloop's own
    idle_ns: int      # time blocked in poll, waiting for something to do
    running_ns: int   # time inside run_forever / run_until_complete (idle included)
    ready: int        # callbacks ready to run now
    timers: int       # call_later/call_at timers scheduled, not cancelled
    fds: int          # fds watched (readers, writers, transports, servers)
    tasks: int        # tasks not done

    @property
    def busy_ns(self):
        """Time running and not idle in poll."""
        return self.running_ns - self.idle_ns


@dataclass(frozen=True)
class ELU:
    """Event loop utilization as Node reports it: idle and active time
    (seconds) and active / (idle + active)."""
    idle: float
    active: float
    utilization: float


def _elu(idle, active):
    total = idle + active
    return ELU(idle, active, active / total if total > 0 else 0.0)


class StatsMixin:
    """loop.stats() and loop.event_loop_utilization()."""

    def _core_stats(self):
        if self._closed:    # close() released the loop's id
            raise RuntimeError('Event loop is closed')
        st = _lib.LoopStats(size=ctypes.sizeof(_lib.LoopStats))
        check(_lib.ll_loop_stats(self._id, ctypes.byref(st)), "ll_loop_stats")
        return st

    def stats(self):
        """Return a LoopStats. Call it from the loop's thread (a callback or
        coroutine) or while the loop is not running; from another thread
        while it runs it raises LibloopError(LL_EWRONGTHREAD); on a closed
        loop, RuntimeError."""
        st = self._core_stats()
        try:
            ntasks = len(asyncio.all_tasks(self))
        except RuntimeError:    # a closed loop's task registry still answers
            ntasks = 0
        return LoopStats(
            iterations=st.iterations + self._n_virtual,
            events=st.events,
            # libloop's count covers what it runs itself (fd readers, the
            # trampolines into this loop, C task steps); the host queue's
            # handles and timers are counted here.
            callbacks=st.callbacks + self._n_callbacks,
            idle_ns=st.idle_ns,
            running_ns=st.running_ns,
            ready=st.ready + len(self._ready),
            timers=self._n_timers(),
            fds=st.fds,
            tasks=ntasks,
        )

    def event_loop_utilization(self, prev=None, prev2=None):
        """Node's performance.eventLoopUtilization().

        With no argument: idle and active time since the loop was created.
        With one ELU: the delta since it was taken. With two: the delta
        between them (prev must be the later one, as in Node).
        """
        if prev is not None and prev2 is not None:
            return _elu(prev.idle - prev2.idle, prev.active - prev2.active)
        st = self._core_stats()
        now = _elu(st.idle_ns / 1e9, (st.running_ns - st.idle_ns) / 1e9)
        if prev is None:
            return now
        return _elu(now.idle - prev.idle, now.active - prev.active)
