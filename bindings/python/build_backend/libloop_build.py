# SPDX-License-Identifier: MIT
"""The build backend of the libloop Python package (PEP 517, PEP 660).

It uses the standard library only, so `pip install ./bindings/python` needs
nothing from PyPI (pyproject.toml: `requires = []`, the backend found through
`backend-path`), with or without build isolation.

The wheel holds the package `libloop` (its .py and .pyi files and py.typed),
`libloop/libloop.so`, which libloop/_lib.py loads first after
$LIBLOOP_LIBRARY, and `libloop/libloop-cpython.so`, the package's own C
object (the hot path's C side, cpython/*.c; libloop/_hotpath.py loads it).
That library is $LIBLOOP_LIBRARY when it names an existing file, else
<repo>/build/libloop.so made by `make -C <repo> lib` (Go and a C compiler).
The object is compiled here from cpython/*.c with $CC (else cc) and the
public headers (<repo>/include, or an sdist's include/), as the Makefile
compiles it (PYOBJ_FLAGS there): no Python headers, no link to libpython or
libloop.so. Because the wheel carries native code it is tagged for the
platform, py3-none-<platform>: neither the Python code nor the object needs
a particular Python ABI (both reach C through ctypes).

The version is the C library's, LL_VERSION_MAJOR/MINOR/PATCH in
include/libloop.h (an sdist has no header: its PKG-INFO says the version).
The rest of the metadata is pyproject.toml's [project] table; a key this
backend does not handle is an error, not something silently left out.

An editable install (`pip install -e`) puts a finder in site-packages that
imports `libloop` from this source tree, and writes nothing into the tree:
the package then loads $LIBLOOP_LIBRARY or <repo>/build/libloop.so (the
order of _lib.py) and <repo>/build/libloop-cpython.so, so a later `make lib`
is used without reinstalling.
"""

import base64
import csv
import gzip
import hashlib
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import time
import zipfile

try:
    import tomllib
except ModuleNotFoundError:  # before 3.11, which libloop does not support
    raise ImportError(f"libloop needs Python 3.11 or later, not {sys.version.split()[0]}") from None

__all__ = [
    "build_wheel", "build_sdist", "build_editable",
    "get_requires_for_build_wheel", "get_requires_for_build_sdist",
    "get_requires_for_build_editable",
    "prepare_metadata_for_build_wheel", "prepare_metadata_for_build_editable",
]

# The source tree (bindings/python, or an unpacked sdist) and, when it is
# the one in the repository, the repository holding capi/ and the header.
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.normpath(os.path.join(ROOT, "..", ".."))
PACKAGE = "libloop"
LIBRARY = "libloop.so"
OBJECT = "libloop-cpython.so"   # the package's C object (libloop/_hotpath.py)
# The Makefile's PYOBJ_FLAGS: position-independent, only the llpy_* calls
# exported, and -z defs: nothing left to find in libpython or libloop.so.
_OBJECT_FLAGS = ["-O2", "-g", "-Wall", "-Wextra", "-fPIC", "-fvisibility=hidden", "-shared",
                 "-Wl,-z,defs", f"-Wl,-soname,{OBJECT}"]
GENERATOR = "libloop_build"

# [project] keys this backend writes into the metadata.
_PROJECT_KEYS = {"name", "dynamic", "description", "readme", "license",
                 "requires-python", "classifiers"}


def _fail(message):
    """Stop the build with a message for the user (no traceback)."""
    raise SystemExit(f"libloop build: {message}")


def _in_repo():
    return (os.path.isdir(os.path.join(REPO, "capi"))
            and os.path.isfile(os.path.join(REPO, "go.mod"))
            and os.path.isfile(os.path.join(REPO, "include", "libloop.h")))


# ---- metadata -------------------------------------------------------------------

def _project():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        project = tomllib.load(f).get("project", {})
    unknown = sorted(set(project) - _PROJECT_KEYS)
    if unknown:
        _fail(f"pyproject.toml [project] has {', '.join(unknown)}, which "
              f"build_backend/libloop_build.py does not handle: teach it first")
    if project.get("dynamic") != ["version"]:
        _fail('pyproject.toml [project] must say dynamic = ["version"]: the '
              'version is the C library\'s (include/libloop.h)')
    return project


