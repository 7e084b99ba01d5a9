# SPDX-License-Identifier: MIT
"""A program using libloop's public API as a typed user would: `make
test-types` runs mypy --strict on it against the package's stubs, and it
must pass. (Never run; mypy reads it.)"""

import asyncio

import libloop


async def answer() -> int:
    await asyncio.sleep(0)
    return 42


def main() -> None:
    value: int = libloop.run(answer())
    value += libloop.run(answer(), debug=False, task_machine=True)
    version: str = libloop.__version__
    path: str = libloop.LIBRARY_PATH

    loop: libloop.Loop = libloop.new_event_loop(task_machine=True)
    handle: asyncio.TimerHandle = loop.call_later(0.1, loop.stop)
    handle.cancel()
    loop.set_task_factory(libloop.task_factory)
    task: asyncio.Task[int] = loop.create_task(answer())
    done: int = loop.run_until_complete(task)
    t2: libloop.Task[int] = libloop.Task(answer(), loop=loop)
    loop.run_until_complete(t2)
    when: float = loop.time()
    st: libloop.LoopStats = loop.stats()
    busy: int = st.busy_ns + st.callbacks
    elu: libloop.ELU = loop.event_loop_utilization()
    share: float = loop.event_loop_utilization(elu).utilization
    share += loop.event_loop_utilization(elu, elu).active
    loop.close()

    with asyncio.Runner(loop_factory=libloop.new_event_loop) as runner:
        done += runner.run(answer())
    policy: asyncio.AbstractEventLoopPolicy = libloop.EventLoopPolicy()
    asyncio.set_event_loop_policy(policy)
    libloop.install()
    try:
        raise libloop.LibloopError(-10000, "ll_call_soon")
    except libloop.LibloopError as exc:
        code: int = exc.code
    print(value, version, path, done, when, code, busy, share)
