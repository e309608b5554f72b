#!/usr/bin/env python3
"""An independent reference for `sapling replay` (docs/trace-format.md,
versions 1 and 2): reads a valid trace and writes the delta, pairs or hash
report, queries included, by testing every pair of live objects each frame.

    reference_replay.py TRACE delta|pairs|hash

It shares no code with the library: the filter and static rules, the query
rule and the hashes are written here again from the contract, so that
cli_test.sh can check what every algorithm shares, the broad phase's
filtering, against it. O(n^2) per frame: for small traces. Numbers are read
as doubles, which order the floats of a trace as floats do. The trace is
assumed valid (replay it first); errors are not reported.
"""
import sys

ALL = 0xFFFFFFFF


def integer(token):
    return int(token, 16) if token.startswith("0x") else int(token)


def number(token):
    try:
        return float(token)
    except ValueError:
        return float.fromhex(token)


def fnv1a64(words):
    h = 0xCBF29CE484222325
    for w in words:
        for byte in w.to_bytes(4, "little"):
            h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return "%016x" % h


def read(path):
    dims, frames = 3, []
    with open(path) as f:
        for line in f:
            tokens = line.split("#")[0].split()
            if not tokens or tokens[0] == "sapling-trace":
                continue
            if tokens[0] == "dims":
                dims = int(tokens[1])
            elif tokens[0] == "frame":
                frames.append([])
            else:
                frames[-1].append(tokens)
    return dims, frames


def replay(path, report):
    dims, frames = read(path)
    n = 2 * dims

    def overlap(a, b):
        return all(a[k] <= b[k + dims] and b[k] <= a[k + dims] for k in range(dims))

    objects = {}  # id -> [box, category, mask, static]
    previous, out = set(), []
    for f, lines in enumerate(frames):
        queries = []
        for t in lines:
            if t[0] == "query":
                rest = t[2 + n:]
                queries.append((integer(t[1]), [number(x) for x in t[2:2 + n]], integer(rest[1]) if rest else ALL))
                continue
            key = int(t[1])
            if t[0] == "remove":
                del objects[key]
            elif t[0] == "move":
                objects[key][0] = [number(x) for x in t[2:2 + n]]
            elif t[0] == "filter":
                objects[key][1:3] = [integer(t[2]), integer(t[3])]
            else:  # add
                obj = [[number(x) for x in t[2:2 + n]], 1, ALL, False]
                rest = t[2 + n:]
                while rest:
                    if rest[0] == "static":
                        obj[3], rest = True, rest[1:]
                    else:
                        obj[1:3], rest = [integer(rest[1]), integer(rest[2])], rest[3:]
                objects[key] = obj
        ids = sorted(objects)
        pairs = set()
        for i, a in enumerate(ids):
            box_a, cat_a, mask_a, static_a = objects[a]
            for b in ids[i + 1:]:
                box_b, cat_b, mask_b, static_b = objects[b]
                if cat_a & mask_b and cat_b & mask_a and not (static_a and static_b) and overlap(box_a, box_b):
                    pairs.add((a, b))
        ordered = sorted(pairs)
        if report == "delta":
            created, deleted = sorted(pairs - previous), sorted(previous - pairs)
            out.append("frame %d +%d -%d" % (f, len(created), len(deleted)))
            out += ["+ %d %d" % p for p in created] + ["- %d %d" % p for p in deleted]
        elif report == "pairs":
            out.append("frame %d %d" % (f, len(ordered)))
            out += ["%d %d" % p for p in ordered]
        else:
            out.append("frame %d %d %s" % (f, len(ordered), fnv1a64([w for p in ordered for w in p])))
        previous = pairs
        for label, box, mask in queries:
            hits = [i for i in ids if objects[i][1] & mask and overlap(objects[i][0], box)]
            if report == "hash":
                out.append("query %d %d %s" % (label, len(hits), fnv1a64(hits)))
            else:
                out.append("query %d %d" % (label, len(hits)))
                out += ["%d" % i for i in hits]
    sys.stdout.write("".join(line + "\n" for line in out))


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[2] not in ("delta", "pairs", "hash"):
        sys.exit("usage: reference_replay.py TRACE delta|pairs|hash")
    replay(sys.argv[1], sys.argv[2])
