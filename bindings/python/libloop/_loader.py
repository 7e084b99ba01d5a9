# SPDX-License-Identifier: MIT
"""Finding, checking and opening libloop.so: at import the first two, at
the first loop the third.

Loading libloop.so starts its Go runtime (threads, signal handlers), and a
Go runtime does not survive fork(): in the child only the forking thread
is left, and a call into the library can hang for ever. Programs import
their libraries and then fork workers (gunicorn or uvicorn with --preload,
Celery's prefork pool, multiprocessing's 'fork'), so `import libloop` only
finds the library and reads its version from the file (the ELF section
.libloop_abi, capi/abinote.c), keeping the ImportError for a missing or
mismatched library; the library is opened when the first loop is made, or
at the first call that needs it (load()).

The C functions are declared at import (declare(): _lib.py, _netlib.py) as
_Unbound placeholders. load() binds each and puts the ctypes function in
place of its placeholder in every module of this package, so a call costs
what a ctypes call costs; a placeholder kept elsewhere (a default argument,
another package) loads the library on its first call and forwards.

After a fork() of a process that has opened the library, the child's copy
is dead: there every bound function is replaced by one that raises
RuntimeError (forked_error()), and load() raises it too, so nothing in the
child enters the dead runtime. A child forked before the first loop opens
its own copy and works.
"""

import ctypes
import os
import sys
import threading
from collections.abc import Callable, Iterator
from typing import IO, Any, Literal, Optional

# The C ABI this package was written for: a library of another major
# version, or an older minor one, lacks what it calls.
ABI_MAJOR, ABI_MINOR = 0, 1

_PACKAGE = __name__.rpartition('.')[0]
_ABI_SECTION = b'.libloop_abi'
_ABI_PREFIX = b'libloop ABI '


def _candidates() -> Iterator[str]:
    # A generator: ctypes.util (which imports tempfile, shutil, bz2, lzma,
    # random: ~0.8 MiB of RSS) is imported only when no earlier path exists.
    here = os.path.dirname(os.path.abspath(__file__))
    env = os.environ.get("LIBLOOP_LIBRARY")
    if env:
        yield env
    yield os.path.join(here, "libloop.so")
    yield os.path.normpath(
        os.path.join(here, "..", "..", "..", "build", "libloop.so"))
    import ctypes.util
    found = ctypes.util.find_library("loop")  # an installed library (make install)
    if found:
        yield found


_Header = tuple[bool, Literal['little', 'big'], int, int, int, int, int]


def _elf_header(f: IO[bytes]) -> Optional[_Header]:
    """(64-bit?, little-endian?, machine, section-header fields) of an ELF
    file, or None for a file that is not ELF."""
    ident = f.read(64)
    if len(ident) < 64 or ident[:4] != b'\x7fELF':
        return None
    is64, little = ident[4] == 2, ident[5] == 1
    end: Literal['little', 'big'] = 'little' if little else 'big'
    machine = int.from_bytes(ident[18:20], end)
    if is64:
        shoff = int.from_bytes(ident[40:48], end)
        shentsize, shnum, shstrndx = (int.from_bytes(ident[i:i + 2], end) for i in (58, 60, 62))
    else:
        shoff = int.from_bytes(ident[32:36], end)
        shentsize, shnum, shstrndx = (int.from_bytes(ident[i:i + 2], end) for i in (46, 48, 50))
    return is64, end, machine, shoff, shentsize, shnum, shstrndx


def _elf_section(f: IO[bytes], header: _Header, name: bytes) -> Optional[bytes]:
    """The bytes of the named section of an ELF file, or None."""
    is64, end, _machine, shoff, shentsize, shnum, shstrndx = header
    if not shoff or not shnum or shstrndx >= shnum:
        return None

    def section(i: int) -> tuple[int, int, int]:
        f.seek(shoff + i * shentsize)
        raw = f.read(shentsize)
        if is64:   # sh_name, sh_offset, sh_size
            return (int.from_bytes(raw[0:4], end), int.from_bytes(raw[24:32], end),
                    int.from_bytes(raw[32:40], end))
        return (int.from_bytes(raw[0:4], end), int.from_bytes(raw[16:20], end),
                int.from_bytes(raw[20:24], end))

    _, stroff, strsize = section(shstrndx)
    f.seek(stroff)
    names = f.read(min(strsize, 1 << 20))
    for i in range(shnum):
        name_at, off, size = section(i)
        if names[name_at:name_at + len(name) + 1] == name + b'\0':
            f.seek(off)
            return f.read(min(size, 256))
    return None


