# SPDX-License-Identifier: MIT
"""The structs: the ctypes Structures of STRUCTS against the headers'
structs: field names, order, offsets and sizes (and so array lengths)."""
import ast
import os
import re

from .headers import c_eval, header_paths, read_constants, split_params, strip_c_comments

# Headers that are not libloop's API but hold a struct the Python binding
# passes by ctypes: its own C object's (libloop-cpython.so), whose names
# are LLPY_*.
PRIVATE_HEADERS = {"bindings/python/cpython/llpy.h": "LLPY_"}

# C struct -> (Python file, Structure class) for the structs the Python
# binding passes to the library or to its own C object.
STRUCTS = {
    "ll_event": ("bindings/python/libloop/_netlib.py", "Event"),
    "ll_loop_stats": ("bindings/python/libloop/_lib.py", "LoopStats"),
    "ll_process_options": ("bindings/python/libloop/_netlib.py", "ProcessOptions"),
    "ll_spawn_extra": ("bindings/python/libloop/_netlib.py", "SpawnExtra"),
    "ll_error_context": ("bindings/python/libloop/_lib.py", "ErrorContext"),
    "llpy_soon_layout": ("bindings/python/libloop/_hotpath.py", "_SoonLayout"),
    "llpy_stream_layout": ("bindings/python/libloop/_hotpath.py", "_StreamLayout"),
    "llpy_host_layout": ("bindings/python/libloop/_hotpath.py", "_HostLayout"),
}

C_TYPES = {"int": "c_int", "unsigned int": "c_uint", "unsigned": "c_uint", "uint64_t": "c_uint64",
           "int64_t": "c_int64", "uint32_t": "c_uint32", "int32_t": "c_int32", "size_t": "c_size_t",
           "ptrdiff_t": "c_ssize_t", "double": "c_double"}


def read_header_structs(root, consts):
    """{struct name: [(field, ctypes type)]} from the headers, or a string
    saying what could not be read."""
    import ctypes
    texts = [strip_c_comments(open(p).read()) for p in header_paths(root)]
    consts = dict(consts)
    for rel, prefix in PRIVATE_HEADERS.items():
        text = strip_c_comments(open(os.path.join(root, rel)).read())
        read_constants(text, consts, prefix)
        texts.append(text)
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


def check_structs(root, consts):
    import ctypes
    errors = []
    header = read_header_structs(root, consts)
    namespace = dict(vars(ctypes), ctypes=ctypes)
    for c_name, (path, cls_name) in STRUCTS.items():
        if isinstance(header[c_name], str):
            errors.append(f"structs: {header[c_name]}")
            continue
        tree = ast.parse(open(os.path.join(root, path)).read())
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

