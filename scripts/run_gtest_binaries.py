#!/usr/bin/env python3
"""Run a build's GoogleTest binaries whole, in shards, on every core.

CTest runs each discovered GoogleTest test in a process of its own. Under
ASan a test binary's start costs about 0.2 s (differential_test's 2,565
parameterized tests are registered by every process), which for the ~3,900
tests was a third of CI's sanitizer stage. This script asks CTest which
binaries hold the tests (`ctest --show-only=json-v1`), runs each binary in
shards (GoogleTest's own GTEST_TOTAL_SHARDS / GTEST_SHARD_INDEX), the
costliest shards first, `--jobs` at a time, and prints a failing shard's
whole output. Tests that are not GoogleTest's (scripts, pytest, mpirun) are
left to CTest: `ctest -R '^[^.]*$'` selects them, GoogleTest names having a
dot.

    run_gtest_binaries.py BUILD_DIR [--jobs N] [--exclude GTEST_FILTER]
                          [--costs CTestCostData.txt]

--exclude is a GoogleTest negative filter ('A.*:B.C'); --costs is a CTest
cost file from an earlier run (any build type) that orders and sizes shards.
"""

import argparse
import collections
import concurrent.futures
import json
import math
import os
import re
import subprocess
import sys
import time


def gtest_binaries(build_dir):
    """{(binary, working directory): [test names]} for CTest's GoogleTest tests."""
    listing = subprocess.run(
        ["ctest", "--show-only=json-v1"], cwd=build_dir, check=True, capture_output=True, text=True
    ).stdout
    binaries = collections.defaultdict(list)
    for test in json.loads(listing)["tests"]:
        command = test.get("command", [])
        if not any(arg.startswith("--gtest_filter=") for arg in command):
            continue
        properties = {p["name"]: p["value"] for p in test.get("properties", [])}
        unknown = set(properties) - {"TIMEOUT", "WORKING_DIRECTORY", "SKIP_REGULAR_EXPRESSION", "LABELS"}
        if unknown:
            sys.exit(f"{test['name']}: CTest property {sorted(unknown)} is not carried over by this script")
        binaries[(command[0], properties.get("WORKING_DIRECTORY", build_dir))].append(test["name"])
    return binaries


def read_costs(path):
    costs = {}
    if path and os.path.exists(path):
        with open(path) as f:
            for line in f:
                fields = line.split()
                if len(fields) == 3:
                    costs[fields[0]] = float(fields[2])
    return costs


def run_shard(binary, cwd, shard, shards, exclude):
    env = dict(os.environ, GTEST_TOTAL_SHARDS=str(shards), GTEST_SHARD_INDEX=str(shard))
    args = [binary, "--gtest_brief=1"] + ([f"--gtest_filter=-{exclude}"] if exclude else [])
    start = time.monotonic()
    result = subprocess.run(args, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return result.returncode, result.stdout, time.monotonic() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("build_dir")
    parser.add_argument("--jobs", type=int, default=os.cpu_count())
    parser.add_argument("--exclude", default="")
    parser.add_argument("--costs")
    args = parser.parse_args()

    binaries = gtest_binaries(args.build_dir)
    costs = read_costs(args.costs)
    # Shards of about a sixteenth of a core's share, a binary never split
    # finer than its tests; a test without a recorded cost counts a second.
    cost = {key: sum(costs.get(name, 1.0) for name in names) for key, names in binaries.items()}
    grain = max(sum(cost.values()) / (16 * args.jobs), 1e-9)
    work = []
    for key, names in binaries.items():
        shards = max(1, min(len(names), math.ceil(cost[key] / grain)))
        work += [(cost[key] / shards, key, shard, shards) for shard in range(shards)]
    work.sort(key=lambda item: -item[0])

    failed, passed = [], 0
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = {
            pool.submit(run_shard, binary, cwd, shard, shards, args.exclude): (binary, shard, shards)
            for _, (binary, cwd), shard, shards in work
        }
        for future in concurrent.futures.as_completed(futures):
            binary, shard, shards = futures[future]
            code, output, seconds = future.result()
            name = f"{os.path.basename(binary)} shard {shard + 1}/{shards}"
            if code != 0:
                failed.append(name)
                print(f"--- FAILED: {name} (exit {code}, {seconds:.1f} s)\n{output}", flush=True)
            else:
                count = re.search(r"^\[  PASSED  \] (\d+) tests?\.", output, re.M)
                passed += int(count.group(1)) if count else 0
                print(f"ok {name} ({seconds:.1f} s)", flush=True)
    tests = sum(len(names) for names in binaries.values())
    print(f"{len(binaries)} GoogleTest binaries ({tests} tests before --exclude) in {len(work)} shards, "
          f"{passed} tests passed: "
          + (f"{len(failed)} failed: {', '.join(failed)}" if failed else "all passed"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
