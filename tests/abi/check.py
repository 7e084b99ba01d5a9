# SPDX-License-Identifier: MIT
"""One run of every check on a tree, and its report: the problems, one a
line, then three summary lines."""
from .errors import check_errors
from .functions import OMIT, check_functions
from .headers import read_headers
from .structs import STRUCTS, check_structs


def main(root):
    h_funcs, h_consts = read_headers(root)
    if len(h_funcs) < 50 or len(h_consts) < 20:
        print(f"abi: read only {len(h_funcs)} functions and {len(h_consts)} constants "
              "from the headers: the parser is broken")
        return 1
    errors, py_bound, go_bound = check_functions(root, h_funcs, h_consts)
    table_errors = check_errors(root)
    struct_errors = check_structs(root, h_consts)
    errors += table_errors + struct_errors
    for e in errors:
        print(e)
    print(f"abi: the error table checked in the go core, the go and python bindings, capi and "
          f"docs ({len(table_errors)} problems); {len(STRUCTS)} ctypes structs against the "
          f"headers ({len(struct_errors)} problems)")
    print(f"abi: headers declare {len(h_funcs)} functions and {len(h_consts)} constants; "
          f"python binds {py_bound}, go binds {go_bound}; "
          f"{sum(len(v) for v in OMIT.values())} deliberate omissions")
    print(f"abi: {0 if errors else 1} passed, {1 if errors else 0} failed")
    return 1 if errors else 0
