# SPDX-License-Identifier: MIT
"""Wrong uses of libloop's API: `make test-types` runs mypy on it and
requires every line marked `# error` to be reported, proving the stubs
type the API rather than leaving it Any. (Never run; mypy reads it.)"""

import asyncio

import libloop


async def answer() -> int:
    return 42


def main() -> None:
    text: str = libloop.run(answer())  # error
    libloop.run(answer(), task_machine="yes")  # error
    libloop.new_event_loop(True)  # error
    number: int = libloop.__version__  # error
    loop = libloop.new_event_loop()
    loop.call_soon(1)  # error
    libloop.install(loop)  # error
    libloop.LibloopError("EINVAL")  # error
    asyncio.set_event_loop_policy(libloop.EventLoop())  # error
    idle: str = loop.stats().idle_ns  # error
    loop.event_loop_utilization(loop.stats())  # error
    print(text, number, idle)
