# SPDX-License-Identifier: MIT
"""Run CPython's own asyncio test suite (test.test_asyncio) on libloop's loop.

    LIBLOOP_LIBRARY=$PWD/build/libloop.so PYTHONPATH=bindings/python \
        python3 bindings/python/tools/cpython_asyncio.py [module ...] [--failed FILE]

Every module runs in its own interpreter (a hang or a crash costs one module,
not the run) with asyncio's default policy replaced by libloop's: the tests'
asyncio.new_event_loop(), asyncio.run() and Runner then build libloop loops.
Tests that build their own loop class (test_utils.TestLoop, a BaseEventLoop
with a fake clock) exercise asyncio, not libloop; they are counted anyway, so
compare counts between two builds, not against 100%. So are the test classes
that build asyncio's selector loop themselves (test_events' EventLoopTests
classes, test_sendfile's, test_server's, test_buffered_proto's), unless
--class-loops gives them libloop's loop. Many tests fail on
features libloop does not implement yet (transports, servers, subprocesses,
signal handlers): the point is to count, and to see what changed.

Prints one line per module (run / passed / failed / errors / skipped, and
how many libloop loops the module built) and a total; --failed FILE writes the ids of failing tests, one a line, for diffing.

--compare runs every module twice, on asyncio's own loop and on libloop's,
and counts the tests that pass on asyncio's and not on libloop's (the
issue's goal: none); --diff FILE lists them. `make conformance` does that.
"""

import argparse
import json
import os
import subprocess
import sys

# Modules that test Windows' loops (the proactor's classes, with mocks),
# not a loop a POSIX program gets.
NOT_HERE = {'test_windows_events', 'test_windows_utils', 'test_proactor_events'}


def all_modules():
    """Every module of this interpreter's test.test_asyncio but NOT_HERE
    (each version has its own: 3.12 added test_eager_task_factory)."""
    import test.test_asyncio as pkg
    names = os.listdir(os.path.dirname(pkg.__file__))
    return sorted(n[:-3] for n in names
                  if n.startswith('test_') and n.endswith('.py') and n[:-3] not in NOT_HERE)


TEST_TIMEOUT = 30      # seconds per test (SIGALRM), then it counts as an error
MODULE_TIMEOUT = 600   # seconds per module interpreter

# The child: runs one module with libloop as the default policy and prints
# its counts as JSON on the last line.
CHILD = r'''
import asyncio, inspect, json, signal, sys, unittest
ON_LIBLOOP = sys.argv[3] == 'libloop'
CLASS_LOOPS = ON_LIBLOOP and sys.argv[4] == 'class-loops'
import libloop
# multiprocessing keeps its default start method: a fork() child of this
# process gets asyncio's own loop from libloop's policy (libloop's Go
# runtime does not survive the fork; policy.py), which is what
# test_events' ProcessPoolExecutor test checks a forked worker can do.
# set_event_loop_policy(None) (every test module's tearDownModule) falls back
# to asyncio.DefaultEventLoopPolicy: point that at libloop's too.
if ON_LIBLOOP:
    asyncio.DefaultEventLoopPolicy = libloop.EventLoopPolicy
    asyncio.set_event_loop_policy(libloop.EventLoopPolicy())
# Count the libloop loops the module builds: most test classes in
# test_events, test_sock_lowlevel, ... build asyncio's own loops directly.
LOOPS = [0]
_init = libloop.EventLoop.__init__
def _counting_init(self, *args, **kwargs):
    LOOPS[0] += 1
    _init(self, *args, **kwargs)
libloop.EventLoop.__init__ = _counting_init

class Timeout(Exception):
    pass

def _alarm(signum, frame):
    raise Timeout('test took over %d s' % TIMEOUT)

STARTED = []

class Result(unittest.TextTestResult):
    def startTest(self, test):
        STARTED.append(test.id())
        # Again for every test: a loop's close() puts back SIGALRM's default
        # action after a test that handled it, and a later hang would then
        # kill the whole module.
        signal.signal(signal.SIGALRM, _alarm)
        signal.alarm(TIMEOUT)
        super().startTest(test)
    def stopTest(self, test):
        signal.alarm(0)
        super().stopTest(test)

def _libloop_loop(self):
    return libloop.new_event_loop()

def _give_class_loops(suite):
    """--class-loops: a test class whose own factory (create_event_loop,
    new_loop) builds asyncio's selector loop gets libloop's instead."""
    for test in suite:
        if isinstance(test, unittest.TestSuite):
            _give_class_loops(test)
            continue
        cls = type(test)
        for name in ('create_event_loop', 'new_loop'):
            make = getattr(cls, name, None)
            if make is None or make is _libloop_loop:
                continue
            try:
                source = inspect.getsource(make)
            except (OSError, TypeError):
                continue
            if 'SelectorEventLoop(' in source:
                setattr(cls, name, _libloop_loop)

TIMEOUT = int(sys.argv[2])
signal.signal(signal.SIGALRM, _alarm)
suite = unittest.defaultTestLoader.loadTestsFromName(
    'test.test_asyncio.' + sys.argv[1])
if CLASS_LOOPS:
    _give_class_loops(suite)
r = unittest.TextTestRunner(resultclass=Result, verbosity=0,
                            stream=sys.stderr).run(suite)
failed = [t.id() for t, _ in r.failures + r.errors + r.unexpectedSuccesses]
not_passed = set(failed) | {t.id() for t, _ in r.skipped}
passed_ids = [t for t in STARTED if t not in not_passed]
print(json.dumps({'run': r.testsRun, 'failures': len(r.failures),
                  'errors': len(r.errors), 'skipped': len(r.skipped),
                  'expected_failures': len(r.expectedFailures),
                  'unexpected_successes': len(r.unexpectedSuccesses),
                  'loops': LOOPS[0], 'failed': failed, 'passed_ids': passed_ids}))
'''


