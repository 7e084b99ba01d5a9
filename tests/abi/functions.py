# SPDX-License-Identifier: MIT
"""The headers' functions and constants against each binding: this fails
when the Python binding (ctypes, bindings/python/libloop) or the Go binding
(purego, bindings/go) lacks a function or constant of the headers, declares
a function with another number of parameters, gives a constant another
value, or binds an ll_ function the headers do not declare.

What each binding declares, read from the source (nothing is loaded):
  Python   `_fn(lib, "ll_name", restype, [argtypes])` calls and
           `x = lib.ll_name; x.argtypes = [...]`; module-level integer
           constants named LL_NAME or NAME (the C name without LL_)
  Go       the `{"ll_name", &r.Field}` symbol tables with the Raw struct
           fields they bind (`Field func(params) result`); constants named
           NAME, its CamelCase, or whose line comment names LL_NAME
A binding that omits something on purpose says so in OMIT below, with the
reason."""
import ast
import glob
import os
import re

from .headers import split_params

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
        "ll_hook_add": "asyncio has no prepare/check/idle hooks: a Python program runs the loop, it does not embed it",
        "ll_loop_next_timeout": "for hosts that embed the loop in a poll of their own; asyncio runs its loop itself",
        "ll_timer_start": "asyncio's timers are call_later/call_at handles, kept in Python",
        "ll_timer_again": "see ll_timer_start",
        "ll_timer_set_repeat": "see ll_timer_start",
        "LL_HOOK_PREPARE": "see ll_hook_add",
        "LL_HOOK_CHECK": "see ll_hook_add",
        "LL_HOOK_IDLE": "see ll_hook_add",
        "ll_loop_run": "asyncio runs its loop with run_forever/run_until_complete: no run-until-idle mode, "
                       "and it has no references (uv_ref) for one to count",
        "LL_RUN_DEFAULT": "see ll_loop_run",
        "ll_ref": "see ll_loop_run",
        "ll_unref": "see ll_loop_run",
        "ll_has_ref": "see ll_loop_run",
        "ll_loop_walk": "a Python program finds its handles, transports and servers as Python objects",
        "LL_KIND_HANDLE": "see ll_loop_walk",
        "LL_KIND_TIMER": "see ll_loop_walk",
        "LL_KIND_TRANSPORT": "see ll_loop_walk",
        "LL_KIND_SERVER": "see ll_loop_walk",
        "LL_KIND_PROCESS": "see ll_loop_walk",
        "LL_KIND_SIGNAL": "see ll_loop_walk",
        "LL_KIND_HOOK": "see ll_loop_walk",
        "LL_KIND_FS_WATCH": "see ll_loop_walk",
        "ll_add_signal_handler_ex": "the handler's id serves ll_ref and ll_loop_walk, which are not bound",
        "ll_udp_sendmany": "asyncio's DatagramTransport has sendto only; each one is one ll_transport_sendto",
        "ll_tcp_connect_ex": "asyncio's create_connection does local_addr, happy eyeballs and interleave "
                             "in Python, on the loop's sockets",
        "ll_getnameinfo": "loop.getnameinfo is asyncio's: socket.getnameinfo in the executor",
        "ll_loop_set_fs_workers": "the file pool is not bound in Python (see ll_fs_)",
        "LL_JOIN": "the ll_udp_set_*membership op, not bound in Python (see OMIT_PREFIXES)",
        "LL_LEAVE": "the ll_udp_set_*membership op, not bound in Python (see OMIT_PREFIXES)",
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
        "ll_tcp_listen_ex": "as ll_tcp_listen (asyncio resolves the names in its executor)",
        "ll_udp_open_ex": "as ll_udp_open (asyncio resolves the names in its executor)",
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
        # plain transports bound above, as asyncio does on any loop; a
        # server may opt in to the library's TLS with libloop.TLSConfig
        # (tls_config.py, tls_transport.py), which binds the server side.
        "ll_tls_config_set_cert_pem": "TLSConfig.load_cert_chain loads files (ll_tls_config_load_cert_file)",
        "ll_tls_config_use_system_ca": "TLSConfig serves only: the CAs it trusts check client certificates",
        "ll_tls_config_set_verify": "client side: create_connection takes an ssl.SSLContext (sslproto)",
        "ll_tls_config_set_server_name": "as ll_tls_config_set_verify",
        "ll_tls_config_set_session_cache": "servers keep the default (tickets issued)",
        "ll_tls_connect": "as ll_tls_config_set_verify",
        "ll_tls_listen": "asyncio binds the sockets; TLSConfig servers use ll_tls_server_open",
        "ll_transport_start_tls": "start_tls takes an ssl.SSLContext (sslproto)",
        # Version: the loader compares ll_version() with ABI_MAJOR/ABI_MINOR.
        "LL_VERSION_PATCH": "a patch release never changes the ABI",
        "LL_VERSION": "the library's ll_version() is read at load time instead",
        # File-system watchers: asyncio has no such API (watchfiles and
        # watchdog bring their own threads).
        "ll_fs_watch": "asyncio has no file-system watcher; a Python binding would add one",
        "ll_fs_poll": "see ll_fs_watch",
        "LL_FS_RENAME": "see ll_fs_watch",
        "LL_FS_CHANGE": "see ll_fs_watch",
        "LL_FS_RECURSIVE": "see ll_fs_watch",
    },
    "go": {
        "LL_VERSION": "HeaderVersion is computed from the three parts, as the header does",
    },
}

