# SPDX-License-Identifier: MIT
"""Entry points: new_event_loop, run, EventLoopPolicy, install."""

import asyncio
import functools
import threading
import warnings
from asyncio import events

from . import _loader, _versions
from .loop import EventLoop


def new_event_loop(*, task_machine=False):
    """Return a new libloop.EventLoop (task_machine: see EventLoop)."""
    return EventLoop(task_machine=task_machine)


def run(main, *, debug=None, task_machine=False):
    """Run coroutine main on a new libloop loop, as asyncio.run does."""
    if events._get_running_loop() is not None:
        raise RuntimeError(
            "libloop.run() cannot be called from a running event loop")
    factory = functools.partial(new_event_loop, task_machine=task_machine)
    with asyncio.Runner(debug=debug, loop_factory=factory) as runner:
        return runner.run(main)


class EventLoopPolicy(_versions.BASE_POLICY):
    """An asyncio policy whose new loops are libloop.EventLoop.

    In a fork() child of a process that had opened libloop (where libloop
    cannot run, _loader.py) its new loops are asyncio's own, with a
    RuntimeWarning: the policy stands for "the default loop", and a
    library's forked worker that calls asyncio.run() keeps working.
    libloop.new_event_loop() and libloop.run() raise RuntimeError there."""

    _loop_factory = EventLoop

    def new_event_loop(self):
        """A new libloop loop (asyncio's own in a fork() child, see above)."""
        if _loader.forked():
            warnings.warn(f"{_loader.forked_error()} This loop is asyncio's own.",
                          RuntimeWarning, stacklevel=2)
            return asyncio.SelectorEventLoop()
        return super().new_event_loop()

    def __init__(self):
        super().__init__()
        self._watcher = None

    def __repr__(self):
        return f'<{self.__class__.__name__}>'

    # The child-watcher API, where asyncio has it (_versions.py): libloop
    # loops watch their children themselves (a pidfd each) and never ask
    # for a watcher; code written for asyncio's Unix policy (CPython's
    # tests, older libraries) gets asyncio's own behaviour, and the watcher
    # serves asyncio's own loops if a program mixes them in.
    if _versions.HAS_CHILD_WATCHERS:
        get_child_watcher = _versions.get_child_watcher
        set_child_watcher = _versions.set_child_watcher
        _init_watcher = _versions.init_watcher

    def set_event_loop(self, loop):
        super().set_event_loop(loop)
        if (self._watcher is not None and
                threading.current_thread() is threading.main_thread()):
            self._watcher.attach_loop(loop)


def install():
    """Make libloop the default loop (asyncio.set_event_loop_policy)."""
    asyncio.set_event_loop_policy(EventLoopPolicy())
