# SPDX-License-Identifier: MIT
"""Exception handler API and debug mode, as asyncio's BaseEventLoop.

default_exception_handler and call_exception_handler are asyncio's own
functions (they only use _exception_handler and _current_handle), so the
log text is exactly asyncio's.
"""

import itertools
import os
import sys
from asyncio import base_events, constants

from . import _lib

# The library's own reports name their cause with a code; asyncio's contexts
# carry an exception instead, and a shorter message for accept failures.
_ACCEPT_MSG = 'socket.accept() out of system resource'


def _c_context(ctx):
    """An asyncio context dict for an ll_error_context."""
    msg = (ctx.message or b'').decode(errors='replace')
    context = {'message': msg}
    code = ctx.code
    if -4096 < code < 0:
        context['exception'] = OSError(-code, os.strerror(-code))
    elif code:
        context['exception'] = _lib.LibloopError(code, msg)
    if msg.startswith(_ACCEPT_MSG):
        context['message'] = _ACCEPT_MSG
    return context


class ErrorsMixin:
    """Exception-handler and debug-mode methods of libloop.EventLoop."""

    default_exception_handler = base_events.BaseEventLoop.default_exception_handler
    call_exception_handler = base_events.BaseEventLoop.call_exception_handler

    def _init_c_errors(self):
        """Route what the library reports (a server's accept failing with
        EMFILE, ...) to call_exception_handler, as asyncio reports it,
        instead of the C default handler's line on stderr."""
        self._c_exc_handler = _lib.EXCEPTION_HANDLER(self._c_exception)
        _lib.check(_lib.ll_loop_set_exception_handler(self._id, self._c_exc_handler, None),
                   "ll_loop_set_exception_handler")

    def _c_exception(self, loop_id, ctx, arg):
        try:
            self.call_exception_handler(_c_context(ctx.contents))
        except BaseException as exc:  # never into C: raised from run_forever
            self._stash(exc)

    def get_exception_handler(self):
        """The current exception handler, or None for the default."""
        return self._exception_handler

    def set_exception_handler(self, handler):
        """Set handler(loop, context); None restores the default."""
        if handler is not None and not callable(handler):
            raise TypeError(f'A callable object or None is expected, '
                            f'got {handler!r}')
        self._exception_handler = handler

    def get_debug(self):
        """True if debug mode is on."""
        return self._debug

    def _bind_get_debug(self):
        """asyncio's C Future and Task call loop.get_debug() whenever one is
        made (three times per aiohttp request): bound on the loop as a
        builtin that returns _debug (the __next__ of an endless repeat of
        it), that is a call without a Python frame. __init__ and set_debug
        bind it again whenever _debug changes; a subclass's own get_debug
        is kept."""
        if type(self).get_debug is ErrorsMixin.get_debug:
            self.get_debug = itertools.repeat(self._debug).__next__

    def set_debug(self, enabled):
        """Turn debug mode on or off (slow callbacks, source tracebacks)."""
        self._debug = enabled
        self._bind_get_debug()
        self._bind_create_task()  # (EventLoop's: a debug task drops a frame)
        self._soon_slow = enabled or self._closed
        if self.is_running():
            self.call_soon_threadsafe(self._set_coroutine_origin_tracking,
                                      enabled)

    def _set_coroutine_origin_tracking(self, enabled):
        if bool(enabled) == bool(self._coroutine_origin_tracking_enabled):
            return
        if enabled:
            self._coroutine_origin_tracking_saved_depth = (
                sys.get_coroutine_origin_tracking_depth())
            sys.set_coroutine_origin_tracking_depth(
                constants.DEBUG_STACK_DEPTH)
        else:
            sys.set_coroutine_origin_tracking_depth(
                self._coroutine_origin_tracking_saved_depth)
        self._coroutine_origin_tracking_enabled = enabled
