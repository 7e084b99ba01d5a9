# SPDX-License-Identifier: MIT
"""libloop: an asyncio event loop run by libloop (ctypes, no compiled code).

    import libloop
    libloop.run(main())                       # like asyncio.run(main())
    asyncio.Runner(loop_factory=libloop.new_event_loop)
    libloop.install()                         # or EventLoopPolicy()
"""

from ._lib import LibloopError, PATH as LIBRARY_PATH
from ._lib import ll_version_string as _ll_version_string
from .loop import EventLoop

Loop = EventLoop  # uvloop's name
from .policy import EventLoopPolicy, install, new_event_loop, run
from .task_machine import Task, task_factory
from .stats import ELU, LoopStats

__all__ = ["EventLoop", "Loop", "EventLoopPolicy", "LibloopError", "install",
           "new_event_loop", "run", "LIBRARY_PATH", "Task", "task_factory",
           "LoopStats", "ELU"]

__version__ = _ll_version_string().decode()