def _version():
    pkg_info = os.path.join(ROOT, "PKG-INFO")
    if os.path.isfile(pkg_info):  # an sdist
        with open(pkg_info, encoding="utf-8") as f:
            for line in f:
                if line.startswith("Version:"):
                    return line.split(":", 1)[1].strip()
        _fail(f"{pkg_info} has no Version")
    header = os.path.join(REPO, "include", "libloop.h")
    try:
        with open(header, encoding="utf-8") as f:
            text = f.read()
    except OSError as exc:
        _fail(f"the version is LL_VERSION_* of include/libloop.h, which is not "
              f"at {header} ({exc.strerror}): build from the libloop repository")
    parts = []
    for part in ("MAJOR", "MINOR", "PATCH"):
        m = re.search(rf"^#define LL_VERSION_{part} ([0-9]+)\s*$", text, re.M)
        if m is None:
            _fail(f"{header} has no '#define LL_VERSION_{part} <number>'")
        parts.append(str(int(m.group(1))))
    return ".".join(parts)


def _readme(project):
    readme = project.get("readme")
    if readme is None:
        return None, None
    if isinstance(readme, str):
        readme = {"file": readme}
    path = readme["file"]
    content_type = readme.get("content-type") or (
        "text/markdown" if path.endswith(".md") else "text/plain")
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return f.read(), content_type


def _metadata():
    """METADATA of the wheel, PKG-INFO of the sdist (Metadata-Version 2.1)."""
    project = _project()
    fields = [("Metadata-Version", "2.1"),
              ("Name", project["name"]),
              ("Version", _version())]
    if "description" in project:
        fields.append(("Summary", project["description"]))
    license_ = project.get("license")
    if license_:
        fields.append(("License", license_ if isinstance(license_, str) else license_["text"]))
    fields += [("Classifier", c) for c in project.get("classifiers", [])]
    if "requires-python" in project:
        fields.append(("Requires-Python", project["requires-python"]))
    body, content_type = _readme(project)
    if body is not None:
        fields.append(("Description-Content-Type", content_type))
    text = "".join(f"{k}: {v}\n" for k, v in fields)
    if body is not None:
        text += "\n" + body
    return text


def _name_version():
    return _project()["name"], _version()


def _tag():
    """py3-none-<platform>: any Python 3 (ctypes), this platform (libloop.so)."""
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"py3-none-{platform}"


def _license_path():
    for path in (os.path.join(ROOT, "LICENSE"), os.path.join(REPO, "LICENSE")):
        if os.path.isfile(path):
            return path
    return None


def _dist_info_files(dist_info, build=None):
    """(arcname, bytes, mode) of the .dist-info directory but RECORD."""
    wheel = (f"Wheel-Version: 1.0\nGenerator: {GENERATOR}\n"
             f"Root-Is-Purelib: false\nTag: {_tag()}\n")
    if build:
        wheel += f"Build: {build}\n"
    files = [(f"{dist_info}/METADATA", _metadata().encode(), 0o644),
             (f"{dist_info}/WHEEL", wheel.encode(), 0o644)]
    license_path = _license_path()
    if license_path:
        with open(license_path, "rb") as f:
            files.append((f"{dist_info}/LICENSE", f.read(), 0o644))
    return files


