# SPDX-License-Identifier: MIT
"""libloop.Task: an asyncio.Task whose steps libloop's C task machine drives.

Opt-in: ``libloop.new_event_loop(task_machine=True)`` (create_task builds
this class) or ``loop.set_task_factory(libloop.task_factory)``.

The class *is* an ``asyncio.Task`` (a subclass of asyncio's C Task): name,
coroutine, context, repr, get_stack/print_stack, done callbacks and the
"never retrieved"/"destroyed but pending" reports are asyncio's own, and the
future state (done/result/exception/cancelled) is asyncio's Future. Only the
*stepping* is replaced: asyncio's Task.__init__ schedules its first __step
with loop.call_soon, and that one call is swallowed; libloop's task machine
(ll_task_new) schedules the steps instead, and this module answers them.

Per loop there is one fixed ctypes step trampoline (a TaskMachine). A step is
asyncio's Task.__step: enter the task (asyncio.tasks._enter_task, so
current_task() sees it), in its context send None or throw the awaited
outcome into the coroutine, then tell the machine what happened:
- a bare ``yield`` (asyncio.sleep(0)) -> ll_task_yield (answered in C);
- an asyncio future -> bridged: a libloop future (ll_future_new) completed
  by a done callback on the asyncio future, ll_task_await, ll_release;
- StopIteration -> ll_task_return; the C state is read back
  (ll_future_state), since a task cancelled during its last step ends
  cancelled (asyncio's rule, applied in C);
- an exception -> ll_task_raise (LL_ECANCELLED for CancelledError).
The C task's final state is then mirrored into the asyncio Future.

Crossings per step (ctypes calls + callbacks): 2 for a bare yield (the
step callback, ll_task_yield); 5 for awaiting an asyncio future (the step
callback, ll_future_new, ll_task_await, ll_release, and ll_future_set_result
or ll_future_cancel when it completes). Once per task: ll_task_new, and
at the end ll_task_return + ll_future_state (or ll_task_raise, plus
ll_future_exception for an exception) + ll_release.
The bridge callback runs synchronously when the asyncio future completes
(the loop's call_soon recognises it), so the task wakes in the next
iteration, as asyncio's Task.__wakeup does.
"""

import contextvars
import inspect
from asyncio import exceptions, futures, tasks
from ctypes import byref, c_uint64

from . import _lib

__all__ = ["Task", "task_factory"]

_Future = tasks.Task.__mro__[1]          # asyncio's Future (C or Python)
_CancelledError = exceptions.CancelledError
_enter_task = tasks._enter_task
_leave_task = tasks._leave_task
_ll_yield = _lib.ll_task_yield
_ll_await = _lib.ll_task_await
_ll_release = _lib.ll_release
_ll_future_new = _lib.ll_future_new
_ll_set_result = _lib.ll_future_set_result
_ll_future_cancel = _lib.ll_future_cancel
_LL_ECANCELLED = _lib.LL_ECANCELLED
_LL_CANCELLED = _lib.LL_CANCELLED
# No ABI code means "the host's exception": LL_EINVAL stands in (the Python
# exception itself is kept in the asyncio Future).
LL_EHOST = _lib.LL_EINVAL


def _cmsg(msg):
    """A cancellation message for the C ABI (bytes or NULL)."""
    return None if msg is None else str(msg).encode('utf-8', 'replace')


class _Bridge:
    """Done callback of an awaited asyncio future: completes the libloop
    future the task awaits. The loop's call_soon runs it at once (see
    TaskMachine.call_soon), so completion costs no extra iteration."""

    __slots__ = ('llf',)

    def __init__(self, llf):
        self.llf = llf

    def __call__(self, fut):
        # A stale id (the task already woke and the loop dropped it) is
        # rejected by its generation: LL_EBADHANDLE, ignored.
        if fut.cancelled():
            _ll_future_cancel(self.llf, None)
        else:
            _ll_set_result(self.llf, 0, None)


