#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The public headers are the one source of truth for the C ABI: this check
fails when the Python binding (ctypes, bindings/python/libloop) or the Go
binding (purego, bindings/go) lacks a function or constant of
include/libloop.h and include/libloop/*.h, declares a function with another
number of parameters, gives a constant another value, or binds an ll_
function the headers do not declare.

What each side declares, read from the source (nothing is loaded):
  headers  every `ret ll_name(params);` prototype (arity: 0 for `(void)`)
           and every `#define LL_NAME value` (and `LL_NAME = value` in enums)
  Python   `_fn(lib, "ll_name", restype, [argtypes])` calls and
           `x = lib.ll_name; x.argtypes = [...]`; module-level integer
           constants named LL_NAME or NAME (the C name without LL_)
  Go       the `{"ll_name", &r.Field}` symbol tables with the Raw struct
           fields they bind (`Field func(params) result`); constants named
           NAME, its CamelCase, or whose line comment names LL_NAME
A binding that omits something on purpose says so in OMIT below, with the
reason.

The error table: include/libloop/errno.h's LL_ERRNO_MAP(XX) lists every
library code as XX(name, value, message). Its copies are generated from it
(tools/errtab.py); this check reads each copy on its own and compares names,
values and messages entry by entry: the Go core's Errno constants and
errnoText switch (libloop/), the purego binding's Error constants and
errorText switch (bindings/go/), the ctypes binding's ERRORS
(bindings/python/libloop/), and capi's ll_strerror/ll_err_name, which must
expand LL_ERRNO_MAP rather than hold strings of their own. It also fails
when a generated file is not what the generator writes now (stale), and
when a message of the map is typed as a string anywhere else in the
library's or the bindings' code.

The structs: the ctypes Structures of STRUCTS against the headers' structs:
field names, order, offsets and sizes (and so array lengths).

Standard library only; exits 1 on any mismatch.

usage: check_abi.py [REPO_ROOT]
       check_abi.py --self-test   (breaks a copy of the tree in each way the
                                   check must catch, and fails if one passes)
"""
import ast
import contextlib
import glob
import io
import os
import re
import shutil
import sys
import tempfile

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
ROOT = REPO  # the tree checked; --self-test points it at broken copies
sys.path.insert(0, os.path.join(REPO, "tools"))
import errtab  # noqa: E402  (tools/errtab.py: the header's map, and what it generates)

# Deliberate omissions: binding -> {C name: reason}. An entry that is no
# longer omitted (the binding grew it) is itself reported, so the list
# cannot go stale.
OMIT = {
    "python": {
        # The loop: asyncio's Handle, TimerHandle and BaseEventLoop keep this
        # state in Python, and call_soon takes the host queue.
        "ll_call_soon": "call_soon goes through the host queue (ll_loop_set_host_queue, ll_loop_host_ready): "
                        "one crossing runs a batch of Python callbacks",
        "ll_handle_cancelled": "asyncio's Handle.cancelled() is kept in Python",
        "ll_timer_when": "asyncio's TimerHandle.when() is kept in Python",
        "ll_loop_get_debug": "get_debug()/set_debug() are asyncio's, kept in Python",
        "ll_loop_set_slow_callback_duration": "slow callbacks are Python callbacks, timed by asyncio's debug mode",
        # Futures and tasks: asyncio.Future objects live in Python; the task
        # machine (task_machine.py) declares exactly the calls it makes.
        "ll_future_done": "task_machine reads ll_future_state",
        "ll_future_get_loop": "a Python future knows its loop",
        "ll_future_remove_done_callback": "done callbacks of C futures are added once and fire once",
        "ll_future_set_exception": "a Python exception stays a Python object; tasks raise through ll_task_raise",
        "ll_task_awaited": "task_machine keeps what a task awaits in Python",
        "ll_task_sleep": "asyncio.sleep makes a timer with ll_call_later",
        "ll_loop_run_until_complete": "asyncio's run_until_complete runs the loop through ll_loop_run_forever",
        "ll_sleep": "asyncio.sleep is used unchanged",
        "ll_gather": "asyncio.gather is used unchanged",
        "ll_wait_for": "asyncio.wait_for is used unchanged",
        "ll_run": "libloop.run is asyncio.Runner with a libloop loop",
        # The executor: the work is Python code, so it runs on a
        # concurrent.futures pool as in asyncio (a libloop worker would take
        # the GIL all the same).
        "ll_run_in_executor": "run_in_executor uses concurrent.futures, as asyncio does",
        "ll_queue_work": "as ll_run_in_executor",
        "ll_loop_set_executor_workers": "set_default_executor takes a concurrent.futures executor",
        "ll_loop_shutdown_default_executor": "shutdown_default_executor shuts the Python executor down",
        # Network: asyncio's own create_connection / create_server /
        # create_datagram_endpoint make the sockets (options, happy eyeballs,
        # errors as asyncio's) and hand the fd over (ll_transport_open,
        # ll_server_open); names resolve with socket.getaddrinfo in the executor.
        "ll_tcp_connect": "sockets are made by asyncio's code, then ll_transport_open",
        "ll_tcp_listen": "sockets are made by asyncio's code, then ll_server_open",
        "ll_unix_connect": "as ll_tcp_connect",
        "ll_unix_listen": "as ll_tcp_listen",
        "ll_udp_open": "sockets are made by asyncio's code, then ll_transport_open(LL_DATAGRAM)",
        "ll_getaddrinfo": "asyncio resolves with socket.getaddrinfo in the executor",
        "LL_REUSE_PORT": "asyncio sets SO_REUSEPORT on the Python socket before libloop gets the fd",
        "ll_server_port": "Server.sockets are Python socket objects",
        "ll_server_num_sockets": "Server.sockets are Python socket objects",
        "ll_server_sockname": "Server.sockets are Python socket objects",
        "ll_transport_sockname": "get_extra_info('sockname') asks the Python socket",
        "ll_transport_peername": "get_extra_info('peername') asks the Python socket",
        "ll_transport_is_closing": "is_closing() is the Python transport's state (it must hold after close())",
        "ll_transport_write": "write() binds ll_transport_write_async: asyncio's write never fails "
                              "synchronously, errors reach connection_lost",
        # Processes: asyncio's Process API over the calls bound.
        "ll_process_kill": "kill() is send_signal(SIGKILL) through ll_process_send_signal",
        "ll_process_terminate": "terminate() is send_signal(SIGTERM) through ll_process_send_signal",
        "ll_process_wait": "wait() awaits the LL_PROCESS_EXITED event",
        # TLS: asyncio's ssl= runs Python's ssl module (sslproto) over the
        # plain transports bound above, as asyncio does on any loop; the
        # C-side TLS of include/libloop/tls.h is for C and Go hosts.
        "ll_tls_config_new": "asyncio's ssl= uses the ssl module over plain transports (sslproto)",
        "ll_tls_config_set_cert_pem": "as ll_tls_config_new",
        "ll_tls_config_load_cert_file": "as ll_tls_config_new",
        "ll_tls_config_add_ca_pem": "as ll_tls_config_new",
        "ll_tls_config_load_ca_file": "as ll_tls_config_new",
        "ll_tls_config_load_ca_dir": "as ll_tls_config_new",
        "ll_tls_config_use_system_ca": "as ll_tls_config_new",
        "ll_tls_config_set_verify": "as ll_tls_config_new",
        "ll_tls_config_set_server_name": "as ll_tls_config_new",
        "ll_tls_config_set_client_auth": "as ll_tls_config_new",
        "ll_tls_config_set_alpn": "as ll_tls_config_new",
        "ll_tls_config_set_versions": "as ll_tls_config_new",
        "ll_tls_config_set_session_cache": "as ll_tls_config_new",
        "ll_tls_config_set_timeouts": "as ll_tls_config_new",
        "ll_tls_connect": "as ll_tls_config_new",
        "ll_tls_listen": "as ll_tls_config_new",
        "ll_transport_start_tls": "as ll_tls_config_new",
        "ll_tls_version": "as ll_tls_config_new",
        "ll_tls_cipher": "as ll_tls_config_new",
        "ll_tls_alpn": "as ll_tls_config_new",
        "ll_tls_peer_cert": "as ll_tls_config_new",
        "ll_tls_verify_result": "as ll_tls_config_new",
        "ll_tls_resumed": "as ll_tls_config_new",
        "LL_TLS_1_2": "as ll_tls_config_new",
        "LL_TLS_1_3": "as ll_tls_config_new",
        "LL_TLS_CLIENT_NONE": "as ll_tls_config_new",
        "LL_TLS_CLIENT_REQUEST": "as ll_tls_config_new",
        "LL_TLS_CLIENT_REQUIRE": "as ll_tls_config_new",
        # Version: the loader compares ll_version() with ABI_MAJOR/ABI_MINOR.
        "LL_VERSION_PATCH": "a patch release never changes the ABI",
        "LL_VERSION": "the library's ll_version() is read at load time instead",
    },
    "go": {
        "LL_VERSION": "HeaderVersion is computed from the three parts, as the header does",
    },
}

# Deliberate omissions of every name with a prefix: binding -> {prefix:
# reason} (a name both bound and so omitted is not reported).
OMIT_PREFIXES = {
    # include/libloop/python.h is the CPython binding's C side.
    "python": {"LL_PY_": "ll_py_bind's table: the index of a function is its name's place in "
                         "_hotpath._API, whose length is checked against PY_API_COUNT"},
    "go": {"ll_py_": "include/libloop/python.h is for CPython bindings",
           "LL_PY_": "include/libloop/python.h is for CPython bindings"},
}

# Binding constants whose names follow no rule: binding -> {C name: name}.
ALIASES = {
    "python": {"LL_VERSION_MAJOR": "ABI_MAJOR", "LL_VERSION_MINOR": "ABI_MINOR"},
    "go": {},
}


# ---- the headers ----------------------------------------------------------------

def strip_c_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def split_params(params):
    """Top-level comma-separated parts of a parameter list."""
    parts, depth, cur = [], 0, ""
    for ch in params:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur)
    return [p.strip() for p in parts]


def c_eval(expr, known):
    """The integer value of a #define body made of literals and known macros."""
    expr = re.sub(r"\b(LL_[A-Z0-9_]+)\b", lambda m: str(known[m.group(1)]), expr)
    expr = re.sub(r"\b0[xX][0-9a-fA-F]+\b", lambda m: str(int(m.group(0), 16)), expr)
    if not re.fullmatch(r"[\s0-9()+\-*/]+", expr):
        raise ValueError(expr)
    return int(eval(expr.replace("/", "//")))  # digits and operators only


