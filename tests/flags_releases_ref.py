#!/usr/bin/env python3
"""What one jaxlib release's own XLA registers, against the flag knowledge.

    VENV/bin/python tests/flags_releases_ref.py --src XLAUNCH_SRC [--xlaunch BIN] [--json OUT]
                                                [--registered OUT]

Runs in a venv holding jax and jaxlib of one release (tools/venv.sh jaxlib
V).  jax is imported once; then forked children set XLA_FLAGS to batches of
--NAME=VALUE tokens and start the CPU backend, where XLA parses XLA_FLAGS.
Every batch ends with a name no release registers, so XLA always aborts at
its unknown-flag check, listing every token no flag took ("Unknown flags in
XLA_FLAGS: --a=1 --b=true ..."); the values of the flags it did take never
come into effect.  A batch whose value a flag refuses ("Flag parsing
failed") is split until the refusing token is found: its name is
registered, with another type than the knowledge says.

The names offered: every name of etc/flags/xla.yaml (all releases, so the
neighbours of this one too) and every xla_* word in jaxlib's shared
objects.  Each is given a value of the type the knowledge records for this
release (or for the newest release that registers it).

With --xlaunch, `BIN flags lint --json --python VENV/bin/python` lints the
same tokens at once, and every name offered is compared too: lint refuses
it (an error: unknown, or registered by other releases only) exactly when
this XLA aborts on it.  For a release newer than the knowledge lint must
refuse nothing (its unknown names are warnings); names it lets through that
XLA aborts on are counted.

A release of etc/flags/releases.yaml with `observed: FILE` is inside the
knowledge by its names only: FILE lists what its XLA registers (written by
--registered OUT, which writes every name this release's XLA registers of
those offered); its flags take the type of the newest release the sources
were read for, and a name no such release has takes any value.

Prints one line per disagreement and a summary; with --json writes the
figures.  Exits 0 when the knowledge (and lint) agree with XLA on every
name (for a release the knowledge covers; for a newer one, when lint
refuses nothing XLA takes), 1 otherwise.
"""
import argparse
import glob
import json
import os
import re
import resource
import subprocess
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.pop("XLA_FLAGS", None)
import jax  # noqa: E402
import jaxlib  # noqa: E402

SENTINEL = "xlaunch_no_release_registers_this"
BATCH = 120      # tokens per child: XLA's log line holds about 15 KB


def load_knowledge(src):
    sys.path.insert(0, os.path.join(src, "tools"))
    import flagrel
    packages = flagrel.load_releases(os.path.join(src, "etc", "flags", "releases.yaml"))
    flags, cur = {}, None
    range_re = re.compile(r'(\w+): "([^"]*)"')
    for line in open(os.path.join(src, "etc", "flags", "xla.yaml"), encoding="utf-8"):
        m = re.match(r"  - name: (\S+)", line)
        if m:
            cur = dict(name=m.group(1), type=None, reader="", values=[], releases={},
                       variants=[], replaced_by=None)
            flags[cur["name"]] = cur
            continue
        if cur is None:
            continue
        m = re.match(r"    (type|reader|replaced_by): \"?([^\"\n]*)\"?$", line)
        if m:
            cur[m.group(1)] = m.group(2)
        m = re.match(r"    values: \[(.*)\]", line)
        if m:
            cur["values"] = [v.strip() for v in m.group(1).split(",")]
        m = re.match(r"    releases: \{(.*)\}", line)
        if m:
            cur["releases"] = dict(range_re.findall(m.group(1)))
        m = re.match(r"      - \{releases: \{(.*?)\}, type: (\w+), reader: \"([^\"]*)\"(?:, values: \[(.*)\])?\}",
                     line)
        if m:
            cur["variants"].append(dict(releases=dict(range_re.findall(m.group(1))),
                                        type=m.group(2), reader=m.group(3),
                                        values=[v.strip() for v in (m.group(4) or "").split(",") if v]))
    return packages, flags


def load_observed(src, rel):
    """The names FILE of an `observed` release lists, or None."""
    path = rel.get("observed")
    if not path:
        return None
    names = set()
    for line in open(os.path.join(src, path), encoding="utf-8"):
        line = line.strip()
        if line and not line.startswith("#"):
            names.add(line)
    return names


def in_ranges(axis, text, version):
    for part in text.split():
        lo, _, hi = part.partition("-")
        hi = hi or lo
        if lo in axis and hi in axis and axis.index(lo) <= axis.index(version) <= axis.index(hi):
            return True
    return False


def value_for(f):
    typ, values = f["type"], f["values"]
    check = (f["reader"].split() + ["", ""])[1]
    if typ == "bool":
        return "false"
    if typ in ("int", "float"):
        return "1"
    if typ == "enum":
        return values[0]
    if check == "duration":
        return "1s"
    if check == "collectives":
        return values[1] if len(values) > 1 else values[0]
    if check == "int-ranges":
        return "1"
    if check == "fuel":
        return "x=1"
    if typ == "list":
        return ""      # every list setter takes the empty list (nothing added, or cleared)
    return "x"