def _own_machine() -> Optional[int]:
    """The ELF machine of this interpreter (what a library must be built for)."""
    try:
        with open(sys.executable, 'rb') as f:
            header = _elf_header(f)
    except OSError:
        return None
    return None if header is None else header[2]


def _read_version(path: str) -> Optional[tuple[int, int, int]]:
    """The library's (major, minor, patch) read from the file; None when it
    cannot be read without loading (not an ELF file: macOS, BSD's a.out).
    Raises ImportError for a library this package cannot use."""
    with open(path, 'rb') as f:
        header = _elf_header(f)
        if header is None:
            return None
        if header[0] != (ctypes.sizeof(ctypes.c_void_p) == 8):
            raise ImportError(f"libloop: {path} is a {64 if header[0] else 32}-bit "
                              f"library, this Python is not")
        machine = _own_machine()
        if machine is not None and header[2] != machine:
            raise ImportError(f"libloop: {path} is built for another processor "
                              f"(ELF machine {header[2]}, this Python's is {machine})")
        note = _elf_section(f, header, _ABI_SECTION)
    if note is None or not note.startswith(_ABI_PREFIX):
        raise ImportError(f"libloop: {path} has no version note (.libloop_abi): it is "
                          f"older than this package; rebuild it with `make lib`")
    try:
        text = note[len(_ABI_PREFIX):].split(b'\0', 1)[0].decode()
        major, minor, patch = (int(x) for x in text.split('.'))
    except ValueError:
        raise ImportError(f"libloop: {path} has a malformed version note {note!r}") from None
    _check_version(path, major, minor, patch)
    return major, minor, patch


def _check_version(path: str, major: int, minor: int, patch: int) -> None:
    if major != ABI_MAJOR or minor < ABI_MINOR:
        raise ImportError(
            f"libloop: {path} is version {major}.{minor}.{patch}, this package "
            f"needs {ABI_MAJOR}.{ABI_MINOR} or a later {ABI_MAJOR}.x; rebuild it "
            f"with `make lib` or point LIBLOOP_LIBRARY at a matching one")


def _find() -> tuple[str, Optional[tuple[int, int, int]]]:
    """The library this process will load, and its version if known."""
    tried = []
    for path in _candidates():
        if os.sep not in path:      # a name for the dynamic linker (find_library)
            return path, None
        if not os.path.exists(path):
            tried.append(f"{path} (not found)")
            continue
        try:
            return path, _read_version(path)
        except OSError as exc:
            tried.append(f"{path} ({exc})")
    # ImportError, so that `try: import libloop / except ImportError:`
    # can fall back to asyncio's own loop.
    raise ImportError(
        "libloop: cannot find libloop.so; tried: " + "; ".join(tried)
        + ". Build it with `make lib` (or `make install`), or set LIBLOOP_LIBRARY.")


PATH, VERSION = _find()


# ---- loading ------------------------------------------------------------------

