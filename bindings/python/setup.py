# SPDX-License-Identifier: MIT
"""Building the wheel builds libloop.so with Go (the repository's capi/)
and puts it inside the package, where libloop/_lib.py looks first after
$LIBLOOP_LIBRARY. Needs Go and a C compiler; works offline with
`pip install --no-build-isolation .` (Debian's python3-setuptools)."""

import os
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))


class BuildWithLibrary(build_py):
    """build_py that first builds libloop.so into the package."""

    def run(self):
        super().run()
        target = os.path.join(self.build_lib, "libloop", "libloop.so")
        prebuilt = os.environ.get("LIBLOOP_LIBRARY")
        if prebuilt and os.path.exists(prebuilt):
            shutil.copyfile(prebuilt, target)
            return
        if shutil.which("go") is None:
            raise SystemExit("building libloop needs Go (https://go.dev) on PATH, "
                             "or LIBLOOP_LIBRARY naming a built libloop.so")
        env = dict(os.environ, CGO_ENABLED="1")
        subprocess.check_call(["make", "-C", REPO, "lib"], env=env)
        shutil.copyfile(os.path.join(REPO, "build", "libloop.so"), target)


setup(cmdclass={"build_py": BuildWithLibrary})
