#!/usr/bin/env python3
"""libtpu_values.py - a sample of libtpu flags with a learned value type in
one release, each set to one value of the shapes the generator asks about,
as LIBTPU_INIT_ARGS words (libtpu_flags.sh compares libtpu's answer with
xlaunch's).

    python3 libtpu_values.py ROOT VERSION ROUND

The sample: the first two names of each learned type the release has (a
reader, and an enum's values), and the names of ALWAYS it has
(etc/flags/libtpu.yaml, a variant where one applies), leaving out the types
xlaunch does not check ("unlearned") and the names whose values libtpu also
runs through a check of its own ("validated").  Name i takes shape
(i + ROUND) mod the number of shapes, so that rounds 0, 1, ... give each
name a different value.  Prints nothing when the release has no learned
type.
"""
import sys

import yaml

SHAPES = ["true", "1", "auto", "yes", "0", "-1", "1.5", "1s", "100ms", "", "word", "a=b,c=d",
          "2147483648", "4294967296", "-2147483649", "9223372036854775808", "TRUE"]

# names TPU recipes set that libtpu refuses "1" for
ALWAYS = {"xla_enable_async_all_gather", "xla_enable_async_all_reduce", "xla_enable_async_collective_permute",
          "xla_tpu_enable_async_collective_fusion_fuse_all_gather",
          "xla_tpu_enable_sparse_core_collective_offload_all_gather",
          "xla_tpu_vmac_transform_strategy", "megascale_grpc_hedge_delay",
          "megascale_stall_watchdog_stall_threshold"}


def main():
    root, version, rnd = sys.argv[1], sys.argv[2], int(sys.argv[3])
    rel = yaml.safe_load(open(root + "/etc/flags/releases.yaml"))
    axis = [r["version"] for r in rel["packages"]["libtpu"]["releases"]]

    def has(spec):
        for part in str(spec["releases"]["libtpu"]).split():
            lo, _, hi = part.partition("-")
            if version in axis[axis.index(lo):axis.index(hi or lo) + 1]:
                return True
        return False
    picked = {}
    for f in yaml.safe_load(open(root + "/etc/flags/libtpu.yaml"))["flags"]:
        if not has(f):
            continue
        spec = next((v for v in f.get("variants", []) if has(v)), f)
        reader = spec.get("reader")
        if not reader or "unlearned" in reader or "validated" in reader:
            continue
        key = (reader, tuple(spec.get("values", ())))
        picked.setdefault(key, [])
        if len(picked[key]) < 2 or f["name"] in ALWAYS:
            picked[key].append(f["name"])
    names = [n for r in sorted(picked) for n in picked[r]]
    print(" ".join("--%s=%s" % (n, SHAPES[(i + rnd) % len(SHAPES)]) for i, n in enumerate(names)))


main()
