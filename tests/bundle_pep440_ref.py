#!/usr/bin/env python3
"""Differential test: `xlaunch bundle compare` and `bundle match` against the
reference implementation of PEP 440 (the `packaging` project).

    tests/bundle_pep440_ref.py XLAUNCH [--seed N] [--pairs N] [--specs N]

The reference is the newest packaging wheel under build/pkgref (fetched with
`pip download --no-deps packaging` when missing), else the copy vendored in
pip.  Exit 0 when every answer agrees, 1 on a disagreement, 77 when no
reference can be found.
"""
import glob
import os
import random
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def load_reference():
    dest = os.path.join(ROOT, "build", "pkgref")
    wheels = sorted(glob.glob(os.path.join(dest, "packaging-*.whl")))
    if not wheels and not os.environ.get("XLAUNCH_NO_NETWORK"):
        os.makedirs(dest, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                        "--disable-pip-version-check", "packaging", "-d", dest],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120,
                       check=False)
        wheels = sorted(glob.glob(os.path.join(dest, "packaging-*.whl")))
    if wheels:
        sys.path.insert(0, wheels[-1])
        try:
            import packaging.specifiers as sp
            import packaging.version as ver
            return ver, sp, "packaging " + getattr(sys.modules["packaging"], "__version__", "?"), True
        except ImportError:
            sys.path.pop(0)
    try:
        import pip._vendor.packaging.specifiers as sp
        import pip._vendor.packaging.version as ver
        import pip._vendor.packaging as pk
        modern = int(pk.__version__.split(".")[0]) >= 26
        return ver, sp, "pip._vendor.packaging " + pk.__version__, modern
    except ImportError:
        return None


NUMS = ["0", "1", "2", "3", "9", "10", "00", "01", "12345678901234567890"]
PRE = ["a", "alpha", "b", "beta", "c", "rc", "pre", "preview"]
POST = ["post", "rev", "r"]
SEPS = ["", ".", "-", "_"]
LOCAL = ["abc", "1", "01", "git21fec65", "ubuntu", "cu121", "2"]


def rcase(r, s):
    return "".join(ch.upper() if r.random() < 0.2 else ch for ch in s)


def gen_release(r, n=None):
    n = n or r.choice([1, 1, 2, 2, 2, 3, 3, 4])
    return ".".join(r.choice(NUMS[:7]) if r.random() < 0.9 else r.choice(NUMS) for _ in range(n))


def gen_version(r, local=True, minrel=1, plain=False):
    s = ""
    if r.random() < 0.1:
        s += r.choice(["1!", "0!", "2!"])
    s += gen_release(r, max(minrel, r.choice([1, 2, 2, 3, 3, 4])))
    if plain:
        return s
    if r.random() < 0.35:
        s += r.choice(SEPS) + rcase(r, r.choice(PRE)) + r.choice(SEPS + [""] * 3) + \
            (r.choice(NUMS[:6]) if r.random() < 0.8 else "")
    if r.random() < 0.25:
        if r.random() < 0.3:
            s += "-" + r.choice(NUMS[:6])
        else:
            s += r.choice(SEPS) + rcase(r, r.choice(POST)) + r.choice(SEPS) + \
                (r.choice(NUMS[:6]) if r.random() < 0.8 else "")
    if r.random() < 0.25:
        s += r.choice(SEPS) + rcase(r, "dev") + r.choice(SEPS) + \
            (r.choice(NUMS[:6]) if r.random() < 0.8 else "")
    if local and r.random() < 0.25:
        s += "+" + r.choice(["-", ".", "_"]).join(rcase(r, r.choice(LOCAL))
                                                  for _ in range(r.choice([1, 1, 2, 3])))
    if r.random() < 0.05:
        s = r.choice(["v", "V"]) + s
    if r.random() < 0.04:
        s = " " + s + "\t"
    return s


def mutate(r, s):
    s = list(s)
    for _ in range(r.choice([1, 2])):
        op = r.random()
        pos = r.randrange(len(s) + 1)
        if op < 0.5 or not s:
            s.insert(pos, r.choice(".-_+!*a1 =<>~,x"))
        elif pos < len(s):
            del s[pos]
    return "".join(s)


def near(r, ver_mod, base):
    """A version close to base: the same release with other suffixes."""
    try:
        v = ver_mod.Version(base)
    except Exception:
        return gen_version(r)
    rel = list(v.release)
    if r.random() < 0.3:
        i = r.randrange(len(rel))
        rel[i] = max(0, rel[i] + r.choice([-1, 1]))
    if r.random() < 0.3:
        rel = rel + [0]
    if r.random() < 0.2 and len(rel) > 1:
        rel = rel[:-1]
    s = ("%d!" % v.epoch if v.epoch else "") + ".".join(map(str, rel))
    if r.random() < 0.4:
        s += r.choice(["a", "b", "rc"]) + str(r.choice([0, 1, 2]))
    elif v.pre and r.random() < 0.5:
        s += "%s%d" % v.pre
    if r.random() < 0.3:
        s += ".post" + str(r.choice([0, 1, 2]))
    elif v.post is not None and r.random() < 0.5:
        s += ".post%d" % v.post
    if r.random() < 0.3:
        s += ".dev" + str(r.choice([0, 1, 2]))
    elif v.dev is not None and r.random() < 0.5:
        s += ".dev%d" % v.dev
    if r.random() < 0.3:
        s += "+" + r.choice(LOCAL)
    elif v.local and r.random() < 0.5:
        s += "+" + v.local
    return s


