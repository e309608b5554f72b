"""The module is built for Debian's /usr/bin/python3: the README says so, and
a build for an interpreter that cannot import numpy or pybind11 stops at
once, saying why and what to run instead."""

import os
import re
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def test_setup_refuses_an_interpreter_without_numpy_and_pybind11():
    # -S -E: the interpreter with its standard library only, as a Python
    # from pyenv or python.org is without Debian's python3-numpy and
    # python3-pybind11.
    run = subprocess.run([sys.executable, "-S", "-E", "setup.py", "bdist_wheel"], cwd=ROOT, capture_output=True,
                         text=True, timeout=60)
    assert run.returncode != 0
    assert "Traceback" not in run.stderr
    assert re.search(r"cannot import: numpy, pybind11\b", run.stderr), run.stderr
    assert sys.executable in run.stderr
    assert "/usr/bin/python3 -m venv --system-site-packages" in run.stderr


def test_readme_names_the_interpreter():
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    section = text.split("## From Python", 1)[1].split("\n## ", 1)[0]
    snippet = re.search(r"```sh\n(.*?)```", section, re.S).group(1)
    assert snippet.startswith("/usr/bin/python3 -m venv --system-site-packages .venv")
    assert "python3-numpy" in section and "python3-pybind11" in section