def read_headers():
    funcs, consts = {}, {}
    paths = [os.path.join(ROOT, "include", "libloop.h")] + sorted(
        glob.glob(os.path.join(ROOT, "include", "libloop", "*.h")))
    for path in paths:
        text = strip_c_comments(open(path).read())
        for m in re.finditer(r"^\s*#\s*define\s+(LL_[A-Z0-9_]+)[ \t]+([^\n]+)", text, re.M):
            if m.group(2).lstrip().startswith("{"):
                continue  # a struct initializer (LL_SPAWN_EXTRA_INIT): each binding fills its struct
            consts[m.group(1)] = c_eval(m.group(2), consts)
        for body in re.findall(r"\benum\b[^{;]*\{([^}]*)\}", text):
            value = -1
            for item in split_params(body):
                name, _, val = item.partition("=")
                value = c_eval(val, consts) if val.strip() else value + 1
                if name.strip().startswith("LL_"):
                    consts[name.strip()] = value
        no_typedefs = re.sub(r"\btypedef\b[^;]*;", " ", text)
        for m in re.finditer(r"\b(ll_[a-z0-9_]+)\s*\(([^;{]*?)\)\s*;", no_typedefs):
            params = split_params(m.group(2))
            funcs[m.group(1)] = 0 if params in ([], ["void"]) else len(params)
    return funcs, consts


