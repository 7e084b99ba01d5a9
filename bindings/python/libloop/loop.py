# SPDX-License-Identifier: MIT
"""libloop.EventLoop: an asyncio event loop whose iterations libloop runs.

The loop's state and lifecycle live here; the hot path (call_soon, timers,
the trampolines libloop calls) is in scheduling.py, fd watchers in
readers.py, socket coroutines in sockets.py, the executor in executor.py.
run_forever is ONE ctypes call (ll_loop_run_forever); libloop calls back
into Python once per iteration for all call_soon work (the host queue),
once per iteration with due timers, and once per ready fd.
"""

import asyncio
import collections
import functools
import select
import sys
import threading
import time
import warnings
import weakref
from asyncio import coroutines, events, futures, tasks
from asyncio.log import logger

from . import _hotpath, _lib, _loader, _versions
from ._lib import check
from .asyncgens import AsyncgensMixin
from .cfutures import CFuturesMixin
from .datagrams import DatagramsMixin
from .errors import ErrorsMixin
from .executor import ExecutorMixin
from .network import NetworkMixin
from .pipes import PipesMixin
from .readers import ReadersMixin
from . import scheduling as scheduling_mod
from .scheduling import SchedulingMixin
from .handles import Handle, report_callback_error
from .servers import ServersMixin
from .signals import SignalsMixin
from .sockets import SocketsMixin
from .stats import StatsMixin
from .subprocess import SubprocessMixin
from .timers import TimersMixin
from .task_machine import Task as _MachineTask

_monotonic = time.monotonic
_CLOCK_OFFSET = None


def _clock_offset(loop_id):
    """libloop's clock minus time.monotonic(), rounded up: a deadline in
    loop time plus it is a libloop deadline that never fires early."""
    best = None
    for _ in range(7):
        a = _monotonic()
        t = _lib.ll_loop_time(loop_id)
        b = _monotonic()
        if best is None or b - a < best[0]:
            best = (b - a, t - a)
    return best[1]


def _run_until_complete_cb(fut):
    if not fut.cancelled():
        exc = fut.exception()
        if isinstance(exc, (SystemExit, KeyboardInterrupt)):
            return
    futures._get_loop(fut).stop()


def _unraisable(loop, previous, unraisable):
    # An exception raised by a signal handler at the very first (or last)
    # instruction of a trampoline, outside its try, is "unraisable" to
    # ctypes: catch it here and let run_forever raise it, as asyncio's
    # select() would. Any type when the trampoline is one of this loop's
    # (the trampolines catch everything else themselves); a KeyboardInterrupt
    # or SystemExit from elsewhere on the loop thread too.
    owner = getattr(unraisable.object, '__self__', None)
    if loop._thread_id == threading.get_ident() and (
            issubclass(unraisable.exc_type, (KeyboardInterrupt, SystemExit))
            or (owner is not None and owner in (loop, loop._tm))):
        loop._stash(unraisable.exc_value)
        return
    previous(unraisable)


