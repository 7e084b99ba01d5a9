# SPDX-License-Identifier: MIT
"""An ordinary asyncio program, run on libloop by one changed line.

    python3 examples/hello_asyncio.py            # on libloop
    python3 examples/hello_asyncio.py --asyncio  # on asyncio's own loop

Sleeps, gather, a wait_for timeout, a Queue producer/consumer, a Lock and
run_in_executor; the output is deterministic and the same on both loops.
"""

import asyncio
import sys
import time


async def greet(name, delay):
    await asyncio.sleep(delay)
    return f"hello, {name}"


async def producer(queue, n):
    for i in range(n):
        await queue.put(i)
        await asyncio.sleep(0.001)
    await queue.put(None)


async def consumer(queue):
    total = 0
    while (item := await queue.get()) is not None:
        total += item
    return total


async def locked_counter(lock, counter, steps):
    for _ in range(steps):
        async with lock:
            value = counter[0]
            await asyncio.sleep(0)     # would race without the lock
            counter[0] = value + 1


def blocking_work(n):
    time.sleep(0.01)                    # a blocking call, off the loop
    return sum(i * i for i in range(n))


async def main():
    loop = asyncio.get_running_loop()
    print("running on", type(loop).__module__, file=sys.stderr)

    print(await asyncio.gather(greet("world", 0.02), greet("asyncio", 0.01)))

    try:
        await asyncio.wait_for(greet("slowpoke", 1.0), timeout=0.05)
    except asyncio.TimeoutError:
        print("wait_for: timed out after 0.05 s")

    queue = asyncio.Queue(maxsize=3)
    _, total = await asyncio.gather(producer(queue, 10), consumer(queue))
    print("queue: consumed total", total)

    lock, counter = asyncio.Lock(), [0]
    await asyncio.gather(*(locked_counter(lock, counter, 50) for _ in range(4)))
    print("lock: counter =", counter[0])

    result = await loop.run_in_executor(None, blocking_work, 1000)
    print("executor: sum of squares =", result)
    return "done"


if __name__ == "__main__":
    if "--asyncio" in sys.argv:
        print(asyncio.run(main()))
    else:
        import libloop
        print(libloop.run(main()))          # the one-line switch
