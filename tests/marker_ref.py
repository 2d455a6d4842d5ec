#!/usr/bin/env python3
"""Differential test: Requires-Dist markers as xlaunch evaluates them against
packaging (the library pip uses), over generated markers and environments.

    PYTHON_WITH_PACKAGING tests/marker_ref.py TEST_MARKER_REF [--cases N] [--seed S]

TEST_MARKER_REF is the unit-test binary build/*/tests/test_marker_ref run in
its tool mode.  Each case is evaluated by packaging.markers.Marker(m)
.evaluate(env) with the metadata context pip uses (extra given); the answers
(true, false, an exception, a parse error) must agree one for one.  Run it
in the environment tools/venv.sh ref makes (packaging pinned there).
"""
import argparse
import json
import random
import subprocess
import sys
import tempfile

from packaging import __version__ as packaging_version
from packaging.markers import Marker

VARS = ["python_version", "python_full_version", "implementation_version", "platform_release",
        "os_name", "sys_platform", "platform_system", "platform_machine", "platform_version",
        "platform_python_implementation", "python_implementation", "implementation_name",
        "extra", "os.name", "sys.platform", "platform.machine"]
OPS = ["==", "!=", "<", "<=", ">", ">=", "~=", "===", "in", "not in"]
VALUES = ["3.11", "3.11.*", "3.11.7", "3.11.7+", "3.12.0rc1", "3", "3.9", "3.10", "3.11a1", "1!3.11",
          "3.11.*.*", "", "x86_64", "aarch64", "Linux", "linux", "posix", "nt", "CPython", "cpython",
          "6.8.0-45-generic", "5.15.0", "6", "tpu", "TPU", "T_P.U", "cuda12", "3.11+local", "0",
          "3.11.7.post1", "3.11.dev0", "x86", "_64", "#45", "3.11 ", " 3.11", "v3.11"]
ENVS = [
    dict(python_version="3.11", python_full_version="3.11.7", implementation_version="3.11.7",
         platform_release="6.8.0-45-generic", os_name="posix", sys_platform="linux",
         platform_system="Linux", platform_machine="x86_64", platform_version="#45-Ubuntu SMP",
         platform_python_implementation="CPython", implementation_name="cpython"),
    dict(python_version="3.12", python_full_version="3.12.0rc1", implementation_version="3.12.0rc1",
         platform_release="5.15.0", os_name="posix", sys_platform="linux", platform_system="Linux",
         platform_machine="aarch64", platform_version="1", platform_python_implementation="PyPy",
         implementation_name="pypy"),
    dict(python_version="3.11", python_full_version="3.11.7+", implementation_version="3.11.7",
         platform_release="6", os_name="nt", sys_platform="win32", platform_system="Windows",
         platform_machine="AMD64", platform_version="10", platform_python_implementation="CPython",
         implementation_name="cpython"),
]
EXTRAS = ["", "tpu", "T_P.U", "cuda12"]


def quoted(rnd, v):
    return ("'%s'" % v) if "'" not in v and rnd.random() < 0.5 else '"%s"' % v


def atom(rnd):
    var = rnd.choice(VARS)
    op = rnd.choice(OPS)
    val = quoted(rnd, rnd.choice(VALUES))
    k = rnd.random()
    if k < 0.6:
        return "%s %s %s" % (var, op, val)
    if k < 0.9:
        return "%s %s %s" % (val, op, var)
    if k < 0.95:
        return "%s %s %s" % (var, op, rnd.choice(VARS))
    return "%s %s %s" % (val, op, quoted(rnd, rnd.choice(VALUES)))


def marker(rnd, depth=0):
    if depth > 2 or rnd.random() < 0.5:
        return atom(rnd)
    a, b = marker(rnd, depth + 1), marker(rnd, depth + 1)
    m = "%s %s %s" % (a, rnd.choice(["and", "or"]), b)
    return "(%s)" % m if rnd.random() < 0.4 else m


def reference(m, env, extra):
    try:
        mk = Marker(m)
    except Exception:
        return "P"
    try:
        e = dict(env)
        e["extra"] = extra
        return "1" if mk.evaluate(e) else "0"
    except Exception:
        return "E"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tool")
    ap.add_argument("--cases", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=14)
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    cases = []
    for _ in range(a.cases):
        cases.append(dict(marker=marker(rnd), env=rnd.choice(ENVS), extra=rnd.choice(EXTRAS)))
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl") as f:
        for c in cases:
            f.write(json.dumps(c) + "\n")
        f.flush()
        out = subprocess.run([a.tool, f.name], capture_output=True, text=True, check=True).stdout.split()
    if len(out) != len(cases):
        print("the tool answered %d of %d cases" % (len(out), len(cases)))
        return 1
    agree, bad, kinds = 0, 0, {}
    for c, got in zip(cases, out):
        want = reference(c["marker"], c["env"], c["extra"])
        kinds.setdefault(want, [0, 0])[0] += 1
        if want == got:
            agree += 1
            kinds[want][1] += 1
        else:
            bad += 1
            if bad <= 25:
                print("DISAGREE %r env=%s extra=%r: packaging %s, xlaunch %s"
                      % (c["marker"], ENVS.index(c["env"]), c["extra"], want, got))
    print("markers: %d cases against packaging %s: %d agree (%.2f%%)"
          % (len(cases), packaging_version, agree, 100.0 * agree / len(cases)))
    for k in sorted(kinds):
        print("  %s %5d by packaging, %5d of them the same" % (k, kinds[k][0], kinds[k][1]))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
