#!/usr/bin/env bash
# sapling-demo in a window under Xvfb for a few frames, switching algorithm
# as it goes; the last frame must be a real picture. Skipped (77) without
# xvfb-run: scripts/install-deps.sh installs it.
set -euo pipefail
demo=$1
out=$2
if ! command -v xvfb-run >/dev/null; then
  echo "SKIP: xvfb-run not found (apt-get install xvfb); the windowed demo was not run"
  exit 77
fi
# Under ASan (CI's sanitizer pass) the display stack (libdbus, reached
# through SDL's video init) leaks a few allocations of its own at exit; ours
# are leak-checked by the headless tests.
export ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}detect_leaks=0"
mkdir -p "$out"
rm -f "$out/window.png"
xvfb-run -a "$demo" --frames 40 --scene mixed --count 200 --switch-every 10 --screenshot "$out/window.png"
# A blank 1280x720 frame compresses to a few kilobytes; bodies, text and
# overlays give tens.
size=$(stat -c %s "$out/window.png")
echo "screenshot: $out/window.png, $size bytes"
((size > 20000))
