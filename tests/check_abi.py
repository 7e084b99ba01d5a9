#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The public headers are the one source of truth for the C ABI: this check
fails when a binding (Go's purego, Python's ctypes) disagrees with
include/libloop.h and include/libloop/*.h on a function, its arity or a
constant, when a copy of the error table differs from LL_ERRNO_MAP or is
stale, or when a ctypes struct differs from the header's. The checks live
in tests/abi/, one concept a module.

Standard library only; exits 1 on any mismatch.

usage: check_abi.py [REPO_ROOT]
       check_abi.py --self-test   (breaks a copy of the tree in each way the
                                   check must catch, and fails if one passes)
"""
import os
import sys

from abi import check, selftest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))

if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(selftest.self_test())
    sys.exit(check.main(os.path.abspath(sys.argv[1]) if sys.argv[1:] else REPO))
