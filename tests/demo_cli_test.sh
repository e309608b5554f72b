#!/usr/bin/env bash
# sapling-demo's command line without a display (issue 29): an output that
# cannot be written is status 1 with the path named, found before the work
# where it can be; an algorithm that refuses the scene is status 3 with the
# refusal on stderr; bad lists and an algorithm named with empty settings
# are refused.
#
#   demo_cli_test.sh SAPLING_DEMO
set -u

if [ $# -ne 1 ]; then
  echo "usage: $0 SAPLING_DEMO" >&2
  exit 2
fi
DEMO=$1
TMP=$(mktemp -d "${TMPDIR:-/tmp}/sapling-demo.XXXXXX") || exit 2
trap 'rm -rf "$TMP"' EXIT

checks=0
failures=0

fail() {
  failures=$((failures + 1))
  echo "FAIL: $*"
}

# demo ARGS...: runs sapling-demo without a display, stdout to $TMP/out,
# stderr to $TMP/err, status in $rc.
demo() {
  env -u DISPLAY -u WAYLAND_DISPLAY "$DEMO" "$@" >"$TMP/out" 2>"$TMP/err"
  rc=$?
}

# expect STATUS PATTERN WHAT ARGS...: sapling-demo ARGS exits with STATUS
# and its stderr has a line matching PATTERN (extended regex).
expect() {
  local status=$1 pattern=$2 what=$3
  shift 3
  demo "$@"
  checks=$((checks + 1))
  if [ "$rc" -ne "$status" ]; then
    fail "$what: exit status $rc, expected $status"
    head -n 3 "$TMP/err" | sed 's/^/    stderr: /'
  fi
  checks=$((checks + 1))
  if ! grep -Eq -- "$pattern" "$TMP/err"; then
    fail "$what: no line matches /$pattern/ on stderr"
    head -n 3 "$TMP/err" | sed 's/^/    stderr: /'
  fi
}

# expect_no_stdout WHAT: nothing was printed (the command stopped before the work).
expect_no_stdout() {
  checks=$((checks + 1))
  if [ -s "$TMP/out" ]; then
    fail "$1: stdout is not empty (the work ran)"
    head -n 3 "$TMP/out" | sed 's/^/    stdout: /'
  fi
}

: >"$TMP/a-file"
mkdir -p "$TMP/frames"

# Headless frames: a directory that cannot be made or written, found before
# the first frame even when no frame would be written (--every beyond --frames).
for bad in "$TMP/a-file/sub" /proc/self; do
  expect 1 "cannot (create|open) $bad" "--headless --out $bad" --headless --frames 2 --every 5 --out "$bad"
  expect_no_stdout "--headless --out $bad"
done
if [ "$(id -u)" -ne 0 ]; then
  mkdir -p "$TMP/read-only" && chmod 555 "$TMP/read-only"
  expect 1 "cannot open $TMP/read-only" "--headless --out a read-only directory" --headless --frames 2 --every 5 \
    --out "$TMP/read-only"
  expect_no_stdout "--headless --out a read-only directory"
  chmod 755 "$TMP/read-only"
fi
# A screenshot path that cannot be written: found before the window opens.
expect 1 "cannot open $TMP/no-such-dir/shot.png for writing" "--screenshot in a missing directory" --frames 2 \
  --screenshot "$TMP/no-such-dir/shot.png"
# The scaling experiment's JSON: a bad path before the work, a full device at the end.
expect 1 "cannot open --scaling $TMP/no-such-dir/s.json for writing" "--scaling in a missing directory" \
  --scaling "$TMP/no-such-dir/s.json" --sizes 10 --frames 2
expect_no_stdout "--scaling in a missing directory"
if [ -w /dev/full ]; then
  expect 1 "cannot write --scaling /dev/full: No space left on device" "--scaling /dev/full" --scaling /dev/full \
    --sizes 10 --frames 2
  env -u DISPLAY -u WAYLAND_DISPLAY "$DEMO" --headless --frames 2 --out "$TMP/frames" >/dev/full 2>"$TMP/err"
  rc=$?
  checks=$((checks + 1))
  [ "$rc" -eq 1 ] || fail "--headless with stdout on /dev/full: exit status $rc, expected 1"
  checks=$((checks + 1))
  grep -q "cannot write standard output" "$TMP/err" || fail "--headless with stdout on /dev/full: no message"
fi

# An algorithm that refuses the scene: status 3, the refusal on stderr, no frame written.
rm -rf "$TMP/refused"
expect 3 "unisize.*(size|unsupported)" "--algo unisize --scene mixed" --headless --frames 2 --scene mixed \
  --algo unisize --out "$TMP/refused"
expect_no_stdout "--algo unisize --scene mixed"
checks=$((checks + 1))
if compgen -G "$TMP/refused/*.png" >/dev/null; then fail "--algo unisize --scene mixed: frames written"; fi
expect 3 "unisize.*(size|unsupported)" "--algo unisize --scene spawn" --headless --frames 2 --scene spawn \
  --algo unisize --out "$TMP/refused"
expect 3 "unisize.*(size|unsupported)" "--algo unisize --scene mixed (window)" --frames 2 --scene mixed \
  --algo unisize
expect 3 "unisize.*(size|unsupported)" "--scaling --algos sap,unisize --scene mixed" --scaling "$TMP/s.json" \
  --scene mixed --algos sap,unisize --sizes 10 --frames 2
# ... and one it takes: particles are all one size.
demo --headless --frames 2 --scene particles --algo unisize --out "$TMP/frames"
checks=$((checks + 1))
[ "$rc" -eq 0 ] || fail "--algo unisize --scene particles: exit status $rc, expected 0"

# Algorithm names and lists.
expect 1 "'sap:'.*settings" "--algo sap:" --headless --frames 2 --algo sap: --out "$TMP/frames"
expect_no_stdout "--algo sap:"
expect 1 "--algos: an empty list" "--algos ''" --scaling "$TMP/s.json" --algos '' --sizes 10 --frames 2
expect 1 "--algos: an empty entry" "--algos sap," --scaling "$TMP/s.json" --algos sap, --sizes 10 --frames 2
expect 1 "--algos: sap is given twice" "--algos sap,sap" --scaling "$TMP/s.json" --algos sap,sap --sizes 10 --frames 2
expect 1 "--sizes: an empty entry" "--sizes 10,,20" --scaling "$TMP/s.json" --sizes 10,,20 --frames 2
expect 1 "--sizes: 10 is given twice" "--sizes 10,10" --scaling "$TMP/s.json" --sizes 10,10 --frames 2
expect 1 "--frames: at least 1" "--frames -1" --headless --frames -1 --out "$TMP/frames"
expect 1 "--switch-every: at least 1" "--switch-every 0" --headless --frames 2 --switch-every 0 --out "$TMP/frames"
expect 1 "unknown option" "an unknown option" --headless --bogus
expect 1 "'sap:'.*settings" "--algos sap:" --scaling "$TMP/s.json" --algos brute,sap: --sizes 10 --frames 2
expect_no_stdout "--algos sap:"

echo "demo_cli: $checks checks, $failures failed"
[ "$failures" -eq 0 ]
