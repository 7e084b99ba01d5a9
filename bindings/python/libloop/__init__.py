# SPDX-License-Identifier: MIT
"""libloop: an asyncio event loop run by libloop (ctypes, no compiled code).

    import libloop
    libloop.run(main())                       # like asyncio.run(main())
    asyncio.Runner(loop_factory=libloop.new_event_loop)
    libloop.install()                         # or EventLoopPolicy()

Importing libloop does not load libloop.so (its Go runtime does not survive
fork()): the first loop does (_loader.py).
"""

from . import _loader
from ._lib import LibloopError, PATH as LIBRARY_PATH
from .loop import EventLoop

Loop = EventLoop  # uvloop's name
from .policy import EventLoopPolicy, install, new_event_loop, run
from .task_machine import Task, task_factory
from .stats import ELU, LoopStats
from .tls_config import TLSConfig
from .tls_transport import TLSInfo

__all__ = ["EventLoop", "Loop", "EventLoopPolicy", "LibloopError", "install",
           "new_event_loop", "run", "LIBRARY_PATH", "Task", "task_factory",
           "LoopStats", "ELU", "TLSConfig", "TLSInfo"]

if _loader.VERSION is not None:
    __version__ = '.'.join(map(str, _loader.VERSION))


def __getattr__(name):
    # A library whose version the file does not say (not ELF) is asked.
    if name == '__version__':
        from ._lib import ll_version_string
        return ll_version_string().decode()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
