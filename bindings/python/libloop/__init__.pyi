# SPDX-License-Identifier: MIT
"""Type stubs of libloop's public API (PEP 561: the package ships py.typed).

EventLoop is typed as asyncio.BaseEventLoop: at run time it derives from
asyncio.AbstractEventLoop alone, but it has every public method of asyncio's
default loop with the same parameters (several are asyncio's own functions,
taken by reference), so typeshed's asyncio stubs type its methods; what
libloop adds is declared here. Checked by bindings/python/tests/test_stubs.py
(these names and signatures against the runtime package's, and EventLoop
against asyncio.SelectorEventLoop) and `make test-types` (mypy --strict on
a program using them).
"""

import asyncio
import contextvars
from asyncio import events
from collections.abc import Coroutine, Generator
from dataclasses import dataclass
from typing import Any, TypeVar

_T = TypeVar("_T")

__version__: str
"""The library's version, ll_version_string(), e.g. "0.1.0"."""

LIBRARY_PATH: str
"""The path libloop.so was loaded from."""

__all__ = ["EventLoop", "Loop", "EventLoopPolicy", "LibloopError", "install",
           "new_event_loop", "run", "LIBRARY_PATH", "Task", "task_factory",
           "LoopStats", "ELU"]


class LibloopError(RuntimeError):
    """A libloop error code (LL_E*) with no closer Python exception."""

    code: int

    def __init__(self, code: int, what: str = ...) -> None: ...


@dataclass(frozen=True)
class LoopStats:
    """A snapshot of a loop's metrics (loop.stats(); docs/metrics.md)."""

    iterations: int
    events: int
    callbacks: int
    idle_ns: int
    running_ns: int
    ready: int
    timers: int
    fds: int
    tasks: int

    @property
    def busy_ns(self) -> int: ...


@dataclass(frozen=True)
class ELU:
    """Event loop utilization as Node reports it (seconds, and a ratio)."""

    idle: float
    active: float
    utilization: float


class EventLoop(asyncio.BaseEventLoop):
    """An asyncio event loop run by libloop (drop-in for asyncio's own)."""

    slow_callback_duration: float

    def __init__(self, *, task_machine: bool = ...) -> None: ...
    def stats(self) -> LoopStats: ...
    def event_loop_utilization(self, prev: ELU | None = ..., prev2: ELU | None = ...) -> ELU: ...


Loop = EventLoop
"""uvloop's name for the loop class."""


class EventLoopPolicy(events.BaseDefaultEventLoopPolicy):
    """An asyncio policy whose new loops are libloop.EventLoop."""

    def __init__(self) -> None: ...
    def new_event_loop(self) -> EventLoop: ...
    def get_child_watcher(self) -> Any: ...
    def set_child_watcher(self, watcher: Any) -> None: ...
    def set_event_loop(self, loop: asyncio.AbstractEventLoop | None) -> None: ...


class Task(asyncio.Task[_T]):
    """An asyncio.Task stepped by libloop's C task machine."""

    def __init__(self, coro: Generator[Any, None, _T] | Coroutine[Any, Any, _T], *,
                 loop: asyncio.AbstractEventLoop | None = ..., name: str | None = ...,
                 context: contextvars.Context | None = ...,
                 eager_start: bool = ...) -> None: ...
    def get_context(self) -> contextvars.Context: ...


def new_event_loop(*, task_machine: bool = ...) -> EventLoop:
    """A new libloop loop (task_machine: create_task builds libloop.Task)."""


def run(main: Coroutine[Any, Any, _T], *, debug: bool | None = ...,
        task_machine: bool = ...) -> _T:
    """Run a coroutine on a new libloop loop, as asyncio.run does."""


def install() -> None:
    """Make libloop the default loop (asyncio.set_event_loop_policy)."""


def task_factory(loop: asyncio.AbstractEventLoop,
                 coro: Generator[Any, None, _T] | Coroutine[Any, Any, _T],
                 **kwargs: Any) -> Task[_T]:
    """A task factory for loop.set_task_factory that builds libloop.Task."""
