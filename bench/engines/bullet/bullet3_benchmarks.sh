#!/usr/bin/env bash
# Bullet's own benchmark scenes (bullet3's examples/Benchmarks/BenchmarkDemo.cpp:
# 3000 boxes, 1000-box stack, ragdolls, convex stack, primitives vs mesh,
# convex vs mesh, 500 rays, convex pack) with the broad phase swapped:
# btDbvtBroadphase (Bullet's default), bt32BitAxisSweep3 and sapling::bullet
# (issue 30, item 3). Benchmark only; never part of `make test`.
#
# No Bullet code is kept in this repository. The script exports Bullet's
# example sources (examples/Benchmarks, examples/MultiThreadedDemo,
# examples/CommonInterfaces) from a bullet3 git snapshot into a directory
# outside the repository, applies bullet3_benchmarks.patch (three lines:
# CommonRigidBodyMTBase.cpp creates its broad phase through
# saplingBenchBroadphase() instead of `new btDbvtBroadphase()`), and builds
# them with our timing driver bullet3_benchmarks.cpp against Debian's
# libbullet-dev (3.24; the example code needs nothing newer) and an installed
# sapling. The demo runs headless through Bullet's DummyGUIHelper.
#
#   BULLET3_GIT=/path/to/bullet3.git bench/engines/bullet/bullet3_benchmarks.sh [driver options]
#     driver options: --steps N (300) --repeats R (3) --scenes 1,2,...,8
#                     --contenders dbvt,axis3,auto,sap,box-pruning,multi-sap
#                     --clock cpu|wall (cpu: thread CPU time) --raw --zones
#                     --check (sapling::bullet's cache against exact overlaps)
#   BULLET3_GIT   a bullet3 git directory (bare or not); the `fetch` tool's
#                 snapshot of github:bulletphysics/bullet3 is one
#                 (/work/.mirror/bulletphysics+bullet3/repo). Or BULLET3_SRC: a
#                 bullet3 checkout (its examples/ are copied, not changed).
#                 (git archive of the fetch snapshot may print "invalid object
#                 ... data/toys/concave_box.cdf": a blob the snapshot lacks,
#                 outside the three folders exported; harmless.)
#   BULLET3_REV   commit to export (default the one the figures were measured at)
#   WORK_DIR      where Bullet's sources and the build go (default
#                 ${TMPDIR:-/tmp}/sapling-bullet3); must be outside the repository.
#   JOBS          build parallelism (default 2)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
rev=${BULLET3_REV:-6c888f4abd7b46f572587360cc214985f02e5c6b}
work=${WORK_DIR:-${TMPDIR:-/tmp}/sapling-bullet3}
jobs=${JOBS:-2}
case "$(realpath -m "$work")/" in "$repo"/*) echo "WORK_DIR must be outside the repository" >&2; exit 2 ;; esac
pkg-config --exists bullet || { echo "needs libbullet-dev (scripts/install-deps.sh)" >&2; exit 2; }

# 1. Bullet's example sources, patched, outside the repository.
src="$work/bullet3"
rm -rf "$src"
mkdir -p "$src"
dirs=(examples/Benchmarks examples/MultiThreadedDemo examples/CommonInterfaces)
if [[ -n "${BULLET3_SRC:-}" ]]; then
  for d in "${dirs[@]}"; do mkdir -p "$src/$(dirname "$d")"; cp -r "$BULLET3_SRC/$d" "$src/$d"; done
elif [[ -n "${BULLET3_GIT:-}" ]]; then
  git --git-dir="$BULLET3_GIT" archive "$rev" "${dirs[@]}" | tar -x -C "$src"
else
  echo "set BULLET3_GIT (a bullet3 git directory) or BULLET3_SRC (a bullet3 checkout)" >&2
  exit 2
fi
patch -d "$src" -p1 --quiet <"$here/bullet3_benchmarks.patch"

# 2. sapling with its Bullet adapter, installed into a prefix under $work.
build="$work/sapling-build"
prefix="$work/sapling-prefix"
cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSAPLING_BUILD_TESTS=OFF -DSAPLING_BUILD_BENCH=OFF \
  -DSAPLING_BUILD_TOOLS=OFF -DSAPLING_BUILD_PYTHON=OFF -DSAPLING_BUILD_DEMO=OFF -DSAPLING_BUILD_MPI=OFF -DSAPLING_BUILD_BULLET=ON >/dev/null
cmake --build "$build" --target sapling_bullet -j "$jobs" >&2
cmake --install "$build" --prefix "$prefix" >/dev/null

# 3. The demo and our driver, one flag set for every contender.
flags=(-std=c++20 -O2 -DNDEBUG -w -I"$src/examples" -I"$prefix/include" $(pkg-config --cflags bullet))
objs=()
for f in "$src/examples/Benchmarks/BenchmarkDemo.cpp" "$src/examples/MultiThreadedDemo/CommonRigidBodyMTBase.cpp" \
  "$here/bullet3_benchmarks.cpp"; do
  o="$work/$(basename "$f" .cpp).o"
  g++ "${flags[@]}" -c "$f" -o "$o" &
  objs+=("$o")
  (( ${#objs[@]} % jobs == 0 )) && wait
done
wait
g++ -o "$work/bullet3_benchmarks" "${objs[@]}" -L"$prefix/lib" -lsapling_bullet -lsapling \
  $(pkg-config --libs bullet) -pthread
echo "bullet3 $rev, $(pkg-config --modversion bullet) (Debian libbullet), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
"$work/bullet3_benchmarks" "$@"
