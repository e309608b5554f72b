"""The README's Python example runs and prints what its comments say."""

import contextlib
import io
import os
import re

README = os.path.join(os.path.dirname(__file__), "..", "..", "README.md")


def test_readme_example():
    text = open(README, encoding="utf-8").read()
    section = text.split("## From Python", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    assert out.getvalue().splitlines() == ["[[7 9]]", "move of id 9: invalid box: min.y > max.y"]
