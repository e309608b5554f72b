#!/usr/bin/env bash
# Tests of the `sapling` command against its contract
# (docs/trace-format.md): outputs byte for byte, error lines, exit
# statuses. Every check runs for every algorithm `sapling algos` lists.
#
#   cli_test.sh SAPLING_BINARY SOURCE_DIR AREA
#
# AREA: contract | errors | usage | gen | counts | run | bench | hostile. Each failed check
# prints what failed; the script exits 1 if any did.
set -u

if [ $# -ne 3 ]; then
  echo "usage: $0 SAPLING_BINARY SOURCE_DIR AREA" >&2
  exit 2
fi
SAPLING=$1
SRC=$2
AREA=$3
DATA=$SRC/data
TMP=$(mktemp -d "${TMPDIR:-/tmp}/sapling-cli.XXXXXX") || exit 2
trap 'rm -rf "$TMP"' EXIT

checks=0
failures=0

fail() {
  failures=$((failures + 1))
  echo "FAIL: $*"
}

# cli ARGS...: runs sapling, stdout to $TMP/out, stderr to $TMP/err, status in $rc.
cli() {
  "$SAPLING" "$@" >"$TMP/out" 2>"$TMP/err"
  rc=$?
}

# cli_in FILE ARGS...: the same with FILE on standard input.
cli_in() {
  local input=$1
  shift
  "$SAPLING" "$@" <"$input" >"$TMP/out" 2>"$TMP/err"
  rc=$?
}

# expect_rc STATUS WHAT: the last command exited with STATUS.
expect_rc() {
  checks=$((checks + 1))
  if [ "$rc" -ne "$1" ]; then
    fail "$2: exit status $rc, expected $1"
    sed 's/^/    stderr: /' "$TMP/err" | head -n 5
  fi
}

# expect_file ACTUAL EXPECTED WHAT: the two files are identical, byte for byte.
expect_file() {
  checks=$((checks + 1))
  if ! cmp -s "$1" "$2"; then
    fail "$3: output differs from $(basename "$2")"
    diff "$2" "$1" | head -n 10 | sed 's/^/    /'
  fi
}

# expect_text TEXT WHAT: $TMP/out is exactly TEXT (printf format).
expect_text() {
  # shellcheck disable=SC2059
  printf "$1" >"$TMP/expected"
  expect_file "$TMP/out" "$TMP/expected" "$2"
}

# expect_empty FILE WHAT
expect_empty() {
  checks=$((checks + 1))
  if [ -s "$1" ]; then
    fail "$2: $(basename "$1") is not empty"
    head -n 5 "$1" | sed 's/^/    /'
  fi
}

# expect_grep PATTERN FILE WHAT: FILE has a line matching the extended regex.
expect_grep() {
  checks=$((checks + 1))
  if ! grep -Eq -- "$1" "$2"; then
    fail "$3: no line matches /$1/ in $(basename "$2")"
    head -n 5 "$2" | sed 's/^/    /'
  fi
}

# refuses ALGO TRACE: true if ALGO, restricted by design, refuses TRACE
# (status 3, nothing written, the restriction named on stderr); the caller
# then skips ALGO for TRACE. brute and sort-sweep take every trace.
refuses() {
  "$SAPLING" replay "$2" --algo "$1" --report hash >"$TMP/refuses.out" 2>"$TMP/refuses.err"
  local status=$?
  [ "$status" -eq 3 ] || return 1
  checks=$((checks + 1))
  if [ "$1" = brute ] || [ "$1" = sort-sweep ]; then
    fail "$1 refuses $(basename "$2") (status 3)"
  elif [ -s "$TMP/refuses.out" ] || ! grep -q "unsupported by $1: " "$TMP/refuses.err"; then
    fail "$1 refuses $(basename "$2"): output written, or no 'unsupported by $1: reason' on stderr"
  else
    echo "note: $1 refuses $(basename "$2"): $(head -n 1 "$TMP/refuses.err")"
  fi
  return 0
}

cli algos
if [ "$rc" -ne 0 ] || [ ! -s "$TMP/out" ]; then
  echo "FAIL: sapling algos: exit status $rc, or no algorithm listed"
  exit 1
fi
ALGOS=$(awk '{ print $1 }' "$TMP/out")

# ---------------------------------------------------------------------------
# The contract's example, and the semantics' edge cases, for every algorithm.
test_contract() {
  cli algos
  expect_rc 0 "algos"
  checks=$((checks + 1))
  if ! awk 'NF < 2 || $0 !~ /^[^ ]+  +[^ ]/ { bad = 1 } END { exit bad }' "$TMP/out"; then
    fail "algos: a line is not 'NAME  description'"
  fi
  expect_grep '^brute  ' "$TMP/out" "algos lists brute"
  expect_grep '^sort-sweep  ' "$TMP/out" "algos lists sort-sweep"

  local algo trace report
  for algo in $ALGOS; do
    for trace in example example2d edge example2; do
      refuses "$algo" "$DATA/$trace.trace" && continue
      local expected_name=$trace
      [ "$trace" = example2d ] && expected_name=example
      for report in delta pairs hash; do
        cli replay "$DATA/$trace.trace" --algo "$algo" --report "$report"
        expect_rc 0 "replay $trace.trace --algo $algo --report $report"
        expect_file "$TMP/out" "$DATA/$expected_name.$report" "replay $trace.trace --algo $algo --report $report"
        expect_empty "$TMP/err" "replay $trace.trace --algo $algo --report $report: stderr"
      done
    done
    refuses "$algo" "$DATA/example.trace" && continue
    # delta is the default report.
    cli replay "$DATA/example.trace" --algo "$algo"
    expect_rc 0 "replay (default report) --algo $algo"
    expect_file "$TMP/out" "$DATA/example.delta" "replay (default report) --algo $algo"
    # Standard input, and --out FILE (with and without '=').
    cli_in "$DATA/example.trace" replay - --algo "$algo" --report pairs
    expect_rc 0 "replay - (stdin) --algo $algo"
    expect_file "$TMP/out" "$DATA/example.pairs" "replay - (stdin) --algo $algo"
    rm -f "$TMP/file.out"
    cli replay "$DATA/example.trace" --algo "$algo" --report hash --out "$TMP/file.out"
    expect_rc 0 "replay --out FILE --algo $algo"
    expect_empty "$TMP/out" "replay --out FILE --algo $algo: stdout"
    expect_file "$TMP/file.out" "$DATA/example.hash" "replay --out FILE --algo $algo"
    cli_in "$DATA/example.trace" replay - --algo="$algo" --out=- --report=delta
    expect_rc 0 "replay - --algo=$algo --out=-"
    expect_file "$TMP/out" "$DATA/example.delta" "replay - --algo=$algo --out=-"
  done

  # Version 2 (filters, static objects, queries): the same bytes on any
  # number of threads, and from standard input.
  for algo in $ALGOS; do
    refuses "$algo" "$DATA/example2.trace" && continue
    for report in delta hash; do
      cli replay "$DATA/example2.trace" --algo "$algo" --report "$report" --threads 2
      expect_rc 0 "replay example2.trace --algo $algo --report $report --threads 2"
      expect_file "$TMP/out" "$DATA/example2.$report" "replay example2.trace --algo $algo --report $report --threads 2"
    done
    cli_in "$DATA/example2.trace" replay - --algo "$algo" --report pairs
    expect_rc 0 "replay - (stdin, version 2) --algo $algo"
    expect_file "$TMP/out" "$DATA/example2.pairs" "replay - (stdin, version 2) --algo $algo"
  done
}

# ---------------------------------------------------------------------------
# Malformed traces: `TRACE:LINE: reason` on stderr, status 2, every frame
# before the bad line written in full and nothing of the bad frame.

# Frames 0 and 1 are complete; frame 2 starts at line 9, its line 10 is fine
# and line 11 is replaced by each bad line in turn.
write_base() {
  cat >"$1" <<'EOF'
sapling-trace 1
# two boxes that overlap, then part
frame
add 1 0 0 0 1 1 1
add 2 0.5 0.5 0.5 2 2 2

frame
move 1 3 3 3 4 4 4
frame
add 3 0 0 0 1 1 1
EOF
}
BASE_DELTA='frame 0 +1 -0\n+ 1 2\nframe 1 +0 -1\n- 1 2\n'

# bad_trace WHAT EXPECTED_LINE EXPECTED_STDOUT: $TMP/bad.trace must fail at
# EXPECTED_LINE for every algorithm and every report, from a file and stdin.
bad_trace() {
  local what=$1 line=$2 expected=$3 algo
  for algo in $ALGOS; do
    refuses "$algo" "$TMP/bad.trace" && continue
    cli replay "$TMP/bad.trace" --algo "$algo"
    expect_rc 2 "$what ($algo)"
    expect_text "$expected" "$what ($algo): stdout"
    checks=$((checks + 1))
    if ! head -n 1 "$TMP/err" | grep -Eq "^$TMP/bad\\.trace:$line: [^ ]"; then
      fail "$what ($algo): stderr is not '$TMP/bad.trace:$line: reason'"
      head -n 3 "$TMP/err" | sed 's/^/    stderr: /'
    fi
    cli_in "$TMP/bad.trace" replay - --algo "$algo" --report pairs
    expect_rc 2 "$what ($algo, stdin)"
    expect_grep "^-:$line: [^ ]" "$TMP/err" "$what ($algo, stdin): stderr"
  done
}

test_errors() {
  local bad
  # name|bad line 11
  while IFS='|' read -r what bad; do
    write_base "$TMP/bad.trace"
    printf '%s\n' "$bad" >>"$TMP/bad.trace"
    printf 'remove 3\n' >>"$TMP/bad.trace"  # never reached
    bad_trace "$what" 11 "$BASE_DELTA"
  done <<'EOF'
unknown keyword|resize 1 0 0 0 1 1 1
too few numbers|add 4 0 0 0 1 1
too many numbers|add 4 0 0 0 1 1 1 1
no id|remove
id not a number|remove x
id out of range|add 4294967296 0 0 0 1 1 1
negative id|add -4 0 0 0 1 1 1
number not read in full|add 4 0 0 0 1x 1 1
number with a comma|add 4 0 0 0 1,5 1 1
min > max|add 4 0 0 2 1 1 1
nan min|add 4 nan 0 0 1 1 1
nan max|move 2 0 0 0 1 nan 1
move with min > max|move 2 0 0 0 1 1 -1
add of a live id|add 2 0 0 0 1 1 1
add of an id added in this frame|add 3 5 5 5 6 6 6
move of an id that is not live|move 9 0 0 0 1 1 1
move of an id added in this frame|move 3 0 0 0 1 1 1
remove of an id that is not live|remove 9
remove of an id added in this frame|remove 3
dims after the first frame|dims 3
a second header|sapling-trace 1
EOF

  # A second operation on one id, on the line after the first.
  write_base "$TMP/bad.trace"
  printf 'move 2 0 0 0 1 1 1\nremove 2\n' >>"$TMP/bad.trace"
  bad_trace "second operation on one id in one frame" 12 "$BASE_DELTA"
  write_base "$TMP/bad.trace"
  printf 'remove 1\nmove 1 0 0 0 1 1 1\n' >>"$TMP/bad.trace"
  bad_trace "move after remove of one id in one frame" 12 "$BASE_DELTA"

  # An error in the first line of a frame: the frames before are complete.
  write_base "$TMP/bad.trace"
  printf 'frame\nbogus\n' >>"$TMP/bad.trace"
  bad_trace "unknown keyword at the start of a frame" 12 "${BASE_DELTA}frame 2 +1 -0\n+ 2 3\n"

  # Errors before any frame: nothing written.
  printf 'sapling-trace 1\nadd 1 0 0 0 1 1 1\n' >"$TMP/bad.trace"
  bad_trace "operation before the first frame" 2 ''
  printf 'sapling-trace 3\nframe\n' >"$TMP/bad.trace"
  bad_trace "version 3" 1 ''
  printf 'sapling-trace 10\ndims 3\nframe\nadd 1 0 0 0 1 1 1\n' >"$TMP/bad.trace"
  bad_trace "version 10" 1 ''
  printf 'sapling-trace 0\nframe\n' >"$TMP/bad.trace"
  bad_trace "version 0" 1 ''
  printf '# no header\nframe\nadd 1 0 0 0 1 1 1\n' >"$TMP/bad.trace"
  bad_trace "no header" 2 ''
  printf 'sapling-trace 1\ndims 4\nframe\n' >"$TMP/bad.trace"
  bad_trace "dims 4" 2 ''
  printf 'sapling-trace 1\ndims 2\nframe\nadd 1 0 0 0 1 1 1\n' >"$TMP/bad.trace"
  bad_trace "a 3D box in a 2D trace" 4 ''
  printf 'sapling-trace 1\nframe\nadd 1 0 0 0 1 1 1\nframe\nframe\nadd 2 0 0 1 1\n' >"$TMP/bad.trace"
  bad_trace "a 2D box in a 3D trace" 6 'frame 0 +0 -0\nframe 1 +0 -0\n'

  # The hash report stops at the same frame.
  local algo
  write_base "$TMP/bad.trace"
  printf 'remove 9\n' >>"$TMP/bad.trace"
  for algo in $ALGOS; do
    refuses "$algo" "$TMP/bad.trace" && continue
    cli replay "$TMP/bad.trace" --algo "$algo" --report hash
    expect_rc 2 "remove of an id that is not live, --report hash ($algo)"
    checks=$((checks + 1))
    if [ "$(wc -l <"$TMP/out")" -ne 2 ] || ! grep -q '^frame 1 0 cbf29ce484222325$' "$TMP/out"; then
      fail "remove of an id that is not live, --report hash ($algo): expected frames 0 and 1 only"
      sed 's/^/    /' "$TMP/out"
    fi
    # With --out FILE the frames before the error land in the file.
    rm -f "$TMP/file.out"
    cli replay "$TMP/bad.trace" --algo "$algo" --out "$TMP/file.out"
    expect_rc 2 "malformed trace with --out FILE ($algo)"
    # shellcheck disable=SC2059
    printf "$BASE_DELTA" >"$TMP/expected"
    expect_file "$TMP/file.out" "$TMP/expected" "malformed trace with --out FILE ($algo)"
  done
}

# ---------------------------------------------------------------------------
# Malformed version-2 traces, as above.

# Frames 0 and 1 are complete (frame 1 with a query); frame 2 starts at line
# 10 with a query (never answered), its line 12 is fine, and line 13 is
# replaced by each bad line in turn.
write_base2() {
  cat >"$1" <<'EOF'
sapling-trace 2
# a static box and a filtered one that overlap, then part
frame
add 1 0 0 0 1 1 1 static
add 2 0.5 0.5 0.5 2 2 2 filter 1 0x3

frame
move 1 3 3 3 4 4 4
query 7 0 0 0 5 5 5 mask 0x1
frame
query 8 0 0 0 1 1 1
add 3 0 0 0 1 1 1 filter 0x2 0xffffffff
EOF
}
BASE2_DELTA='frame 0 +1 -0\n+ 1 2\nframe 1 +0 -1\n- 1 2\nquery 7 2\n1\n2\n'

test_errors_version_2() {
  local bad
  # name|bad line 13
  while IFS='|' read -r what bad; do
    write_base2 "$TMP/bad.trace"
    printf '%s\n' "$bad" >>"$TMP/bad.trace"
    printf 'remove 3\n' >>"$TMP/bad.trace"  # never reached
    bad_trace "version 2: $what" 13 "$BASE2_DELTA"
  done <<'EOF'
unknown attribute|add 4 0 0 0 1 1 1 sticky
unknown attribute after filter|add 4 0 0 0 1 1 1 filter 1 1 heavy
repeated static|add 4 0 0 0 1 1 1 static static
repeated filter|add 4 0 0 0 1 1 1 filter 1 1 static filter 1 1
filter attribute without a mask|add 4 0 0 0 1 1 1 filter 1
attribute of a move|move 2 0 0 0 1 1 1 static
category not an integer|add 4 0 0 0 1 1 1 filter 1x 1
category out of range|add 4 0 0 0 1 1 1 filter 4294967296 1
mask out of range in hexadecimal|filter 2 1 0x100000000
negative category|filter 2 -1 1
category with a plus|filter 2 +1 1
hexadecimal prefix alone|filter 2 0x 1
mask with a fraction|filter 2 1 1.5
filter of an id that is not live|filter 9 1 1
filter of an id added in this frame|filter 3 1 1
filter with one value|filter 2 1
filter with three values|filter 2 1 1 1
filter with a bad id|filter x 1 1
query with too few numbers|query 5 0 0 0 1 1
query with too many numbers|query 5 0 0 0 1 1 1 1
query with min > max|query 5 0 0 2 1 1 1
query with a NaN|query 5 nan 0 0 1 1 1
query with a bad number|query 5 0 0 0 1 1 z
query with a bad label|query -5 0 0 0 1 1 1
query with a bad mask|query 5 0 0 0 1 1 1 mask 0xg
query with a mask twice|query 5 0 0 0 1 1 1 mask 1 mask 1
query with an unknown attribute|query 5 0 0 0 1 1 1 static
a version-1 header line|sapling-trace 1
EOF

  # An operation after a filter of the same id, on the line after it.
  write_base2 "$TMP/bad.trace"
  printf 'filter 2 0x1 0x1\nmove 2 0 0 0 1 1 1\n' >>"$TMP/bad.trace"
  bad_trace "version 2: move after filter of one id in one frame" 14 "$BASE2_DELTA"
  write_base2 "$TMP/bad.trace"
  printf 'remove 2\nfilter 2 0x1 0x1\n' >>"$TMP/bad.trace"
  bad_trace "version 2: filter after remove of one id in one frame" 14 "$BASE2_DELTA"
  printf 'sapling-trace 2\nfilter 1 1 1\n' >"$TMP/bad.trace"
  bad_trace "version 2: filter before the first frame" 2 ''
  printf 'sapling-trace 2\nquery 1 0 0 0 1 1 1\n' >"$TMP/bad.trace"
  bad_trace "version 2: query before the first frame" 2 ''
  printf 'sapling-trace 2\ndims 2\nframe\nadd 1 0 0 1 1 static\nframe\nquery 1 0 0 0 1 1 1\n' >"$TMP/bad.trace"
  bad_trace "version 2: a 3D query in a 2D trace" 6 'frame 0 +0 -0\n'

  # Any version-2 keyword in a version-1 trace, at line 11 of the version-1 base.
  while IFS='|' read -r what bad; do
    write_base "$TMP/bad.trace"
    printf '%s\n' "$bad" >>"$TMP/bad.trace"
    printf 'remove 3\n' >>"$TMP/bad.trace"  # never reached
    bad_trace "version 1: $what" 11 "$BASE_DELTA"
  done <<'EOF'
the static attribute|add 4 0 0 0 1 1 1 static
the filter attribute|add 4 0 0 0 1 1 1 filter 1 1
the filter operation|filter 2 1 1
a query|query 1 0 0 0 1 1 1
a query with a mask|query 1 0 0 0 1 1 1 mask 1
EOF

  # The hash report stops at the same frame, query lines included.
  local algo
  write_base2 "$TMP/bad.trace"
  printf 'filter 9 1 1\n' >>"$TMP/bad.trace"
  for algo in $ALGOS; do
    refuses "$algo" "$TMP/bad.trace" && continue
    cli replay "$TMP/bad.trace" --algo "$algo" --report hash
    expect_rc 2 "version 2: filter of an id that is not live, --report hash ($algo)"
    expect_text 'frame 0 1 c9c28939c99668c6\nframe 1 0 cbf29ce484222325\nquery 7 2 c9c28939c99668c6\n' \
      "version 2: filter of an id that is not live, --report hash ($algo)"
  done
}

# ---------------------------------------------------------------------------
# Usage errors: status 1, a message on stderr, nothing on stdout.
usage_case() {
  local what=$1
  shift
  cli "$@"
  expect_rc 1 "$what"
  expect_empty "$TMP/out" "$what: stdout"
  checks=$((checks + 1))
  if [ ! -s "$TMP/err" ]; then fail "$what: no message on stderr"; fi
}

test_usage() {
  local trace=$DATA/example.trace
  usage_case "no command"
  usage_case "unknown command" frobnicate
  usage_case "replay: unknown algorithm" replay "$trace" --algo no-such-algo
  expect_grep "no-such-algo" "$TMP/err" "unknown algorithm: message names it"
  expect_grep "sort-sweep" "$TMP/err" "unknown algorithm: message lists the algorithms"
  usage_case "replay: missing --algo" replay "$trace"
  expect_grep "--algo" "$TMP/err" "missing --algo: message names the option"
  usage_case "replay: unknown flag" replay "$trace" --algo brute --frobnicate 1
  expect_grep "--frobnicate" "$TMP/err" "unknown flag: message names it"
  usage_case "replay: unknown short flag" replay "$trace" --algo brute -x
  usage_case "replay: --algo without a value" replay "$trace" --algo
  usage_case "replay: --out without a value" replay "$trace" --algo brute --out
  usage_case "replay: bad --report" replay "$trace" --algo brute --report everything
  usage_case "replay: --algo twice" replay "$trace" --algo brute --algo brute
  usage_case "replay: no TRACE" replay --algo brute
  usage_case "replay: two TRACEs" replay "$trace" "$trace" --algo brute
  usage_case "replay: unreadable file" replay "$TMP/no-such-file.trace" --algo brute
  expect_grep "no-such-file\\.trace" "$TMP/err" "unreadable file: message names the file"
  usage_case "replay: a directory" replay "$TMP" --algo brute
  rm -f "$TMP/file.out"
  usage_case "replay: unwritable --out" replay "$trace" --algo brute --out "$TMP/no-such-dir/file.out"
  expect_grep "no-such-dir" "$TMP/err" "unwritable --out: message names the file"

  usage_case "gen: unknown scenario" gen no-such-scene --out -
  expect_grep "tracy" "$TMP/err" "unknown scenario: message lists the scenarios"
  usage_case "gen: missing --out" gen tracy --n 10
  usage_case "gen: no scenario" gen --out -
  usage_case "gen: bad number" gen tracy --n 12abc --out -
  usage_case "gen: negative number" gen tracy --n -5 --out -
  usage_case "gen: empty number" gen tracy --n= --out -
  usage_case "gen: --n 0" gen tracy --n 0 --out -
  usage_case "gen: unknown flag" gen tracy --out - --speeed 5
  usage_case "gen: unwritable --out" gen tracy --n 10 --out "$TMP/no-such-dir/x.trace"

  usage_case "run: unknown algorithm" run --algo no-such-algo --n 100 --frames 2
  usage_case "run: unknown scenario" run --scenario no-such-scene --n 100 --frames 2
  usage_case "run: --frames 0" run --n 100 --frames 0
  usage_case "run: unexpected argument" run tracy
  usage_case "algos: unexpected argument" algos brute

  local help
  for help in help --help -h "replay --help" "gen -h" "run --help"; do
    # shellcheck disable=SC2086
    cli $help
    expect_rc 0 "sapling $help"
    expect_grep "^exit status" "$TMP/out" "sapling $help: documents the exit statuses"
    expect_grep "sapling replay TRACE --algo NAME" "$TMP/out" "sapling $help: usage of replay"
  done
}

# ---------------------------------------------------------------------------
# gen: deterministic traces every algorithm replays to the same bytes.
test_gen() {
  local algo scene
  cli gen tracy --n 1000 --frames 5 --out "$TMP/a.trace"
  expect_rc 0 "gen tracy --n 1000 --frames 5"
  expect_empty "$TMP/out" "gen --out FILE: stdout"
  cli gen tracy --n 1000 --frames 5 --out -
  expect_rc 0 "gen --out -"
  expect_file "$TMP/out" "$TMP/a.trace" "gen is deterministic (file and stdout identical)"
  cli gen tracy --n 1000 --frames 5 --seed 2 --out -
  expect_file "$TMP/out" "$TMP/a.trace" "gen tracy: seed 2 is the default"
  cli gen tracy --n 1000 --frames 5 --seed 7 --out -
  checks=$((checks + 1))
  if cmp -s "$TMP/out" "$TMP/a.trace"; then fail "gen tracy: --seed 7 changes nothing"; fi
  expect_grep '^sapling-trace 1' "$TMP/a.trace" "gen writes the header"
  checks=$((checks + 1))
  if [ "$(grep -c '^frame' "$TMP/a.trace")" -ne 5 ]; then fail "gen --frames 5 does not write 5 frames"; fi

  "$SAPLING" replay "$TMP/a.trace" --algo brute >"$TMP/brute.delta"
  for algo in $ALGOS; do
    refuses "$algo" "$TMP/a.trace" && continue
    cli replay "$TMP/a.trace" --algo "$algo" --report hash
    expect_rc 0 "replay gen tracy --n 1000 --frames 5 ($algo)"
    expect_file "$TMP/out" "$DATA/tracy_n1000_f5.hash" "replay gen tracy --n 1000 --frames 5 ($algo)"
    cli replay "$TMP/a.trace" --algo "$algo" --report delta --out "$TMP/$algo.delta"
    expect_rc 0 "replay gen tracy --report delta ($algo)"
    expect_file "$TMP/$algo.delta" "$TMP/brute.delta" "replay gen tracy --report delta ($algo) against brute"
  done

  # Every scenario, small, through every algorithm: the same bytes as brute.
  for scene in "unisize2d --n 400" "tracy --n 400" "allmoving3d --n 300" "cluster --n 400 --cycle 6" "small" \
    "unisize2d --n 300 --density 800 --speed 0" "tracy --n 500 --moving 500 --inserts 20 --removes 5 --density 300"; do
    # shellcheck disable=SC2086
    cli gen $scene --frames 8 --out "$TMP/scene.trace"
    expect_rc 0 "gen $scene"
    "$SAPLING" replay "$TMP/scene.trace" --algo brute --report pairs >"$TMP/brute.pairs"
    for algo in $ALGOS; do
      refuses "$algo" "$TMP/scene.trace" && continue
      cli replay "$TMP/scene.trace" --algo "$algo" --report pairs --out "$TMP/$algo.pairs"
      expect_rc 0 "replay gen $scene ($algo)"
      expect_file "$TMP/$algo.pairs" "$TMP/brute.pairs" "replay gen $scene --report pairs ($algo) against brute"
    done
  done
  cli gen unisize2d --n 50 --frames 1 --out -
  expect_grep '^dims 2' "$TMP/out" "gen unisize2d writes a 2D trace"

  # Version 2: static objects, filter groups, regrouping and queries, through
  # every algorithm: the same bytes as brute, queries included, and brute's
  # the same as tests/cli/reference_replay.py's.
  for scene in "tracy --n 400 --static 300 --groups 3 --regroup 50 --queries 4" \
    "unisize2d --n 300 --static 500 --queries 3" "allmoving3d --n 300 --groups 2" \
    "cluster --n 400 --cycle 6 --static 1000 --queries 2" "small --groups 32 --regroup 1000" \
    "tracy --n 500 --moving 500 --inserts 20 --removes 5 --density 300 --static 100 --groups 4 --regroup 20 --queries 5"; do
    # shellcheck disable=SC2086
    cli gen $scene --frames 8 --out "$TMP/scene.trace"
    expect_rc 0 "gen $scene"
    expect_grep '^sapling-trace 2$' "$TMP/scene.trace" "gen $scene writes version 2"
    "$SAPLING" replay "$TMP/scene.trace" --algo brute --report pairs >"$TMP/brute.pairs"
    # brute's filtering is every algorithm's: checked against a reference of its own.
    python3 "$SRC/reference_replay.py" "$TMP/scene.trace" pairs >"$TMP/reference.pairs"
    expect_file "$TMP/brute.pairs" "$TMP/reference.pairs" "replay gen $scene --algo brute against reference_replay.py"
    for algo in $ALGOS; do
      refuses "$algo" "$TMP/scene.trace" && continue
      cli replay "$TMP/scene.trace" --algo "$algo" --report pairs --out "$TMP/$algo.pairs"
      expect_rc 0 "replay gen $scene ($algo)"
      expect_file "$TMP/$algo.pairs" "$TMP/brute.pairs" "replay gen $scene --report pairs ($algo) against brute"
    done
  done
  cli gen tracy --n 400 --static 300 --groups 3 --regroup 50 --queries 4 --frames 8 --out "$TMP/v2.trace"
  for report in delta hash; do
    "$SAPLING" replay "$TMP/v2.trace" --algo brute --report "$report" >"$TMP/brute.$report"
    python3 "$SRC/reference_replay.py" "$TMP/v2.trace" "$report" >"$TMP/reference.$report"
    expect_file "$TMP/brute.$report" "$TMP/reference.$report" "replay of a version-2 gen --report $report against the reference"
  done
  for what in ' static' ' filter 0x' '^filter [0-9]+ 0x' '^query [0-9]+ .* mask 0x'; do
    expect_grep "$what" "$TMP/v2.trace" "gen with the version-2 options writes /$what/"
  done
  expect_grep '^# sapling gen tracy .* static=300pm groups=3 regroup=50pm queries=4 frames=8$' "$TMP/v2.trace" \
    "gen names the version-2 options in its first line"
  checks=$((checks + 1))
  if [ "$(grep -c '^query ' "$TMP/v2.trace")" -ne 32 ]; then fail "gen --queries 4 --frames 8 does not write 32 queries"; fi
  # Without them, version 1 as before.
  cli gen tracy --n 400 --frames 3 --static 0 --queries 0 --out -
  expect_grep '^sapling-trace 1$' "$TMP/out" "gen with --static 0 --queries 0 writes version 1"
  usage_case "gen: --regroup without --groups" gen tracy --regroup 5 --out -
  usage_case "gen: --groups 33" gen tracy --groups 33 --out -
  usage_case "gen: --static 1001" gen tracy --static 1001 --out -
  cli run --n 500 --frames 3 --static 200 --groups 2 --regroup 10 --queries 3
  expect_rc 0 "run with the version-2 options"
  expect_grep '^  scenario +tracy  n=500 .*static=200pm groups=2 regroup=10pm queries=3' "$TMP/out" \
    "run names the version-2 options"

  # More output than replay holds back: the frames still come out whole.
  cli gen tracy --n 10000 --density 200 --frames 80 --out "$TMP/big.trace"
  expect_rc 0 "gen tracy --n 10000 --density 200 --frames 80"
  for algo in $ALGOS; do
    [ "$algo" = brute ] && continue
    refuses "$algo" "$TMP/big.trace" && continue
    cli replay "$TMP/big.trace" --algo "$algo" --report pairs --out "$TMP/big.pairs"
    expect_rc 0 "replay of a big trace --report pairs ($algo)"
    cli replay "$TMP/big.trace" --algo "$algo" --report hash
    awk '/^frame/ { print $1, $2, $3 }' "$TMP/big.pairs" >"$TMP/big.heads"
    awk '{ print $1, $2, $3 }' "$TMP/out" >"$TMP/big.counts"
    expect_file "$TMP/big.heads" "$TMP/big.counts" "replay of a big trace: pairs and hash reports agree ($algo)"
    checks=$((checks + 1))
    if [ "$(stat -c %s "$TMP/big.pairs" 2>/dev/null || wc -c <"$TMP/big.pairs")" -lt 5000000 ]; then
      fail "replay of a big trace: the pairs report is under 5 MB, the test no longer covers long output"
    fi
  done
}

# ---------------------------------------------------------------------------
# The spec's check counts (docs/scenarios.md) through gen and replay.
test_counts() {
  local algo
  cli gen tracy --n 10000 --frames 21 --out "$TMP/tracy.trace"
  expect_rc 0 "gen tracy --n 10000 --frames 21"
  for algo in $ALGOS; do
    refuses "$algo" "$TMP/tracy.trace" && continue
    cli replay "$TMP/tracy.trace" --algo "$algo" --report hash
    expect_rc 0 "replay tracy n=10000 ($algo)"
    expect_grep '^frame 0 2024 [0-9a-f]{16}$' "$TMP/out" "tracy n=10000: 2024 pairs at frame 0 ($algo)"
    expect_grep '^frame 20 2063 [0-9a-f]{16}$' "$TMP/out" "tracy n=10000: 2063 pairs at frame 20 ($algo)"
    if [ "$algo" = brute ]; then
      cp "$TMP/out" "$TMP/tracy.hash"
    else
      expect_file "$TMP/out" "$TMP/tracy.hash" "tracy n=10000 --report hash ($algo) against brute"
    fi
  done
  # W1 through a pipe, with the default algorithm of `run` (brute is too slow here).
  algo=$(printf '%s\n' "$ALGOS" | grep -Ex 'sap|box-pruning|sort-sweep' | head -n 1)
  "$SAPLING" gen unisize2d --n 131072 --density 200 --frames 11 --out - |
    "$SAPLING" replay - --algo "$algo" --report hash >"$TMP/out" 2>"$TMP/err"
  rc=$?
  expect_rc 0 "gen unisize2d n=131072 | replay - ($algo)"
  expect_grep '^frame 0 52306 ' "$TMP/out" "unisize2d n=131072: 52306 pairs at frame 0 ($algo)"
  expect_grep '^frame 10 52526 ' "$TMP/out" "unisize2d n=131072: 52526 pairs at frame 10 ($algo)"
}

# ---------------------------------------------------------------------------
# run: the main job on small scenes.
test_run() {
  local algo scene hash
  # More threads than a pool runs (ThreadPool::kMaxThreads): a bad command line, not an abort.
  cli run --n 200 --frames 2 --threads 1024
  expect_rc 1 "run --threads 1024"
  expect_grep "threads" "$TMP/err" "run --threads 1024 says why"
  cli run --n 200 --frames 2 --threads 256 --algo box-pruning
  expect_rc 0 "run --threads 256"
  cli run --n 2000 --frames 5
  expect_rc 0 "run --n 2000 --frames 5"
  expect_empty "$TMP/err" "run: stderr (not a terminal: no progress)"
  local field
  for field in algorithm scenario frames boxes pairs delta "frame 0" "step time" memory; do
    expect_grep "^  $field  " "$TMP/out" "run summary has a '$field' row"
  done
  expect_grep '^  scenario +tracy  n=2000 ' "$TMP/out" "run: tracy is the default scenario"
  expect_grep '^  frames +5 ' "$TMP/out" "run --frames 5"
  expect_grep '^  boxes +2000 ' "$TMP/out" "run: 2000 boxes live at the end"
  # sap says which path each frame took (under auto too, while it runs sap):
  # the four counts add up to the frames.
  expect_grep '^  sap paths +[0-9]+ walked, [0-9]+ by the batch update, [0-9]+ on the resting set, [0-9]+ recomputed; arrays rebuilt ' "$TMP/out" "run (auto on sap): a 'sap paths' row"
  cli run --algo sap --n 2000 --frames 7
  expect_rc 0 "run --algo sap --frames 7"
  local paths
  paths=$(sed -nE 's/^  sap paths +([0-9]+) walked, ([0-9]+) by the batch update, ([0-9]+) on the resting set, ([0-9]+) recomputed;.*/\1 \2 \3 \4/p' "$TMP/out")
  checks=$((checks + 1))
  if [ -z "$paths" ] || [ "$(echo "$paths" | awk '{ print $1 + $2 + $3 + $4 }')" != 7 ]; then
    fail "run --algo sap: the paths' frames ($paths) do not add up to 7"
  fi

  # The final pair-set hash matches the last frame of the same scene replayed.
  cli gen tracy --n 2000 --frames 5 --out "$TMP/run.trace"
  cli replay "$TMP/run.trace" --algo brute --report hash
  hash=$(tail -n 1 "$TMP/out" | awk '{ print $4 }')
  for algo in $ALGOS; do
    cli run --algo "$algo" --n 2000 --frames 5
    if [ "$rc" -eq 3 ] && [ "$algo" != brute ] && [ "$algo" != sort-sweep ]; then
      echo "note: $algo refuses the tracy scene: $(head -n 1 "$TMP/err")"
      continue
    fi
    expect_rc 0 "run --algo $algo"
    expect_grep "^  algorithm +$algo\$" "$TMP/out" "run --algo $algo: summary names it"
    expect_grep "hash $hash" "$TMP/out" "run --algo $algo: final pairs match replay of the same scene"
  done

  for scene in unisize2d tracy allmoving3d cluster small; do
    cli run --scenario "$scene" --n 300 --frames 3 --cycle 10
    expect_rc 0 "run --scenario $scene"
    expect_grep "^  scenario +$scene " "$TMP/out" "run --scenario $scene: summary names it"
  done
  cli run --n 500 --frames 1
  expect_rc 0 "run --frames 1 (frame 0 only)"

  # unisize, restricted to boxes of one size: refuses mixed sizes with status
  # 3 before writing anything, on replay and run alike, and takes its scenes.
  if grep -qx unisize <<<"$ALGOS"; then
    cli replay "$DATA/example.trace" --algo unisize --report hash
    expect_rc 3 "replay of mixed sizes --algo unisize"
    expect_empty "$TMP/out" "replay of mixed sizes --algo unisize: stdout"
    expect_grep "unsupported by unisize: .*size" "$TMP/err" "replay --algo unisize names the restriction"
    cli run --algo unisize --scenario allmoving3d --n 300 --frames 3
    expect_rc 3 "run --algo unisize --scenario allmoving3d (mixed sizes)"
    expect_empty "$TMP/out" "run --algo unisize of mixed sizes: stdout"
    expect_grep "unisize.*size" "$TMP/err" "run --algo unisize names the restriction"
    for scene in unisize2d cluster tracy; do
      cli run --algo unisize --scenario "$scene" --n 300 --frames 3 --cycle 10
      expect_rc 0 "run --algo unisize --scenario $scene (one size)"
    done
  fi
}

# `sapling bench`: the quick suites run every contender of this build to the
# end, every pair set verified, and the reports are written.
test_bench() {
  cli bench --suite all --quick --quiet --budget 1000 --json "$TMP/bench.json" --md "$TMP/bench.md"
  expect_rc 0 "bench --suite all --quick"
  expect_grep "^== tracy-5k: " "$TMP/out" "bench: the table names each scene"
  expect_grep "^== static-level-10k: " "$TMP/out" "bench --suite all: the static level's scene"
  expect_grep " exact [(]" "$TMP/out" "bench: pair sets verified"
  checks=$((checks + 1))
  if grep -E "MISSES|PHANTOM|ERROR|unverified" "$TMP/out" >"$TMP/bad"; then
    fail "bench: a contender failed verification or stopped"
    head -n 5 "$TMP/bad" | sed 's/^/    /'
  fi
  checks=$((checks + 1))
  python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$TMP/bench.json" 2>"$TMP/err" ||
    fail "bench --json: not valid JSON: $(head -n 1 "$TMP/err")"
  expect_grep "sapling bench --suite all --quick --quiet --budget 1000" "$TMP/bench.md" "bench --md: the command that produced it"
  cli bench --suite cluster --quick --frames 20 --quiet --budget 1000 --contenders unisize,dual-axis --frames-csv "$TMP/frames.csv"
  expect_rc 0 "bench --suite cluster --quick --frames-csv"
  expect_grep '^scene,contender,frame,ms,pairs$' "$TMP/frames.csv" "bench --frames-csv: header"
  expect_grep '^cluster-4k-c20,unisize,20,[0-9.e+-]+,[0-9]+$' "$TMP/frames.csv" "bench --frames-csv: last frame"
  if python3 "$SRC/../../bench/plot_frames.py" "$TMP/frames.csv" "$TMP/frames.svg" 2>"$TMP/err"; then
    expect_grep '^<svg ' "$TMP/frames.svg" "plot_frames.py writes an SVG"
  else
    checks=$((checks + 1))
    fail "plot_frames.py: $(head -n 1 "$TMP/err")"
  fi
  cli bench --suite unisize --quick --quiet --budget 1000 --contenders box-pruning-oneshot,unisize,dual-axis --md "$TMP/uni.md"
  expect_rc 0 "bench --suite unisize --quick"
  expect_grep '^## Table 1 of the unisize paper' "$TMP/uni.md" "bench --suite unisize: Table 1 in the Markdown"
  expect_grep '^\| 4096 +\| 0.2 ' "$TMP/uni.md" "bench --suite unisize: a Table 1 row per n and d"
  # Issue 15: the static level (static-static pairs never reported, verified
  # against the one-shot reference that applies the same rule) and the query
  # benchmark (every answer checked against sapling's; status 4 if one differs).
  cli bench --suite queries --quick --quiet --md "$TMP/queries.md"
  expect_rc 0 "bench --suite queries --quick"
  expect_grep '^### level-3d-static' "$TMP/queries.md" "bench --suite queries: the 3D static world's table"
  expect_grep '\| sapling sap \(static\) \| ray \(closest\) \| [0-9]+ ' "$TMP/out" "bench --suite queries: per-query ns"
  # A bad command line is status 1 in every subcommand (the contract's one table).
  cli bench --suite no-such-suite
  expect_rc 1 "bench: unknown suite"
  cli bench --frames many
  expect_rc 1 "bench: --frames not a number"
  cli bench --contenders no-such-contender
  expect_rc 1 "bench: unknown contender"
  cli bench --threads 1024
  expect_rc 1 "bench: --threads beyond the pool's limit"
}

# ---------------------------------------------------------------------------
# Hostile command lines (issue 29): every failed write is status 1 with the
# destination named, an output file that cannot be opened is found before
# the work (nothing on stdout), lists with empty or repeated entries, stray
# arguments and an algorithm named with empty settings are refused.

# hostile STATUS PATTERN WHAT ARGS...: sapling ARGS exits with STATUS and
# its stderr has a line matching PATTERN (extended regex).
hostile() {
  local status=$1 pattern=$2 what=$3
  shift 3
  cli "$@"
  expect_rc "$status" "$what"
  expect_grep "$pattern" "$TMP/err" "$what: the message names the problem"
}

# full_stdout PATTERN WHAT ARGS...: the same with standard output on
# /dev/full (every write fails): status 1 and PATTERN on stderr.
full_stdout() {
  local pattern=$1 what=$2
  shift 2
  "$SAPLING" "$@" >/dev/full 2>"$TMP/err"
  rc=$?
  expect_rc 1 "$what (stdout /dev/full)"
  expect_grep "$pattern" "$TMP/err" "$what (stdout /dev/full): the message names the problem"
}

test_hostile() {
  local trace=$DATA/example.trace help
  # A tiny bench run: one small scene, one frame, one contender.
  local scene=(--scene tracy-fig2-1k --frames 1 --quiet)
  local nospace='No space left on device'

  # Standard output that cannot be written, in every subcommand.
  if [ -w /dev/full ]; then
    for help in help --help -h "replay --help" "gen -h" "run --help"; do
      # shellcheck disable=SC2086
      full_stdout "cannot write standard output: $nospace" "sapling $help" $help
    done
    full_stdout "cannot write standard output: $nospace" "algos" algos
    full_stdout "cannot write standard output: $nospace" "replay" replay "$trace" --algo brute
    full_stdout "cannot write standard output: $nospace" "replay --report hash" replay "$trace" --algo brute --report hash
    full_stdout "cannot write standard output: $nospace" "gen --out -" gen tracy --n 100 --frames 2 --out -
    full_stdout "cannot write standard output: $nospace" "run" run --n 100 --frames 2
    full_stdout "cannot write standard output: $nospace" "bench --help" bench --help
    full_stdout "cannot write standard output: $nospace" "bench --list" bench --list
    full_stdout "cannot write standard output: $nospace" "bench (a scene)" bench "${scene[@]}" --contenders sap
    full_stdout "cannot write standard output: $nospace" "bench --suite queries" bench --suite queries --quick \
      --quiet --frames 1

    # Output files that cannot be written (found at write time).
    hostile 1 "cannot write /dev/full: $nospace" "replay --out /dev/full" replay "$trace" --algo brute --out /dev/full
    hostile 1 "cannot write /dev/full: $nospace" "gen --out /dev/full" gen tracy --n 100 --frames 2 --out /dev/full
    hostile 1 "cannot write --md /dev/full: $nospace" "bench --md /dev/full" bench "${scene[@]}" --contenders sap \
      --md /dev/full
    hostile 1 "cannot write --json /dev/full: $nospace" "bench --json /dev/full" bench "${scene[@]}" \
      --contenders sap --json /dev/full
    hostile 1 "cannot write --frames-csv /dev/full: $nospace" "bench --frames-csv /dev/full" bench "${scene[@]}" \
      --contenders sap --frames-csv /dev/full
    hostile 1 "cannot write --md /dev/full: $nospace" "bench --suite queries --md /dev/full" bench --suite queries \
      --quick --quiet --frames 1 --md /dev/full
  else
    echo "note: no writable /dev/full here: the failed-write checks were not run"
  fi

  # Output files that cannot be opened are found before the work: nothing
  # on stdout, the option and the file named, and no "contender" blamed.
  local bad
  : >"$TMP/a-file"
  for bad in "$TMP/no-such-dir/out" "$TMP/a-file/out" "$TMP"; do
    local option
    for option in --md --json --frames-csv; do
      hostile 1 "cannot open $option $bad for writing: " "bench $option $bad" bench "${scene[@]}" \
        --contenders sap "$option" "$bad"
      expect_empty "$TMP/out" "bench $option $bad: found before the run (stdout)"
      checks=$((checks + 1))
      if grep -q "contender" "$TMP/err"; then fail "bench $option $bad: the message blames a contender"; fi
    done
    hostile 1 "cannot open --md $bad for writing: " "bench --suite queries --md $bad" bench --suite queries \
      --quick --quiet --frames 1 --md "$bad"
    expect_empty "$TMP/out" "bench --suite queries --md $bad: found before the run (stdout)"
    hostile 1 "cannot open $bad for writing: " "replay --out $bad" replay "$trace" --algo brute --out "$bad"
    hostile 1 "cannot open $bad for writing: " "gen --out $bad" gen tracy --n 100 --frames 2 --out "$bad"
  done
  if [ "$(id -u)" -ne 0 ]; then
    mkdir -p "$TMP/read-only" && chmod 555 "$TMP/read-only"
    hostile 1 "cannot open --md $TMP/read-only/x.md for writing: " "bench --md in a read-only directory" \
      bench "${scene[@]}" --contenders sap --md "$TMP/read-only/x.md"
    expect_empty "$TMP/out" "bench --md in a read-only directory: found before the run (stdout)"
    chmod 755 "$TMP/read-only"
  fi
  # Proving a file writable before the work leaves nothing behind when the
  # command then fails, and an existing file as it was.
  if grep -qx unisize <<<"$ALGOS"; then
    rm -f "$TMP/refused.out"
    hostile 3 "unsupported by unisize" "replay --algo unisize --out FILE (refused)" replay "$trace" \
      --algo unisize --out "$TMP/refused.out"
    checks=$((checks + 1))
    if [ -e "$TMP/refused.out" ]; then fail "replay refused with --out FILE: the file was left behind"; fi
    printf 'keep me\n' >"$TMP/kept.out"
    hostile 3 "unsupported by unisize" "replay --algo unisize --out EXISTING (refused)" replay "$trace" \
      --algo unisize --out "$TMP/kept.out"
    expect_grep '^keep me$' "$TMP/kept.out" "replay refused with --out EXISTING: the file is as it was"
  fi
  # ... and the first write replaces a longer file whole.
  head -c 100000 /dev/zero >"$TMP/long.out"
  cli replay "$trace" --algo brute --report hash --out "$TMP/long.out"
  expect_rc 0 "replay --out over a longer file"
  expect_file "$TMP/long.out" "$DATA/example.hash" "replay --out over a longer file"
  head -c 10000000 /dev/zero >"$TMP/long.trace"
  cli gen tracy --n 100 --frames 2 --out "$TMP/long.trace"
  expect_rc 0 "gen --out over a longer file"
  "$SAPLING" gen tracy --n 100 --frames 2 --out - >"$TMP/short.trace"
  expect_file "$TMP/long.trace" "$TMP/short.trace" "gen --out over a longer file"
  rm -f "$TMP/never.trace"
  hostile 1 "no-such-file" "replay of a missing trace with --out FILE" replay "$TMP/no-such-file.trace" --algo brute \
    --out "$TMP/never.trace"
  checks=$((checks + 1))
  if [ -e "$TMP/never.trace" ]; then fail "replay of a missing trace: --out FILE was left behind"; fi

  # Lists: empty, with an empty entry, with a repeated entry.
  # (Should one be taken, the run stays small: quick scenes, one contender.)
  local option list
  for option in --scene --contenders --exclude; do
    local rest=(--quick --frames 1 --quiet --budget 1 --contenders sap)
    [ "$option" = --scene ] || rest=(--quick --frames 1 --quiet --budget 1 --scene tracy-fig2-1k)
    for list in '' ',' 'sap,' ',sap' 'sap,,brute'; do
      hostile 1 "$option: (an empty list|an empty entry)" "bench $option '$list'" bench "${rest[@]}" "$option" "$list"
      expect_empty "$TMP/out" "bench $option '$list': stdout"
    done
  done
  hostile 1 "--scene: tracy-fig2-1k (is )?(given|repeated) twice" "bench --scene A,A" bench --frames 1 --quiet \
    --contenders sap --scene tracy-fig2-1k,tracy-fig2-1k
  expect_empty "$TMP/out" "bench --scene A,A: stdout"
  hostile 1 "--contenders: sap (is )?(given|repeated) twice" "bench --contenders A,A" bench "${scene[@]}" \
    --contenders sap,sap
  expect_empty "$TMP/out" "bench --contenders A,A: stdout"
  hostile 1 "--contenders: brute (is )?(given|repeated) twice" "bench --contenders A,B,A" bench "${scene[@]}" \
    --contenders brute,sap,brute
  hostile 1 "--exclude: brute (is )?(given|repeated) twice" "bench --exclude A,A" bench "${scene[@]}" \
    --exclude brute,brute
  # NAME: with nothing after the colon, and settings the algorithm refuses:
  # refused before any work.
  hostile 1 "--contenders: .*'sap:'.*settings" "bench --contenders sap:" bench "${scene[@]}" --contenders sap:
  expect_empty "$TMP/out" "bench --contenders sap:: stdout"
  hostile 1 "--exclude: .*'sap:'.*settings" "bench --exclude sap:" bench "${scene[@]}" --exclude sap:
  hostile 1 "--contenders: 'sap:bogus'" "bench --contenders sap:bogus" bench "${scene[@]}" --contenders sap:bogus
  expect_empty "$TMP/out" "bench --contenders sap:bogus: found before the run (stdout)"
  hostile 1 "'sap:'.*settings" "replay --algo sap:" replay "$trace" --algo sap:
  expect_empty "$TMP/out" "replay --algo sap:: stdout"
  hostile 1 "'sap:'.*settings" "run --algo sap:" run --algo sap: --n 100 --frames 2
  expect_empty "$TMP/out" "run --algo sap:: stdout"
  hostile 1 "'brute:'.*settings" "replay --algo=brute:" replay "$trace" --algo=brute:

  # Stray arguments.
  hostile 1 "unexpected argument 'extra'" "bench --list extra" bench --list extra
  expect_empty "$TMP/out" "bench --list extra: stdout"
  hostile 1 "unexpected argument 'extra'" "bench extra" bench "${scene[@]}" --contenders sap extra
  expect_empty "$TMP/out" "bench extra: stdout"
  for help in help --help -h; do
    hostile 1 "unexpected argument 'extra'" "sapling $help extra" "$help" extra
    expect_empty "$TMP/out" "sapling $help extra: stdout"
  done
  hostile 1 "unexpected argument 'extra'" "algos extra" algos extra
  hostile 1 "unexpected argument 'extra'" "run extra" run --n 100 --frames 2 extra
  hostile 1 "more than one SCENARIO" "gen tracy extra" gen tracy extra --out -
  hostile 1 "more than one TRACE" "replay TRACE extra" replay "$trace" extra --algo brute
}

case $AREA in
  contract) test_contract ;;
  errors)
    test_errors
    test_errors_version_2
    ;;
  usage) test_usage ;;
  gen) test_gen ;;
  counts) test_counts ;;
  run) test_run ;;
  bench) test_bench ;;
  hostile) test_hostile ;;
  *)
    echo "unknown area '$AREA'" >&2
    exit 2
    ;;
esac

echo "cli $AREA: $checks checks, $failures failed (algorithms: ${ALGOS//$'\n'/ })"
[ "$failures" -eq 0 ]
