"""Builds the extension sapling._sapling with the project's CMake (target
_sapling, SAPLING_BUILD_PYTHON=ON, for the interpreter running pip); the
metadata is in pyproject.toml."""

import os
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


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
        subprocess.run(["cmake", "--build", build_dir, "--target", "_sapling", "-j", jobs], check=True)
        built = os.path.join(build_dir, "python", "sapling", os.path.basename(self.get_ext_filename(ext.name)))
        target = self.get_ext_fullpath(ext.name)
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
