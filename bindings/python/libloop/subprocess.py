# SPDX-License-Identifier: MIT
"""Subprocesses on ll_spawn (asyncio's subprocess_exec / subprocess_shell).

subprocess_exec/subprocess_shell are asyncio's own (base_events), taken by
reference: their argument checks and debug logging are asyncio's; they call
_make_subprocess_transport, which starts the child with ll_spawn instead of
subprocess.Popen. libloop makes the pipes (real pipes, not socketpairs),
wraps each in a C transport, watches the exit with a pidfd and reaps the
child: no SIGCHLD, no child watcher, no zombie.

The protocol sees asyncio's order (base_subprocess.BaseSubprocessTransport
is the model): connection_made once every pipe is connected, then
pipe_data_received / process_exited / pipe_connection_lost as they happen,
each through call_soon, and connection_lost last, once the child has exited
and every pipe has closed.
"""

import collections
import contextvars
import errno
import os
import subprocess
import warnings
from asyncio import base_events, futures, protocols, transports
from asyncio.log import logger
from ctypes import byref, c_char_p, c_int

from . import _lib, _versions
from . import _netlib as _net
from ._lib import check
from .pipes import ReadPipeTransport, WritePipeTransport
from .popen_view import PopenView
from .spawn_extra import spawn_extra

_WAIT_AT_EXIT = _versions.WAIT_WAKES_AT_EXIT

class _PipeProto(protocols.Protocol):
    """The protocol of one of the child's pipes: forwards to the process."""

    def __init__(self, proc, fd):
        self.proc = proc
        self.fd = fd
        self.pipe = None
        self.connected = self.disconnected = False

    def connection_made(self, transport):
        self.pipe = transport
        self.connected = True
        self.proc._pipe_connected()

    def data_received(self, data):
        self.proc._call(self.proc._protocol.pipe_data_received, self.fd, data)

    def connection_lost(self, exc):
        self.disconnected = True
        proc, self.proc = self.proc, None
        if not self.connected:
            # Closed before it was ever made (the process transport closed
            # at once, e.g. its creation cancelled): it counts as
            # connected, or the process's events would stay pending and
            # _wait() would never return.
            self.connected = True
            proc._pipe_connected()
        proc._call(proc._protocol.pipe_connection_lost, self.fd, exc)
        proc._try_finish()

    def pause_writing(self):
        self.proc._protocol.pause_writing()

    def resume_writing(self):
        self.proc._protocol.resume_writing()


