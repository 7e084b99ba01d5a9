# SPDX-License-Identifier: MIT
"""Handle objects and the helpers that run them.

The loop hands out asyncio's own Handle/TimerHandle types (subclasses with a
lean __init__, so isinstance checks, repr and cancel() are asyncio's). In
debug mode the loop uses asyncio's classes unchanged so that source
tracebacks are captured exactly as asyncio does.
"""

import contextvars
from asyncio import events, format_helpers
from asyncio.log import logger

_copy_context = contextvars.copy_context


class Handle(events.Handle):
    """asyncio.Handle with an __init__ that skips the debug checks."""

    __slots__ = ()

    def __init__(self, callback, args, loop, context=None):
        self._context = _copy_context() if context is None else context
        self._loop = loop
        self._callback = callback
        self._args = args
        self._cancelled = False
        self._repr = None
        self._source_traceback = None


class TimerHandle(events.TimerHandle):
    """asyncio.TimerHandle with a lean __init__ and a one-frame cancel()."""

    __slots__ = ()

    def __init__(self, when, callback, args, loop, context=None):
        self._context = _copy_context() if context is None else context
        self._loop = loop
        self._callback = callback
        self._args = args
        self._cancelled = False
        self._repr = None
        self._source_traceback = None
        self._when = when
        self._scheduled = False

    def cancel(self):
        """asyncio's TimerHandle.cancel and Handle.cancel in one frame (a
        pool's idle timer is set and cancelled per query: three Python
        frames there). Same steps in the same order: the loop counts the
        cancelled timer while the handle is still live, then the handle
        drops its callback (keeping its repr in debug mode). Only the
        loop's own _call_at makes this class, so the loop is libloop's and
        its _timer_handle_cancelled is the count kept inline here."""
        if not self._cancelled:
            loop = self._loop
            if self._scheduled:
                loop._timer_cancelled_count += 1
            self._cancelled = True
            if loop._debug:
                self._repr = repr(self)
            self._callback = None
            self._args = None


def report_callback_error(loop, handle, exc):
    """Report an exception raised by a callback, as asyncio's Handle._run."""
    cb = format_helpers._format_callback_source(handle._callback, handle._args)
    context = {
        'message': f'Exception in callback {cb}',
        'exception': exc,
        'handle': handle,
    }
    if handle._source_traceback:
        context['source_traceback'] = handle._source_traceback
    loop.call_exception_handler(context)


def run_debug(loop, handle):
    """Run one handle in debug mode: time it and warn if it is slow."""
    loop._current_handle = handle
    t0 = loop.time()
    try:
        handle._run()
    finally:
        dt = loop.time() - t0
        loop._current_handle = None
        if dt >= loop.slow_callback_duration:
            logger.warning('Executing %s took %.3f seconds',
                           _format_handle(handle), dt)
        # A frame that outlives its call keeps its locals (a traceback's
        # frame links to its callers' frames): drop the handle, or a task
        # whose exception was never retrieved is kept in a cycle and
        # reported only by the garbage collector (asyncio's _run_once and
        # Handle._run clear theirs alike).
        handle = None


def _format_handle(handle):
    # asyncio.base_events._format_handle, without importing a private name.
    from asyncio import tasks
    cb = handle._callback
    if isinstance(getattr(cb, '__self__', None), tasks.Task):
        return repr(cb.__self__)
    return str(handle)
