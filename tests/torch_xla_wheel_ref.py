#!/usr/bin/env python3
"""A torch_xla wheel against what the flag knowledge says its release reads.

    python tests/torch_xla_wheel_ref.py --src XLAUNCH_SRC torch_xla-V-....whl

The wheel is read as the zip it is (nothing is installed or imported).  For
the release V of its file name:

- every environment variable etc/flags/torch_xla.yaml says V reads must be
  named in V's Python sources (torch_xla/**/*.py) or in the strings of its
  _XLAC library (where the C++ runtime's readers are);
- every XLA flag etc/flags/xla.yaml says torch_xla V's XLA registers must be
  a string of _XLAC (a registration names its flag in a literal).

A name the knowledge says V does not read may still be in the wheel (a
comment, a message, a proto's reserved name): those are counted, not
failed.  Exits 1 when a name the knowledge expects is missing.
"""
import argparse
import os
import re
import sys
import zipfile


def load(path, package):
    """name -> release ranges of package, from a catalog's `releases` lines."""
    out, cur = {}, None
    for line in open(path, encoding="utf-8"):
        m = re.match(r"  - name: (\S+)", line)
        if m:
            cur = m.group(1)
            continue
        m = re.match(r"    releases: \{(.*)\}", line)
        if m and cur:
            out[cur] = dict(re.findall(r'(\w+): "([^"]*)"', m.group(1))).get(package, "")
    return out


def in_ranges(axis, text, version):
    for part in text.split():
        lo, _, hi = part.partition("-")
        hi = hi or lo
        if axis.index(lo) <= axis.index(version) <= axis.index(hi):
            return True
    return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", required=True)
    ap.add_argument("wheel")
    a = ap.parse_args()
    sys.path.insert(0, os.path.join(a.src, "tools"))
    import flagrel
    packages = flagrel.load_releases(os.path.join(a.src, "etc", "flags", "releases.yaml"))
    axis = [r["version"] for r in flagrel.known(packages["torch_xla"]["releases"])]
    version = os.path.basename(a.wheel).split("-")[1].split("+")[0]
    if version not in axis:
        print("torch_xla %s: not a release of the knowledge (%s)" % (version, " ".join(axis)))
        return 1
    py, xlac = [], b""
    with zipfile.ZipFile(a.wheel) as z:
        for info in z.infolist():
            if info.filename.startswith("torch_xla/") and info.filename.endswith(".py") and \
                    "/test" not in info.filename:
                py.append(z.read(info).decode("utf-8", errors="replace"))
            elif os.path.basename(info.filename).startswith("_XLAC") and \
                    info.filename.endswith(".so"):
                xlac += z.read(info)
    if not xlac:
        print("torch_xla %s: the wheel has no _XLAC library" % version)
        return 1
    words = set(re.findall(rb"[A-Za-z0-9_]+", xlac))
    pytext = set(re.findall(r"[A-Za-z0-9_]+", "\n".join(py)))
    bad = 0
    env = load(os.path.join(a.src, "etc", "flags", "torch_xla.yaml"), "torch_xla")
    reads = {n for n, r in env.items() if in_ranges(axis, r, version)}
    lacking = sorted(n for n in reads if n not in pytext and n.encode() not in words)
    others = sorted(n for n in env if n not in reads and (n in pytext or n.encode() in words))
    for n in lacking:
        print("DISAGREE %s: the knowledge says torch_xla %s reads it; the wheel does not name it"
              % (n, version))
    bad += len(lacking)
    xla = load(os.path.join(a.src, "etc", "flags", "xla.yaml"), "torch_xla")
    regs = {n for n, r in xla.items() if r and in_ranges(axis, r, version)}
    xlacking = sorted(n for n in regs if n.encode() not in words)
    xothers = sorted(n for n in xla if n not in regs and n.encode() in words)
    for n in xlacking:
        print("DISAGREE %s: the knowledge says torch_xla %s's XLA registers it; _XLAC does not name it"
              % (n, version))
    bad += len(xlacking)
    print("torch_xla %s: %d of %d variables it reads are in the wheel (%d others named there too); "
          "%d of %d XLA flags its XLA registers are in _XLAC (%d others named there too)" % (
              version, len(reads) - len(lacking), len(reads), len(others),
              len(regs) - len(xlacking), len(regs), len(xothers)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
