#!/usr/bin/env python3
"""Differential test of xlaunch's model of XLA's flag reader against a real XLA.

    PYTHON_WITH_JAX tests/xla_reader_ref.py XLAUNCH [--cases N] [--seed S]

Runs in an environment with jax and jaxlib (tools/venv.sh demo).  jax is
imported once; then, for every generated value of XLA_FLAGS, a forked child
sets XLA_FLAGS and starts the CPU backend (jaxlib's XLA reads XLA_FLAGS
there, once per process).  What the child did (started; died with "Flag
parsing failed"; died with "Unknown flag"; died because a flags file could
not be opened) is compared with the verdict `XLAUNCH flags lint --json`
reports under "xla", and with whether lint marked an error as aborting.

It also measures how much of what this XLA registers the xla catalog covers:
every xla_* name in jaxlib's shared objects is offered to the real reader
("--NAME=..."); the names it does not call unknown are the registered flags.

Prints the agreement figures; exits 1 on any disagreement or when the
catalog covers less than 98% of the registered flags.
"""
import argparse
import glob
import json
import os
import random
import re
import resource
import subprocess
import sys
import tempfile

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.pop("XLA_FLAGS", None)
import jax  # noqa: E402
import jaxlib  # noqa: E402

VERDICTS = ("accepts", "parse-fails", "unknown-flags", "no-file")


