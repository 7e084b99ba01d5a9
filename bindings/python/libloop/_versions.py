# SPDX-License-Identifier: MIT
"""What differs between the asyncio versions libloop's loop runs on.

The one place in the package that knows them: every choice is made once,
here, at import, from the running interpreter's version (each entry names
the asyncio source it follows). The rest of the package reads these names
and never tests sys.version_info itself.

Supported: CPython 3.11, 3.12, 3.13; 3.14's changes are followed from its
documentation and asyncio source (no 3.14 interpreter was at hand to test).
"""

import sys
from asyncio import base_events, events, unix_events

VERSION = sys.version_info[:2]

# ---- Server (base_events.Server) --------------------------------------------
# 3.13 keeps a WeakSet of its transports (for close_clients/abort_clients)
# and _attach/_detach take the transport; before, they count.
if VERSION >= (3, 13):
    def server_attach(server, transport):
        """Tell asyncio's Server one of its connections is made."""
        server._attach(transport)

    def server_detach(server, transport):
        """Tell asyncio's Server one of its connections is gone."""
        server._detach(transport)
else:
    def server_attach(server, transport):
        """Tell asyncio's Server one of its connections is made."""
        server._attach()

    def server_detach(server, transport):
        """Tell asyncio's Server one of its connections is gone."""
        server._detach()

# 3.13's create_unix_server(cleanup_socket=True) records the socket's inode
# in loop._unix_server_sockets for _stop_serving to unlink the path; the
# loop keeps that dict on every version (servers.py), empty before 3.13.

# ---- the default executor's shutdown -----------------------------------------
# 3.12 added shutdown_default_executor(timeout) (asyncio.Runner.close passes
# one) and 3.13 changed how it waits: asyncio's own methods of the running
# version, by reference. They use only the loop's public methods and
# _default_executor / _executor_shutdown_called.
shutdown_default_executor = base_events.BaseEventLoop.shutdown_default_executor
do_shutdown = base_events.BaseEventLoop._do_shutdown

# ---- create_task --------------------------------------------------------------
# 3.14: create_task(coro, **kwargs) passes every keyword (name, context,
# eager_start, ...) to the Task or to the task factory; before, only name
# and context, and the name is set on the factory's task afterwards.
CREATE_TASK_PASSES_KWARGS = VERSION >= (3, 14)

# 3.12: Task(..., eager_start=True) and asyncio.eager_task_factory exist.
EAGER_TASKS = VERSION >= (3, 12)

# ---- subprocesses -------------------------------------------------------------
# 3.12 (base_subprocess._process_exited) wakes wait() at the child's exit,
# even while a grandchild keeps the pipes open; 3.11 waits for the pipes.
WAIT_WAKES_AT_EXIT = VERSION >= (3, 12)

# ---- the policy ----------------------------------------------------------------
# 3.14 deprecates the policy system (removal planned for 3.16) and renames
# events.BaseDefaultEventLoopPolicy to _BaseDefaultEventLoopPolicy.
BASE_POLICY = getattr(events, 'BaseDefaultEventLoopPolicy', None) or \
    getattr(events, '_BaseDefaultEventLoopPolicy')

# ---- the child-watcher API ---------------------------------------------------
# asyncio's Unix policy has get_child_watcher/set_child_watcher until 3.14
# (deprecated from 3.12, warning on each call, a PidfdChildWatcher by
# default where pidfds work; 3.11: a ThreadedChildWatcher). libloop's loops
# watch their children with pidfds and never ask; its policy serves the API
# with asyncio's own methods (they use only _watcher and _local), or has
# none where asyncio has none.
_UNIX_POLICY = getattr(unix_events, '_UnixDefaultEventLoopPolicy', object)
HAS_CHILD_WATCHERS = hasattr(_UNIX_POLICY, 'get_child_watcher')
if HAS_CHILD_WATCHERS:
    get_child_watcher = _UNIX_POLICY.get_child_watcher
    set_child_watcher = _UNIX_POLICY.set_child_watcher
    init_watcher = _UNIX_POLICY._init_watcher

# ---- the run loop's hooks -------------------------------------------------------
# 3.13 split BaseEventLoop.run_forever into _run_forever_setup and
# _run_forever_cleanup for loops that embed another; libloop's loop has
# both on every version (loop.py), so nothing is chosen here.