# Deliberate omissions of every name with a prefix: binding -> {prefix:
# reason} (a name both bound and so omitted is not reported).
OMIT_PREFIXES = {
    "python": {
        "ll_udp_set_": "asyncio code sets UDP options on transport.get_extra_info('socket') with setsockopt, "
                       "as on asyncio's own loop",
        "ll_tty_": "asyncio has no terminal transport: Python programs use tty/termios and connect_read_pipe",
        "LL_TTY_": "the ll_tty_set_mode modes, not bound in Python (see ll_tty_)",
        "ll_fs_": "asyncio has no file calls: Python programs read files in run_in_executor (or aiofiles), "
                  "and a ctypes buffer handed to a worker would need the GIL's owner to keep it alive",
        "LL_FS_": "the ll_fs_* calls' constants, not bound in Python (see ll_fs_)",
    },
    "go": {},
}

# Binding constants whose names follow no rule: binding -> {C name: name}.
ALIASES = {
    "python": {"LL_VERSION_MAJOR": "ABI_MAJOR", "LL_VERSION_MINOR": "ABI_MINOR"},
    "go": {},
}


# ---- the Python binding ---------------------------------------------------------------

def read_python(root):
    funcs, consts, problems = {}, {}, []
    for path in sorted(glob.glob(os.path.join(root, "bindings", "python", "libloop", "*.py"))):
        rel = os.path.relpath(path, root)
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


def read_go(root):
    fields, bound, consts = {}, {}, {}
    for path in sorted(glob.glob(os.path.join(root, "bindings", "go", "*.go"))):
        if path.endswith("_test.go"):
            continue
        rel = os.path.relpath(path, root)
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


def check_functions(root, h_funcs, h_consts):
    """Both bindings against the headers: (problems, how many functions
    python binds, how many go binds)."""
    py_funcs, py_consts, problems = read_python(root)

    def py_hits(c_name):
        return [(n, v, w) for n in python_names(c_name) if n in py_consts
                for v, w in py_consts[n]]

    go_funcs, go_consts = read_go(root)
    errors = problems
    errors += compare("python", h_funcs, h_consts, py_funcs, py_hits)
    errors += compare("go", h_funcs, h_consts, go_funcs, lambda n: go_lookup(n, go_consts))
    return errors, len(py_funcs), len(go_funcs)
