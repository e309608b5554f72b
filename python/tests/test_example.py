"""python/examples/particles.py runs (and writes its figure where matplotlib is installed)."""

import os
import subprocess
import sys

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "examples", "particles.py")


def test_particles_example(tmp_path):
    out = tmp_path / "particles.png"
    run = subprocess.run([sys.executable, EXAMPLE, "--n", "800", "--steps", "30", "--out", str(out)],
                         capture_output=True, text=True, check=True, env=dict(os.environ, MPLBACKEND="Agg"))
    assert "800 particles, 30 steps" in run.stdout
    assert out.exists() or "matplotlib is not installed" in run.stdout
