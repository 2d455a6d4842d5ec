#!/usr/bin/env python3
"""Checks every feature gate and every pin of etc/bundles.yaml that a
recorded release decides, against the release metadata in
tests/data/releases (see its SOURCES).

    tests/release_facts.py XLAUNCH

Specifier membership is asked of `XLAUNCH bundle match` (PEP 440).  Each
check names the recorded file it rests on.  Exit 0 when all hold, 1 when
one does not; a gate or pin of the matrix that no check covers is a
failure too, so a new row needs its evidence recorded.
"""
import os
import re
import subprocess
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests", "data", "releases")


def metadata(name):
    fields = {}
    for line in open(os.path.join(DATA, name + ".METADATA"), encoding="utf-8"):
        k, _, v = line.rstrip("\n").partition(": ")
        fields.setdefault(k, []).append(v)
    return fields


def extra_pin(meta, extra, pkg):
    """The specifier Requires-Dist gives pkg under extra, e.g. '==0.0.50.*'."""
    for r in meta.get("Requires-Dist", []):
        m = re.match(r"([A-Za-z0-9_.-]+)(\[[^\]]*\])?\s*([^;]*?)\s*;\s*extra == \"([^\"]+)\"", r)
        if m and m.group(1).lower().replace("_", "-") == pkg and m.group(4) == extra:
            return m.group(3)
    return None


class Checker:
    def __init__(self, xl):
        self.xl, self.failed, self.checked = xl, 0, set()

    def match(self, spec, version):
        p = subprocess.run([self.xl, "bundle", "match", spec, version], capture_output=True, text=True)
        if p.returncode not in (0, 1):
            raise SystemExit("bundle match %r %r: %s" % (spec, version, p.stderr.strip()))
        return p.returncode == 0

    def expect(self, cond, what, evidence):
        print("%s %s (%s)" % ("ok  " if cond else "FAIL", what, evidence))
        if not cond:
            self.failed += 1


def main():
    xl = sys.argv[1]
    c = Checker(xl)
    matrix = yaml.safe_load(open(os.path.join(ROOT, "etc", "bundles.yaml"), encoding="utf-8"))
    bundles = {b["name"]: b for b in matrix["bundles"]}
    features = {f["name"]: f for f in matrix["features"]}

    # feature gates
    f = features["scan_layers"]["requires"]
    have = open(os.path.join(DATA, "torch_xla-2.6.0.scan_layers")).read().strip()
    lack = open(os.path.join(DATA, "torch_xla-2.5.1.scan_layers")).read().strip()
    c.expect("scan_layers.py" in have and not lack, "scan_layers ships in 2.6.0, not 2.5.1",
             "torch_xla-2.6.0.scan_layers, torch_xla-2.5.1.scan_layers")
    c.expect(c.match(f["torch-xla"], "2.6.0") and not c.match(f["torch-xla"], "2.5.1"),
             "scan_layers gate %r admits 2.6.0 and refuses 2.5.1" % f["torch-xla"], "same")
    c.checked.add(("feature", "scan_layers", "torch-xla"))

    f = features["jax-cuda13"]["requires"]
    first = open(os.path.join(DATA, "releases.jax-cuda13-plugin")).read().split()[0]
    m = metadata("jax_cuda13_plugin-0.7.2")
    c.expect(m["Version"] == [first], "jax-cuda13-plugin's first release is %s" % first,
             "releases.jax-cuda13-plugin, jax_cuda13_plugin-0.7.2.METADATA")
    c.expect(c.match(f["jax-cuda13-plugin"], first) and not c.match(f["jax-cuda13-plugin"], "0.7.1"),
             "jax-cuda13 gate %r starts at %s" % (f["jax-cuda13-plugin"], first), "same")
    c.expect(c.match(f["jax"], first) and not c.match(f["jax"], "0.7.1"),
             "jax-cuda13 gate on jax %r starts at %s (the plugin's lock-step jax)" % (f["jax"], first),
             "same")
    c.checked.update({("feature", "jax-cuda13", "jax"), ("feature", "jax-cuda13", "jax-cuda13-plugin")})

    f = features["pallas-torch-xla"]["requires"]
    tx = metadata("torch_xla-2.9.0")
    pin = extra_pin(tx, "pallas", "jax")
    c.expect(pin is not None and f["jax"] == pin, "pallas gate on jax %r is torch_xla 2.9.0's [pallas] pin %r"
             % (f["jax"], pin), "torch_xla-2.9.0.METADATA")
    c.expect(c.match(f["torch-xla"], "2.9.0"), "pallas gate on torch-xla %r admits 2.9.0" % f["torch-xla"],
             "torch_xla-2.9.0.METADATA")
    c.checked.update({("feature", "pallas-torch-xla", "jax"), ("feature", "pallas-torch-xla", "torch-xla")})

    # pins of bundles that a release's own metadata decides
    def libtpu_pin(bundle, meta_name, owner):
        b = bundles[bundle]
        pin = extra_pin(metadata(meta_name), "tpu", "libtpu")
        c.expect(b["packages"]["libtpu"] == pin, "%s libtpu %r is %s's [tpu] pin %r"
                 % (bundle, b["packages"]["libtpu"], owner, pin), meta_name + ".METADATA")
        c.checked.add(("bundle", bundle, "libtpu"))

    libtpu_pin("jax012-tpu", "jax-0.12.0", "jax 0.12.0")
    libtpu_pin("jax010-tpu", "jax-0.10.2", "jax 0.10.2")
    libtpu_pin("torch29-v6e", "torch_xla-2.9.0", "torch_xla 2.9.0")
    for name in ("jax012-tpu", "jax012-tpu-libtpu051", "jax012-cuda12", "jax012-cuda13"):
        rp = metadata("jax-0.12.0")["Requires-Python"][0]
        c.expect(bundles[name]["python"] == rp, "%s python %r is jax 0.12.0's Requires-Python %r"
                 % (name, bundles[name]["python"], rp), "jax-0.12.0.METADATA")
        c.checked.add(("bundle", name, "python"))
    rp = metadata("jax-0.10.2")["Requires-Python"][0]
    c.expect(bundles["jax010-tpu"]["python"] == rp, "jax010-tpu python is jax 0.10.2's %r" % rp,
             "jax-0.10.2.METADATA")
    c.checked.add(("bundle", "jax010-tpu", "python"))
    # libtpu 0.0.51 and the custom build's 0.0.36 lie outside jax's pins:
    # their rows say so with an extras-pin waiver
    for bundle, meta_name in (("jax012-tpu-libtpu051", "jax-0.12.0"), ("torch29-custom-tpu", "jax-0.9.0")):
        b = bundles[bundle]
        pin = extra_pin(metadata(meta_name), "tpu", "libtpu")
        outside = not c.match(pin, b["packages"]["libtpu"].lstrip("="))
        waived = any((i.get("waives") or {}).get("package") == "libtpu" for i in b.get("known_issues", []))
        c.expect(outside and waived, "%s libtpu %s is outside %s's pin %r and waived"
                 % (bundle, b["packages"]["libtpu"], meta_name, pin), meta_name + ".METADATA")
        c.checked.add(("bundle", bundle, "libtpu"))

    # every gate must have been checked
    for name, f in features.items():
        for pkg in f.get("requires", {}):
            if ("feature", name, pkg) not in c.checked:
                c.expect(False, "feature %s requirement on %s has no recorded evidence" % (name, pkg), "-")
    print("%d checks, %d failed" % (len(c.checked), c.failed))
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main())
