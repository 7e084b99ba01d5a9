# SPDX-License-Identifier: MIT
"""The error table: include/libloop/errno.h's LL_ERRNO_MAP(XX) lists every
library code as XX(name, value, message). Its copies are generated from it
(tools/errtab.py); this check reads each copy on its own and compares names,
values and messages entry by entry: the Go core's Errno constants and
errnoText switch (libloop/), the purego binding's Error constants and
errorText switch (bindings/go/), the ctypes binding's ERRORS
(bindings/python/libloop/), and capi's ll_strerror/ll_err_name, which must
expand LL_ERRNO_MAP rather than hold strings of their own. It also fails
when a generated file is not what the generator writes now (stale), and
when a message of the map is typed as a string anywhere else in the
library's or the bindings' code."""
import ast
import glob
import os
import re
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(REPO, "tools"))
import errtab  # noqa: E402  (tools/errtab.py: the header's map, and what it generates)

GO_SWITCH_CASE = re.compile(r'case (\w+):\s*return "(\w+)", "((?:[^"\\]|\\.)*)", true')


def read_go_table(root, folder, go_type):
    """{C name: (value, message, where)} from a Go package's constants of
    go_type and its case NAME: return "LL_NAME", "message", true lines."""
    consts, table, problems = {}, {}, []
    for path in sorted(glob.glob(os.path.join(root, folder, "*.go"))):
        if path.endswith("_test.go"):
            continue
        rel = os.path.relpath(path, root)
        text = open(path).read()
        for m in re.finditer(r"^[ \t]*(?:const[ \t]+)?(\w+)[ \t]+%s[ \t]*=[ \t]*(-?\d+)[ \t]*(?://.*)?$" % go_type, text, re.M):
            consts[m.group(1)] = (int(m.group(2)), f"{rel}:{text[:m.start()].count(chr(10)) + 1}")
        for m in GO_SWITCH_CASE.finditer(text):
            where = f"{rel}:{text[:m.start()].count(chr(10)) + 1}"
            go_name, c_name, message = m.group(1), m.group(2), re.sub(r"\\(.)", r"\1", m.group(3))
            if go_name not in consts:
                problems.append(f"{where}: case {go_name}: no constant {go_name} {go_type}")
                continue
            if c_name in table:
                problems.append(f"{where}: {c_name} is described twice")
            table[c_name] = (consts[go_name][0], message, where)
            if c_name != "LL_" + go_name:
                problems.append(f"{where}: {go_name} is named {c_name}")
    for go_name, (value, where) in consts.items():
        table.setdefault("LL_" + go_name, (value, None, where))  # a code with no texts
    return table, problems


def read_python_table(root):
    """{C name: (value, message, where)} from the package's ERRORS dicts."""
    table, problems = {}, []
    for path in sorted(glob.glob(os.path.join(root, "bindings", "python", "libloop", "*.py"))):
        rel = os.path.relpath(path, root)
        tree = ast.parse(open(path).read(), path)
        consts = {}
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target = node.targets[0]
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                target = node.target
            else:
                continue
            if not isinstance(target, ast.Name):
                continue
            if target.id == "ERRORS" and isinstance(node.value, ast.Dict):
                for k, v in zip(node.value.keys, node.value.values):
                    where = f"{rel}:{k.lineno}"
                    try:
                        value = consts[k.id] if isinstance(k, ast.Name) else ast.literal_eval(k)
                        name, message = ast.literal_eval(v)
                    except (KeyError, ValueError, TypeError):
                        problems.append(f"{where}: an ERRORS entry this check cannot read")
                        continue
                    table[name] = (value, message, where)
                continue
            try:
                consts[target.id] = ast.literal_eval(node.value)
            except ValueError:
                pass
    return table, problems


def compare_table(label, codes, table):
    errors = []
    for c in codes:
        if c.c_name not in table:
            errors.append(f"errors: {label} lacks {c.c_name} ({c.value}, {c.message!r})")
            continue
        value, message, where = table[c.c_name]
        if value != c.value:
            errors.append(f"errors: {label}: {c.c_name} = {value} at {where}, "
                          f"but LL_ERRNO_MAP has {c.value}")
        if message != c.message:
            errors.append(f"errors: {label}: {c.c_name}'s message is {message!r} at {where}, "
                          f"but LL_ERRNO_MAP has {c.message!r}")
    for name in sorted(set(table) - {c.c_name for c in codes}):
        errors.append(f"errors: {label} has {name} at {table[name][2]}, which LL_ERRNO_MAP lacks")
    return errors


# The library's and the bindings' own code: a message typed here is a copy
# the table does not reach (tests may quote messages: they check them).
# Messages of one or two words ("cancelled", "timed out") are also ordinary
# strings with other meanings (a future's state, an exception's text), so
# only longer ones are looked for.
CODE_GLOBS = ["libloop/*.go", "capi/*.go", "capi/*.c", "capi/*.h", "bindings/go/*.go",
              "bindings/python/libloop/*.py"]


def check_capi_and_copies(root, codes):
    errors = []
    strings_c = open(os.path.join(root, "capi", "strings.c")).read()
    for func in ("ll_strerror", "ll_err_name"):
        m = re.search(r"^const char \*%s\(int \w+\) \{\n(.*?)^\}" % func, strings_c, re.M | re.S)
        if not m:
            errors.append(f"errors: capi/strings.c does not define {func}")
        elif "LL_ERRNO_MAP(" not in m.group(1):
            errors.append(f"errors: capi/strings.c's {func} does not expand LL_ERRNO_MAP")
    generated = {errtab.CORE_GO, errtab.PUREGO_GO, errtab.PYTHON}
    for pattern in CODE_GLOBS:
        for path in sorted(glob.glob(os.path.join(root, pattern))):
            rel = os.path.relpath(path, root)
            if rel in generated or path.endswith("_test.go"):
                continue
            text = open(path).read()
            for c in codes:
                if len(c.message.split()) < 3:
                    continue
                for quoted in (f'"{c.message}"', f"'{c.message}'"):
                    at = text.find(quoted)
                    while at >= 0:
                        errors.append(f"errors: {rel}:{text.count(chr(10), 0, at) + 1} types "
                                      f"{c.c_name}'s message by hand: use the table generated "
                                      f"from LL_ERRNO_MAP")
                        at = text.find(quoted, at + 1)
    return errors


def check_errors(root):
    """The error table's copies against LL_ERRNO_MAP; a list of problems."""
    try:
        codes, _ = errtab.read_header(root)
        stale = errtab.stale(root)
    except errtab.HeaderError as e:
        return [f"errors: {line}" for line in str(e).splitlines()]
    if len(codes) < 20:
        return [f"errors: read only {len(codes)} codes from LL_ERRNO_MAP: the parser is broken"]
    errors = [f"errors: {path} is stale: run `make errtab` and commit it" for path in stale]
    for label, folder, go_type in (("go core", "libloop", "Errno"), ("go binding", "bindings/go", "Error")):
        table, problems = read_go_table(root, folder, go_type)
        errors += [f"errors: {p}" for p in problems] + compare_table(label, codes, table)
    table, problems = read_python_table(root)
    errors += [f"errors: {p}" for p in problems] + compare_table("python", codes, table)
    return errors + check_capi_and_copies(root, codes)

