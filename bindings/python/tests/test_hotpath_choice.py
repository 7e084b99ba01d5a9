# SPDX-License-Identifier: MIT
"""Where the C side of the Python hot path runs (libloop/_hotpath.py): on
a CPython with its GIL, in the main interpreter, on a tested version, with
asyncio's Handle as soon.c knows it, and with the package's C object
(libloop-cpython.so) found and of this package's interface; the Python
path everywhere else. Run under every interpreter `make test` lists."""

import asyncio
import os
import subprocess
import sys
import textwrap
import types
import unittest
from unittest import mock

import libloop
from libloop import _hotpath


class ChoiceOnThisInterpreter(unittest.TestCase):

    def test_on_here_where_every_condition_holds(self):
        if os.environ.get('LIBLOOP_PY_HOTPATH') == '0':
            self.assertEqual(_hotpath.OFF_REASON, 'LIBLOOP_PY_HOTPATH=0')
            return
        self.assertIn(sys.version_info[:2], _hotpath.TESTED_VERSIONS)
        self.assertTrue(getattr(sys, '_is_gil_enabled', lambda: True)())
        self.assertIsNone(_hotpath.refusal(asyncio.Handle.__slots__))
        loop = libloop.new_event_loop()
        try:
            self.assertTrue(_hotpath.ENABLED)
            self.assertIsNone(_hotpath.OFF_REASON)
            self.assertIn(_hotpath.OBJECT_PATH, _hotpath.OBJECT_PATHS)
            self.assertIsInstance(loop.call_soon, types.BuiltinFunctionType)
            self.assertIsNone(_hotpath.SOON_OFF_REASON)
        finally:
            loop.close()

    def test_refusals_say_why(self):
        with mock.patch.dict(os.environ, {'LIBLOOP_PY_HOTPATH': '0'}):
            self.assertEqual(_hotpath.refusal(), 'LIBLOOP_PY_HOTPATH=0')
        with mock.patch.dict(os.environ, {'LIBLOOP_PY_HOTPATH': '1'}):
            with mock.patch.object(sys, '_is_gil_enabled', lambda: False, create=True):
                self.assertIn('free-threaded', _hotpath.refusal())
            with mock.patch.object(_hotpath, 'TESTED_VERSIONS', ((3, 9),)):
                self.assertIn('not a tested version', _hotpath.refusal())
            with mock.patch.object(_hotpath, '_is_main_interpreter', lambda: False):
                self.assertEqual(_hotpath.refusal(), 'not the main interpreter')
            slots = asyncio.Handle.__slots__ + ('_new_in_a_later_asyncio',)
            self.assertIn('other slots', _hotpath.refusal(slots))
            self.assertTrue(_hotpath._is_main_interpreter())


# In a fresh interpreter: a condition made false before the library opens;
# the loop must take the Python path and still serve.
CHILD = textwrap.dedent('''
    import asyncio, sys, types
    CASE = sys.argv[1]
    if CASE == 'nogil':
        sys._is_gil_enabled = lambda: False
    import libloop
    from libloop import _hotpath
    if CASE == 'untested':
        _hotpath.TESTED_VERSIONS = ()
    if CASE == 'slots':
        _hotpath.HANDLE_SLOTS = _hotpath.HANDLE_SLOTS | {'_a_new_slot'}
    if CASE == 'no-object':
        _hotpath.OBJECT_PATHS = ['/nonexistent/' + _hotpath.OBJECT_NAME]
    if CASE == 'other-interface':
        _hotpath.INTERFACE += 1

    async def echo_once():
        async def echo(r, w):
            w.write(await r.read(100))
            await w.drain()
            w.close()
        srv = await asyncio.start_server(echo, '127.0.0.1', 0)
        r, w = await asyncio.open_connection('127.0.0.1', srv.sockets[0].getsockname()[1])
        w.write(b'abc')
        got = await r.read(100)
        w.close()
        srv.close()
        await srv.wait_closed()
        return got

    loop = libloop.new_event_loop()
    got = loop.run_until_complete(echo_once())
    print(got.decode(), _hotpath.ENABLED, isinstance(loop.call_soon, types.BuiltinFunctionType),
          _hotpath.OFF_REASON, '|', _hotpath.SOON_OFF_REASON, sep=';')
    loop.close()
''')


class ChoiceInAFreshProcess(unittest.TestCase):

    def run_case(self, case):
        p = subprocess.run([sys.executable, '-c', CHILD, case], capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        return p.stdout.strip().split(';')

    def test_no_gil_takes_the_python_path(self):
        got, enabled, builtin, reason, _, soon = self.run_case('nogil')
        self.assertEqual((got, enabled, builtin), ('abc', 'False', 'False'))
        self.assertIn('free-threaded', reason)
        self.assertIn('free-threaded', soon)

    def test_untested_version_takes_the_python_path(self):
        got, enabled, builtin, reason, _, soon = self.run_case('untested')
        self.assertEqual((got, enabled, builtin), ('abc', 'False', 'False'))
        self.assertIn('not a tested version', reason)

    def test_other_handle_slots_keep_call_soon_in_python(self):
        got, enabled, builtin, reason, _, soon = self.run_case('slots')
        # The sink and write need no Handle: they stay in C.
        self.assertEqual((got, enabled, builtin, reason), ('abc', 'True', 'False', 'None'))
        self.assertIn('other slots', soon)

    def test_missing_object_takes_the_python_path(self):
        got, enabled, builtin, reason, _, soon = self.run_case('no-object')
        self.assertEqual((got, enabled, builtin), ('abc', 'False', 'False'))
        self.assertIn('no usable libloop-cpython.so', reason)
        self.assertIn('/nonexistent/libloop-cpython.so', reason)
        self.assertEqual(soon, reason)

    def test_object_of_another_interface_takes_the_python_path(self):
        got, enabled, builtin, reason, _, soon = self.run_case('other-interface')
        self.assertEqual((got, enabled, builtin), ('abc', 'False', 'False'))
        self.assertIn('this package needs', reason)


if __name__ == '__main__':
    unittest.main()