def gen_clause(r, modern):
    ops = ["==", "!=", "<", "<=", ">", ">=", "~=", "==="] if modern else \
        ["==", "!=", ">=", "<=", "~=", "==="]
    op = r.choice(ops)
    if op in ("==", "!=") and r.random() < 0.3 and modern:
        v = gen_version(r, plain=True) + ".*"
    elif op == "~=":
        v = gen_version(r, local=False, minrel=2)
    elif op == "===":
        v = gen_version(r, local=True).strip()
    elif op in ("==", "!="):
        v = gen_version(r)
    else:
        v = gen_version(r, local=False)
    return op + (" " if r.random() < 0.1 else "") + v.strip()


def main():
    args = sys.argv[1:]
    if not args:
        print("usage: bundle_pep440_ref.py XLAUNCH [--seed N] [--pairs N] [--specs N]")
        return 64
    xl = args[0]
    opts = dict(zip(args[1::2], args[2::2]))
    seed = int(opts.get("--seed", "440"))
    npairs = int(opts.get("--pairs", "1200"))
    nspecs = int(opts.get("--specs", "400"))
    ref = load_reference()
    if ref is None:
        print("SKIP: no reference implementation (no packaging wheel, no pip._vendor.packaging)")
        return 77
    ver, spm, refname, modern = ref
    r = random.Random(seed)
    bad = 0
    checked = 0

    def valid(s):
        try:
            ver.Version(s)
            return True
        except ver.InvalidVersion:
            return False
        except ValueError:
            return False

    # compare
    for _ in range(npairs):
        a = gen_version(r)
        b = near(r, ver, a) if r.random() < 0.6 else gen_version(r)
        if r.random() < 0.1:
            a = mutate(r, a)
        if r.random() < 0.05:
            b = mutate(r, b)
        if "\0" in a or "\0" in b:
            continue
        p = subprocess.run([xl, "bundle", "compare", "--", a, b], capture_output=True, text=True)
        if valid(a) and valid(b):
            va, vb = ver.Version(a), ver.Version(b)
            want = "%d" % ((va > vb) - (va < vb))
            got = p.stdout.strip()
            if p.returncode != 0 or got != want:
                bad += 1
                print("MISMATCH compare %r %r: got %r (exit %d), reference %s" %
                      (a, b, got, p.returncode, want))
        elif p.returncode != 65:
            bad += 1
            print("MISMATCH compare %r %r: exit %d, reference says invalid" % (a, b, p.returncode))
        checked += 1

    # match
    for _ in range(nspecs):
        clauses = [gen_clause(r, modern) for _ in range(r.choice([1, 1, 1, 2, 3]))]
        spec = ", ".join(clauses) if r.random() < 0.5 else ",".join(clauses)
        if r.random() < 0.08:
            spec = mutate(r, spec)
        try:
            ss = [spm.Specifier(c.strip()) for c in spec.split(",") if c.strip()]
            spec_ok = True
        except spm.InvalidSpecifier:
            spec_ok = False
        base = clauses[0].lstrip("=!<>~ ").replace(".*", "")
        versions = []
        for _ in range(12):
            v = near(r, ver, base) if r.random() < 0.7 else gen_version(r)
            if valid(v) and v not in versions:
                versions.append(v)
        if not versions:
            continue
        p = subprocess.run([xl, "bundle", "match", "--", spec] + versions, capture_output=True, text=True)
        if not spec_ok:
            if p.returncode != 65:
                bad += 1
                print("MISMATCH match %r: exit %d, reference says invalid specifier" %
                      (spec, p.returncode))
            checked += 1
            continue
        want = ["%s\t%s" % (v, "yes" if all(s.contains(v, prereleases=True) for s in ss) else "no")
                for v in versions]
        got = p.stdout.splitlines()
        want_rc = 0 if all(w.endswith("yes") for w in want) else 1
        if got != want or p.returncode != want_rc:
            bad += 1
            for g, w in zip(got, want):
                if g != w:
                    print("MISMATCH match %r %r: got %r, reference %r" % (spec, w.split("\t")[0],
                                                                         g.split("\t")[-1],
                                                                         w.split("\t")[-1]))
            if p.returncode != want_rc:
                print("MISMATCH match %r: exit %d, expected %d (%s)" % (spec, p.returncode, want_rc,
                                                                       p.stderr.strip()))
        checked += len(versions)

    print("%d cases against %s, %d disagreements" % (checked, refname, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
