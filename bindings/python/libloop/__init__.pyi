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
import os
import ssl
from asyncio import events
from collections.abc import Coroutine, Generator, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

_T = TypeVar("_T")

__version__: str
"""The library's version, ll_version_string(), e.g. "0.1.0"."""

LIBRARY_PATH: str
"""The path libloop.so was loaded from."""

__all__ = ["EventLoop", "Loop", "EventLoopPolicy", "LibloopError", "install",
           "new_event_loop", "run", "LIBRARY_PATH", "Task", "task_factory",
           "LoopStats", "ELU", "TLSConfig", "TLSInfo"]


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


class TLSConfig:
    """A TLS server configuration owned by libloop: create_server(ssl=...)
    then serves with libloop's TLS (docs/python.md, "TLS")."""

    def __init__(self) -> None: ...
    def close(self) -> None: ...
    def __enter__(self) -> "TLSConfig": ...
    def __exit__(self, *exc: object) -> None: ...
    def load_cert_chain(self, certfile: str | bytes | os.PathLike[str], keyfile: str | bytes | os.PathLike[str] | None = ...,
                        password: None = ...) -> None: ...
    def load_verify_locations(self, cafile: str | bytes | os.PathLike[str] | None = ...,
                              capath: str | bytes | os.PathLike[str] | None = ...,
                              cadata: str | None = ...) -> None: ...
    def set_alpn_protocols(self, protocols: Iterable[str]) -> None: ...
    @property
    def verify_mode(self) -> ssl.VerifyMode: ...
    @verify_mode.setter
    def verify_mode(self, mode: int) -> None: ...
    @property
    def minimum_version(self) -> ssl.TLSVersion: ...
    @minimum_version.setter
    def minimum_version(self, v: ssl.TLSVersion) -> None: ...
    @property
    def maximum_version(self) -> ssl.TLSVersion: ...
    @maximum_version.setter
    def maximum_version(self, v: ssl.TLSVersion) -> None: ...
    def set_timeouts(self, handshake: float | None = ..., shutdown: float | None = ...) -> None: ...


class TLSInfo:
    """get_extra_info('ssl_object') of a TLSConfig server's connection."""

    server_side: bool
    server_hostname: None

    def __init__(self, tid: int, context: TLSConfig) -> None: ...
    @property
    def context(self) -> TLSConfig: ...
    def version(self) -> str | None: ...
    def cipher(self) -> tuple[str, str | None, int | None]: ...
    def compression(self) -> None: ...
    def selected_alpn_protocol(self) -> str | None: ...
    def session_reused(self) -> bool: ...
    def getpeercert(self, binary_form: bool = ...) -> Any: ...


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
