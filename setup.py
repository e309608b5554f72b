"""Builds the extension sapling._sapling with the project's CMake (target
_sapling, SAPLING_BUILD_PYTHON=ON, for the interpreter running pip), and
sapling._sapling_mpi (sapling.mpi) beside it where MPI and mpi4py are found;
the metadata is in pyproject.toml."""

import importlib.util
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.abspath(__file__))


def check_interpreter():
    """Stops at once, saying why, when the interpreter running the build
    cannot import what the module is built with and runs on: the module is
    for Debian's /usr/bin/python3, which sees python3-numpy, python3-pybind11
    and python3-setuptools (scripts/install-deps.sh). A Python of its own
    (pyenv, python.org) first on PATH sees none of them, and failed later
    and obscurely (no setuptools, "invalid command 'bdist_wheel'", or a
    module that cannot import numpy)."""
    missing = [name for name in ("numpy", "pybind11", "setuptools") if importlib.util.find_spec(name) is None]
    # pip builds a wheel: setuptools >= 70.1 does it alone, an older one needs the wheel package.
    if "setuptools" not in missing and importlib.util.find_spec("wheel") is None:
        if importlib.util.find_spec("setuptools.command.bdist_wheel") is None:
            missing.append("wheel")
    if missing:
        sys.exit(
            f"sapling: {sys.executable} (Python {sys.version.split()[0]}) cannot import: {', '.join(missing)}.\n"
            "The Python module is built for Debian's /usr/bin/python3, which sees python3-numpy and "
            "python3-pybind11 (scripts/install-deps.sh installs them). Build it with:\n"
            "  /usr/bin/python3 -m venv --system-site-packages .venv\n"
            "  .venv/bin/python -m pip install --no-build-isolation .\n"
            "(for another interpreter, install what it cannot import for it first).")


check_interpreter()

from setuptools import Extension, setup  # noqa: E402 (after the check, which needs no setuptools)
from setuptools.command.build_ext import build_ext  # noqa: E402


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build_dir = os.path.abspath(os.path.join(self.build_temp, "cmake"))
        configure = [
            "cmake", "-S", ROOT, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release",
            "-DSAPLING_BUILD_PYTHON=ON", "-DSAPLING_BUILD_TESTS=OFF", "-DSAPLING_BUILD_TOOLS=OFF",
            "-DSAPLING_BUILD_BENCH=OFF", f"-DPython_EXECUTABLE={sys.executable}",
        ]
        if shutil.which("ninja"):
            configure += ["-G", "Ninja"]
        subprocess.run(configure, check=True)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)
        # _sapling, and _sapling_mpi (sapling.mpi) where MPI and mpi4py were found.
        with open(os.path.join(build_dir, "python", "extensions.txt")) as f:
            modules = f.read().split()
        subprocess.run(["cmake", "--build", build_dir, "--target", *modules, "-j", jobs], check=True)
        for module in modules:
            name = "sapling." + module
            built = os.path.join(build_dir, "python", "sapling", os.path.basename(self.get_ext_filename(name)))
            target = self.get_ext_fullpath(name)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copyfile(built, target)


# setuptools' scratch goes to build-python/, apart from the CMake build tree build/.
BUILD_BASE = os.path.join(ROOT, "build-python")
os.makedirs(BUILD_BASE, exist_ok=True)
setup(
    ext_modules=[Extension("sapling._sapling", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    options={"build": {"build_base": BUILD_BASE}, "egg_info": {"egg_base": BUILD_BASE}},
)
