"""Release helpers shared by the catalog generators (tools/gen-*-catalog.py).

etc/flags/releases.yaml is the one list of runtime releases the flag
knowledge covers.  Its shape is fixed and small (a mapping of packages, each
with scalar fields and a `releases` list of one-line flow mappings), so it is
read here with a few regular expressions rather than a YAML library: the
generators use the Python standard library only.  tools/gen-catalog.c reads
the same file with libyaml and checks it again.

Upstream sources are read from git directories (`fetch`ed mirrors or any
clone with history) with `git --git-dir=DIR show COMMIT:PATH`; nothing is
checked out into this repository.
"""
import os
import re
import shutil
import subprocess
import tarfile
import tempfile

_FLOW = re.compile(r"^\s*-\s*\{(.*)\}\s*$")


def _scalar(v):
    v = v.strip()
    if len(v) >= 2 and v[0] == v[-1] and v[0] in "\"'":
        return v[1:-1]
    if v in ("true", "false"):
        return v == "true"
    return v


def load_releases(path):
    """{package: {"fields": {...}, "releases": [{version, ...}, ...]}}."""
    packages, cur, in_rel = {}, None, False
    for n, line in enumerate(open(path, encoding="utf-8"), 1):
        text = line.split(" #", 1)[0].rstrip() if not line.lstrip().startswith("#") else ""
        if not text.strip():
            continue
        indent = len(text) - len(text.lstrip())
        m = _FLOW.match(text)
        if m and cur is not None and in_rel:
            rel = {}
            for item in m.group(1).split(","):
                k, _, v = item.partition(":")
                rel[k.strip()] = _scalar(v)
            if "version" not in rel:
                raise SystemExit("%s:%d: a release without a version" % (path, n))
            cur["releases"].append(rel)
            continue
        key, _, val = text.strip().partition(":")
        if indent == 0:
            if key != "packages":
                raise SystemExit("%s:%d: unknown key '%s'" % (path, n, key))
        elif indent == 2:
            cur = packages.setdefault(key, {"fields": {}, "releases": []})
            in_rel = False
        elif indent == 4 and cur is not None:
            if key == "releases":
                in_rel = True
            else:
                cur["fields"][key] = _scalar(val)
        else:
            raise SystemExit("%s:%d: cannot read this line" % (path, n))
    return packages


def known(rels):
    """The releases whose sources the catalogs are generated from: not
    marked known: false, and not observed (those are known by the names
    their wheels register; tools/gen-catalog.c reads their files)."""
    return [r for r in rels if r.get("known", True) is not False and not r.get("observed")]


def ranges(axis, present):
    """Compact text of the releases of axis (versions in list order) that are
    in present: "0.4.30-0.6.2 0.7.1" ("" when none)."""
    out, start, prev = [], None, None
    for v in axis:
        if v in present:
            if start is None:
                start = v
            prev = v
        elif start is not None:
            out.append(start if start == prev else "%s-%s" % (start, prev))
            start = None
    if start is not None:
        out.append(start if start == prev else "%s-%s" % (start, prev))
    return " ".join(out)


def git_show(gitdir, commit, path):
    """The text of path at commit, or None when the commit lacks it."""
    r = subprocess.run(["git", "--git-dir=" + gitdir, "show", "%s:%s" % (commit, path)],
                       capture_output=True)
    if r.returncode != 0:
        return None
    return r.stdout.decode("utf-8", errors="replace")


def git_has(gitdir, commit):
    r = subprocess.run(["git", "--git-dir=" + gitdir, "cat-file", "-e", commit + "^{commit}"],
                       capture_output=True)
    return r.returncode == 0


def git_tree(gitdir, commit, paths):
    """A temporary directory holding paths of commit (git archive); the
    caller removes it with shutil.rmtree."""
    dest = tempfile.mkdtemp(prefix="xlaunch-gen-")
    arc = os.path.join(dest, ".tree.tar")
    with open(arc, "wb") as f:
        r = subprocess.run(["git", "--git-dir=" + gitdir, "archive", "--format=tar", commit] +
                           list(paths), stdout=f, stderr=subprocess.PIPE)
    if r.returncode != 0:
        shutil.rmtree(dest)
        raise SystemExit("git archive %s failed: %s" % (commit, r.stderr.decode(errors="replace")))
    with tarfile.open(arc) as t:
        t.extractall(dest, filter="data") if hasattr(tarfile, "data_filter") else t.extractall(dest)
    os.unlink(arc)
    return dest


def yq(s):
    return '"' + str(s).replace("\\", "\\\\").replace('"', '\\"') + '"'


def git_ls(gitdir, commit):
    """The names at the top of commit's tree."""
    r = subprocess.run(["git", "--git-dir=" + gitdir, "ls-tree", "--name-only", commit],
                       capture_output=True, text=True)
    return set(r.stdout.split())