def run_module(name, loop='libloop', class_loops=False):
    try:
        p = subprocess.run([sys.executable, '-c', CHILD, name,
                            str(TEST_TIMEOUT), loop,
                            'class-loops' if class_loops else 'policy'],
                           capture_output=True,
                           text=True, timeout=MODULE_TIMEOUT)
    except subprocess.TimeoutExpired:
        return None, 'module timed out'
    lines = p.stdout.strip().splitlines()
    try:
        return json.loads(lines[-1]), None
    except (IndexError, ValueError):
        tail = (p.stderr.strip().splitlines() or ['?'])[-1]
        return None, f'exit {p.returncode}: {tail}'


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('modules', nargs='*')
    ap.add_argument('--jobs', type=int, default=1,
                    help='modules run at once (each in its own interpreter)')
    ap.add_argument('--failed', help='write failing test ids to this file')
    ap.add_argument('--compare', action='store_true',
                    help="also run each module on asyncio's own loop")
    ap.add_argument('--diff', help='with --compare: write the tests that pass '
                    "on asyncio's loop and not on libloop's to this file")
    ap.add_argument('--class-loops', action='store_true',
                    help="on libloop's side, also give libloop's loop to the test "
                    "classes whose create_event_loop/new_loop build asyncio's "
                    "selector loop (test_events, test_sendfile, test_server, "
                    "test_buffered_proto): by default they test asyncio's loop")
    args = ap.parse_args()
    args.modules = args.modules or all_modules()
    print(f'Python {sys.version.split()[0]} ({sys.executable}), '
          f'{len(args.modules)} modules', flush=True)
    if args.compare:
        return compare(args.modules, args.diff, args.jobs, args.class_loops)
    total = {'run': 0, 'passed': 0, 'failures': 0, 'errors': 0, 'skipped': 0}
    failed = []
    for name in args.modules:
        res, why = run_module(name, class_loops=args.class_loops)
        if res is None:
            print(f'{name:22} did not finish ({why})', flush=True)
            failed.append(f'{name}: did not finish')
            continue
        bad = res['failures'] + res['errors'] + res['unexpected_successes']
        passed = res['run'] - bad - res['skipped']
        print(f"{name:22} run {res['run']:4}  passed {passed:4}  "
              f"failed {res['failures']:3}  errors {res['errors']:3}  "
              f"skipped {res['skipped']:3}  libloop loops {res['loops']:4}",
              flush=True)
        total['run'] += res['run']
        total['passed'] += passed
        total['failures'] += res['failures']
        total['errors'] += res['errors']
        total['skipped'] += res['skipped']
        failed += res['failed']
    print(f"{'TOTAL':22} run {total['run']:4}  passed {total['passed']:4}  "
          f"failed {total['failures']:3}  errors {total['errors']:3}  "
          f"skipped {total['skipped']:3}")
    if args.failed:
        with open(args.failed, 'w') as f:
            f.write(''.join(t + '\n' for t in sorted(failed)))


def compare(modules, diff_file, jobs=1, class_loops=False):
    """Each module on both loops: what passes on asyncio's and not here."""
    from concurrent.futures import ThreadPoolExecutor

    def both_loops(name):
        return (run_module(name, 'asyncio'),
                run_module(name, 'libloop', class_loops))
    lost = []
    both = [0, 0]
    with ThreadPoolExecutor(max(1, jobs)) as pool:
        for name, ((ref, why_ref), (res, why)) in zip(modules, pool.map(both_loops, modules)):
            if ref is None or res is None:
                print(f'{name:26} did not finish ({why_ref or why})', flush=True)
                lost.append(f'{name}: did not finish')
                continue
            ok = set(res['passed_ids'])
            missing = [t for t in ref['passed_ids'] if t not in ok]
            both[0] += len(ref['passed_ids'])
            both[1] += len(ref['passed_ids']) - len(missing)
            print(f"{name:26} asyncio passes {len(ref['passed_ids']):4}  libloop "
                  f"{len(ok):4}  of asyncio's, libloop fails {len(missing):3}", flush=True)
            lost += missing
    v = '.'.join(map(str, sys.version_info[:3]))
    print(f"TOTAL (Python {v}): libloop passes {both[1]} of the {both[0]} tests asyncio's "
          f"own loop passes ({len(lost)} differ)", flush=True)
    if diff_file:
        with open(diff_file, 'w') as f:
            f.write(''.join(t + '\n' for t in lost))


if __name__ == '__main__':
    os.environ.setdefault('PYTHONWARNINGS', 'ignore')
    main()