# ---- the Python binding ---------------------------------------------------------------

def read_python():
    funcs, consts, problems = {}, {}, []
    for path in sorted(glob.glob(os.path.join(ROOT, "bindings", "python", "libloop", "*.py"))):
        rel = os.path.relpath(path, ROOT)
        tree = ast.parse(open(path).read(), path)
        fetched = {}  # local name -> ll_ name, from `x = lib.ll_name`
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id == "_fn" and len(node.args) == 4):
                name, argtypes = node.args[1], node.args[3]
                if not (isinstance(name, ast.Constant) and isinstance(argtypes, ast.List)):
                    problems.append(f"{rel}:{node.lineno}: a _fn call this check cannot read")
                    continue
                funcs.setdefault(name.value, []).append((len(argtypes.elts), f"{rel}:{node.lineno}"))
            elif isinstance(node, ast.Assign) and len(node.targets) == 1:
                target, value = node.targets[0], node.value
                pairs = [(target, value)]
                if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple):
                    pairs = list(zip(target.elts, value.elts))  # a.restype, a.argtypes = ...
                for t, v in pairs:
                    if (isinstance(t, ast.Name) and isinstance(v, ast.Attribute)
                            and v.attr.startswith("ll_")):
                        fetched[t.id] = v.attr
                    elif (isinstance(t, ast.Attribute) and t.attr == "argtypes"
                          and isinstance(t.value, ast.Name) and t.value.id in fetched
                          and isinstance(v, ast.List)):
                        funcs.setdefault(fetched[t.value.id], []).append(
                            (len(v.elts), f"{rel}:{node.lineno}"))
        for node in tree.body:  # module-level constants only
            if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
                continue
            target, value = node.targets[0], node.value
            pairs = []
            if isinstance(target, ast.Name):
                pairs = [(target, value)]
            elif isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple):
                pairs = list(zip(target.elts, value.elts))
            for t, v in pairs:
                try:
                    val = ast.literal_eval(v)
                except ValueError:
                    continue
                if isinstance(t, ast.Name) and isinstance(val, int) and not isinstance(val, bool):
                    consts.setdefault(t.id, []).append((val, f"{rel}:{node.lineno}"))
    return funcs, consts, problems


