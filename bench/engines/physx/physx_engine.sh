#!/usr/bin/env bash
# sapling inside PhysX 5 (issue 30, item 4, PhysX part): a pile of boxes
# through PhysX's PxScene with the CPU broad phase chosen through PhysX's own
# factory: PhysX's ABP and MBP, and a sapling-backed Bp::BroadPhase
# (sapling_bp.cpp) with `auto` and named algorithms. Benchmark only; never
# part of `make test`.
#
# No PhysX code is kept in this repository. The script exports PhysX's
# sources (physx/include, physx/source, physx/compiler, the CMake templates)
# from a PhysX git snapshot into a directory outside the repository, applies
# physx_factory.patch (one branch at the top of Bp::BroadPhase::create in
# physx/source/lowlevelaabb/src/BpBroadPhase.cpp: ask
# saplingCreateBroadPhase() first, which answers only when SAPLING_PHYSX_BP
# is set), configures PhysX's own CMake (physx/compiler/public) directly,
# without packman (which needs the network; the CPU-only SDK needs none of
# its packages), builds the static SDK (target PhysX: 367 translation units,
# about 3 minutes with 2 jobs), installs sapling from this repository into a
# prefix there, and builds and runs our driver physx_scene_bench.cpp.
#
#   PHYSX_GIT=/path/to/PhysX.git bench/engines/physx/physx_engine.sh [driver options]
#     driver options: --boxes N (4000) --steps S (300) --repeats R (3)
#                     --churn K (60: every K steps a share of the boxes is
#                     replaced; 0 never) --churn-share F (0.02) --spread H
#                     (half side of the walled ground, m; default sqrt(N)/4:
#                     a pile some 1.5 m deep; 0.6 sqrt(N): boxes one or two
#                     deep) --statics N (0: rubble on the ground)
#                     --kinematics N (0: boxes sweeping circles) --compound F
#                     (0: share of bodies of two overlapping boxes)
#                     --shift-at S (PxScene::shiftOrigin at step S)
#                     --contenders abp,mbp,auto,sap,multi-sap,box-pruning
#                       (abp, mbp, pabp, sap-physx: PhysX's own; any other
#                       name: a sapling algorithm, with settings after ':')
#                     --check (sapling runs with PhysX's ABP beside it on the
#                       same update data; every frame's pair set is compared
#                       with ABP's, every SAPLING_PHYSX_BRUTE (25) frames with
#                       an exact all-pairs test; exit status 1 on a difference)
#                     --clock cpu|wall (cpu: thread CPU time; every task runs
#                       on the calling thread) --raw (every run's figures)
#   PHYSX_GIT   a PhysX git directory (bare or not); the `fetch` tool's
#               snapshot of github:NVIDIA-Omniverse/PhysX is one
#               (/work/.mirror/NVIDIA-Omniverse+PhysX/repo). Or PHYSX_SRC: a
#               PhysX checkout (its physx/ folders are copied, not changed).
#   PHYSX_REV   commit to export (default 5ca9f47..., tag 107.3-physx-5.6.1)
#   WORK_DIR    where PhysX's sources and the builds go (default
#               ${TMPDIR:-/tmp}/sapling-physx-engine); must be outside the
#               repository. A second run rebuilds only what changed.
#   JOBS        build parallelism (default 2)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
rev=${PHYSX_REV:-5ca9f472105a90d70d957c243cb0ef36fe251a9f}
work=${WORK_DIR:-${TMPDIR:-/tmp}/sapling-physx-engine}
jobs=${JOBS:-2}
case "$(realpath -m "$work")/" in "$repo"/*) echo "WORK_DIR must be outside the repository" >&2; exit 2 ;; esac

# 1. PhysX's sources, patched, outside the repository. Exported into a fresh
# folder and copied over the previous export only where a file changed, so
# that a second run rebuilds nothing it need not.
src="$work/physx-src"
fresh="$work/physx-export"
rm -rf "$fresh"
mkdir -p "$fresh" "$src"
dirs=(physx/include physx/source physx/compiler physx/buildtools/templates physx/version.txt)
if [[ -n "${PHYSX_SRC:-}" ]]; then
  for d in "${dirs[@]}"; do mkdir -p "$fresh/$(dirname "$d")"; cp -r "$PHYSX_SRC/$d" "$fresh/$d"; done
elif [[ -n "${PHYSX_GIT:-}" ]]; then
  git --git-dir="$PHYSX_GIT" archive "$rev" "${dirs[@]}" | tar -x -C "$fresh"
else
  echo "set PHYSX_GIT (a PhysX git directory) or PHYSX_SRC (a PhysX checkout)" >&2
  exit 2
fi
patch -d "$fresh" -p1 --quiet <"$here/physx_factory.patch"
(cd "$fresh" && find . -type f) | while read -r f; do
  if ! cmp -s "$fresh/$f" "$src/$f"; then mkdir -p "$(dirname "$src/$f")"; cp "$fresh/$f" "$src/$f"; fi
done
rm -rf "$fresh"
px="$src/physx"

# 2. The PhysX SDK, CPU only, static, release (PhysX's own CMake, no packman).
sdk="$work/sdk-build"
out="$work/sdk-out"
if [[ ! -f "$sdk/build.ninja" ]]; then
  cmake -S "$px/compiler/public" -B "$sdk" -G Ninja -DPHYSX_ROOT_DIR="$px" -DTARGET_BUILD_PLATFORM=linux -DPX_OUTPUT_ARCH=x86 \
    -DPX_BUILDSNIPPETS=OFF -DPX_BUILDPVDRUNTIME=OFF -DPX_GENERATE_STATIC_LIBRARIES=ON -DCMAKE_BUILD_TYPE=release \
    -DPX_OUTPUT_LIB_DIR="$out" -DPX_OUTPUT_BIN_DIR="$out" -DCMAKE_C_COMPILER=gcc -DCMAKE_CXX_COMPILER=g++ >/dev/null
fi
ninja -C "$sdk" -j "$jobs" PhysX >&2
lib="$out/bin/linux.x86_64/release"

# 3. sapling, installed into a prefix under $work.
build="$work/sapling-build"
prefix="$work/sapling-prefix"
cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSAPLING_BUILD_TESTS=OFF -DSAPLING_BUILD_BENCH=OFF \
  -DSAPLING_BUILD_TOOLS=OFF -DSAPLING_BUILD_PYTHON=OFF -DSAPLING_BUILD_DEMO=OFF -DSAPLING_BUILD_BULLET=OFF \
  -DSAPLING_BUILD_MPI=OFF >/dev/null
cmake --build "$build" -j "$jobs" >&2
cmake --install "$build" --prefix "$prefix" >/dev/null

# 4. Our adapter and driver (CMakeLists.txt here: find_package(sapling)).
cmake -S "$here" -B "$work/bench-build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPHYSX_ROOT="$px" -DPHYSX_LIB_DIR="$lib" \
  -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/bench-build" -j "$jobs" >&2
echo "PhysX $(head -1 "$px/version.txt") ($rev), sapling $(git -C "$repo" rev-parse --short HEAD), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
"$work/bench-build/physx_scene_bench" "$@"
