# SPDX-License-Identifier: MIT
"""What a subprocess transport's get_extra_info('subprocess') returns: the
part of subprocess.Popen that asyncio's callers use (pid, args, returncode,
poll, wait, send_signal, terminate, kill) for a child libloop started.

libloop reaps the child itself (a pidfd watched by the loop), so poll and
wait only look: waitid(WNOWAIT) reads the exit status and leaves the
zombie for the loop, which then reaps it and reports the exit as usual.
A pid is never recycled while it is unreaped, so looking is safe.
"""

import errno
import os
import select
import subprocess
import time

_PEEK = os.WEXITED | os.WNOWAIT


def _code(info):
    """Popen's returncode from a waitid result."""
    if info.si_code == os.CLD_EXITED:
        return info.si_status
    return -info.si_status


class PopenView:
    """A subprocess.Popen look-alike over a SubprocessTransport."""

    stdin = stdout = stderr = None   # asyncio's pipes are the transport's

    def __init__(self, transport, args):
        self._transport = transport
        self.pid = transport.get_pid()
        self.args = args
        self.returncode = None

    def __repr__(self):
        return f'<{self.__class__.__name__}: returncode: {self.returncode} args: {self.args!r}>'

    def _peek(self, flags):
        """The exit code if the child has exited (flags may block), else
        None; the transport's once the loop has reaped it."""
        rc = self._transport.get_returncode()
        if rc is None:
            try:
                info = os.waitid(os.P_PID, self.pid, _PEEK | flags)
            except ChildProcessError:   # reaped meanwhile: the loop will say
                return self._transport.get_returncode()
            if info is not None and info.si_pid == self.pid:
                rc = _code(info)
        return rc

    def poll(self):
        if self.returncode is None:
            self.returncode = self._peek(os.WNOHANG)
        return self.returncode

    def wait(self, timeout=None):
        if self.poll() is not None:
            return self.returncode
        if timeout is None:
            # Blocks until the exit. None only if the loop reaped the child
            # meanwhile without having reported it yet (its status is then
            # the transport's, once the loop runs).
            try:
                info = os.waitid(os.P_PID, self.pid, _PEEK)
            except ChildProcessError:
                info = None
            self.returncode = _code(info) if info is not None else self._transport.get_returncode()
            return self.returncode
        deadline = time.monotonic() + timeout
        try:
            fd = os.pidfd_open(self.pid)
        except (AttributeError, OSError):   # no pidfd here, or reaped meanwhile
            fd = None
        try:
            while self.poll() is None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise subprocess.TimeoutExpired(self.args, timeout)
                if fd is not None:
                    select.select([fd], [], [], left)
                else:
                    time.sleep(min(left, 0.005))
        finally:
            if fd is not None:
                os.close(fd)
        return self.returncode

    def send_signal(self, sig):
        # Popen: a child known to have exited is not signalled.
        if self.poll() is None:
            try:
                self._transport.send_signal(sig)
            except ProcessLookupError:
                pass

    def terminate(self):
        self.send_signal(15)

    def kill(self):
        self.send_signal(9)

    def communicate(self, input=None, timeout=None):
        raise OSError(errno.ENOTSUP, 'communicate() on a libloop child: use its transport\'s pipes')
