"""Entry points: new_event_loop, run, EventLoopPolicy, install."""

import asyncio
from asyncio import events

from .loop import EventLoop


def new_event_loop():
    """Return a new libloop.EventLoop."""
    return EventLoop()


def run(main, *, debug=None):
    """Run coroutine main on a new libloop loop, as asyncio.run does."""
    if events._get_running_loop() is not None:
        raise RuntimeError(
            "libloop.run() cannot be called from a running event loop")
    with asyncio.Runner(debug=debug, loop_factory=new_event_loop) as runner:
        return runner.run(main)


class EventLoopPolicy(events.BaseDefaultEventLoopPolicy):
    """An asyncio policy whose new loops are libloop.EventLoop."""

    _loop_factory = EventLoop

    def __repr__(self):
        return f'<{self.__class__.__name__}>'


def install():
    """Make libloop the default loop (asyncio.set_event_loop_policy)."""
    asyncio.set_event_loop_policy(EventLoopPolicy())