def python_names(c_name):
    return [ALIASES["python"].get(c_name), c_name, c_name[3:]]


# ---- the Go binding -------------------------------------------------------------------

GO_FIELD = re.compile(r"^\s*(\w+)\s+func\((.*)\)\s*[\w.*\[\]]*\s*(?://.*)?$")
GO_SYMBOL = re.compile(r'\{\s*"(ll_[a-z0-9_]+)"\s*,\s*&r\.(\w+)\s*\}')
GO_CONST = re.compile(r"^\s*(\w+)(?:\s+[\w.]+)?\s*=\s*(-?\d+)\s*(?://(.*))?$")


def camel(c_name):
    return "".join(w.capitalize() for w in c_name[3:].split("_"))


def read_go():
    fields, bound, consts = {}, {}, {}
    for path in sorted(glob.glob(os.path.join(ROOT, "bindings", "go", "*.go"))):
        if path.endswith("_test.go"):
            continue
        rel = os.path.relpath(path, ROOT)
        in_const = False
        for no, line in enumerate(open(path), 1):
            where = f"{rel}:{no}"
            m = GO_FIELD.match(line)
            if m:
                fields[m.group(1)] = (len(split_params(m.group(2))), where)
            for name, field in GO_SYMBOL.findall(line):
                bound.setdefault(name, []).append((field, where))
            if re.match(r"^const \($", line):
                in_const = True
            elif in_const and line.startswith(")"):
                in_const = False
            m = GO_CONST.match(line) if in_const or line.startswith("const ") else None
            if m:
                text = line[len("const "):] if line.startswith("const ") else line
                m = GO_CONST.match(text)
                consts.setdefault(m.group(1), []).append(
                    (int(m.group(2)), m.group(3) or "", where))
    funcs = {}
    for name, binds in bound.items():
        for field, where in binds:
            if field not in fields:
                funcs.setdefault(name, []).append((None, f"{where}: Raw field {field} not found"))
            else:
                funcs.setdefault(name, []).append((fields[field][0], fields[field][1]))
    return funcs, consts


def go_lookup(c_name, consts):
    """The Go constants standing for c_name: (go name, value, where)."""
    names = {ALIASES["go"].get(c_name), c_name[3:], camel(c_name)}
    hits = []
    for go_name, defs in consts.items():
        for value, comment, where in defs:
            if go_name in names or re.search(r"\b%s\b" % c_name, comment):
                hits.append((go_name, value, where))
    return hits


