# SPDX-License-Identifier: MIT
"""The public headers as this check reads them, without a compiler:
include/libloop.h and include/libloop/*.h, every `ret ll_name(params);`
prototype (arity: 0 for `(void)`) and every `#define LL_NAME value` (and
`LL_NAME = value` in enums)."""
import glob
import os
import re


def header_paths(root):
    """The public headers of the tree at root, libloop.h first."""
    return [os.path.join(root, "include", "libloop.h")] + sorted(
        glob.glob(os.path.join(root, "include", "libloop", "*.h")))


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
    expr = re.sub(r"\b((?:LL|LLPY)_[A-Z0-9_]+)\b", lambda m: str(known[m.group(1)]), expr)
    expr = re.sub(r"\b0[xX][0-9a-fA-F]+\b", lambda m: str(int(m.group(0), 16)), expr)
    if not re.fullmatch(r"[\s0-9()+\-*/]+", expr):
        raise ValueError(expr)
    return int(eval(expr.replace("/", "//")))  # digits and operators only


def read_constants(text, consts, prefix="LL_"):
    """Add to consts every `#define PREFIX... value` and enum item named
    PREFIX... of text (comments stripped)."""
    for m in re.finditer(r"^\s*#\s*define\s+(%s[A-Z0-9_]*)[ \t]+([^\n]+)" % prefix, text, re.M):
        if m.group(2).lstrip().startswith("{"):
            continue  # a struct initializer (LL_SPAWN_EXTRA_INIT): each binding fills its struct
        try:
            consts[m.group(1)] = c_eval(m.group(2), consts)
        except ValueError:
            if prefix == "LL_":
                raise
    for body in re.findall(r"\benum\b[^{;]*\{([^}]*)\}", text):
        value = -1
        for item in split_params(body):
            name, _, val = item.partition("=")
            value = c_eval(val, consts) if val.strip() else value + 1
            if name.strip().startswith(prefix):
                consts[name.strip()] = value


def read_headers(root):
    """({function: arity}, {constant: value}) of every public header."""
    funcs, consts = {}, {}
    for path in header_paths(root):
        text = strip_c_comments(open(path).read())
        read_constants(text, consts)
        no_typedefs = re.sub(r"\btypedef\b[^;]*;", " ", text)
        for m in re.finditer(r"\b(ll_[a-z0-9_]+)\s*\(([^;{]*?)\)\s*;", no_typedefs):
            params = split_params(m.group(2))
            funcs[m.group(1)] = 0 if params in ([], ["void"]) else len(params)
    return funcs, consts