class SubprocessTransport(transports.SubprocessTransport):
    """A child started by ll_spawn; its id routes LL_PROCESS_EXITED here."""

    _fast_data = False  # (the batch sink's data path: never data here)

    def _release_socket(self):
        """loop.close() treats every registered id alike: no socket here."""

    def __init__(self, loop, pid_id, protocol, pipe_fds, waiter, extra=None, args=None):
        super().__init__(extra)
        self._loop = loop
        self._pid_id = pid_id
        self._protocol = protocol
        # The batch sink runs every registered object's events in its context.
        self._context = contextvars.copy_context()
        self._waiter = waiter
        self._closed = self._closing = self._lost = False
        self._finished = False
        self._returncode = None
        self._exit_waiters = []
        self._pending = collections.deque()
        pid = c_int()
        check(_net.ll_process_pid(pid_id, byref(pid)), 'process pid')
        self._pid = pid.value
        self._extra['subprocess'] = PopenView(self, args)
        loop._transports[pid_id] = self
        loop._io_sync()
        self._pipes = {}
        for fd in pipe_fds:
            out = _net.u64()
            check(_net.ll_process_pipe(pid_id, fd, out), 'process pipe')
            cls = WritePipeTransport if fd == 0 else ReadPipeTransport
            proto = _PipeProto(self, fd)
            pipe = cls(loop, out.value, proto, fileno=_net.ll_transport_fd(out.value))
            proto.pipe = pipe
            self._pipes[fd] = proto
        self._unconnected = len(self._pipes)
        if not self._pipes:
            loop.call_soon(self._connected)

    def __repr__(self):
        info = [self.__class__.__name__]
        if self._closed:
            info.append('closed')
        info.append(f'pid={self._pid}')
        if self._returncode is not None:
            info.append(f'returncode={self._returncode}')
        else:
            info.append('running')
        return '<{}>'.format(' '.join(info))

    def __del__(self, _warn=warnings.warn):
        if not self._closed and not self._lost:
            _warn(f"unclosed transport {self!r}", ResourceWarning, source=self)
            self.close()

    # ---- asyncio.SubprocessTransport ------------------------------------------

    def get_protocol(self):
        return self._protocol

    def set_protocol(self, protocol):
        self._protocol = protocol

    def is_closing(self):
        return self._closed

    def get_pid(self):
        return self._pid

    def get_returncode(self):
        return self._returncode

    def get_pipe_transport(self, fd):
        proto = self._pipes.get(fd)
        return None if proto is None else proto.pipe

    def send_signal(self, signal):
        if self._pid_id is None:   # asyncio: the transport has finished
            raise ProcessLookupError()
        if self._returncode is not None:
            return                 # Popen: an exited child is not signalled
        rc = _net.ll_process_send_signal(self._pid_id, int(signal))
        if rc == -errno.ESRCH:   # it exited; the event is on its way
            return
        check(rc, 'send_signal')

    def terminate(self):
        self.send_signal(15)

    def kill(self):
        self.send_signal(9)

    def close(self):
        if self._closed:
            return
        self._closed = True
        # As asyncio: kill through the Popen (view) unless the child has
        # exited, even if the loop has not heard of it yet. Before the
        # pipes close: libloop closes their fds at once, where asyncio's
        # close them a round later, so its child is killed before it can
        # read EOF on stdin and exit on its own.
        popen = self._extra.get('subprocess')
        if self._returncode is None and self._pid_id is not None and popen.poll() is None:
            if self._loop.get_debug():
                logger.warning('Close running child process: kill %r', self)
            popen.kill()
        for proto in self._pipes.values():
            if proto.pipe is not None:
                proto.pipe.close()

    async def _wait(self):
        """The return code, once the child has exited (asyncio's name:
        asyncio.subprocess.Process.wait calls it)."""
        if self._returncode is not None and (_WAIT_AT_EXIT or self._finished):
            return self._returncode
        waiter = self._loop.create_future()
        self._exit_waiters.append(waiter)
        return await waiter

    # ---- events ------------------------------------------------------------------

    def _call(self, cb, *args):
        if self._pending is not None:
            self._pending.append((cb, args))
        else:
            self._loop.call_soon(cb, *args)

    def _pipe_connected(self):
        self._unconnected -= 1
        if self._unconnected == 0:
            self._connected()

    def _connected(self):
        loop = self._loop
        loop.call_soon(self._protocol.connection_made, self)
        pending, self._pending = self._pending, None
        for cb, args in pending:
            loop.call_soon(cb, *args)
        waiter, self._waiter = self._waiter, None
        if waiter is not None:
            loop.call_soon(futures._set_result_unless_cancelled, waiter, None)

    def _other_event(self, ev):
        if ev.kind == _net.PROCESS_EXITED:
            self._process_exited(ev.code)

    def _process_exited(self, returncode):
        if self._loop.get_debug():
            logger.info('%r exited with return code %r', self, returncode)
        self._returncode = returncode
        self._call(self._protocol.process_exited)
        self._try_finish()
        if _WAIT_AT_EXIT:
            self._wake_waiters()

    def _try_finish(self):
        if self._finished or self._returncode is None:
            return
        if all(p.disconnected for p in self._pipes.values()):
            self._finished = True
            self._call(self._call_connection_lost, None)

    def _call_connection_lost(self, exc):
        try:
            self._protocol.connection_lost(exc)
        finally:
            self._wake_waiters()
            self._release()
            self._protocol = None

    def _wake_waiters(self):
        waiters, self._exit_waiters = self._exit_waiters, []
        for waiter in waiters:
            if not waiter.cancelled():
                waiter.set_result(self._returncode)

    def _release(self):
        pid_id, self._pid_id = self._pid_id, None
        self._lost = True
        if pid_id is not None and not self._loop.is_closed():
            self._loop._transports.pop(pid_id, None)
            self._loop._io_sync()
            _lib.ll_release(pid_id)


# ---- spawning ------------------------------------------------------------------------

def _stdio(value, child_fd):
    if value is None:
        return _net.STDIO_INHERIT
    if value == subprocess.PIPE:
        return _net.STDIO_PIPE
    if value == subprocess.DEVNULL:
        return _net.STDIO_DEVNULL
    if value == subprocess.STDOUT:
        if child_fd != 2:
            raise ValueError('STDOUT can only be used for stderr')
        return _net.STDIO_STDOUT
    fd = value if isinstance(value, int) else value.fileno()
    if fd < 0:
        raise ValueError(f'bad file descriptor for the child\'s fd {child_fd}: {fd}')
    return fd


