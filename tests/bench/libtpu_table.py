#!/usr/bin/env python3
"""libtpu_table.py - the libtpu knowledge per release, as a Markdown table:
the names each known release's own parser registers (etc/flags/libtpu.yaml),
how many of them are xla_tpu_*, xla_jf_*, megascale_* and retired, how
many have a value type of libtpu's own that xlaunch learned from that
release's parser (an integer width, a duration, an enum: a reader) and how
many one it could not learn, and what came and went since the release
before.  Reads the committed catalog only.

    python3 tests/bench/libtpu_table.py [ROOT]
"""
import os
import sys

import yaml


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    rel = yaml.safe_load(open(os.path.join(root, "etc/flags/releases.yaml")))
    axis = [r["version"] for r in rel["packages"]["libtpu"]["releases"]]
    pins = {}
    for pkg in ("jaxlib", "torch_xla"):
        for r in rel["packages"][pkg]["releases"]:
            want = str(r.get("libtpu", ""))
            wild = want.endswith(".*")
            want = want[:-2] if wild else want
            for v in axis:
                if v == want or (wild and v.startswith(want + ".")):
                    pins.setdefault(v, []).append("%s %s" % (pkg, r["version"]))
    cat = yaml.safe_load(open(os.path.join(root, "etc/flags/libtpu.yaml")))
    per = {v: set() for v in axis}
    retired = {v: set() for v in axis}
    learned = {v: 0 for v in axis}
    unlearned = {v: 0 for v in axis}

    def rels(spec):
        out = []
        for part in str(spec["releases"]["libtpu"]).replace(",", " ").split():
            lo, _, hi = part.strip().partition("-")
            out += axis[axis.index(lo):axis.index(hi or lo) + 1]
        return out
    for f in cat["flags"]:
        variant = {v: var for var in f.get("variants", []) for v in rels(var)}
        for v in rels(f):
            per[v].add(f["name"])
            if "retired" in f.get("description", ""):
                retired[v].add(f["name"])
            reader = variant.get(v, f).get("reader")
            if reader and "unlearned" in reader:
                unlearned[v] += 1
            elif reader:
                learned[v] += 1
    print("| libtpu | asked for by | names | xla_tpu_* | xla_jf_* | megascale_* | retired "
          "| learned type | unlearned | new | gone |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    prev = None
    for v in axis:
        n = per[v]
        by = {}
        for p in pins.get(v, []):
            pkg, ver = p.split()
            by.setdefault(pkg, []).append(ver)
        pin = "; ".join("%s %s" % (k, ", ".join(vs)) for k, vs in by.items()) or \
            "(the newest on PyPI)"
        print("| %s | %s | %d | %d | %d | %d | %d | %s | %s | %s | %s |" % (
            v, pin, len(n), sum(x.startswith("xla_tpu_") for x in n),
            sum(x.startswith("xla_jf_") for x in n), sum(x.startswith("megascale_") for x in n),
            len(retired[v]), learned[v] if learned[v] or unlearned[v] else "not learned",
            unlearned[v] if learned[v] or unlearned[v] else "-",
            "-" if prev is None else len(n - per[prev]),
            "-" if prev is None else len(per[prev] - n)))
        prev = v


main()
