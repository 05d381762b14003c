#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Where a Go server spends its CPU, from a pprof CPU profile (the gzip'd protobuf that
`/debug/pprof/profile` serves; nats-server serves it with `--profile PORT`), without Go's own
tools: Debian's nats-server is stripped for perf, but the Go runtime names every function in the
profiles it writes. Prints the top functions by self and by inclusive samples.

Usage: pprof_top.py PROFILE... [--top N] [--json] (several profiles of one process are summed)

Only the parts of profile.proto that this needs are read: samples (location ids, values),
locations (their lines' function ids), functions (name) and the string table."""
import argparse
import gzip
import json
import sys


def _varint(b, i):
    shift = value = 0
    while True:
        c = b[i]
        i += 1
        value |= (c & 0x7F) << shift
        if c < 0x80:
            return value, i
        shift += 7


def _fields(b):
    """(field number, wire type, value) of one message: ints for varints, bytes otherwise."""
    i = 0
    while i < len(b):
        key, i = _varint(b, i)
        field, wt = key >> 3, key & 7
        if wt == 0:
            v, i = _varint(b, i)
        elif wt == 2:
            n, i = _varint(b, i)
            v, i = b[i:i + n], i + n
        elif wt == 1:
            v, i = int.from_bytes(b[i:i + 8], "little"), i + 8
        elif wt == 5:
            v, i = int.from_bytes(b[i:i + 4], "little"), i + 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wt}")
        yield field, wt, v


def _ints(wt, v):
    """A repeated integer field, packed (wire type 2) or not."""
    if wt == 0:
        return [v]
    out, i = [], 0
    while i < len(v):
        x, i = _varint(v, i)
        out.append(x)
    return out


def read(path):
    """{"samples": [(location ids, values)], "types": [(type, unit)], "names": {location id:
    [function names, innermost first]}}."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    strings, samples, types, locations, functions = [], [], [], {}, {}
    for field, wt, v in _fields(data):
        if field == 6:
            strings.append(v.decode("utf-8", "replace"))
        elif field == 1:
            vt = dict((f, x) for f, _, x in _fields(v))
            types.append((vt.get(1, 0), vt.get(2, 0)))
        elif field == 2:
            locs, vals = [], []
            for f, w, x in _fields(v):
                if f == 1:
                    locs += _ints(w, x)
                elif f == 2:
                    vals += _ints(w, x)
            samples.append((locs, vals))
        elif field == 4:
            loc_id, funcs = 0, []
            for f, w, x in _fields(v):
                if f == 1:
                    loc_id = x
                elif f == 4:
                    line = dict((lf, lx) for lf, _, lx in _fields(x))
                    funcs.append(line.get(1, 0))
            locations[loc_id] = funcs
        elif field == 5:
            fn = dict((f, x) for f, _, x in _fields(v))
            functions[fn.get(1, 0)] = fn.get(2, 0)
    names = {lid: [strings[functions.get(fid, 0)] if functions.get(fid, 0) < len(strings) else "?"
                   for fid in fids] for lid, fids in locations.items()}
    return {"samples": samples, "types": [(strings[t], strings[u]) for t, u in types],
            "names": names}


def top(profiles, n=25):
    """Self and inclusive CPU per function over profiles, in their last value (CPU
    nanoseconds)."""
    total, self_ns, incl_ns, unit = 0, {}, {}, None
    stacks = []
    for profile in profiles:
        k = len(profile["types"]) - 1
        unit = unit or (profile["types"][k] if profile["types"] else None)
        for locs, vals in profile["samples"]:
            stacks.append((vals[k] if k < len(vals) else 0,
                           [name for lid in locs for name in profile["names"].get(lid, ["?"])]))
    for v, frames in stacks:
        total += v
        if frames:
            self_ns[frames[0]] = self_ns.get(frames[0], 0) + v
        for name in set(frames):
            incl_ns[name] = incl_ns.get(name, 0) + v

    def rows(d):
        return [{"function": f, "ns": ns, "share": ns / total if total else 0.0}
                for f, ns in sorted(d.items(), key=lambda x: -x[1])[:n]]
    return {"total_ns": total, "unit": unit, "self": rows(self_ns), "inclusive": rows(incl_ns)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("profile", nargs="+")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    t = top([read(p) for p in a.profile], a.top)
    if a.json:
        json.dump(t, sys.stdout, indent=1)
        print()
        return
    print(f"total {t['total_ns'] / 1e9:.3f} s of {t['unit']}")
    for title in ("self", "inclusive"):
        print(f"\n{title}:")
        for r in t[title]:
            print(f"  {r['share'] * 100:5.1f} %  {r['ns'] / 1e9:7.3f} s  {r['function']}")


if __name__ == "__main__":
    main()