class EventLoop(SchedulingMixin, TimersMixin, ReadersMixin, SocketsMixin, NetworkMixin, ServersMixin,
                DatagramsMixin, PipesMixin, SubprocessMixin, SignalsMixin, CFuturesMixin,
                ExecutorMixin, ErrorsMixin, AsyncgensMixin, StatsMixin,
                asyncio.AbstractEventLoop):
    """An asyncio event loop run by libloop (drop-in for asyncio's own).

    task_machine=True: create_task builds libloop.Task (stepped by
    libloop's C task machine) instead of asyncio.Task.
    """

    # The attributes the per-callback paths read live in slots: with ~60
    # attributes the instance dict is no longer a split dict and each of
    # those reads costs a dict-hint lookup (~12 ns more per call_soon,
    # measured from asyncio's C Future). The others stay in __dict__.
    __slots__ = ('_id', '_soon_slow', '_ready_append', '_ready_popleft', '_signalled', '_closed',
                 '_debug', '_ready', '_awake', '_ts_posted', '_clock_offset',
                 '_run', '_timers', '_armed', '_timer_cancelled_count',
                 '_n_callbacks', '_stopping', '_sig_on', '_sig_fd',
                 '_readers', '_writers', '_fds_watched', '_io_open', '_gather', '_wq',
                 '_run_handles')

    def __init__(self, *, task_machine=False):
        global _CLOCK_OFFSET
        self._id = _lib.new_loop_id()
        if _CLOCK_OFFSET is None:
            _CLOCK_OFFSET = _clock_offset(self._id)
        self._clock_offset = _CLOCK_OFFSET
        if type(self).time is SchedulingMixin.time:
            # loop.time() is time.monotonic() itself, as asyncio's is: bound
            # here, it is a builtin call with no Python frame (aiohttp reads
            # it twice a request). A subclass's own time() is kept.
            self.time = _monotonic
        self._clock_resolution = time.get_clock_info('monotonic').resolution
        self._closed = False
        self._thread_id = None
        self._ready = collections.deque()
        self._ready_append = self._ready.append   # call_soon's
        self._ready_popleft = self._ready.popleft  # run_handles'
        self._run_handles = None    # the round of handles in C, or None
        self._signalled = False
        self._n_callbacks = 0   # handles run by this Python loop (stats.py)
        self._n_virtual = 0     # iterations run inside one host-queue call
        self._ts_posted = False   # a thread-safe drain is posted
        self._awake = False       # the host-queue trampoline runs
        self._pending_exc = None
        self._old_agen_hooks = None   # saved by _run_forever_setup
        self._old_unraisable = None
        self._old_wakeup = None
        self._stopping = False
        self._debug = coroutines._is_debug_mode()
        self._bind_get_debug()
        self._soon_slow = self._debug   # closed or debug (call_soon)
        if type(self).create_future is EventLoop.create_future:
            # create_future() is Future(loop=self) itself, bound here as
            # time() is: no Python frame (aiohttp makes one per request). A
            # subclass's own create_future is kept.
            self.create_future = functools.partial(futures.Future, loop=self)
        self.slow_callback_duration = 0.1
        self._current_handle = None
        self._exception_handler = None
        self._task_factory = None
        self._task_class = _MachineTask if task_machine else tasks.Task  # create_task's
        self._bind_create_task()
        self._tm = None          # TaskMachine, made by the first libloop.Task
        self._virtual_iterations = scheduling_mod._VIRTUAL_ITERATIONS
        # call_soon and the round of handles in C (cpython/soon.c, handles.c), bound on
        # the loop; the Python call_soon stays for what the C one does not
        # take (debug, closed, ...), a subclass's own call_soon is kept.
        methods = _hotpath.loop_methods_for(self, Handle, SchedulingMixin.call_soon,
                                            report_callback_error)
        if methods is not None:
            if type(self).call_soon is SchedulingMixin.call_soon:
                self.call_soon = methods[0]
            self._run_handles = methods[1]
        # libloop's selector fd: readable while an fd libloop watches is
        # ready, consuming nothing. _run_ready polls it between its own
        # iterations while transports or listeners are open.
        self._backend = select.poll()
        self._backend.register(check(_lib.ll_loop_backend_fd(self._id), "ll_loop_backend_fd"),
                               select.POLLIN)
        self._backend_ready = self._backend.poll
        self._asyncgens = weakref.WeakSet()
        self._asyncgens_shutdown_called = False
        self._coroutine_origin_tracking_enabled = False
        self._coroutine_origin_tracking_saved_depth = None
        self._init_timers()
        self._init_signals()
        self._init_readers()
        self._init_executor()
        self._init_network()
        self._init_cfutures()
        self._init_c_errors()
        # One trampoline of each kind per loop, kept alive here: the host
        # queue's in C with the hot path (llpy_host_run, given the bound
        # _host_run this loop keeps), else a ctypes one. With the round of
        # handles in C, _host_run's common case is C too (host.c's
        # host_round, which calls _host_run for the others), unless a
        # subclass has its own _host_run.
        self._host_call = self._host_run
        if (self._run_handles is not None
                and type(self)._host_run is scheduling_mod.SchedulingMixin._host_run):
            self._host_call = _hotpath.host_round_for(self) or self._host_run
        self._c_host, host_arg = _hotpath.host_queue_fn(self._host_call)
        self._c_ts = _lib.CALLBACK(self._ts_fire)
        check(_lib.ll_loop_set_host_queue(self._id, self._c_host, host_arg),
              "ll_loop_set_host_queue")

    def __repr__(self):
        return (f'<{self.__class__.__name__} running={self.is_running()} '
                f'closed={self.is_closed()} debug={self.get_debug()}>')

    # ---- running ---------------------------------------------------------

    def _check_closed(self):
        if self._closed:
            raise RuntimeError('Event loop is closed')

    def _check_running(self):
        if self.is_running():
            raise RuntimeError('This event loop is already running')
        if events._get_running_loop() is not None:
            raise RuntimeError(
                'Cannot run the event loop while another loop is running')

    def _check_thread(self):
        if self._thread_id is None:
            return
        if threading.get_ident() != self._thread_id:
            raise RuntimeError(
                "Non-thread-safe operation invoked on an event loop other "
                "than the current one")

    def _check_callback(self, callback, method):
        if (coroutines.iscoroutine(callback) or
                coroutines.iscoroutinefunction(callback)):
            raise TypeError(f"coroutines cannot be used with {method}()")
        if not callable(callback):
            raise TypeError(f'a callable object was expected by {method}(), '
                            f'got {callback!r}')

    def run_forever(self):
        """Run until stop() is called: one ll_loop_run_forever call."""
        self._check_closed()
        self._check_running()
        try:
            self._run_forever_setup()
            rc = _lib.ll_loop_run_forever(self._id)
            exc = self._pending_exc
            if exc is not None:
                self._pending_exc = None
                try:
                    raise exc
                finally:
                    exc = None
            check(rc, "ll_loop_run_forever")
        finally:
            self._run_forever_cleanup()

    def _run_forever_setup(self):
        """Make this the running loop of this thread (asyncio 3.13's hook
        for loops that embed another; libloop has it on every version)."""
        self._check_closed()
        self._check_running()
        self._set_coroutine_origin_tracking(self._debug)
        self._old_agen_hooks = sys.get_asyncgen_hooks()
        self._old_unraisable = sys.unraisablehook
        self._old_wakeup = None
        self._thread_id = threading.get_ident()
        self._pending_exc = None
        sys.set_asyncgen_hooks(firstiter=self._asyncgen_firstiter_hook,
                               finalizer=self._asyncgen_finalizer_hook)
        events._set_running_loop(self)
        sys.unraisablehook = functools.partial(_unraisable, self,
                                               self._old_unraisable)
        self._old_wakeup = self._signals_on()
        self._resync()

    def _run_forever_cleanup(self):
        """Undo _run_forever_setup.

        A storm of SIGINTs raises KeyboardInterrupt here too, at any call.
        Plain attribute stores cannot be interrupted, so they go first; each
        call then sits in its own try/finally, so one interrupted step never
        skips the next (a skipped _set_running_loop(None) would refuse every
        later run)."""
        self._stopping = False
        self._gather = False  # writes outside the loop go at once
        self._thread_id = None
        self._pending_exc = None
        old_wakeup, self._old_wakeup = self._old_wakeup, None
        old_agen_hooks, self._old_agen_hooks = self._old_agen_hooks, None
        if self._old_unraisable is not None:
            sys.unraisablehook, self._old_unraisable = self._old_unraisable, None
        try:
            events._set_running_loop(None)
        finally:
            try:
                self._signals_off(old_wakeup)
            finally:
                try:
                    self._set_coroutine_origin_tracking(False)
                finally:
                    if old_agen_hooks is not None:
                        sys.set_asyncgen_hooks(*old_agen_hooks)

    def run_until_complete(self, future):
        """Run until the future (or coroutine, wrapped in a task) is done."""
        self._check_closed()
        self._check_running()
        new_task = not futures.isfuture(future)
        future = tasks.ensure_future(future, loop=self)
        if new_task:
            future._log_destroy_pending = False
        future.add_done_callback(_run_until_complete_cb)
        try:
            self.run_forever()
        except:  # noqa: E722 (asyncio's own handling)
            if new_task and future.done() and not future.cancelled():
                future.exception()
            raise
        finally:
            future.remove_done_callback(_run_until_complete_cb)
        if not future.done():
            raise RuntimeError('Event loop stopped before Future completed.')
        return future.result()

    def stop(self):
        """Stop once the current iteration is done (asyncio semantics)."""
        if not self._closed:
            self._stopping = True
            _lib.ll_loop_stop(self._id)

    def is_running(self):
        """True while run_forever/run_until_complete runs."""
        return self._thread_id is not None

    def is_closed(self):
        """True once close() was called."""
        return self._closed

    def close(self):
        """Close the loop: drop pending callbacks; shut the executor down."""
        if self.is_running():
            raise RuntimeError("Cannot close a running event loop")
        if self._closed:
            return
        if _loader.forked():
            # A loop inherited through fork(): the library is dead in this
            # process, so only the Python side is dropped (asyncio's own
            # loops in a child close their parent's fds instead).
            self._closed = True
            self._soon_slow = True
            self.__dict__.pop('call_soon', None)
            self.__dict__.pop('create_future', None)
            self._bind_create_task()
            self._run_handles = None
            self._ready.clear()
            return
        if self._debug:
            logger.debug("Close %r", self)
        self._closed = True
        self._soon_slow = True
        self.__dict__.pop('call_soon', None)  # the C builtins hold the loop
        self.__dict__.pop('create_future', None)  # (so do these partials)
        self._bind_create_task()
        self._run_handles = None
        self._ready.clear()
        self._clear_timers()
        if not sys.is_finalizing():
            self._close_signals()
        self._close_readers()
        self._stop_all_serving()
        self._close_transports()
        self._close_executor()
        if self._tm is not None:
            self._tm.close()
        _lib.ll_loop_close(self._id)
        self._free_sink()
        _lib.ll_release(self._id)

    def __del__(self, _warn=warnings.warn):
        try:
            if not self._closed:
                _warn(f"unclosed event loop {self!r}", ResourceWarning,
                      source=self)
                if not self.is_running() and not sys.is_finalizing():
                    self.close()
        except Exception:
            pass

    # ---- futures and tasks -------------------------------------------------

    def create_future(self):
        """A new asyncio.Future attached to this loop."""
        return futures.Future(loop=self)

    if _versions.CREATE_TASK_PASSES_KWARGS:
        def create_task(self, coro, **kwargs):
            """Wrap a coroutine in a task (asyncio.Task, libloop.Task with
            task_machine=True, or the task factory's); every keyword (name,
            context, eager_start, ...) goes to the task or the factory."""
            if self._closed:
                raise RuntimeError('Event loop is closed')
            if self._task_factory is not None:
                return self._task_factory(self, coro, **kwargs)
            # The task machine starts tasks from its queue: an eager one is
            # asyncio's own (task_machine.task_factory does the same).
            cls = tasks.Task if kwargs.get('eager_start') else self._task_class
            task = cls(coro, loop=self, **kwargs)
            if self._debug and task._source_traceback:
                del task._source_traceback[-1]
            return task
    else:
        def create_task(self, coro, *, name=None, context=None):
            """Wrap a coroutine in a task (asyncio.Task, libloop.Task with
            task_machine=True, or the task factory's)."""
            if self._closed:   # (_check_closed, inline: a task per request in aiohttp)
                raise RuntimeError('Event loop is closed')
            if self._task_factory is None:
                task = self._task_class(coro, loop=self, name=name, context=context)
                if self._debug and task._source_traceback:
                    del task._source_traceback[-1]
            else:
                if context is None:
                    task = self._task_factory(self, coro)
                else:
                    task = self._task_factory(self, coro, context=context)
                if name is not None:
                    try:
                        task.set_name(name)
                    except AttributeError:
                        pass
            return task

    def _bind_create_task(self):
        """create_task's common case -- no task factory, asyncio's Task,
        not closed, not in debug mode -- is Task(coro, loop=self, **kw)
        itself, bound on the loop as a partial: no Python frame (aiohttp
        makes a task per request). Bound again whenever one of those
        changes (set_task_factory, set_debug, close); a subclass's own
        create_task is kept."""
        if (type(self).create_task is EventLoop.create_task and self._task_factory is None
                and self._task_class is tasks.Task and not self._debug and not self._closed):
            self.create_task = functools.partial(tasks.Task, loop=self)
        else:
            self.__dict__.pop('create_task', None)

    def set_task_factory(self, factory):
        """Set (or with None, reset) the factory used by create_task."""
        if factory is not None and not callable(factory):
            raise TypeError('task factory must be a callable or None')
        self._task_factory = factory
        self._bind_create_task()

    def get_task_factory(self):
        """The task factory, or None."""
        return self._task_factory
