#!/usr/bin/env bash
# Builds and runs scene_bench.cpp: Bullet broad phases side by side on two
# scenes built in the program, modelled on bullet3's examples/Benchmarks
# (3000 falling boxes; a 1000-box stack). Not Bullet's own benchmark program:
# bullet3_benchmarks.sh builds and runs that one. Needs libbullet-dev;
# installs sapling into a temporary prefix.
#   bench/engines/bullet/run.sh [steps]     (300 by default)
set -euo pipefail
cd "$(dirname "$0")/../../.."
steps=${1:-300}
build=${BUILD_DIR:-build-bullet-bench}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSAPLING_BUILD_TESTS=OFF -DSAPLING_BUILD_BENCH=OFF \
  -DSAPLING_BUILD_TOOLS=OFF -DSAPLING_BUILD_PYTHON=OFF -DSAPLING_BUILD_DEMO=OFF -DSAPLING_BUILD_BULLET=ON >/dev/null
cmake --build "$build" --target sapling_bullet
prefix=$(mktemp -d)
cmake --install "$build" --prefix "$prefix" >/dev/null
g++ -std=c++20 -O2 -o "$build/scene_bench" bench/engines/bullet/scene_bench.cpp -I"$prefix/include" \
  $(pkg-config --cflags bullet) -L"$prefix/lib" -lsapling_bullet -lsapling $(pkg-config --libs bullet) -pthread
"$build/scene_bench" "$steps"