class TaskMachine:
    """A loop's task-machine state: the step trampoline (one CFUNCTYPE, kept
    alive here), the live tasks by libloop task id, and a step counter."""

    def __init__(self, loop):
        self.loop = loop
        self.loop_id = loop._id
        self.tasks = {}       # ll task id -> Task; the machine owns them
        self.steps = 0        # step trampoline calls (tests, benchmarks)
        self.creating = False
        self._out = c_uint64()
        self._outref = byref(self._out)
        self.c_step = _lib.STEP_FN(self._step)
        self._base_call_soon = loop.call_soon
        loop.call_soon = self.call_soon     # instance attribute: the hook
        # Steps wait in libloop's queue, which the host-queue trampoline
        # cannot see: one iteration per crossing (no virtual iterations).
        loop._virtual_iterations = 1

    def call_soon(self, callback, *args, context=None):
        """The loop's call_soon while a task machine is attached: a bridge
        callback runs now; the first step asyncio's Task.__init__ schedules
        is dropped (the machine schedules steps); the rest is call_soon."""
        if callback.__class__ is _Bridge:
            callback(*args)
            return None
        if self.creating:
            self.creating = False
            return None
        return self._base_call_soon(callback, *args, context=context)

    def start(self, task):
        """Create the C task (ll_task_new schedules its first step)."""
        _lib.check(_lib.ll_task_new(self.loop_id, self.c_step, None,
                                    self._outref), "ll_task_new")
        tid = self._out.value
        task._ll_id = tid
        self.tasks[tid] = task

    def new_future(self):
        """A new libloop future id (the host holds one reference)."""
        rc = _ll_future_new(self.loop_id, self._outref)
        if rc:
            _lib.check(rc, "ll_future_new")
        return self._out.value

    def finished(self, task, tid):
        """The C task is done: forget it and drop the host's reference."""
        self.tasks.pop(tid, None)
        task._ll_id = 0
        _ll_release(tid)

    def close(self):
        """The loop closes: drop every live task's id (they stay pending)."""
        for tid, task in list(self.tasks.items()):
            task._ll_id = 0
            _ll_release(tid)
        self.tasks.clear()

    def _step(self, tid, _arg):
        # The step trampoline (ll_step_fn): asyncio's Task.__step. Exactly
        # one of await / yield / return / raise is called for tid.
        self.steps += 1
        task = self.tasks.get(tid)
        if task is None:
            _lib.ll_task_raise(tid, _LL_ECANCELLED, b'task gone', 0, None)
            return
        try:
            if (task._fut_waiter is None and task._ll_throw is None
                    and not task._must_cancel):
                # Hot path: the first step, or after a bare yield.
                loop = self.loop
                _enter_task(loop, task)
                try:
                    result = task._ll_ctx.run(task._ll_send, None)
                except BaseException as exc:
                    _ended(task, tid, self, exc)
                else:
                    if result is None:
                        _ll_yield(tid)
                    else:
                        _yielded(task, tid, self, result)
                finally:
                    _leave_task(loop, task)
            else:
                _resume(task, tid, self)
        except BaseException as exc:      # KeyboardInterrupt, SystemExit
            self.loop._stash(exc)
        # The coroutine's exception keeps this frame (its traceback passed
        # through here) and a frame that outlives its call keeps its
        # locals: drop the task, or a failed task stays in a cycle and
        # its never-retrieved exception waits for the garbage collector
        # (asyncio's Task.__step clears `self` alike).
        task = None


