# SPDX-License-Identifier: MIT
"""The C ABI's checks (tests/check_abi.py runs them), one concept a module:

  headers    reading the public headers: functions, arities, constants
  functions  the headers' functions and constants against each binding
  errors     LL_ERRNO_MAP against every copy of the error table
  structs    the ctypes Structures against the headers' structs
  check      one run of all of them on a tree, and its report
  selftest   broken copies of the tree that the check must catch

Each reads the tree at the root it is given, so the self-test can point
them at a broken copy. Standard library only.
"""
