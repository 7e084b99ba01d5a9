# SPDX-License-Identifier: MIT
"""The type stubs (libloop/__init__.pyi) describe the package that runs:
the same public names, the same parameters for every function and method
they declare, and EventLoop has the methods of asyncio's default loop that
the stubs promise (they type it as asyncio.BaseEventLoop). mypy checks the
stubs themselves (make test-types)."""

import ast
import asyncio
import dataclasses
import inspect
import os
import unittest

import libloop

STUB = os.path.join(os.path.dirname(libloop.__file__), '__init__.pyi')


def stub_tree():
    with open(STUB) as f:
        return ast.parse(f.read(), STUB)


def stub_params(fn):
    """(name, kind) of a stub function's parameters, as inspect names kinds."""
    a = fn.args
    P = inspect.Parameter
    out = [(x.arg, P.POSITIONAL_ONLY) for x in a.posonlyargs]
    out += [(x.arg, P.POSITIONAL_OR_KEYWORD) for x in a.args]
    if a.vararg:
        out.append((a.vararg.arg, P.VAR_POSITIONAL))
    out += [(x.arg, P.KEYWORD_ONLY) for x in a.kwonlyargs]
    if a.kwarg:
        out.append((a.kwarg.arg, P.VAR_KEYWORD))
    return out


def runtime_params(obj):
    return [(p.name, p.kind) for p in inspect.signature(obj).parameters.values()]


def base_name(node):
    """The class name of a base in the stub: X, mod.X or X[T]."""
    if isinstance(node, ast.Subscript):
        node = node.value
    return node.attr if isinstance(node, ast.Attribute) else node.id


def stub_names(tree):
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign):
            names.add(node.target.id)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names - {'_T'}


class StubTests(unittest.TestCase):

    def test_py_typed_beside_the_stubs(self):
        self.assertTrue(os.path.isfile(os.path.join(os.path.dirname(STUB), 'py.typed')))

    def test_same_public_names(self):
        tree = stub_tree()
        stub_all = next(ast.literal_eval(n.value) for n in tree.body
                        if isinstance(n, ast.Assign) and n.targets[0].id == '__all__')
        self.assertEqual(stub_all, libloop.__all__)
        public = set(libloop.__all__) | {'__version__', '__all__'}
        self.assertEqual(stub_names(tree), public)
        for name in public:
            self.assertTrue(hasattr(libloop, name), name)

    def test_functions_have_the_stub_parameters(self):
        for node in stub_tree().body:
            if isinstance(node, ast.FunctionDef):
                with self.subTest(node.name):
                    self.assertEqual(stub_params(node), runtime_params(getattr(libloop, node.name)))

    def test_methods_have_the_stub_parameters(self):
        for cls in stub_tree().body:
            if not isinstance(cls, ast.ClassDef):
                continue
            runtime = getattr(libloop, cls.name)
            bases = [base_name(b) for b in cls.bases]
            for node in cls.body:
                if isinstance(node, ast.FunctionDef) and any(
                        isinstance(d, ast.Name) and d.id == 'property'
                        or isinstance(d, ast.Attribute) and d.attr == 'setter'
                        for d in node.decorator_list):
                    with self.subTest(f'{cls.name}.{node.name}'):
                        self.assertIsInstance(getattr(runtime, node.name, None), property)
                elif dataclasses.is_dataclass(runtime) and isinstance(node, ast.AnnAssign):
                    with self.subTest(f'{cls.name}.{node.target.id}'):
                        self.assertIn(node.target.id, [f.name for f in dataclasses.fields(runtime)])
                elif isinstance(node, ast.FunctionDef):
                    with self.subTest(f'{cls.name}.{node.name}'):
                        self.assertTrue(hasattr(runtime, node.name),
                                        f'{cls.name}.{node.name} is in the stub, not the class')
                        self.assertEqual(stub_params(node), runtime_params(getattr(runtime, node.name)))
                elif isinstance(node, ast.AnnAssign) and cls.name == 'TLSInfo':
                    with self.subTest(f'{cls.name}.{node.target.id}'):  # class attributes
                        self.assertTrue(hasattr(runtime, node.target.id))
                elif isinstance(node, ast.AnnAssign):
                    with self.subTest(f'{cls.name}.{node.target.id}'):
                        obj = runtime(42) if runtime is libloop.LibloopError else libloop.new_event_loop()
                        try:
                            self.assertTrue(hasattr(obj, node.target.id))
                        finally:
                            if isinstance(obj, asyncio.AbstractEventLoop):
                                obj.close()
            for base in bases:
                if base not in ('BaseEventLoop',):
                    with self.subTest(f'{cls.name} derives from {base}'):
                        self.assertIn(base, [b.__name__ for b in runtime.__mro__])

    def test_event_loop_is_a_default_loop_for_typing(self):
        # The stub says EventLoop is an asyncio.BaseEventLoop: every public
        # method of asyncio's default loop is there with its parameters.
        default = asyncio.SelectorEventLoop
        for name in dir(default):
            if name.startswith('_') or not callable(getattr(default, name)):
                continue
            with self.subTest(name):
                self.assertTrue(hasattr(libloop.EventLoop, name), name)
                self.assertEqual(runtime_params(getattr(libloop.EventLoop, name)),
                                 runtime_params(getattr(default, name)))
        self.assertTrue(issubclass(libloop.EventLoop, asyncio.AbstractEventLoop))

    def test_policy_makes_libloop_loops(self):
        # The stub narrows EventLoopPolicy.new_event_loop to EventLoop.
        loop = libloop.EventLoopPolicy().new_event_loop()
        try:
            self.assertIsInstance(loop, libloop.EventLoop)
        finally:
            loop.close()

    def test_loop_alias_and_version(self):
        self.assertIs(libloop.Loop, libloop.EventLoop)
        self.assertIsInstance(libloop.__version__, str)
        self.assertIsInstance(libloop.LIBRARY_PATH, str)


if __name__ == '__main__':
    unittest.main()