def _resume(task, tid, machine):
    """A step after an awaited future or with an exception to throw in
    (asyncio's Task.__wakeup, then __step(exc))."""
    waiter = task._fut_waiter
    exc = None
    if waiter is not None:
        if not waiter.done():
            # Woken because ll_task_cancel cancelled the bridge while the
            # awaited future (a task that may ignore it) is still going:
            # await it again, as asyncio's task keeps waiting for it.
            _bridge(task, tid, waiter, machine)
            return
        task._fut_waiter = None
        try:
            waiter.result()
        except BaseException as e:
            exc = e
    elif task._ll_throw is not None:
        exc, task._ll_throw = task._ll_throw, None
    if task._must_cancel:
        task._must_cancel = False
        if (_lib.ll_task_must_raise_cancel(tid) == 1
                and not isinstance(exc, _CancelledError)):
            msg = task._cancel_message
            exc = _CancelledError() if msg is None else _CancelledError(msg)
    loop = machine.loop
    _enter_task(loop, task)
    try:
        if exc is None:
            result = task._ll_ctx.run(task._ll_send, None)
        else:
            result = task._ll_ctx.run(task._ll_coro.throw, exc)
    except BaseException as e:
        _ended(task, tid, machine, e)
    else:
        if result is None:
            _ll_yield(tid)
        else:
            _yielded(task, tid, machine, result)
    finally:
        _leave_task(loop, task)
    task = None   # (see TaskMachine._step)


def _ended(task, tid, machine, exc):
    """The coroutine finished: tell the machine, mirror its final state."""
    if isinstance(exc, StopIteration):
        _finish_return(task, tid, machine, exc.value)
    elif isinstance(exc, _CancelledError):
        msg = _exc_msg(exc)
        _lib.ll_task_raise(tid, _LL_ECANCELLED, _cmsg(msg), 0, None)
        _Future.cancel(task, msg=msg)
        machine.finished(task, tid)
    else:
        _finish_exception(task, tid, machine, exc)
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise exc


def _exc_msg(exc):
    args = exc.args
    return args[0] if len(args) == 1 else (None if not args else args)


def _finish_return(task, tid, machine, value):
    rc = _lib.ll_task_return(tid, 0, None)
    state = _lib.ll_future_state(tid)
    if state == _LL_CANCELLED:
        _Future.cancel(task, msg=task._cancel_message)
    elif rc == 0 or state == _lib.LL_FINISHED:
        _Future.set_result(task, value)
    else:
        _lib.check(rc, "ll_task_return")
    task._must_cancel = False
    machine.finished(task, tid)


def _finish_exception(task, tid, machine, exc):
    code = LL_EHOST
    if isinstance(exc, OSError) and isinstance(exc.errno, int) and exc.errno > 0:
        code = -exc.errno
    msg = f'{type(exc).__name__}: {exc}'.encode('utf-8', 'replace')
    _lib.ll_task_raise(tid, code, msg, 0, None)
    # The asyncio Future reports an exception never retrieved; the C task's
    # copy is marked retrieved so libloop does not report it a second time.
    _lib.ll_future_exception(tid, None, None, None)
    _Future.set_exception(task, exc)
    machine.finished(task, tid)


def _bridge(task, tid, fut, machine):
    """Await an asyncio future through a libloop future."""
    llf = machine.new_future()
    fut.add_done_callback(_Bridge(llf), context=task._ll_ctx)
    rc = _ll_await(tid, llf)
    _ll_release(llf)
    if rc:
        _lib.check(rc, "ll_task_await")
    task._fut_waiter = fut


def _yielded(task, tid, machine, result):
    """The coroutine yielded something other than None (asyncio's rules)."""
    blocking = getattr(result, '_asyncio_future_blocking', None)
    if blocking is not None:
        if futures._get_loop(result) is not machine.loop:
            new_exc = RuntimeError(f'Task {task!r} got Future {result!r} '
                                   f'attached to a different loop')
        elif blocking:
            if result is task:
                new_exc = RuntimeError(f'Task cannot await on itself: {task!r}')
            else:
                result._asyncio_future_blocking = False
                _bridge(task, tid, result, machine)
                if task._must_cancel:
                    if result.cancel(msg=task._cancel_message):
                        task._must_cancel = False
                return
        else:
            new_exc = RuntimeError(f'yield was used instead of yield from in '
                                   f'task {task!r} with {result!r}')
    elif inspect.isgenerator(result):
        new_exc = RuntimeError(f'yield was used instead of yield from for '
                               f'generator in task {task!r} with {result!r}')
    else:
        new_exc = RuntimeError(f'Task got bad yield: {result!r}')
    # asyncio throws it in at the next step.
    task._ll_throw = new_exc
    _ll_yield(tid)