# ---- the comparison -------------------------------------------------------------------

def compare(binding, h_funcs, h_consts, funcs, const_hits):
    errors, exact = [], OMIT[binding]
    prefixes = tuple(OMIT_PREFIXES.get(binding, ()))

    class Omitted(dict):
        # `in`: omitted by name, or by prefix if not bound (checked below)
        def __contains__(self, name):
            return dict.__contains__(self, name) or name.startswith(prefixes)
    omit = Omitted(exact)
    for name, arity in sorted(h_funcs.items()):
        decls = funcs.get(name)
        if not decls:
            if name not in omit:
                errors.append(f"{binding}: {name} (arity {arity}) is not bound")
            continue
        if name in exact:
            errors.append(f"{binding}: {name} is bound now: drop it from OMIT")
        for n, where in decls:
            if n != arity:
                errors.append(f"{binding}: {name} takes {arity} parameters in the header, "
                              f"{n if n is not None else '?'} at {where}")
    for name in sorted(set(funcs) - set(h_funcs)):
        errors.append(f"{binding}: binds {name}, which no header declares "
                      f"({funcs[name][0][1]})")
    for name, value in sorted(h_consts.items()):
        hits = const_hits(name)
        if not hits:
            if name not in omit:
                errors.append(f"{binding}: constant {name} = {value} is missing")
            continue
        if name in exact:
            errors.append(f"{binding}: {name} is defined now: drop it from OMIT")
        for b_name, b_value, where in hits:
            if b_value != value:
                errors.append(f"{binding}: {b_name} = {b_value} at {where}, "
                              f"but the header has {name} = {value}")
    for name in exact:
        if name not in h_funcs and name not in h_consts:
            errors.append(f"{binding}: OMIT names {name}, which no header declares")
    return errors


# ---- the error table ---------------------------------------------------------------

GO_SWITCH_CASE = re.compile(r'case (\w+):\s*return "(\w+)", "((?:[^"\\]|\\.)*)", true')


def read_go_table(folder, go_type):
    """{C name: (value, message, where)} from a Go package's constants of
    go_type and its case NAME: return "LL_NAME", "message", true lines."""
    consts, table, problems = {}, {}, []
    for path in sorted(glob.glob(os.path.join(ROOT, folder, "*.go"))):
        if path.endswith("_test.go"):
            continue
        rel = os.path.relpath(path, ROOT)
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


def read_python_table():
    """{C name: (value, message, where)} from the package's ERRORS dicts."""
    table, problems = {}, []
    for path in sorted(glob.glob(os.path.join(ROOT, "bindings", "python", "libloop", "*.py"))):
        rel = os.path.relpath(path, ROOT)
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


def check_capi_and_copies(codes):
    errors = []
    strings_c = open(os.path.join(ROOT, "capi", "strings.c")).read()
    for func in ("ll_strerror", "ll_err_name"):
        m = re.search(r"^const char \*%s\(int \w+\) \{\n(.*?)^\}" % func, strings_c, re.M | re.S)
        if not m:
            errors.append(f"errors: capi/strings.c does not define {func}")
        elif "LL_ERRNO_MAP(" not in m.group(1):
            errors.append(f"errors: capi/strings.c's {func} does not expand LL_ERRNO_MAP")
    generated = {errtab.CORE_GO, errtab.PUREGO_GO, errtab.PYTHON}
    for pattern in CODE_GLOBS:
        for path in sorted(glob.glob(os.path.join(ROOT, pattern))):
            rel = os.path.relpath(path, ROOT)
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


def check_errors():
    """The error table's copies against LL_ERRNO_MAP; a list of problems."""
    try:
        codes, _ = errtab.read_header(ROOT)
        stale = errtab.stale(ROOT)
    except errtab.HeaderError as e:
        return [f"errors: {line}" for line in str(e).splitlines()]
    if len(codes) < 20:
        return [f"errors: read only {len(codes)} codes from LL_ERRNO_MAP: the parser is broken"]
    errors = [f"errors: {path} is stale: run `make errtab` and commit it" for path in stale]
    for label, folder, go_type in (("go core", "libloop", "Errno"), ("go binding", "bindings/go", "Error")):
        table, problems = read_go_table(folder, go_type)
        errors += [f"errors: {p}" for p in problems] + compare_table(label, codes, table)
    table, problems = read_python_table()
    errors += [f"errors: {p}" for p in problems] + compare_table("python", codes, table)
    return errors + check_capi_and_copies(codes)


