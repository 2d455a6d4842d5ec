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
failed.  The other way round, every variable the wheel's Python reads (found
by the catalog generator's own reader, tools/gen-torch-xla-catalog.py, run
on the wheel's files) must be one the knowledge says V reads, or one the
generator leaves out with its reason.  The names torch_xla/core/
xla_env_vars.py gives that nothing in the wheel reads are listed.  Exits 1
when the two sides disagree.
"""
import argparse
import importlib.util
import os
import re
import shutil
import sys
import tempfile
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


def generator(src):
    """tools/gen-torch-xla-catalog.py as a module: its readers and lists."""
    spec = importlib.util.spec_from_file_location(
        "gen_torch_xla_catalog", os.path.join(src, "tools", "gen-torch-xla-catalog.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def python_reads(src, tree):
    """{name: first place} the wheel's Python reads (the generator's reader),
    and the names core/xla_env_vars.py gives."""
    gen = generator(src)
    reads, unresolved = {}, []
    gen.collect_py(tree, reads, unresolved)
    named = re.findall(r"^\w+\s*=\s*['\"]([A-Z0-9_]+)['\"]", open(os.path.join(
        tree, "torch_xla", "core", "xla_env_vars.py")).read(), re.M)
    return {n: rs[0]["where"] for n, rs in reads.items()}, named


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
    tree = tempfile.mkdtemp(prefix="torch-xla-wheel.")
    with zipfile.ZipFile(a.wheel) as z:
        for info in z.infolist():
            if info.filename.startswith("torch_xla/") and info.filename.endswith(".py") and \
                    "/test" not in info.filename:
                py.append(z.read(info).decode("utf-8", errors="replace"))
                z.extract(info, tree)
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
    try:
        wheel_reads, named = python_reads(a.src, tree)
    finally:
        shutil.rmtree(tree)
    gen = generator(a.src)
    unknown = sorted(n for n in wheel_reads
                     if n not in reads and n not in gen.LEFT_OUT and n not in gen.COMPOSITE)
    for n in unknown:
        print("DISAGREE %s: torch_xla %s's Python reads it (%s); the knowledge does not say so"
              % (n, version, wheel_reads[n]))
    bad += len(unknown)
    runtime = set(re.findall(r"name: ([A-Z0-9_]+)", open(os.path.join(
        a.src, "etc", "flags", "runtime.yaml")).read()))
    unread = sorted(set(named) - set(wheel_reads) - reads - runtime)
    if unread:
        print("torch_xla %s: core/xla_env_vars.py names %d that nothing in its Python reads and "
              "no catalog lists: %s" % (version, len(unread), " ".join(unread)))
    print("torch_xla %s: its Python reads %d variables, all known or left out with a reason"
          % (version, len(wheel_reads)) if not unknown else
          "torch_xla %s: %d variables its Python reads are not known" % (version, len(unknown)))
    print("torch_xla %s: %d of %d variables it reads are in the wheel (%d others named there too); "
          "%d of %d XLA flags its XLA registers are in _XLAC (%d others named there too)" % (
              version, len(reads) - len(lacking), len(reads), len(others),
              len(regs) - len(xlacking), len(regs), len(xothers)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