class _Kind:
    """Which handle a function is called through (see _lib.py): CDLL
    releases the GIL during the call, PyDLL keeps it."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f'<libloop {self.name} handle>'


CDLL = _Kind('CDLL')
PYDLL = _Kind('PyDLL')

_lock = threading.RLock()
_handles: Optional[dict[_Kind, ctypes.CDLL]] = None  # {CDLL: ctypes.CDLL, PYDLL: ctypes.PyDLL} once loaded
_loaded_pid: Optional[int] = None  # the process that opened the library
_declared: list['_Unbound'] = []  # every _Unbound, in declaration order
_hooks: list[Callable[[], None]] = []  # functions run once the library is open


class _Unbound:
    """A C function declared before the library is opened."""

    __slots__ = ('kind', 'name', 'restype', 'argtypes', 'bound', '__weakref__')

    def __init__(self, kind: _Kind, name: str, restype: Any, argtypes: list[Any]) -> None:
        self.kind, self.name = kind, name
        self.restype, self.argtypes = restype, argtypes
        self.bound: Any = None

    def __repr__(self) -> str:
        state = 'bound' if self.bound is not None else 'not loaded yet'
        return f'<libloop C function {self.name} ({state})>'

    def __call__(self, *args: Any) -> Any:
        if self.bound is None:
            load()
        fn: Any = self.bound   # (load() bound it: the narrowing above is stale)
        return fn(*args)


def declare(kind: _Kind, name: str, restype: Any, argtypes: list[Any]) -> Any:
    """Declare one C function: its prototype stands beside its name. Bound
    when the library is opened; until then an _Unbound placeholder."""
    fn = _Unbound(kind, name, restype, argtypes)
    with _lock:
        if _handles is not None:
            _bind(fn)   # AttributeError for a function the library lacks
            _declared.append(fn)
            return fn.bound
        _declared.append(fn)
    return fn


def _bind(fn: _Unbound) -> None:
    assert _handles is not None
    f = getattr(_handles[fn.kind], fn.name)
    f.restype = fn.restype
    f.argtypes = fn.argtypes
    fn.bound = f


def address(name: str) -> int:
    """The address of the library's function name, once it is open (for C
    code of this package that calls it: _hotpath.py); AttributeError for a
    function the library lacks."""
    assert _handles is not None
    addr = ctypes.cast(getattr(_handles[PYDLL], name), ctypes.c_void_p).value
    assert addr is not None
    return addr


def on_load(hook: Callable[[], None]) -> None:
    """Run hook() once the library is open (now, if it already is)."""
    with _lock:
        if _handles is None:
            _hooks.append(hook)
            return
    hook()


def loaded() -> bool:
    """True once this process has opened the library."""
    return _handles is not None


def load() -> None:
    """Open the library (once per process) and bind every declared
    function; RuntimeError in a fork() child of a process that had opened
    it."""
    global _handles, _loaded_pid
    if _handles is not None:
        if _loaded_pid != os.getpid():
            raise forked_error()
        return
    with _lock:
        if _handles is not None:
            return
        try:
            cdll = ctypes.CDLL(PATH)
        except OSError as exc:
            raise ImportError(f"libloop: cannot load {PATH}: {exc}") from None
        ver = cdll.ll_version
        ver.restype, ver.argtypes = ctypes.c_int, []
        v = ver()
        _check_version(PATH, v // 10000, v // 100 % 100, v % 100)
        _handles = {CDLL: cdll, PYDLL: ctypes.PyDLL(PATH)}
        _loaded_pid = os.getpid()
        for fn in _declared:
            _bind(fn)
        _rebind(lambda v: v.bound if type(v) is _Unbound else None)
        hooks, _hooks[:] = list(_hooks), []
    for hook in hooks:
        hook()


def _rebind(replacement: Callable[[Any], Any]) -> None:
    """Replace, in every module of this package, each global for which
    replacement(value) gives something other than None."""
    for name, module in list(sys.modules.items()):
        if module is None or not (name == _PACKAGE or name.startswith(_PACKAGE + '.')):
            continue
        namespace = vars(module)
        for key, value in list(namespace.items()):
            new = replacement(value)
            if new is not None:
                namespace[key] = new


def replace_in_package(old: Any, new: Any) -> None:
    """Every global of this package's modules that is old becomes new: for
    values chosen when the library opens that modules copied at import."""
    _rebind(lambda v: new if v is old else None)


# ---- fork ------------------------------------------------------------------------

def forked_error() -> RuntimeError:
    """The error a fork() child gets for using an inherited libloop."""
    return RuntimeError(
        f"libloop: this process (pid {os.getpid()}) is a fork() child of pid "
        f"{_loaded_pid}, which had loaded libloop; the library's Go runtime does "
        f"not survive fork(), so this process cannot run libloop loops. Fork "
        f"before the first libloop loop is made (importing libloop is fine), "
        f"use multiprocessing's 'spawn' or 'forkserver', or exec.")


def forked() -> bool:
    """True in a fork() child of a process that had opened the library."""
    return _handles is not None and _loaded_pid != os.getpid()


class _Forked:
    """What a bound C function becomes in a fork() child: it raises."""

    __slots__ = ('name',)

    def __init__(self, name: str) -> None:
        self.name = name

    def __call__(self, *args: Any) -> Any:
        raise forked_error()


def _after_fork_in_child() -> None:
    if _handles is None:
        return
    # Every way into the dead runtime now raises: the module globals that
    # hold bound functions, and the placeholders' forwarding.
    alive = [fn.bound for fn in _declared if fn.bound is not None]  # ids stay unique
    dead = {id(fn.bound): _Forked(fn.name) for fn in _declared if fn.bound is not None}
    for fn in _declared:
        if fn.bound is not None:
            fn.bound = dead[id(fn.bound)]
    _rebind(lambda v: dead.get(id(v)))
    del alive


if hasattr(os, 'register_at_fork'):
    os.register_at_fork(after_in_child=_after_fork_in_child)