def real_verdict(value):
    """What jaxlib's XLA does with XLA_FLAGS=value, in a forked child."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            os.dup2(w, 1)
            os.dup2(w, 2)
            os.environ["XLA_FLAGS"] = value
            # a value the reader takes may still ask the backend for too much
            resource.setrlimit(resource.RLIMIT_AS, (8 << 30, 8 << 30))
            jax.devices("cpu")
            os._exit(0)
        except BaseException as e:
            # the reader took XLA_FLAGS; the backend failed later
            os.write(w, b"PYTHON-EXCEPTION " + repr(e).encode(errors="replace")[:500])
            os._exit(3)
    os.close(w)
    out = b""
    while True:
        b = os.read(r, 1 << 16)
        if not b:
            break
        if len(out) < 1 << 16:
            out += b
    os.close(r)
    _, st = os.waitpid(pid, 0)
    if st == 0:
        return "accepts", out
    if b"Flag parsing failed" in out:
        return "parse-fails", out
    if b"Unknown flag" in out:
        return "unknown-flags", out
    if b"Could not open file" in out:
        return "no-file", out
    if os.WIFEXITED(st) and os.WEXITSTATUS(st) == 3 and b"PYTHON-EXCEPTION" in out:
        return "accepts", out
    if os.WIFSIGNALED(st) and os.WTERMSIG(st) != 6 and b"parse_flags_from_env" not in out:
        # killed later (out of memory) with no word from the reader: it took the value
        return "accepts", out
    return "other(%d)" % st, out


def lint_verdict(xlaunch, value):
    # judged against this interpreter's jaxlib, the release under test
    p = subprocess.run([xlaunch, "flags", "lint", "--json", "--python", sys.executable,
                        "--var", "XLA_FLAGS", "--", value],
                       capture_output=True, text=True)
    doc = json.loads(p.stdout)
    aborts = any(r.get("aborts") for r in doc["reports"])
    return doc["xla"]["verdict"], aborts, doc


def read_catalog(path):
    """name -> (reader, values) from etc/flags/xla.yaml, without a YAML library:
    the flags this jaxlib's release registers (the catalog's `releases`,
    ranges of the jaxlib list of releases.yaml beside it)."""
    axis = []
    for line in open(os.path.join(os.path.dirname(path), "releases.yaml"), encoding="utf-8"):
        if re.match(r"  \w+:$", line):
            pkg = line.strip()[:-1]
        m = re.match(r"      - \{version: ([^,]+),(.*)\}", line)
        if m and pkg == "jaxlib" and "known: false" not in m.group(2):
            axis.append(m.group(1))

    def registers(ranges):
        for part in ranges.split():
            lo, _, hi = part.partition("-")
            if axis.index(lo) <= axis.index(jaxlib.__version__) <= axis.index(hi or lo):
                return True
        return False

    flags, cur = {}, None
    for line in open(path, encoding="utf-8"):
        m = re.match(r"  - name: (\S+)", line)
        if m:
            cur = m.group(1)
            flags[cur] = ["", []]
            continue
        m = re.match(r'    reader: "(.*)"', line)
        if m and cur:
            flags[cur][0] = m.group(1)
        m = re.match(r"    values: \[(.*)\]", line)
        if m and cur:
            flags[cur][1] = [v.strip().strip('"') for v in m.group(1).split(",")]
        m = re.match(r'    releases: \{.*jaxlib: "([^"]*)"', line)
        if m and cur and not registers(m.group(1)):
            del flags[cur]
            cur = None
    return flags


BOOLS = ["true", "false", "True", "FALSE", "tRuE", "1", "0", "yes", "no", "on", "2", "",
         " true", "true ", "t", "01", "-1"]
INTS = ["0", "5", "-5", "+5", " 7", "8 ", "\t9", "-0", "007", "0x10", "1e3", "1.0", "", "+",
        "-", "2147483647", "2147483648", "-2147483648", "-2147483649",
        "9223372036854775807", "9223372036854775808", "-9223372036854775808",
        "-9223372036854775809", "1_000", "12a", "--1", "+-1", " ", "\v3", "3\f"]
FLOATS = ["1.5", ".5", "5.", ".", "1e", "1e5", "1E-5", "1e+", "0x1p3", "0x", "0x1.8", "-0x1p-2",
          "0xinf", "0x.8p1", "0x.", "inf", "-inf", "+inf", "infinity", "-Infinity", "infin",
          "nan", "NaN", "nan(abc_1)", "nan(", "nan()", "nan(a-b)", "+-1", "-+1", " 2.5 ",
          "1,5", "1e400", "-1e400", "1e-400", "", "+", "-", "0", "00.00", "1.2.3", "1e5.5",
          "0X1P0", "1p3", "+.5", "-.", "e5", "0e", "5e-", "1f", "1.5f", "\v1.5\f"]
DURATIONS = ["1s", "1.5h", "2h45m", "0", "inf", "-inf", "+inf", "1", "s", ".5s", "1.s", "1ms2",
             "+3m", "-0", "", "1ns", "1us", "1µs", "10m0s", "1d", "1.5.5s", "9223372036854775808s",
             "9223372036854775807ns", " 1s", "1s ", "0s", "00", "inf1s", "1h1", "1sm"]
WORDS = ["a", "b,c", "x y", "", "p=q", "a,,b", "-x", "+x"]
STRUCT = ["--", "--help", "-", "---xla_dump_to=a", "--=x", "-=", "--xla_bogus_flag",
          "--xla_bogus=1", "oops", "XLA_X=1", "--xla_dump_to", "--xla_gpu_autotune_level",
          "-xla_cpu_enable_fast_math", "-xla_cpu_enable_fast_math=true", "--xla_cpu_enable_fast_math_x",
          "--xla_cpu_enable_fast_math_x=1", "--xla_dump_hlo_as_text.x=1", "--xla_dump_to=a=b",
          "--xla_dump_to=\u00e9", "--xla_dump\u00e9=1", "--xla_hlo_profile"]


def value_for(rnd, reader, values):
    parts = reader.split()
    typ = parts[0] if parts else "string"
    check = parts[1] if len(parts) > 1 else ""
    if typ == "bool":
        return rnd.choice(BOOLS)
    if typ in ("int32", "int64"):
        return rnd.choice(INTS)
    if typ == "float":
        return rnd.choice(FLOATS)
    if check == "duration":
        return rnd.choice(DURATIONS)
    if check in ("enum", "enum-upper", "enum-lower", "enum-prefix") and values:
        v = rnd.choice(values + ["bogus", ""])
        k = rnd.random()
        if k < 0.3:
            v = v.lower()
        elif k < 0.4:
            v = v.title()
        elif k < 0.5 and check == "enum-prefix" and "_" in v:
            v = v.split("_")[-1].lower()
        return v
    if check in ("repeated-enum", "collectives") and values:
        n = rnd.randint(0, 3)
        pick = [rnd.choice(values + ["bogus"]) for _ in range(n)]
        style = rnd.random()
        if style < 0.3:
            pick = [rnd.choice("+-") + p for p in pick]
        elif style < 0.4 and pick:
            pick[0] = "+" + pick[0]
        elif style < 0.5 and pick:
            pick = [p.lower() for p in pick]
        s = ",".join(pick)
        if rnd.random() < 0.15:
            s += ","
        if rnd.random() < 0.1:
            s = " " + s.replace(",", " , ")
        return s
    if check == "fuel":
        return rnd.choice(["p=1", "p=1,q=2", "p", "p=x", "=3", "p=1=2", "", "p= 4", "p=1,"])
    if check == "int-ranges":
        return rnd.choice(["1", "1:5", "5:1", ":", "1:", ":3", "a", "1:2:3", "1,2:4", "", " 2",
                           "-3:-1", "1,,2"])
    return rnd.choice(WORDS)


def quote(rnd, v):
    k = rnd.random()
    if k < 0.55 and not any(c in v for c in " \t\n\r\"'\\"):
        return v
    if k < 0.8:
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if "'" not in v:
        return "'" + v + "'"
    return '"' + v + '"'


def token(rnd, flags, names):
    k = rnd.random()
    if k < 0.12:
        return rnd.choice(STRUCT)
    name = rnd.choice(names)
    reader, values = flags[name]
    if reader.startswith("bool") and rnd.random() < 0.2:
        return "--" + name
    v = value_for(rnd, reader, values)
    if name == "xla_force_host_platform_device_count" and v.strip().lstrip("+-").isdigit() \
            and len(v.strip().lstrip("+-")) > 2:
        v = "4"   # a valid but huge count only exhausts the host
    t = "--%s=%s" % (name, quote(rnd, v))
    r = rnd.random()
    if r < 0.03:
        t = t[:-1] if t.endswith(('"', "'")) else t + '"'
    elif r < 0.05:
        t = "-" + t[2:]
    return t


def generate(rnd, flags, n, tmp):
    names = sorted(flags)
    fixed = [
        "", "   ", "--xla_gpu_enable_triton_gemm=1", "--xla_gpu_enable_triton_gemm=True",
        "--xla_gpu_enable_triton_gemm=yes", "-xla_gpu_enable_triton_gemm=true",
        "--xla_disable_hlo_passes=a --xla_disable_hlo_passes=b",
        "--xla_dump_to='a'--xla_gpu_autotune_level=x", "--xla_dump_to='a'--xla_gpu_autotune_level=3",
        "--xla_dump_to='a'oops --xla_bogus", "--xla_dump_to=\"a b", "--xla_dump_to=\"a\\\"b\" --xla_bogus",
        "--xla_gpu_autotune_level=x --xla_bogus", "--xla_bogus --xla_gpu_autotune_level=x",
        "--xla_hlo_profile --help", "--help", "--xla_hlo_profile -- --xla_hlo_profile",
        "--xla_hlo_profile oops --xla_bogus", "\v--xla_hlo_profile", "--xla_hlo_profile\v--xla_bogus",
        "--xla_hlo_profile\f", " \t\r\n--xla_hlo_profile", "--xla_gpu_enable_libnvptxcompiler",
        "--xla_gpu_enable_libnvptxcompiler=false", "--xla_gpu_enable_libnvptxcompiler=true",
        "--xla_gpu_experimental_max_unroll_factor=0", "--xla_gpu_experimental_max_unroll_factor=1",
        "--xla_cpu_opt_preset=fast_runtime", "--xla_cpu_opt_preset=CPU_OPT_PRESET_FAST_COMPILE",
        "--xla_gpu_enable_command_buffer=+fusion,-cublas", "--xla_gpu_enable_command_buffer=+fusion,cublas",
        "--xla_gpu_enable_command_buffer=", "--xla_gpu_enable_command_buffer=+fusion,",
        "--xla_gpu_disable_async_collectives=allreduce,ALLGATHER", "--xla_gpu_disable_async_collectives=",
        "--xla_fuel=a=1,b=2", "--xla_fuel=", "--xla_force_host_platform_device_count=4",
    ]
    cases = [("inline", v) for v in fixed]
    # flags files: the whole value is the path
    for i, content in enumerate([b"--xla_hlo_profile\n--xla_dump_to=/tmp/x\n", b"--xla_bogus\n",
                                 b"# comment\n--xla_hlo_profile\n", b"\n\n  --xla_gpu_autotune_level=z\n",
                                 b"--xla_dump_to='a b'\n--xla_hlo_profile=yes\n", b"",
                                 b"--xla_dump_to=a\x00b --xla_bogus\n", b"--xla_hlo_profile=true\x00junk\n"]):
        path = os.path.join(tmp, "flags%d.txt" % i)
        with open(path, "wb") as f:
            f.write(content)
        cases.append(("file", path))
    cases.append(("file", os.path.join(tmp, "does-not-exist")))
    cases.append(("file", " " + os.path.join(tmp, "flags0.txt")))
    while len(cases) < n:
        k = rnd.randint(1, 4)
        toks = [token(rnd, flags, names) for _ in range(k)]
        seps = [rnd.choice([" ", " ", " ", "  ", "\t", "\n", "", "\v"]) for _ in range(k)]
        s = "".join(t + (sep if i < k - 1 else "") for i, (t, sep) in enumerate(zip(toks, seps)))
        if rnd.random() < 0.1:
            s = rnd.choice([" ", "\t", "\n "]) + s
        if "\x00" in s:
            continue
        cases.append(("inline", s))
    return cases


def registered_names(catalog):
    """xla_* names this jaxlib registers, found by offering each name in its
    shared objects (and each name of the catalog) to the real reader."""
    cand = set(catalog)
    for so in glob.glob(os.path.join(os.path.dirname(jaxlib.__file__), "*.so")):
        data = open(so, "rb").read()
        cand.update(m.group(1).decode() for m in re.finditer(rb"(?<![A-Za-z0-9_])(xla_[a-z0-9_]{2,})(?![A-Za-z0-9_])", data))
    reg = set()
    for name in sorted(cand):
        v, _ = real_verdict("--%s=@@not-a-value@@" % name)
        if v != "unknown-flags":
            reg.add(name)
    return cand, reg


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("xlaunch")
    ap.add_argument("--cases", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=14)
    ap.add_argument("--catalog", default="etc/flags/xla.yaml")
    a = ap.parse_args()
    flags = read_catalog(a.catalog)
    rnd = random.Random(a.seed)
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        cases = generate(rnd, flags, a.cases, tmp)
        agree = agree_aborts = 0
        per = {}
        for kind, value in cases:
            real, out = real_verdict(value)
            model, aborts, doc = lint_verdict(a.xlaunch, value)
            per.setdefault(real, [0, 0])[0] += 1
            ok = real == model
            ok_aborts = aborts == (real != "accepts")
            if ok:
                agree += 1
                per[real][1] += 1
            if ok_aborts:
                agree_aborts += 1
            if not ok or not ok_aborts:
                bad += 1
                if bad <= 25:
                    tail = out.decode(errors="replace").strip().splitlines()
                    print("DISAGREE %s %r: xla %s, model %s (aborts=%s); xla said: %s"
                          % (kind, value, real, model, aborts, tail[0][:200] if tail else ""))
        n = len(cases)
        print("xla reader: %d values: verdict agrees on %d (%.2f%%), aborting errors agree on %d (%.2f%%)"
              % (n, agree, 100.0 * agree / n, agree_aborts, 100.0 * agree_aborts / n))
        for v in sorted(per):
            print("  %-14s %5d by XLA, %5d of them predicted" % (v, per[v][0], per[v][1]))
    cand, reg = registered_names(flags)
    covered = reg & set(flags)
    extra = set(flags) - reg
    cov = len(covered) / len(reg) if reg else 0.0
    print("xla catalog: %d flags; XLA registers %d of %d xla_* names in jaxlib %s; catalog covers %d (%.1f%%)%s"
          % (len(flags), len(reg), len(cand), jaxlib.__version__, len(covered), 100 * cov,
             "; not registered: " + " ".join(sorted(extra)) if extra else ""))
    if reg - set(flags):
        print("  missing from the catalog: " + " ".join(sorted(reg - set(flags))))
    if cov < 0.98:
        bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
