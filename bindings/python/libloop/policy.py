"""Entry points: new_event_loop, run, EventLoopPolicy, install."""

import asyncio
import functools
from asyncio import events

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


class EventLoopPolicy(events.BaseDefaultEventLoopPolicy):
    """An asyncio policy whose new loops are libloop.EventLoop."""

    _loop_factory = EventLoop

    def __repr__(self):
        return f'<{self.__class__.__name__}>'


def install():
    """Make libloop the default loop (asyncio.set_event_loop_policy)."""
    asyncio.set_event_loop_policy(EventLoopPolicy())
