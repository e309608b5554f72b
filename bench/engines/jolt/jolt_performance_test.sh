#!/usr/bin/env bash
# Jolt's own PerformanceTest scenes (Ragdoll, Pyramid, ConvexVsMesh, LargeMesh,
# MaxBodies, CharacterVirtual, HighSpeed) with Jolt's BroadPhaseQuadTree and
# with sapling_jolt::SaplingBroadPhase, a JPH::BroadPhase on sapling (issue
# 30, item 4). Benchmark only; never part of `make test`.
#
# No Jolt code is kept in this repository. The script exports Jolt's library,
# build files, PerformanceTest and the assets it reads from a JoltPhysics git
# snapshot into a directory outside the repository, applies
# jolt_performance_test.patch (PhysicsSystem::Init creates its broad phase
# through SaplingBenchCreateBroadPhase(), jolt_hook.cpp, when built with
# JPH_SAPLING_BENCH; Build/CMakeLists.txt compiles our adapter into the Jolt
# library and builds our check program), builds it once (CMake build type
# Distribution, Jolt's benchmark configuration) and chooses the broad phase at
# run time with SAPLING_JOLT_BROAD_PHASE=quadtree|sapling. Both broad phases
# run inside the same timing wrapper (jolt_hook.cpp), which reports the time
# spent in broad-phase calls.
#
#   JOLT_GIT=/work/.mirror/jrouwe+JoltPhysics/repo bench/engines/jolt/jolt_performance_test.sh
#   JOLT_GIT      a JoltPhysics git directory (bare or not); the `fetch` tool's
#                 snapshot of github:jrouwe/JoltPhysics is one. Or JOLT_SRC: a
#                 JoltPhysics checkout (copied, not changed).
#   JOLT_REV      commit to export (default the one the figures were measured at)
#   WORK_DIR      where Jolt's sources and the builds go (default
#                 ${TMPDIR:-/tmp}/sapling-jolt); must be outside the repository.
#   JOBS          build parallelism (default 2)
#   SCENES        scenes to run (default: Pyramid ConvexVsMesh CharacterVirtual
#                 HighSpeed, and Ragdoll where Assets/terrain2.bof is present,
#                 which the fetch snapshot lacks; LargeMesh and MaxBodies only when
#                 named: LargeMesh first searches the largest mesh Jolt can build,
#                 over 5 minutes and 8 GB here before its first step, MaxBodies
#                 simulates 8.4M bodies with an 8 GB temporary allocator)
#   THREADS       thread counts (default "1 $(nproc)")
#   STEPS         physics steps per run (PerformanceTest -i, default 500)
#   QUALITY       Discrete or LinearCast (PerformanceTest -q, default Discrete)
#   REPEATS       runs per scene, thread count and broad phase (default 3; medians)
#   SAPLING_ALGORITHM, SAPLING_THREADS   passed to the adapter (auto, 1)
#   SKIP_BUILD=1  reuse the build in WORK_DIR;  SKIP_CHECK=1  skip jolt_check
# Output: the raw runs in $WORK_DIR/runs.csv, the table on stdout (markdown).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
rev=${JOLT_REV:-3b47ec390cb9b933769183eff599f72195c5873c}
work=${WORK_DIR:-${TMPDIR:-/tmp}/sapling-jolt}
jobs=${JOBS:-2}
threads=${THREADS:-"1 $(nproc)"}
steps=${STEPS:-500}
quality=${QUALITY:-Discrete}
repeats=${REPEATS:-3}
case "$(realpath -m "$work")/" in "$repo"/*) echo "WORK_DIR must be outside the repository" >&2; exit 2 ;; esac
mkdir -p "$work"
src="$work/JoltPhysics"
build="$work/jolt-build"

if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
  # 1. Jolt's sources, patched, outside the repository.
  rm -rf "$src"
  mkdir -p "$src"
  paths=(Jolt Build PerformanceTest LICENSE Assets/Human Assets/Human.tof Assets/terrain2.bof)
  if [[ -n "${JOLT_SRC:-}" ]]; then
    for p in "${paths[@]}"; do
      [[ -e "$JOLT_SRC/$p" ]] && { mkdir -p "$src/$(dirname "$p")"; cp -r "$JOLT_SRC/$p" "$src/$p"; }
    done
  elif [[ -n "${JOLT_GIT:-}" ]]; then
    present=()
    for p in "${paths[@]}"; do
      if git --git-dir="$JOLT_GIT" cat-file -e "$rev:$p" 2>/dev/null; then present+=("$p")
      else echo "note: $p is not in the snapshot (the scene that reads it is skipped)" >&2; fi
    done
    # One path at a time: a snapshot may lack large blobs elsewhere under
    # Assets/, and an archive of several paths can trip over them.
    for p in "${present[@]}"; do git --git-dir="$JOLT_GIT" archive "$rev" "$p" | tar -x -C "$src"; done
  else
    echo "set JOLT_GIT (a JoltPhysics git directory) or JOLT_SRC (a JoltPhysics checkout)" >&2
    exit 2
  fi
  patch -d "$src" -p1 --quiet <"$here/jolt_performance_test.patch"

  # 2. sapling, installed into a prefix under $work.
  cmake -S "$repo" -B "$work/sapling-build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSAPLING_BUILD_TESTS=OFF \
    -DSAPLING_BUILD_BENCH=OFF -DSAPLING_BUILD_TOOLS=OFF -DSAPLING_BUILD_BULLET=OFF -DSAPLING_BUILD_MPI=OFF >/dev/null
  cmake --build "$work/sapling-build" --target sapling -j "$jobs" >&2
  cmake --install "$work/sapling-build" --prefix "$work/sapling-prefix" >/dev/null

  # 3. Jolt (Distribution: no profiler, no asserts, no debug renderer) with the
  #    adapter, PerformanceTest and our check program. Link-time optimisation
  #    is off to keep the build short on two cores (for both broad phases).
  cmake -S "$src/Build" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Distribution -DTARGET_UNIT_TESTS=OFF \
    -DTARGET_HELLO_WORLD=OFF -DTARGET_SAMPLES=OFF -DTARGET_VIEWER=OFF -DTARGET_PERFORMANCE_TEST=ON \
    -DINTERPROCEDURAL_OPTIMIZATION=OFF -DENABLE_ALL_WARNINGS=OFF -DGENERATE_DEBUG_SYMBOLS=OFF -DJPH_USE_DX12=OFF \
    -DJPH_USE_VK=OFF -DJPH_USE_MTL=OFF -DCMAKE_PREFIX_PATH="$work/sapling-prefix" \
    -DSAPLING_JOLT_ADAPTER_DIR="$here" >/dev/null
  cmake --build "$build" --target PerformanceTest SaplingJoltCheck -j "$jobs" >&2
  ln -sfn "$src/Assets" "$build/Assets"  # PerformanceTest looks for Assets/ beside itself
fi

# 4. Correctness: sapling's pairs and queries against Jolt's brute force and quadtree.
if [[ "${SKIP_CHECK:-0}" != 1 ]]; then
  timeout 600 "$build/SaplingJoltCheck" 60 3000 1 >&2
  timeout 600 "$build/SaplingJoltCheck" 10 8000 2 >&2
fi

# 5. The scenes, the two broad phases alternated run by run.
if [[ -z "${SCENES:-}" ]]; then
  SCENES="Pyramid ConvexVsMesh CharacterVirtual HighSpeed"
  [[ -e "$src/Assets/terrain2.bof" ]] && SCENES="Ragdoll $SCENES"
fi
echo "jolt $rev, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), steps $steps, $quality," \
  "sapling algorithm ${SAPLING_ALGORITHM:-auto} threads ${SAPLING_THREADS:-1}" >&2
csv="$work/runs.csv"
echo "scene,threads,bp,run,steps_per_s,hash,bp_ns,pairs_ns,update_ns,notify_ns,query_ns,steps" >"$csv"
for scene in $SCENES; do
  for t in $threads; do
    for ((r = 1; r <= repeats; r++)); do
      for bp in quadtree sapling; do
        out=$(cd "$build" && SAPLING_JOLT_BROAD_PHASE=$bp timeout 900 ./PerformanceTest -s="$scene" -i="$steps" \
          -q="$quality" -t="$t" 2>&1) || { echo "$scene $bp t=$t failed:" >&2; echo "$out" | tail -5 >&2; continue; }
        line=$(echo "$out" | grep -E "^$quality, $t, " | tail -1)
        stat=$(echo "$out" | grep "^sapling-jolt:" | tail -1)
        v() { echo "$stat" | sed -n "s/.* $1=\([0-9]*\).*/\1/p"; }
        sps=$(echo "$line" | cut -d, -f3 | tr -d ' ')
        hash=$(echo "$line" | cut -d, -f4 | tr -d ' ')
        echo "$scene,$t,$bp,$r,$sps,$hash,$(v total_ns),$(v pairs_ns),$(v update_ns),$(v notify_ns),$(v query_ns),$(v steps)" \
          | tee -a "$csv" >&2
      done
    done
  done
