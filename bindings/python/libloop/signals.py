# SPDX-License-Identifier: MIT
"""add_signal_handler / remove_signal_handler (asyncio's unix_events rules).

Why asyncio's approach (signal.signal + the wake-up fd) and not libloop's
ll_add_signal_handler: Python must stay the owner of every signal
disposition in a Python process. ll_add_signal_handler installs a C
sigaction behind the signal module's back, so signal.getsignal() would
lie, a later signal.signal() (asyncio.Runner does one for SIGINT) would
silently replace libloop's handler, and Python could not put its own
handler back when the loop's is removed. With signal.signal, the handler is
a no-op Python handler; Python's C-level trip writes the signal number to
the wake-up fd, which is the socket the loop already watches for Ctrl-C
(readers.py `_signals_on`), and the loop reads the numbers there and queues
the registered callbacks -- as asyncio's selector loop does. It also gives
asyncio's thread rule for free: set_wakeup_fd works on the main thread only.
While any handler is registered the wake-up socket stays watched, also when
the loop is busy, so a callback runs in the next iteration, not only once
the loop goes idle. remove_signal_handler puts back SIG_DFL, or Python's
default_int_handler for SIGINT (KeyboardInterrupt works again), as asyncio.
"""

import errno
import signal
from asyncio import coroutines
from asyncio.log import logger

from .handles import Handle


def _noop_handler(signum, frame):
    """Python's C trip writes signum to the wake-up fd; nothing to do here."""


class SignalsMixin:
    """Signal handlers of libloop.EventLoop."""

    def _init_signals(self):
        self._signal_handlers = {}
        self._sig_saved_wakeup = -1   # the wake-up fd before our first handler

    def _check_signal(self, sig):
        if not isinstance(sig, int):
            raise TypeError(f'sig must be an int, not {sig!r}')
        if sig not in signal.valid_signals():
            raise ValueError(f'invalid signal number {sig}')

    def add_signal_handler(self, sig, callback, *args):
        """Run callback(*args) in the loop after each delivery of sig
        (main thread only). ValueError: invalid sig; RuntimeError: sig
        cannot be caught, or not the main thread."""
        if (coroutines.iscoroutine(callback) or
                coroutines.iscoroutinefunction(callback)):
            raise TypeError("coroutines cannot be used with add_signal_handler()")
        self._check_signal(sig)
        self._check_closed()
        if not callable(callback):
            self._check_callback(callback, 'add_signal_handler')
        try:
            w = self._sig_wakeup_socket()
            old = signal.set_wakeup_fd(w, warn_on_full_buffer=False)
        except (ValueError, OSError) as exc:
            raise RuntimeError(str(exc))
        if old != w and not self.is_running():
            self._sig_saved_wakeup = old   # while running, run_forever restores it
        self._signal_handlers[sig] = Handle(callback, args, self, None)
        try:
            signal.signal(sig, _noop_handler)
            signal.siginterrupt(sig, False)
        except OSError as exc:
            del self._signal_handlers[sig]
            if not self._signal_handlers:
                self._sig_restore_wakeup()
            if exc.errno == errno.EINVAL:
                raise RuntimeError(f'sig {sig} cannot be caught')
            raise
        if self._sig_fd >= 0 and not self._sig_on:
            self._sig_watch(True)   # running and busy: watch from now on

    def remove_signal_handler(self, sig):
        """Remove sig's handler; True if there was one."""
        self._check_signal(sig)
        try:
            del self._signal_handlers[sig]
        except KeyError:
            return False
        handler = signal.default_int_handler if sig == signal.SIGINT else signal.SIG_DFL
        try:
            signal.signal(sig, handler)
        except OSError as exc:
            if exc.errno == errno.EINVAL:
                raise RuntimeError(f'sig {sig} cannot be caught')
            raise
        except ValueError as exc:   # not the main thread
            logger.info('remove_signal_handler(%s) failed: %s', sig, exc)
        if not self._signal_handlers and not self.is_running():
            self._sig_restore_wakeup()
        return True

    def _sig_restore_wakeup(self):
        saved, self._sig_saved_wakeup = self._sig_saved_wakeup, -1
        try:
            signal.set_wakeup_fd(saved)
        except (ValueError, OSError) as exc:
            logger.info('set_wakeup_fd(%s) failed: %s', saved, exc)

    def _close_signals(self):
        """close(): remove every handler, as asyncio's loop does."""
        for sig in list(self._signal_handlers):
            try:
                self.remove_signal_handler(sig)
            except (RuntimeError, ValueError, OSError):
                pass

    def _dispatch_signals(self, data):
        """The signal numbers read from the wake-up socket: queue their
        callbacks (one per delivery, as asyncio)."""
        handlers = self._signal_handlers
        for signum in data:
            handle = handlers.get(signum)
            if handle is None:
                continue
            if handle._cancelled:
                self.remove_signal_handler(signum)
            else:
                self._ready.append(handle)
                if not self._signalled:
                    self._signal()