def machine_for(loop):
    """The loop's TaskMachine, made on first use (libloop loops only)."""
    try:
        machine = loop._tm
    except AttributeError:
        raise TypeError(f'libloop.Task needs a libloop.EventLoop, '
                        f'got {loop!r}') from None
    if machine is None:
        loop._check_closed()
        machine = loop._tm = TaskMachine(loop)
    return machine


class Task(tasks.Task):
    """An asyncio.Task stepped by libloop's task machine (ll_task_*).

    Behaves as asyncio.Task: get_name/set_name, get_coro, get_context,
    cancel(msg)/cancelling()/uncancel() (the counts are the C task's),
    done callbacks with contexts, current_task()/all_tasks(), get_stack.
    """

    # _fut_waiter/_must_cancel shadow the C Task's read-only attributes, so
    # asyncio's repr ("wait_for=", "cancelling") reads this class's state.
    __slots__ = ('_ll_id', '_ll_coro', '_ll_send', '_ll_ctx', '_ll_throw', '_ll_ncancel',
                 '_fut_waiter', '_must_cancel', '_cancel_message')

    def __init__(self, coro, *, loop=None, name=None, context=None, eager_start=False):
        if eager_start:
            # The machine starts every task from its own queue; an eager
            # task is asyncio's (task_factory and create_task make one).
            raise TypeError('libloop.Task cannot start eagerly: use asyncio.Task '
                            '(libloop.task_factory does for eager_start=True)')
        if loop is None:
            from asyncio import events
            loop = events.get_event_loop()
        machine = machine_for(loop)
        if context is None:
            context = contextvars.copy_context()
        self._ll_id = 0
        self._fut_waiter = None
        self._must_cancel = False
        self._cancel_message = None
        self._ll_throw = None
        self._ll_ncancel = 0
        self._ll_ctx = context
        machine.creating = True
        try:   # asyncio's checks; its call_soon(__step) is dropped
            super().__init__(coro, loop=loop, name=name, context=context)
        finally:
            machine.creating = False
        self._ll_coro = coro
        self._ll_send = coro.send
        machine.start(self)

    def get_context(self):
        """The context the coroutine runs in."""
        return self._ll_ctx

    def set_result(self, result):
        raise RuntimeError('Task does not support set_result operation')

    def set_exception(self, exception):
        raise RuntimeError('Task does not support set_exception operation')

    def cancel(self, msg=None):
        """Request cancellation (asyncio's Task.cancel, via ll_task_cancel)."""
        self._log_traceback = False
        if self.done():
            return False
        self._ll_ncancel += 1
        if self._ll_id:
            _lib.ll_task_cancel(self._ll_id, _cmsg(msg))
        waiter = self._fut_waiter
        if waiter is not None and waiter.cancel(msg=msg):
            return True
        self._must_cancel = True
        self._cancel_message = msg
        return True

    def cancelling(self):
        """Pending cancellation requests (ll_task_cancelling)."""
        if self._ll_id:
            return _lib.ll_task_cancelling(self._ll_id)
        return self._ll_ncancel

    def uncancel(self):
        """Decrement the cancellation requests (ll_task_uncancel)."""
        if self._ll_id:
            self._ll_ncancel = _lib.ll_task_uncancel(self._ll_id)
        elif self._ll_ncancel > 0:
            self._ll_ncancel -= 1
        return self._ll_ncancel


def task_factory(loop, coro, **kwargs):
    """A task factory for loop.set_task_factory: builds libloop.Task, or
    asyncio's Task for eager_start=True (3.14's create_task passes it)."""
    if kwargs.get('eager_start'):
        return tasks.Task(coro, loop=loop, **kwargs)
    kwargs.pop('eager_start', None)
    return Task(coro, loop=loop, **kwargs)