# ---- the structs -----------------------------------------------------------------------

# C struct -> (Python file, Structure class) for the structs the Python
# binding passes to the library (the hot path's among them).
STRUCTS = {
    "ll_event": ("bindings/python/libloop/_netlib.py", "Event"),
    "ll_loop_stats": ("bindings/python/libloop/_lib.py", "LoopStats"),
    "ll_process_options": ("bindings/python/libloop/_netlib.py", "ProcessOptions"),
    "ll_spawn_extra": ("bindings/python/libloop/_netlib.py", "SpawnExtra"),
    "ll_error_context": ("bindings/python/libloop/_lib.py", "ErrorContext"),
    "ll_py_soon_layout": ("bindings/python/libloop/_hotpath.py", "_SoonLayout"),
}

C_TYPES = {"int": "c_int", "unsigned int": "c_uint", "unsigned": "c_uint", "uint64_t": "c_uint64",
           "int64_t": "c_int64", "uint32_t": "c_uint32", "int32_t": "c_int32", "size_t": "c_size_t",
           "ptrdiff_t": "c_ssize_t", "double": "c_double"}


def read_header_structs(consts):
    """{struct name: [(field, ctypes type)]} from the headers, or a string
    saying what could not be read."""
    import ctypes
    texts = [strip_c_comments(open(p).read()) for p in
             [os.path.join(ROOT, "include", "libloop.h")] +
             sorted(glob.glob(os.path.join(ROOT, "include", "libloop", "*.h")))]
    text = "\n".join(texts)
    ids = set(re.findall(r"\btypedef\s+uint64_t\s+(ll_\w+)\s*;", text))
    structs = {}
    for name in STRUCTS:
        m = re.search(r"\bstruct\s+%s\s*\{([^}]*)\}" % name, text)
        if not m:
            structs[name] = f"no struct {name} in the headers"
            continue
        fields = []
        for decl in filter(None, (d.strip() for d in m.group(1).split(";"))):
            dm = re.match(r"((?:const\s+)?(?:unsigned\s+)?\w+)((?:\s*\*|\s+const\b)*)\s*(.*)$", decl, re.S)
            base = re.sub(r"^const\s+", "", dm.group(1)).strip()
            for declarator in split_params(dm.group(3)):
                m2 = re.fullmatch(r"((?:\*|\s|const\b)*)(\w+)\s*(?:\[(.+)\])?", declarator.strip())
                if not m2:
                    structs[name] = f"{name}: cannot read {decl!r}"
                    break
                pointer = "*" in dm.group(2) + m2.group(1)
                if pointer:
                    ctype = ctypes.c_void_p
                elif base in ids:
                    ctype = ctypes.c_uint64
                elif base in C_TYPES:
                    ctype = getattr(ctypes, C_TYPES[base])
                else:
                    structs[name] = f"{name}.{m2.group(2)}: type {base} unknown to this check"
                    break
                if m2.group(3):
                    ctype = ctype * c_eval(m2.group(3), consts)
                fields.append((m2.group(2), ctype))
            if isinstance(structs.get(name), str):
                break
        else:
            structs[name] = fields
    return structs


def layout(fields):
    import ctypes
    cls = type("S", (ctypes.Structure,), {"_fields_": fields})
    return [(f, getattr(cls, f).offset, getattr(cls, f).size) for f, _ in fields], ctypes.sizeof(cls)


