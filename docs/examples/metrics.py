# SPDX-License-Identifier: MIT
"""metrics.py — loop.stats() and Node-style event loop utilization."""

import asyncio
import time

import libloop


async def main():
    loop = asyncio.get_running_loop()
    before = loop.stats()
    mark = loop.event_loop_utilization()

    for _ in range(100):
        loop.call_soon(lambda: None)
    await asyncio.sleep(0.05)                  # idle: blocked in poll
    idle = loop.event_loop_utilization(mark)   # the delta since mark

    mark = loop.event_loop_utilization()
    end = time.monotonic() + 0.05
    while time.monotonic() < end:              # busy: the loop cannot poll
        pass
    await asyncio.sleep(0)
    busy = loop.event_loop_utilization(mark)

    after = loop.stats()
    assert after.callbacks - before.callbacks >= 100
    assert after.timers == 0 and after.tasks == 1   # only main() is left
    assert idle.utilization < 0.5 < busy.utilization, (idle, busy)
    return after, idle, busy


if __name__ == "__main__":
    st, idle, busy = libloop.run(main())
    print(f"metrics.py: {st.iterations} iterations, {st.callbacks} callbacks; "
          f"utilization idle {idle.utilization:.2f}, busy {busy.utilization:.2f}")