def _prepare_metadata(metadata_directory, build=None):
    name, version = _name_version()
    dist_info = f"{name}-{version}.dist-info"
    for arcname, data, _ in _dist_info_files(dist_info, build):
        path = os.path.join(metadata_directory, *arcname.split("/"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
    return dist_info


# ---- what goes in -----------------------------------------------------------------

def _package_files():
    """(arcname, path) of the package's sources: .py, .pyi, py.typed."""
    out = []
    top = os.path.join(ROOT, PACKAGE)
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith((".py", ".pyi")) or name == "py.typed":
                path = os.path.join(dirpath, name)
                out.append((os.path.relpath(path, ROOT).replace(os.sep, "/"), path))
    if not out:
        _fail(f"no package sources under {top}")
    return out


def _library():
    """The libloop.so to put in the wheel: $LIBLOOP_LIBRARY, or `make lib`."""
    env = os.environ.get("LIBLOOP_LIBRARY")
    if env and os.path.isfile(env):
        with open(env, "rb") as f:
            if sys.platform.startswith("linux") and f.read(4) != b"\x7fELF":
                _fail(f"LIBLOOP_LIBRARY={env} is not a shared library (no ELF header)")
        return env
    if env:
        print(f"libloop build: LIBLOOP_LIBRARY={env} is not a file; building with make",
              file=sys.stderr)
    _make_lib()
    return os.path.join(REPO, "build", LIBRARY)


def _object_sources():
    """cpython/*.c and *.h: the object's sources (in the tree and the sdist)."""
    top = os.path.join(ROOT, "cpython")
    try:
        names = sorted(os.listdir(top))
    except OSError:
        _fail(f"no {top}: the C sources of {OBJECT} are missing")
    return [os.path.join(top, n) for n in names if n.endswith((".c", ".h"))]


def _include_dir():
    """The public headers the object is compiled with: the repository's,
    or those an sdist carries."""
    for path in (os.path.join(ROOT, "include"), os.path.join(REPO, "include")):
        if os.path.isfile(os.path.join(path, "libloop.h")):
            return path
    _fail("libloop.h is neither in include/ of this source tree nor of the repository")


def _compile_object(directory):
    """Compile the object into directory; return its path."""
    cc = shlex.split(os.environ.get("CC") or "cc")
    if shutil.which(cc[0]) is None:
        _fail(f"building {OBJECT} (the hot path's C side) needs a C compiler: "
              f"{cc[0]} is not on PATH (set CC)")
    out = os.path.join(directory, OBJECT)
    sources = [p for p in _object_sources() if p.endswith(".c")]
    cmd = cc + _OBJECT_FLAGS + ["-I" + _include_dir()] + sources + ["-o", out]
    done = subprocess.run(cmd)
    if done.returncode != 0:
        _fail(f"compiling {OBJECT} failed (exit {done.returncode}): {' '.join(cmd)}")
    return out


def _make_lib():
    if not _in_repo():
        _fail(f"{ROOT} is not inside the libloop repository (no capi/ and "
              f"go.mod at {REPO}; an sdist?), so libloop.so cannot be built "
              f"here: set LIBLOOP_LIBRARY to a built libloop.so (`make lib` "
              f"in the repository makes build/libloop.so)")
    for tool in ("make", "go"):
        if shutil.which(tool) is None:
            _fail(f"building libloop.so needs {tool} on PATH (and Go, gcc: "
                  f"https://go.dev), or LIBLOOP_LIBRARY naming a built libloop.so")
    env = dict(os.environ, CGO_ENABLED="1")
    done = subprocess.run(["make", "-C", REPO, "lib"], env=env)
    if done.returncode != 0:
        _fail(f"`make -C {REPO} lib` failed (exit {done.returncode}); its output is above")


# ---- archives -----------------------------------------------------------------

def _epoch():
    """The archives' timestamp: $SOURCE_DATE_EPOCH, else 1980-01-01 (zip's first)."""
    try:
        return max(int(os.environ["SOURCE_DATE_EPOCH"]), 315532800)
    except (KeyError, ValueError):
        return 315532800


def _digest(data):
    raw = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _write_wheel(wheel_directory, files, build=None):
    """Write the wheel of files ((arcname, bytes, mode), the package's), its
    .dist-info last with RECORD; return its file name. build is the wheel's
    build tag, if any."""
    name, version = _name_version()
    dist_info = f"{name}-{version}.dist-info"
    files = sorted(files) + _dist_info_files(dist_info, build)
    record_name = f"{dist_info}/RECORD"
    record = io.StringIO()
    writer = csv.writer(record, lineterminator="\n")
    for arcname, data, _ in files:
        writer.writerow([arcname, _digest(data), len(data)])
    writer.writerow([record_name, "", ""])
    files.append((record_name, record.getvalue().encode(), 0o644))

    wheel_name = f"{name}-{version}-{build + '-' if build else ''}{_tag()}.whl"
    final = os.path.join(wheel_directory, wheel_name)
    partial = final + ".part"
    stamp = time.gmtime(_epoch())[:6]
    with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as whl:
        for arcname, data, mode in files:
            info = zipfile.ZipInfo(arcname, date_time=stamp)
            info.external_attr = (0o100000 | mode) << 16  # a regular file
            info.compress_type = zipfile.ZIP_DEFLATED
            whl.writestr(info, data)
    os.replace(partial, final)
    return wheel_name


def _read(path):
    with open(path, "rb") as f:
        return f.read()


# ---- PEP 517 ------------------------------------------------------------------

def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    return _prepare_metadata(metadata_directory)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    files = [(arcname, _read(path), 0o644) for arcname, path in _package_files()]
    files.append((f"{PACKAGE}/{LIBRARY}", _read(_library()), 0o755))
    with tempfile.TemporaryDirectory() as tmp:
        files.append((f"{PACKAGE}/{OBJECT}", _read(_compile_object(tmp)), 0o755))
    return _write_wheel(wheel_directory, files)


def build_sdist(sdist_directory, config_settings=None):
    """name-version.tar.gz: pyproject.toml, README.md, LICENSE, this backend,
    the package, the object's C sources (cpython/) with the public headers
    they include (include/), and PKG-INFO. Installing it compiles the
    object, and builds libloop.so, which needs the repository (or
    LIBLOOP_LIBRARY): the Go sources are not in it."""
    name, version = _name_version()
    top = f"{name}-{version}"
    members = [("pyproject.toml", _read(os.path.join(ROOT, "pyproject.toml"))),
               ("PKG-INFO", _metadata().encode())]
    readme = _project().get("readme")
    if readme:
        path = readme if isinstance(readme, str) else readme["file"]
        members.append((path, _read(os.path.join(ROOT, path))))
    license_path = _license_path()
    if license_path:
        members.append(("LICENSE", _read(license_path)))
    here = os.path.dirname(os.path.abspath(__file__))
    for entry in sorted(os.listdir(here)):
        if entry.endswith(".py"):
            arcname = os.path.relpath(os.path.join(here, entry), ROOT).replace(os.sep, "/")
            members.append((arcname, _read(os.path.join(here, entry))))
    members += [(arcname, _read(path)) for arcname, path in _package_files()]
    for path in _object_sources():
        members.append((f"cpython/{os.path.basename(path)}", _read(path)))
    include = _include_dir()
    for dirpath, dirnames, filenames in os.walk(include):
        dirnames.sort()
        for name in sorted(filenames):
            if name.endswith(".h"):
                path = os.path.join(dirpath, name)
                arcname = "include/" + os.path.relpath(path, include).replace(os.sep, "/")
                members.append((arcname, _read(path)))

    sdist_name = f"{top}.tar.gz"
    final = os.path.join(sdist_directory, sdist_name)
    partial = final + ".part"
    epoch = _epoch()
    with open(partial, "wb") as raw, \
            gzip.GzipFile(fileobj=raw, mode="wb", mtime=epoch) as gz, \
            tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for arcname, data in sorted(members):
            info = tarfile.TarInfo(f"{top}/{arcname}")
            info.size = len(data)
            info.mtime = epoch
            info.mode = 0o644
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            tar.addfile(info, io.BytesIO(data))
    os.replace(partial, final)
    return sdist_name


# ---- PEP 660 ------------------------------------------------------------------

_FINDER_MODULE = "_libloop_editable"
# The editable wheel's build tag, so that its name differs from the real
# wheel's (setuptools' choice too).
_EDITABLE_BUILD = "0.editable"

# The module an editable install puts in site-packages, and its .pth imports:
# a finder for the one package `libloop` (not a path entry, which would
# also make bindings/python's tests/, tools/ and build_backend/ importable).
_FINDER = '''\
# SPDX-License-Identifier: MIT
"""`pip install -e` of libloop: `import libloop` loads {source}
(written by bindings/python/build_backend/libloop_build.py)."""

import importlib.util
import os
import sys

SOURCE = {source!r}


class LibloopEditableFinder:
    """Finds the package libloop in its source tree; its submodules then
    come from the package's __path__."""

    @staticmethod
    def find_spec(fullname, path=None, target=None):
        if fullname != "libloop":
            return None
        init = os.path.join(SOURCE, "__init__.py")
        if not os.path.isfile(init):  # the tree moved: ModuleNotFoundError
            return None
        return importlib.util.spec_from_file_location(
            fullname, init, submodule_search_locations=[SOURCE])


if not any(getattr(f, "__name__", "") == "LibloopEditableFinder" for f in sys.meta_path):
    sys.meta_path.append(LibloopEditableFinder)
'''


def get_requires_for_build_editable(config_settings=None):
    return []


def prepare_metadata_for_build_editable(metadata_directory, config_settings=None):
    return _prepare_metadata(metadata_directory, _EDITABLE_BUILD)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    env = os.environ.get("LIBLOOP_LIBRARY")
    if not (env and os.path.isfile(env)):
        _make_lib()  # <repo>/build/libloop.so and libloop-cpython.so, on the search paths
    elif _in_repo():
        os.makedirs(os.path.join(REPO, "build"), exist_ok=True)
        _compile_object(os.path.join(REPO, "build"))  # where _hotpath.py looks after the package
    for name in (LIBRARY, OBJECT):
        stray = os.path.join(ROOT, PACKAGE, name)
        if os.path.exists(stray):
            print(f"libloop build: {stray} exists and is loaded before "
                  f"<repo>/build/{name}; remove it unless you mean it", file=sys.stderr)
    source = os.path.join(ROOT, PACKAGE)
    files = [(f"{_FINDER_MODULE}.py", _FINDER.format(source=source).encode(), 0o644),
             (f"{_FINDER_MODULE}.pth", f"import {_FINDER_MODULE}\n".encode(), 0o644)]
    return _write_wheel(wheel_directory, files, _EDITABLE_BUILD)