done

# 6. Medians and ratios.
python3 - "$csv" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
by = {}
for r in rows:
    if not r["steps_per_s"]:
        continue
    by.setdefault((r["scene"], int(r["threads"]), r["bp"]), []).append(r)
def med(rs, f):
    return statistics.median(f(r) for r in rs)
step_ms = lambda r: 1000.0 / float(r["steps_per_s"])
bp_ms = lambda r: float(r["bp_ns"]) / 1e6 / max(1, int(r["steps"] or 1))
print("| scene | threads | step ms quadtree | step ms sapling | step ratio | bp ms/step quadtree | bp ms/step sapling |"
      " bp share quadtree | bp share sapling | hashes quadtree | hashes sapling |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
scenes = []
for (s, t, b) in by:
    if (s, t) not in scenes:
        scenes.append((s, t))
for s, t in scenes:
    q, p = by.get((s, t, "quadtree"), []), by.get((s, t, "sapling"), [])
    if not q or not p:
        continue
    sq, sp = med(q, step_ms), med(p, step_ms)
    bq, bpp = med(q, bp_ms), med(p, bp_ms)
    # share: broad-phase thread time over the step's thread time (wall x threads)
    hq = sorted({r["hash"] for r in q}); hp = sorted({r["hash"] for r in p})
    print(f"| {s} | {t} | {sq:.3f} | {sp:.3f} | {sp/sq:.3f} | {bq:.3f} | {bpp:.3f} | {bq/(sq*t):.1%} | {bpp/(sp*t):.1%} |"
          f" {' '.join(hq)} | {' '.join(hp)} |")
EOF