def run_batch(tokens):
    """What XLA does with XLA_FLAGS = tokens + the sentinel: ("unknown", [names])
    or ("refused", output)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            os.dup2(w, 1)
            os.dup2(w, 2)
            os.environ["XLA_FLAGS"] = " ".join(tokens + ["--%s=1" % SENTINEL])
            resource.setrlimit(resource.RLIMIT_AS, (8 << 30, 8 << 30))
            jax.devices("cpu")
            os._exit(0)
        except BaseException as e:
            os.write(w, b"PYTHON-EXCEPTION " + repr(e).encode(errors="replace")[:500])
            os._exit(3)
    os.close(w)
    out = b""
    while True:
        b = os.read(r, 1 << 16)
        if not b:
            break
        out += b
    os.close(r)
    os.waitpid(pid, 0)
    text = out.decode(errors="replace")
    m = re.search(r"Unknown flags? in XLA_FLAGS: ([^\n]*)", text)
    if m:
        # XLA before jaxlib 0.4.31 joins its whole argv array, not only
        # the argc words left over: the list ends at the empty word that
        # stands for the NULL after them
        words = []
        for t in m.group(1).rstrip().split(" "):
            if not t:
                break
            words.append(t)
        names = [t[2:].split("=", 1)[0] for t in words if t.startswith("--")]
        if SENTINEL not in names:
            raise SystemExit("the sentinel is missing from XLA's listing (cut short?): %s" % text[-500:])
        return "unknown", names
    if "Flag parsing failed" in text:
        return "refused", text
    raise SystemExit("XLA neither listed unknown flags nor refused a value: %s" % text[-800:])


def classify(tokens, found):
    """found[name] = "unknown" | "registered" | "refused" for every token."""
    kind, what = run_batch(tokens)
    if kind == "unknown":
        gone = set(what)
        for t in tokens:
            name = t[2:].split("=", 1)[0]
            found[name] = "unknown" if name in gone else "registered"
        return 1
    if len(tokens) == 1:
        found[tokens[0][2:].split("=", 1)[0]] = "refused"
        return 1
    half = len(tokens) // 2
    return 1 + classify(tokens[:half], found) + classify(tokens[half:], found)


def lint_refuses(xlaunch, tokens):
    """name -> "refuses" | "warns" | "takes": what `flags lint --python`
    this interpreter says of each token."""
    p = subprocess.run([xlaunch, "flags", "lint", "--json", "--python", sys.executable,
                        "--var", "XLA_FLAGS", "--", " ".join(tokens)],
                       capture_output=True, text=True)
    doc = json.loads(p.stdout)
    out = {t[2:].split("=", 1)[0]: "takes" for t in tokens}
    for r in doc["reports"]:
        name = r["token"][2:].split("=", 1)[0] if r["token"].startswith("--") else None
        if name not in out:
            continue
        if r["severity"] == "error":
            out[name] = "refuses"
        elif r["code"] == "unconfirmed" and out[name] == "takes":
            out[name] = "warns"
    return out, doc


def wheel_tag():
    """The file name of the jaxlib wheel installed here, from its dist-info."""
    dist = glob.glob(os.path.join(os.path.dirname(os.path.dirname(jaxlib.__file__)),
                                  "jaxlib-%s.dist-info" % jaxlib.__version__, "WHEEL"))
    tags = [l.split(":", 1)[1].strip() for l in open(dist[0]) if l.startswith("Tag:")] if dist else []
    return "jaxlib-%s-%s.whl" % (jaxlib.__version__, tags[0] if tags else "?")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", required=True)
    ap.add_argument("--xlaunch")
    ap.add_argument("--json")
    ap.add_argument("--registered")
    a = ap.parse_args()
    packages, flags = load_knowledge(a.src)
    version = jaxlib.__version__
    rels = packages["jaxlib"]["releases"]
    axis = [r["version"] for r in rels if r.get("known", True) is not False]
    covered = version in axis
    judge_at = version if covered else axis[-1]
    # an observed release: its names from its file, its types from the
    # newest release whose sources were read
    observed = next((load_observed(a.src, r) for r in rels if r["version"] == judge_at), None)
    sources_axis = [r["version"] for r in rels if r.get("known", True) is not False
                    and not r.get("observed")]
    types_at = judge_at if observed is None else sources_axis[-1]
    if observed is not None:
        for n in observed - set(flags):
            flags[n] = dict(name=n, type="string", reader="string", values=[], releases={},
                            variants=[], replaced_by=None, untyped=True)

    def facts(f):
        """(registered here per the knowledge, the entry or variant that applies)"""
        if observed is not None:
            reg = f["name"] in observed
        else:
            reg = in_ranges(axis, f["releases"].get("jaxlib", ""), judge_at)
        for v in f["variants"]:
            if in_ranges(axis, v["releases"].get("jaxlib", ""), types_at):
                return reg, dict(f, type=v["type"], reader=v["reader"], values=v["values"] or f["values"])
        return reg, f

    cand = set(flags)
    for so in glob.glob(os.path.join(os.path.dirname(jaxlib.__file__), "**", "*.so"), recursive=True):
        data = open(so, "rb").read()
        cand.update(m.group(1).decode() for m in re.finditer(
            rb"(?<![A-Za-z0-9_])(xla_[a-z0-9_]{2,})(?![A-Za-z0-9_])", data))
    tokens = []
    for name in sorted(cand):
        f = flags.get(name)
        tokens.append("--%s=%s" % (name, value_for(facts(f)[1]) if f and not f.get("untyped") else "1"))
    found, children = {}, 0
    for i in range(0, len(tokens), BATCH):
        children += classify(tokens[i:i + BATCH], found)
    said_reg = {n for n, f in flags.items() if facts(f)[0]}
    real_reg = {n for n, k in found.items() if k != "unknown"}
    # a name the knowledge gives no type (observed only) takes any value
    refused = sorted(n for n, k in found.items() if k == "refused"
                     and not (n in flags and flags[n].get("untyped")))
    false_ok = sorted((said_reg - real_reg) & set(flags))     # xlaunch accepts, XLA aborts
    false_no = sorted((real_reg - said_reg) & set(flags))     # xlaunch refuses, XLA accepts
    missing = sorted(real_reg - set(flags))                   # XLA registers, knowledge lacks
    agree = len(flags) - len(false_ok) - len(false_no)
    for n in false_ok:
        print("DISAGREE %s: the knowledge says jaxlib %s registers it; its XLA aborts on it" % (n, judge_at))
    for n in false_no:
        print("DISAGREE %s: the knowledge says jaxlib %s does not register it; its XLA takes it" % (n, judge_at))
    for n in refused:
        print("TYPE %s: jaxlib %s's XLA refused the value the knowledge's type gives" % (n, version))
    if a.registered:
        with open(a.registered, "w", encoding="utf-8") as out:
            out.write("# What the XLA of jaxlib %s registers (%s), of the %d names\n"
                      "# tests/flags_releases_ref.py offered it: every name of etc/flags/xla.yaml\n"
                      "# and every xla_* word of its shared objects.  Written by\n"
                      "#   VENV/bin/python tests/flags_releases_ref.py --src . --registered FILE\n"
                      "# in a venv of jax==%s jaxlib==%s from PyPI (tools/venv.sh jaxlib %s).\n"
                      % (version, wheel_tag(), len(cand), version, version, version))
            out.writelines(n + "\n" for n in sorted(real_reg))
    print("jaxlib %s%s: %d names offered in %d children; XLA registers %d; the knowledge "
          "(%d names) says %d; agrees on %d of %d (%.1f%%); %d registered names outside the "
          "knowledge%s" % (
              version, (" (observed)" if observed is not None else "") if covered
              else " (newer than the knowledge: judged as %s)" % judge_at,
              len(cand), children, len(real_reg), len(flags), len(said_reg), agree, len(flags),
              100.0 * agree / len(flags), len(missing),
              (": " + " ".join(missing[:20]) + (" ..." if len(missing) > 20 else "")) if missing else ""))
    lint = None
    if a.xlaunch:
        said, doc = lint_refuses(a.xlaunch, tokens)
        lint_refused = {n for n, k in said.items() if k == "refuses"}
        lint_false_refusals = sorted(lint_refused & real_reg)          # XLA takes it
        lint_misses = sorted((set(said) - lint_refused) - real_reg)    # XLA aborts on it
        for n in lint_false_refusals:
            print("LINT REFUSES %s: jaxlib %s's XLA takes it" % (n, version))
        for n in lint_misses if covered else []:
            print("LINT TAKES %s: jaxlib %s's XLA aborts on it" % (n, version))
        silent = [n for n in lint_misses if said[n] == "takes"]
        lint = dict(judged_against=doc.get("judged_against"), names=len(said),
                    agree=len(said) - len(lint_false_refusals) - len(lint_misses),
                    refuses=len(lint_refused), warns=sum(1 for k in said.values() if k == "warns"),
                    false_refusals=lint_false_refusals, misses=lint_misses, silent=silent)
        print("xlaunch flags lint --python (judged against %s): agrees with XLA on %d of %d names; "
              "refuses %d, warns on %d; refuses %d that XLA takes; of the %d names XLA aborts on "
              "and lint does not refuse, warns on %d%s" % (
                  lint["judged_against"], lint["agree"], lint["names"], lint["refuses"], lint["warns"],
                  len(lint_false_refusals), len(lint_misses), len(lint_misses) - len(silent),
                  "; passes silently: " + " ".join(silent) if silent else ""))
    if a.json:
        json.dump(dict(release=version, covered=covered, observed=observed is not None,
                       judged_as=judge_at, offered=len(cand),
                       children=children, xla_registers=len(real_reg), knowledge=len(flags),
                       knowledge_registers=len(said_reg), agree=agree, accepts_but_aborts=false_ok,
                       refuses_but_accepted=false_no, refused_values=refused, outside=missing,
                       lint=lint),
                  open(a.json, "w"), indent=1)
    bad = covered and (false_ok or false_no or refused)
    if lint:
        bad = bad or lint["false_refusals"] or (covered and lint["misses"])
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
