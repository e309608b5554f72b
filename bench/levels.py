#!/usr/bin/env python3
"""A level's life (issue 31, item 5), medians of repeated runs of levels_bench.

    bench/levels.py BUILD/bench/levels_bench [--runs 5] [--frames 60] [--side 1000] [--movers 10000] [--threads 1]

Each run is a fresh process (its resident set its own). Three scenes, each
against its reference: load (the level as static objects in one batch with
the movers, against the same boxes all dynamic on sap), play (the movers
among the static level, against the movers alone) and unload (a world of
the same boxes, dynamic, removed at once from multi-sap, against sap; and
the static level removed). --threads sets Options::threads for every scene. Prints a Markdown table of medians: wall and CPU
milliseconds (the CPU clock counts only this process: the machine is
shared), the bytes memory_bytes() reports and the resident set after the
removal.
"""
import argparse
import statistics
import subprocess

SCENES = [  # (label, mode, algorithm, tiles)
    ("load: 1M static + 10k movers (sap)", "static", "sap", "spread"),
    ("load: the same boxes, all dynamic (sap)", "dynamic", "sap", "spread"),
    ("load: 1M static, dense tiles (sap)", "static", "sap", "dense"),
    ("load: dense tiles, all dynamic (sap)", "dynamic", "sap", "dense"),
    ("play: 10k movers alone (sap)", "movers", "sap", "spread"),
    ("unload: 1M dynamic world (multi-sap)", "dynamic", "multi-sap", "spread"),
]
KEYS = ["frame0_ms", "frame0_cpu_ms", "frame_ms", "frame_cpu_ms", "worst_ms", "worst_cpu_ms", "removal_ms",
        "removal_cpu_ms", "bytes_after", "rss_played_mb", "rss_after_mb"]


def run(binary, mode, algorithm, tiles, args):
    out = subprocess.run([binary, mode, algorithm, str(args.side), str(args.movers), str(args.frames), tiles,
                          str(args.threads)],
                         check=True, capture_output=True, text=True).stdout
    fields = dict(kv.split("=", 1) for kv in out.split())
    return {k: float(fields[k]) for k in KEYS}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("binary")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--frames", type=int, default=60)
    parser.add_argument("--side", type=int, default=1000)
    parser.add_argument("--movers", type=int, default=10000)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    results = {label: [] for label, *_ in SCENES}
    for _ in range(args.runs):  # interleaved: load on the machine hits every scene alike
        for label, mode, algorithm, tiles in SCENES:
            results[label].append(run(args.binary, mode, algorithm, tiles, args))
    print(f"runs {args.runs}, frames {args.frames}, side {args.side}, movers {args.movers}, threads {args.threads}; medians, wall / CPU ms\n")
    print("| scene | frame 0 | frame | worst frame | removal frame | bytes after | RSS played MB | RSS after MB |")
    print("|---|---|---|---|---|---|---|---|")
    for label, *_ in SCENES:
        m = {k: statistics.median(r[k] for r in results[label]) for k in KEYS}
        print(f"| {label} | {m['frame0_ms']:.0f} / {m['frame0_cpu_ms']:.0f} | {m['frame_ms']:.2f} / "
              f"{m['frame_cpu_ms']:.2f} | {m['worst_ms']:.2f} / {m['worst_cpu_ms']:.2f} | {m['removal_ms']:.0f} / "
              f"{m['removal_cpu_ms']:.0f} | {m['bytes_after']:.0f} | {m['rss_played_mb']:.0f} | "
              f"{m['rss_after_mb']:.1f} |")


if __name__ == "__main__":
    main()
