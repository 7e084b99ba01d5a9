# SPDX-License-Identifier: MIT
"""The self-test: breaks a copy of the tree in each way the check must
catch, and fails if one passes unreported."""
import contextlib
import io
import os
import shutil
import tempfile

from . import check

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

# (file, text, replacement, what the report must then say)
MUTATIONS = [
    ("bindings/go/raw.go", "RemoveReader func(loop uint64, fd int32) int32",
     "RemoveReader func(loop uint64) int32", "go: ll_remove_reader takes 2 parameters"),
    ("bindings/go/raw.go", '{"ll_loop_wakeup", &r.Wakeup},', "",
     "go: ll_loop_wakeup (arity 1) is not bound"),
    ("bindings/python/libloop/_lib.py", "[c_uint64, c_int, IO_CALLBACK, c_void_p])",
     "[c_uint64, IO_CALLBACK, c_void_p])", "python: ll_add_reader takes 4 parameters"),
    ("bindings/python/libloop/_errcodes.py", "LL_ETIMEDOUT = -10008", "LL_ETIMEDOUT = -10018",
     "python: LL_ETIMEDOUT = -10018"),
    ("bindings/go/transports.go", "KindPipeWrite TransportKind = 3", "KindPipeWrite TransportKind = 5",
     "go: KindPipeWrite = 5"),
    ("include/libloop.h", "int ll_loop_wakeup(ll_loop loop);",
     "int ll_loop_wakeup(ll_loop loop, int how);", "python: ll_loop_wakeup takes 2 parameters"),
    ("include/libloop.h", "#define LL_RUN_NOWAIT 1", "#define LL_RUN_NOWAIT 1\n#define LL_RUN_NEW 2",
     "go: constant LL_RUN_NEW = 2 is missing"),
    ("include/libloop/process.h", "int ll_process_kill(ll_process p);", "",
     "python: OMIT names ll_process_kill, which no header declares"),
    # the error table
    ("include/libloop/errno.h", 'XX(ECLOSED, -10002, "event loop is closed")',
     'XX(ECLOSED, -10002, "loop closed")', "errors: libloop/zz_errors_generated.go is stale"),
    ("include/libloop/errno.h", "#define LL_ESTATE       (-10004)", "#define LL_ESTATE       (-10044)",
     "errors: include/libloop/errno.h: #define LL_ESTATE is -10044, LL_ERRNO_MAP says -10004"),
    ("include/libloop/errno.h", "#define LL_EFORKED       (-10019)",
     "#define LL_EFORKED       (-10019)\n#define LL_ENEW (-10020) /**< new */",
     "errors: include/libloop/errno.h: #define LL_ENEW is not in LL_ERRNO_MAP"),
    ("include/libloop.h", "typedef uint64_t ll_tls_config;",
     "typedef uint64_t ll_tls_config;\n#define LL_ENEW (-10020) /**< new */",
     "errors: include/libloop.h: #define LL_ENEW is a library code: it belongs in include/libloop/errno.h"),
    ("libloop/zz_errors_generated.go", '"LL_ECLOSED", "event loop is closed"', '"LL_ECLOSED", "loop closed"',
     "errors: go core: LL_ECLOSED's message is 'loop closed'"),
    ("bindings/go/zz_errors_generated.go", "EFORKED Error = -10019", "EFORKED Error = -10020",
     "errors: go binding: LL_EFORKED = -10020"),
    ("bindings/python/libloop/_errcodes.py", "('LL_ETLS', 'TLS failure')", "('LL_ETLS', 'TLS error')",
     "errors: python: LL_ETLS's message is 'TLS error'"),
    ("docs/errors.md", "| `LL_ENOMEM` | -10009 |", "| `LL_ENOMEM` | -10090 |",
     "errors: docs/errors.md is stale"),
    ("capi/strings.c", "LL_ERRNO_MAP(LL__MESSAGE)", "",
     "errors: capi/strings.c's ll_strerror does not expand LL_ERRNO_MAP"),
    ("capi/errors.go", "// errCode turns", '// errCode turns\nvar x = "invalid, stale or wrong-kind handle id"\n',
     "errors: capi/errors.go:43 types LL_EBADHANDLE's message by hand"),
    # the structs
    ("bindings/python/libloop/_netlib.py", '("kind", c_int),\n        ("code", c_int),',
     '("code", c_int),\n        ("kind", c_int),', "structs: Event at"),
    ("bindings/python/libloop/_netlib.py", '("stdio", c_int * 3)', '("stdio", c_int * 2)',
     "structs: ProcessOptions.stdio at"),
    ("bindings/python/libloop/_hotpath.py", "('loop_slot', ctypes.c_ssize_t * 5)",
     "('loop_slot', ctypes.c_ssize_t * 6)", "structs: _SoonLayout.loop_slot at"),
    ("include/libloop/stats.h", "    uint64_t tasks;", "    uint64_t tasks;\n    uint64_t more;",
     "structs: LoopStats at"),
]

# What a self-test copies of the tree.
SELF_TEST_TREE = ("include", "bindings/python/libloop", "bindings/python/cpython", "bindings/go", "libloop", "capi", "docs/errors.md")


def self_test():
    failed = 0
    for path, old, new, expect in MUTATIONS:
        with tempfile.TemporaryDirectory() as tmp:
            for sub in SELF_TEST_TREE:
                if os.path.isfile(os.path.join(REPO, sub)):
                    os.makedirs(os.path.dirname(os.path.join(tmp, sub)), exist_ok=True)
                    shutil.copy(os.path.join(REPO, sub), os.path.join(tmp, sub))
                    continue
                shutil.copytree(os.path.join(REPO, sub), os.path.join(tmp, sub),
                                ignore=shutil.ignore_patterns("*.so", "__pycache__", "testdata"))
            text = open(os.path.join(tmp, path)).read()
            if old not in text:
                print(f"self-test: {path} no longer holds {old!r}: update MUTATIONS")
                failed += 1
                continue
            open(os.path.join(tmp, path), "w").write(text.replace(old, new, 1))
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                rc = check.main(tmp)
        if rc == 0 or expect not in out.getvalue():
            print(f"self-test: {path}: {old!r} -> {new!r} was not reported as {expect!r}")
            failed += 1
    print(f"abi self-test: {len(MUTATIONS) - failed} passed, {failed} failed")
    return 1 if failed else 0