def _strings(items):
    arr = (c_char_p * (len(items) + 1))(*items, None)
    return arr


def _env_list(env):
    out = []
    for k, v in env.items():
        k = os.fsencode(k)
        if b'=' in k:
            raise ValueError('illegal environment variable name')
        out.append(k + b'=' + os.fsencode(v))
    return out


def spawn_options(args, shell, stdin, stdout, stderr, kwargs):
    """A ProcessOptions and an ll_spawn_extra (None if nothing extra) for
    ll_spawn_ex, and the objects they point to (to keep alive), from
    Popen's arguments; ValueError for what ll_spawn_ex cannot do."""
    executable = kwargs.pop('executable', None)
    cwd = kwargs.pop('cwd', None)
    env = kwargs.pop('env', None)
    flags = 0
    if kwargs.pop('start_new_session', False):
        flags |= _net.PROCESS_NEW_SESSION
    kwargs.pop('restore_signals', None)   # ll_spawn always restores SIGPIPE and SIGXFSZ
    extra, extra_keep = spawn_extra(kwargs)
    if extra is not None and flags and extra.pgid >= 0:
        # Popen's child calls setsid() then setpgid(): a session leader
        # cannot change its group.
        raise PermissionError(errno.EPERM, os.strerror(errno.EPERM))
    if kwargs:
        raise TypeError(f'subprocess_exec() got an unexpected keyword argument '
                        f'{next(iter(kwargs))!r}')
    if shell:
        argv = [b'/bin/sh', b'-c', os.fsencode(args)]
        if executable is not None:
            argv[0] = os.fsencode(executable)
        file = argv[0]
    else:
        if isinstance(args, (str, bytes, os.PathLike)):
            args = [args]
        argv = [os.fsencode(a) for a in args]
        if not argv:
            raise ValueError('the program is missing')
        file = argv[0] if executable is None else os.fsencode(executable)
    opts = _net.ProcessOptions()
    argv_arr = _strings(argv)
    env_arr = _strings(_env_list(env)) if env is not None else None
    opts.file = file
    opts.argv = argv_arr
    opts.env = env_arr
    opts.cwd = os.fsencode(cwd) if cwd is not None else None
    opts.stdio[0] = _stdio(stdin, 0)
    opts.stdio[1] = _stdio(stdout, 1)
    opts.stdio[2] = _stdio(stderr, 2)
    opts.flags = flags
    keep = (argv_arr, env_arr, file, extra_keep)
    return opts, extra, keep, cwd


class SubprocessMixin:
    """subprocess_exec / subprocess_shell of libloop.EventLoop."""

    subprocess_exec = base_events.BaseEventLoop.subprocess_exec
    subprocess_shell = base_events.BaseEventLoop.subprocess_shell
    _log_subprocess = base_events.BaseEventLoop._log_subprocess

    async def _make_subprocess_transport(self, protocol, args, shell, stdin, stdout, stderr,
                                         bufsize, extra=None, **kwargs):
        self._check_closed()
        program = args if shell or isinstance(args, (str, bytes, os.PathLike)) else args[0]
        opts, spawn_x, keep, cwd = spawn_options(args, shell, stdin, stdout, stderr, kwargs)
        out = _net.u64()
        rc = _net.ll_spawn_ex(self._id, byref(opts), spawn_x, None, None, out)
        del keep
        if -10000 < rc < 0:
            err = -rc
            if spawn_x is not None and err in (errno.EPERM, errno.EBADF):
                # setresuid, setpgid, a pass fd: as Popen, no file name
                raise OSError(err, os.strerror(err))
            name = program
            if cwd is not None and not os.path.isdir(cwd):
                name = cwd
            raise OSError(err, os.strerror(err), os.fsdecode(name) if name is not None else None)
        check(rc, 'spawn')
        pipe_fds = [fd for fd, v in enumerate((stdin, stdout, stderr)) if v == subprocess.PIPE]
        waiter = self.create_future()
        transp = SubprocessTransport(self, out.value, protocol, pipe_fds, waiter, extra, args)
        if self._debug:
            logger.debug('process %r created: pid %s', program, transp.get_pid())
        try:
            await waiter
        except (SystemExit, KeyboardInterrupt):
            raise
        except BaseException:
            transp.close()
            await transp._wait()
            raise
        return transp

