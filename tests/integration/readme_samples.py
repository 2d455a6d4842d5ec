"""readme_samples.py - runs the commands of README.md's sample blocks and
checks what they print against the sample (readme_samples.sh runs it).

A sample is a ```console block right after a line `<!-- sample -->` (or
`<!-- sample: REQ,... -->`, requirements the caller says are met or not).
In it, `$ COMMAND` lines are run with sh in the source tree, and the lines
up to the next command are what it prints (stdout and stderr together).
Every such line must be in the output; the lines starting "xlaunch:" in
the order given; a line "..." only marks lines left out, and a line ending
in "..." matches any line that starts so.  Both sides are compared
normalized: hashes (12 or more hex digits) are H, sizes (1.5 GiB) SIZE,
other numbers N, runs of blanks one blank; in the output, the state
directory reads ~/.local/state and the host's name vm.

  python3 readme_samples.py README.md MET_REQS... -> exit 0, or 1 with what differs
"""
import re
import socket
import subprocess
import sys


def norm(s):
    s = re.sub(r"\b[0-9a-f]{12,}\b", "H", s)
    s = re.sub(r"\d+(\.\d+)?\s?(B|KiB|MiB|GiB|TiB)\b", "SIZE", s)
    s = re.sub(r"\d+(\.\d+)?", "N", s)
    return re.sub(r"\s+", " ", s).strip()


def samples(text):
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = re.match(r"<!-- sample(?::\s*([\w,-]+))? -->", lines[i])
        if m and i + 1 < len(lines) and lines[i + 1].startswith("```console"):
            reqs = [r for r in (m.group(1) or "").split(",") if r]
            j = i + 2
            body = []
            while j < len(lines) and not lines[j].startswith("```"):
                body.append(lines[j])
                j += 1
            yield i + 1, reqs, body
            i = j
        i += 1


def commands(body):
    cmd, out = None, []
    for line in body:
        if line.startswith("$ "):
            if cmd is not None:
                yield cmd, out
            cmd, out = line[2:], []
        elif cmd is not None:
            out.append(line)
    if cmd is not None:
        yield cmd, out


def matches(want, got):
    w = norm(want)
    if w.endswith("..."):
        return got.startswith(w[:-3].rstrip())
    return got == w


def check(cmd, want, output, state, host):
    if state:
        output = output.replace(state, "~/.local/state")
    if host and host != "vm":
        output = re.sub(r"\b%s\b" % re.escape(host), "vm", output)
    got = [norm(l) for l in output.split("\n")]
    errors, pos = [], 0
    for w in want:
        if w.strip() in ("", "..."):
            continue
        if w.startswith("xlaunch:"):
            k = next((k for k in range(pos, len(got)) if matches(w, got[k])), None)
            if k is None:
                errors.append("not printed (or not in this order): " + w)
            else:
                pos = k + 1
        elif not any(matches(w, g) for g in got):
            errors.append("not printed: " + w)
    if errors:
        return ["$ " + cmd] + ["  " + e for e in errors] + ["  --- what it printed:"] + \
            ["  | " + l for l in output.split("\n")]
    return []


def main():
    path, met = sys.argv[1], set(sys.argv[2:])
    import os
    state = os.environ.get("XDG_STATE_HOME", "")
    host = socket.gethostname().split(".")[0]
    text = open(path, encoding="utf-8").read()
    bad, ran, skipped = [], 0, 0
    for line, reqs, body in samples(text):
        missing = [r for r in reqs if r not in met]
        if missing:
            print("sample at line %d skipped: needs %s" % (line, ", ".join(missing)))
            skipped += 1
            continue
        for cmd, want in commands(body):
            p = subprocess.run(["sh", "-c", cmd], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, timeout=600)
            ran += 1
            errs = check(cmd, want, p.stdout.decode("utf-8", "replace"), state, host)
            if errs:
                bad.append("README.md:%d:" % line)
                bad.extend(errs)
    print("%d commands run, %d samples skipped" % (ran, skipped))
    if bad:
        print("\n".join(bad))
        return 1
    return 0 if ran else 2


if __name__ == "__main__":
    sys.exit(main())