def check_structs(consts):
    import ctypes
    errors = []
    header = read_header_structs(consts)
    namespace = dict(vars(ctypes), ctypes=ctypes)
    for c_name, (path, cls_name) in STRUCTS.items():
        if isinstance(header[c_name], str):
            errors.append(f"structs: {header[c_name]}")
            continue
        tree = ast.parse(open(os.path.join(ROOT, path)).read())
        expr = None
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.name == cls_name:
                for item in node.body:
                    if (isinstance(item, ast.Assign) and isinstance(item.targets[0], ast.Name)
                            and item.targets[0].id == "_fields_"):
                        expr = item.value
        if expr is None:
            errors.append(f"structs: {path} has no {cls_name}._fields_ (struct {c_name})")
            continue
        try:
            py_fields = eval(compile(ast.Expression(expr), path, "eval"), dict(namespace))
            py_layout, py_size = layout(py_fields)
        except Exception as e:  # a name that is not ctypes', a malformed list
            errors.append(f"structs: {path}: {cls_name}._fields_ cannot be read here ({e})")
            continue
        h_layout, h_size = layout(header[c_name])
        where = f"{path}:{expr.lineno}"
        if [f for f, _, _ in py_layout] != [f for f, _, _ in h_layout]:
            errors.append(f"structs: {cls_name} at {where} has fields {[f for f, _, _ in py_layout]}, "
                          f"struct {c_name} has {[f for f, _, _ in h_layout]}")
            continue
        for (f, off, size), (_, h_off, h_size_f) in zip(py_layout, h_layout):
            if (off, size) != (h_off, h_size_f):
                errors.append(f"structs: {cls_name}.{f} at {where} is {size} bytes at offset {off}, "
                              f"{c_name}.{f} is {h_size_f} bytes at offset {h_off}")
        if py_size != h_size:
            errors.append(f"structs: sizeof({cls_name}) = {py_size} at {where}, "
                          f"sizeof({c_name}) = {h_size}")
    return errors


def main():
    h_funcs, h_consts = read_headers()
    if len(h_funcs) < 50 or len(h_consts) < 20:
        print(f"abi: read only {len(h_funcs)} functions and {len(h_consts)} constants "
              "from the headers: the parser is broken")
        return 1
    py_funcs, py_consts, problems = read_python()

    def py_hits(c_name):
        return [(n, v, w) for n in python_names(c_name) if n in py_consts
                for v, w in py_consts[n]]

    go_funcs, go_consts = read_go()
    errors = problems
    errors += compare("python", h_funcs, h_consts, py_funcs, py_hits)
    errors += compare("go", h_funcs, h_consts, go_funcs, lambda n: go_lookup(n, go_consts))
    table_errors = check_errors()
    struct_errors = check_structs(h_consts)
    errors += table_errors + struct_errors
    for e in errors:
        print(e)
    print(f"abi: the error table checked in the go core, the go and python bindings, capi and "
          f"docs ({len(table_errors)} problems); {len(STRUCTS)} ctypes structs against the "
          f"headers ({len(struct_errors)} problems)")
    print(f"abi: headers declare {len(h_funcs)} functions and {len(h_consts)} constants; "
          f"python binds {len(py_funcs)}, go binds {len(go_funcs)}; "
          f"{sum(len(v) for v in OMIT.values())} deliberate omissions")
    print(f"abi: {0 if errors else 1} passed, {1 if errors else 0} failed")
    return 1 if errors else 0


# ---- the self-test ----------------------------------------------------------------------

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
    ("bindings/python/libloop/_hotpath.py", "('loop_slot', ctypes.c_ssize_t * 4)",
     "('loop_slot', ctypes.c_ssize_t * 5)", "structs: _SoonLayout.loop_slot at"),
    ("include/libloop/stats.h", "    uint64_t tasks;", "    uint64_t tasks;\n    uint64_t more;",
     "structs: LoopStats at"),
]

# What a self-test copies of the tree.
SELF_TEST_TREE = ("include", "bindings/python/libloop", "bindings/go", "libloop", "capi", "docs/errors.md")


def self_test():
    global ROOT
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
            ROOT, out = tmp, io.StringIO()
            with contextlib.redirect_stdout(out):
                rc = main()
            ROOT = REPO
        if rc == 0 or expect not in out.getvalue():
            print(f"self-test: {path}: {old!r} -> {new!r} was not reported as {expect!r}")
            failed += 1
    print(f"abi self-test: {len(MUTATIONS) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(self_test())
    if sys.argv[1:]:
        ROOT = os.path.abspath(sys.argv[1])
    sys.exit(main())
