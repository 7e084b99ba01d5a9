# SPDX-License-Identifier: MIT
"""Check a wheel of the Python package as an installer would read it.

    python tests/check_wheel.py WHEEL VERSION

Run it with the interpreter the wheel was built for (its platform tag is
compared with that interpreter's). Checks: the file name and tag
(libloop-VERSION-py3-none-<platform>.whl, never `any`: it carries
libloop.so); the files are exactly the package's sources (.py, .pyi,
py.typed under bindings/python/libloop), libloop/libloop.so, the package's
C object libloop/libloop-cpython.so (which exports only llpy_* calls and
needs neither libpython nor libloop.so) and the .dist-info; RECORD lists every file once with its sha256 (urlsafe base64,
no padding) and size, and itself without either; WHEEL and METADATA say
what they must. Prints each problem and exits 1 if there is any.
"""

import base64
import csv
import email.parser
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE_DIR = os.path.join(HERE, "..", "bindings", "python", "libloop")


def sources():
    out = set()
    for dirpath, dirnames, filenames in os.walk(PACKAGE_DIR):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        for name in filenames:
            if name.endswith((".py", ".pyi")) or name == "py.typed":
                rel = os.path.relpath(os.path.join(dirpath, name), os.path.dirname(PACKAGE_DIR))
                out.add(rel.replace(os.sep, "/"))
    return out


OBJECT = "libloop-cpython.so"


def check_object(data):
    """The package's C object: an ELF shared library that needs libc only
    (its CPython and libloop functions come from ctypes) and exports the
    llpy_* calls only (readelf, where it is installed)."""
    if not data.startswith(b"\x7fELF"):
        return [f"libloop/{OBJECT} is not an ELF shared library"]
    if shutil.which("readelf") is None:
        return []
    problems = []
    with tempfile.NamedTemporaryFile(suffix=".so") as f:
        f.write(data)
        f.flush()
        dyn = subprocess.run(["readelf", "-dW", f.name], capture_output=True, text=True).stdout
        syms = subprocess.run(["readelf", "--dyn-syms", "-W", f.name],
                              capture_output=True, text=True).stdout
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dyn)
    if any(not n.startswith("libc.so") for n in needed):
        problems.append(f"libloop/{OBJECT} needs {needed}, want libc only")
    exported = {row.split()[7].split("@")[0] for row in syms.splitlines()
                if len(row.split()) >= 8 and row.split()[3] == "FUNC"
                and row.split()[4] == "GLOBAL" and row.split()[6] != "UND"}
    if not exported or any(not name.startswith("llpy_") for name in exported):
        problems.append(f"libloop/{OBJECT} exports {sorted(exported)}, want llpy_* only")
    return problems


def check(wheel, version):
    problems = []
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    tag = f"py3-none-{platform}"
    want_name = f"libloop-{version}-{tag}.whl"
    if os.path.basename(wheel) != want_name:
        problems.append(f"file name {os.path.basename(wheel)}, want {want_name}")
    dist_info = f"libloop-{version}.dist-info"
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        if len(names) != len(set(names)):
            problems.append("a file is in the archive twice")
        want = sources() | {"libloop/libloop.so", f"libloop/{OBJECT}", f"{dist_info}/METADATA",
                            f"{dist_info}/WHEEL", f"{dist_info}/RECORD"}
        optional = {f"{dist_info}/LICENSE"}
        for name in sorted(want - set(names)):
            problems.append(f"missing {name}")
        for name in sorted(set(names) - want - optional):
            problems.append(f"unexpected {name}")

        try:
            record = zf.read(f"{dist_info}/RECORD").decode()
        except KeyError:
            return problems
        rows = list(csv.reader(io.StringIO(record)))
        listed = [row[0] for row in rows]
        if sorted(listed) != sorted(names):
            problems.append(f"RECORD lists {sorted(set(listed) ^ set(names))} "
                            f"differently from the archive")
        for row in rows:
            if len(row) != 3:
                problems.append(f"RECORD row {row}: not path,hash,size")
                continue
            path, digest, size = row
            if path == f"{dist_info}/RECORD":
                if digest or size:
                    problems.append("RECORD lists a hash or size for itself")
                continue
            if path not in names:
                continue
            data = zf.read(path)
            raw = hashlib.sha256(data).digest()
            good = "sha256=" + base64.urlsafe_b64encode(raw).rstrip(b"=").decode()
            if digest != good:
                problems.append(f"RECORD hash of {path} is {digest}, the file's is {good}")
            if size != str(len(data)):
                problems.append(f"RECORD size of {path} is {size}, the file has {len(data)}")

        if "libloop/libloop.so" in names and not zf.read("libloop/libloop.so").startswith(b"\x7fELF"):
            problems.append("libloop/libloop.so is not an ELF shared library")
        if f"libloop/{OBJECT}" in names:
            problems += check_object(zf.read(f"libloop/{OBJECT}"))

        parse = email.parser.Parser().parsestr
        wheel_meta = parse(zf.read(f"{dist_info}/WHEEL").decode())
        for field, value in (("Wheel-Version", "1.0"), ("Root-Is-Purelib", "false"), ("Tag", tag)):
            if wheel_meta.get_all(field) != [value]:
                problems.append(f"WHEEL {field}: {wheel_meta.get_all(field)}, want {value}")
        meta = parse(zf.read(f"{dist_info}/METADATA").decode())
        for field, value in (("Metadata-Version", "2.1"), ("Name", "libloop"),
                             ("Version", version), ("Requires-Python", ">=3.11"),
                             ("License", "MIT")):
            if meta.get(field) != value:
                problems.append(f"METADATA {field}: {meta.get(field)}, want {value}")
        if not meta.get("Summary"):
            problems.append("METADATA has no Summary")
        classifiers = meta.get_all("Classifier") or []
        for minor in ("3.11", "3.12", "3.13"):
            if f"Programming Language :: Python :: {minor}" not in classifiers:
                problems.append(f"METADATA has no classifier for Python {minor}")
    return problems


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    problems = check(sys.argv[1], sys.argv[2])
    for p in problems:
        print(f"  {p}")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
