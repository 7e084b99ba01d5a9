# SPDX-License-Identifier: MIT
"""Eager tasks (3.12's asyncio.eager_task_factory; 3.14's
create_task(eager_start=)): a task runs inside create_task until its first
suspension, on asyncio's loop and on libloop's, with asyncio's Task and
with the task machine."""

import asyncio
import os
import subprocess
import sys
import textwrap
import unittest

import libloop

from .base import LibloopTaskMachineLoop, LoopCase, twin

HAS_EAGER = hasattr(asyncio, 'eager_task_factory')


async def child(tag, out):
    out.append(f'{tag} started')
    await asyncio.sleep(0)
    out.append(f'{tag} resumed')
    return tag


async def quick():
    return 'quick'


@unittest.skipUnless(HAS_EAGER, 'asyncio.eager_task_factory is 3.12+')
class EagerTaskTests(LoopCase):

    def test_eager_factory_runs_until_the_first_suspension(self):
        async def main():
            loop = asyncio.get_running_loop()
            loop.set_task_factory(asyncio.eager_task_factory)
            out = []
            t = asyncio.create_task(child('a', out), name='eager-a')
            out.append('after create_task')
            q = loop.create_task(quick())
            done_at_creation = q.done()
            self.assertEqual(await t, 'a')
            async with asyncio.TaskGroup() as tg:
                r = tg.create_task(quick())
            return out, done_at_creation, t.get_name(), r.result()
        out, done, name, r = self.run_coro(main())
        self.assertEqual(out, ['a started', 'after create_task', 'a resumed'])
        self.assertTrue(done)
        self.assertEqual((name, r), ('eager-a', 'quick'))

    def test_eager_task_sees_itself_as_current(self):
        async def me():
            return asyncio.current_task()

        async def main():
            asyncio.get_running_loop().set_task_factory(asyncio.eager_task_factory)
            t = asyncio.create_task(me())
            self.assertTrue(t.done())
            return t is t.result()
        self.assertTrue(self.run_coro(main()))


# The factory's tasks are asyncio's own on a task-machine loop too.
twin(EagerTaskTests, globals(), task_machine=True)


@unittest.skipUnless(HAS_EAGER, 'Task(eager_start=) is 3.12+')
class TestEagerOnTheTaskMachine(LoopCase, LibloopTaskMachineLoop, unittest.TestCase):

    def test_machine_factory_makes_asyncio_tasks_for_eager_start(self):
        async def main():
            t = libloop.task_factory(asyncio.get_running_loop(), quick(), eager_start=True)
            return type(t) is asyncio.Task, t.done()
        self.assertEqual(self.run_coro(main()), (True, True))

    def test_machine_task_refuses_eager_start(self):
        async def main():
            coro = quick()
            try:
                with self.assertRaisesRegex(TypeError, 'cannot start eagerly'):
                    libloop.Task(coro, loop=asyncio.get_running_loop(), eager_start=True)
            finally:
                coro.close()
        self.run_coro(main())


# 3.14's create_task(coro, **kwargs), chosen by _versions at import: run
# here with the choice forced on (3.12 and 3.13's Task takes eager_start).
CHILD_314 = textwrap.dedent('''
    import asyncio, importlib.util, os, sys
    import libloop as _probe   # (finds the package's directory)
    path = os.path.join(os.path.dirname(_probe.__file__), '_versions.py')
    for name in [m for m in sys.modules if m == 'libloop' or m.startswith('libloop.')]:
        del sys.modules[name]
    spec = importlib.util.spec_from_file_location('libloop._versions', path)
    versions = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(versions)
    versions.CREATE_TASK_PASSES_KWARGS = True
    sys.modules['libloop._versions'] = versions
    import libloop

    async def child(out):
        out.append('started')
        await asyncio.sleep(0)
        return 'done'

    async def main():
        loop = asyncio.get_running_loop()
        out = []
        t = loop.create_task(child(out), name='n', eager_start=True)
        out.append('created')
        lazy = loop.create_task(child(out), eager_start=False)
        out.append('lazy created')
        await t
        await lazy
        seen = []
        loop.set_task_factory(lambda loop, coro, **kw: seen.append(sorted(kw)) or
                              asyncio.Task(coro, loop=loop, **kw))
        await loop.create_task(child([]), name='f', context=None, eager_start=True)
        return out, t.get_name(), type(t).__name__, seen[0]
    for tm in (False, True):
        print(libloop.run(main(), task_machine=tm))
''')


@unittest.skipUnless(HAS_EAGER, 'Task(eager_start=) is 3.12+')
class CreateTaskAsIn314(unittest.TestCase):

    def test_keywords_reach_the_task_and_the_factory(self):
        p = subprocess.run([sys.executable, '-c', CHILD_314], capture_output=True, text=True,
                           timeout=60, env=dict(os.environ))
        self.assertEqual(p.returncode, 0, p.stderr)
        want = ("(['started', 'created', 'lazy created', 'started'], 'n', 'Task', "
                "['context', 'eager_start', 'name'])")
        self.assertEqual(p.stdout.splitlines(), [want, want])


if __name__ == '__main__':
    unittest.main()
