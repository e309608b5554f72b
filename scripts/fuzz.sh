#!/usr/bin/env bash
# The fuzzers' longer campaign (`make fuzz`): each target for FUZZ_SECONDS
# (default 1800, half an hour) under ASan+UBSan, from the seed corpus, the
# findings (crash-*, leak-*, timeout-*) and a log under build-fuzz/campaign/.
#   scripts/fuzz.sh [TARGET ...]     default: trace_reader_fuzz ops_fuzz
# CI runs the same targets for a minute each (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-1800}
targets=("$@")
((${#targets[@]})) || targets=(trace_reader_fuzz ops_fuzz)
bash scripts/install-deps.sh --ci
CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSAPLING_SANITIZE=ON \
  -DSAPLING_BUILD_FUZZ=ON -DSAPLING_BUILD_TESTS=OFF -DSAPLING_BUILD_BENCH=OFF -DSAPLING_BUILD_TOOLS=OFF >/dev/null
cmake --build build-fuzz -j "$(nproc)" --target "${targets[@]}"
status=0
for target in "${targets[@]}"; do
  out=build-fuzz/campaign/$target
  mkdir -p "$out/corpus"
  seeds=fuzz/corpus/${target%%_*}
  [[ -d $seeds ]] || seeds=""
  echo "== $target: ${seconds}s, log $out/log"
  if ! (cd "$out" && "../../fuzz/$target" -max_total_time="$seconds" -print_final_stats=1 corpus \
        ${seeds:+"../../../$seeds"} >log 2>&1); then
    status=1
  fi
  tail -n 12 "$out/log"
  ls "$out" | grep -E '^(crash|leak|timeout|oom)-' && status=1
done
exit $status
