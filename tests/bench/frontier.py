#!/usr/bin/env python3
"""The report of tests/bench/frontier.sh: per family, the truth of every
rung, xlaunch's predictions with their bands after two and three launches,
the affine fit xlaunch had before curves, and every strategy's launches;
then the bands' coverage over all families.

    python3 tests/bench/frontier.py DIR FAMILY...

DIR holds what frontier.sh measured (FAMILY-truth.json, -free.json,
-pred2.json, -pred3.json, -order2.json, -order3.json, -cal2.json,
-cal3.json, -after2.json, -after3.json, -rungs, -limit, -truth-seconds).
"""

import json
import math
import os
import re
import sys

# what a band resting on an out-of-sample error claims: the truth inside it
# at least this often (calib.h, calib_choose_curve; README "Predicting what
# fits").  A band from two sizes rests on a prior no launch has tested, and
# claims nothing; it is counted apart.
CLAIMED = 0.90
MIB = 1048576.0


def load(d, name):
    with open(os.path.join(d, name)) as f:
        return json.load(f)


def parse_bytes(text):
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([KMGT]i?B)?", text.strip())
    mult = {"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40,
            "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12, None: 1}[m.group(2)]
    return float(m.group(1)) * mult


def vm(attempt):
    if not attempt:
        return None
    f = [f for f in attempt["figures"] if f["role"] == "observed" and f["kind"] == "host_peak_vm"]
    return f[0]["bytes"] if f else None


def rung_of(name):
    return int(name[1:])


def gb(b):
    return "%.2f" % (b / 1e9) if b is not None else "-"


class Family:
    def __init__(self, d, name):
        self.name = name
        self.rungs = sorted(int(r) for r in open(os.path.join(d, name + "-rungs")).read().split())
        self.limit_text = open(os.path.join(d, name + "-limit")).read().strip()
        self.limit = parse_bytes(self.limit_text)
        try:
            self.truth_s = open(os.path.join(d, name + "-truth-seconds")).read().strip()
        except OSError:
            self.truth_s = "?"
        truth = {}
        for a in load(d, name + "-truth.json"):
            truth.setdefault(rung_of(a["candidate"]), a)   # newest first
        free = {}
        for a in load(d, name + "-free.json"):
            free.setdefault(rung_of(a["candidate"]), a)
        self.fits = {r: truth[r]["outcome"] == "ok" for r in self.rungs}
        self.peak = {r: vm(truth[r] if self.fits[r] else free.get(r)) for r in self.rungs}
        self.best = max([r for r in self.rungs if self.fits[r]], default=None)
        self.pred = {n: {rung_of(p["candidate"]): p for p in load(d, "%s-pred%d.json" % (name, n))}
                     for n in (2, 3)}
        self.order = {n: load(d, "%s-order%d.json" % (name, n))["order"] for n in (2, 3)}
        self.after = {n: load(d, "%s-after%d.json" % (name, n)) for n in (2, 3)}
        self.cal = {n: self.rungs[:n] for n in (2, 3)}


# ---- the affine fit xlaunch had before curves, replayed -----------------------------

def old_affine(points, x):
    """The former estimate: a least-squares line through (x, y), its band
    twice the standard error of a new observation at x, never less than 3%
    (8 MiB) from three sizes or 5% (16 MiB) from two."""
    n = len(points)
    xs = [p[0] for p in points]
    ys = [p[1] for p in points]
    xbar, ybar = sum(xs) / n, sum(ys) / n
    sxx = sum((a - xbar) ** 2 for a in xs)
    b = sum((a - xbar) * (c - ybar) for a, c in zip(xs, ys)) / sxx
    a = ybar - b * xbar
    ssr = sum((c - (a + b * p)) ** 2 for p, c in zip(xs, ys))
    s = math.sqrt(ssr / (n - 2)) if n > 2 else 0
    pred = a + b * x
    se = s * math.sqrt(1 + 1.0 / n + (x - xbar) ** 2 / sxx)
    floor = max(0.03 * abs(pred), 8 * MIB) if len(set(xs)) > 2 else max(0.05 * abs(pred), 16 * MIB)
    return pred, max(2 * se, floor)


def verdict(pred, band, limit):
    if pred + band <= limit:
        return True
    if pred - band > limit:
        return False
    return None


def old_strategy(fam, n):
    """Its predictions of every rung from the n smallest rungs' launches, and
    the run it would make: in the profile's order (largest first), the
    known-good and predicted-to-fit rungs, then those without a verdict;
    predicted-infeasible ones skipped; an oom makes larger rungs infeasible."""
    pts = [(r, fam.peak[r]) for r in fam.cal[n]]
    preds = {r: old_affine(pts, r) for r in fam.rungs}
    verd = {r: (True if r in fam.cal[n] else verdict(*preds[r], fam.limit)) for r in fam.rungs}
    order = [r for r in reversed(fam.rungs) if verd[r] is True] + \
            [r for r in reversed(fam.rungs) if verd[r] is None]
    tried, oom_at = [], None
    for r in order:
        if oom_at is not None and r >= oom_at:
            continue
        tried.append(r)
        if fam.fits[r]:
            break
        oom_at = r if oom_at is None else min(oom_at, r)
    return preds, verd, tried


# ---- the peers, replayed -------------------------------------------------------------

def halve(rs, f, factor=0.5):
    i, tried = len(rs) - 1, []
    while i >= 0:
        tried.append(rs[i])
        if f[rs[i]]:
            return tried
        target = rs[i] * factor
        i = max([k for k in range(len(rs)) if rs[k] <= target], default=-1)
    return tried


def binsearch(rs, f):
    lo, hi, i, tried = None, None, 0, []
    while True:
        tried.append(rs[i])
        if f[rs[i]]:
            lo = i
            if hi is None:
                nxt = min([k for k in range(len(rs)) if rs[k] >= 2 * rs[i]], default=len(rs) - 1)
                if nxt == i:
                    return tried
                i = nxt
                continue
        else:
            hi = i
            if lo is None:
                return tried
        if hi - lo <= 1:
            return tried
        i = (lo + hi) // 2


# ---- the report -------------------------------------------------------------------------

def err_cell(pred, band, truth, prior=False):
    if pred is None or truth is None:
        return "-", None
    e = (pred - truth) / truth
    return "%s +/- %s%s (%+.1f%%)" % (gb(pred), gb(band), "*" if prior else "", 100 * e), e


def prior_band(p):
    """Whether p's band rests on the prior (no out-of-sample error)."""
    cv = p.get("curve")
    return p["basis"] == "learned" and cv is not None and cv["loo_error"] is None


def rung_table(fam, old3, cover):
    print("| rung | true peak (GB) | fits | xlaunch after 2 | xlaunch after 3 | curve after 3 "
          "| verdict after 3 | old affine after 3 | its verdict |")
    print("|---:|---:|:---:|---:|---:|---|---|---:|---|")
    errs = {2: [], 3: [], "old": []}
    for r in reversed(fam.rungs):
        cells = []
        for n in (2, 3):
            p = fam.pred[n][r]
            if r in fam.cal[n]:
                cells.append("calibration")
                continue
            cell, e = err_cell(p["predicted_bytes"], p["error_bytes"], fam.peak[r], prior_band(p))
            cells.append(cell)
            if e is not None:
                errs[n].append(e)
                inside = abs(p["predicted_bytes"] - fam.peak[r]) <= p["error_bytes"]
                above = fam.peak[r] > p["predicted_bytes"] + p["error_bytes"]
                cover.append((fam.name, n, r, inside, prior_band(p), above))
        p3 = fam.pred[3][r]
        curve = "-" if r in fam.cal[3] else \
            (p3.get("curve") or {}).get("shape", "-") if p3["basis"] == "learned" else p3["basis"]
        v3 = "calibration" if r in fam.cal[3] else \
            {True: "fits", False: "predicted-infeasible", None: "near-limit" if p3.get("near_limit")
             else "no verdict"}[p3["feasible"]]
        preds, verd, _ = old3
        if r in fam.cal[3]:
            oc, ov = "calibration", "calibration"
        else:
            oc, e = err_cell(preds[r][0], preds[r][1], fam.peak[r])
            if e is not None:
                errs["old"].append(e)
            ov = {True: "fits", False: "predicted-infeasible", None: "no verdict"}[verd[r]]
        print("| %d | %s | %s | %s | %s | %s | %s | %s | %s |"
              % (r, gb(fam.peak[r]), "yes" if fam.fits[r] else "**oom**", cells[0], cells[1],
                 curve, v3, oc, ov))
    print()
    for key, what in ((2, "xlaunch after 2 launches"), (3, "xlaunch after 3 launches"),
                      ("old", "the old affine fit after 3 launches")):
        e = errs[key]
        if e:
            print("- %s: mean absolute error %.1f%%, largest %.1f%% (from %+.1f%% to %+.1f%%) over %d"
                  " unseen rungs" % (what, 100 * sum(map(abs, e)) / len(e), 100 * max(map(abs, e)),
                                     100 * min(e), 100 * max(e), len(e)))
    return errs


def launches_to_best(tried, fam, before=0):
    if fam.best in tried:
        return str(before + tried.index(fam.best) + 1)
    return "never"


def strategy_table(fam, old2, old3, errs, summary):
    print("\n| strategy | launches | wasted (oom or failed) | ends at rung | the largest that fits? "
          "| feasible rungs passed over | launches to reach the largest | error after 3 launches |")
    print("|---|---:|---:|---:|:---:|---:|---:|---:|")

    def row(name, launches, ooms, final, passed, to_best, err):
        print("| %s | %d | **%d** | %s | %s | %d | %s | %s |"
              % (name, launches, ooms, final, "yes" if final == fam.best else "no", passed,
                 to_best, err))
        summary.setdefault(name, {})[fam.name] = (ooms, passed, to_best)

    def err_of(e):
        return "%.1f%% (largest %.1f%%)" % (100 * sum(map(abs, e)) / len(e), 100 * max(map(abs, e))) \
            if e else "-"

    for n in (2, 3):
        after = fam.after[n]
        run = after[:len(after) - n]          # newest first: the run's attempts
        run_rungs = [rung_of(a["candidate"]) for a in reversed(run)]
        ooms = len([a for a in run if a["outcome"] != "ok"])
        final = next((rung_of(a["candidate"]) for a in run if a["outcome"] == "ok"), None)
        infeas = [rung_of(c["name"]) for c in fam.order[n] if c["place"] == "predicted-infeasible"]
        passed = len([r for r in infeas if fam.fits[r]]) + \
            len([r for r in fam.rungs if fam.fits[r] and final is not None and r > final
                 and r not in infeas])
        row("xlaunch, %d calibration launches" % n, n + len(run), ooms, final, passed,
            launches_to_best(fam.cal[n] + run_rungs, fam), err_of(errs[3]) if n == 3 else "")
    for n, old in ((2, old2), (3, old3)):
        _, verd, tried = old
        final = tried[-1] if tried and fam.fits[tried[-1]] else None
        passed = len([r for r in fam.rungs if fam.fits[r] and verd[r] is False]) + \
            len([r for r in fam.rungs if fam.fits[r] and final is not None and r > final
                 and verd[r] is not False])
        row("old affine fit, %d calibration launches (replayed)" % n, n + len(tried),
            len([r for r in tried if not fam.fits[r]]), final, passed,
            launches_to_best(fam.cal[n] + tried, fam), err_of(errs["old"]) if n == 3 else "")
    for name, tried in (("halving on oom (accelerate)", halve(fam.rungs, fam.fits)),
                        ("shrinking by 10% on oom", halve(fam.rungs, fam.fits, 0.9)),
                        ("binary search (Lightning, binsearch)", binsearch(fam.rungs, fam.fits))):
        ok = [r for r in tried if fam.fits[r]]
        final = max(ok) if ok else None
        row(name, len(tried), len([r for r in tried if not fam.fits[r]]), final,
            len([r for r in fam.rungs if fam.fits[r] and final is not None and r > final]),
            launches_to_best(tried, fam), "-")


def fit_but_oom(fam):
    """Rungs xlaunch called fits that did not fit, and the runs' ooms."""
    bad = []
    for n in (2, 3):
        for r in fam.rungs:
            if r not in fam.cal[n] and fam.pred[n][r]["feasible"] is True and not fam.fits[r]:
                bad.append((n, r))
    return bad


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: frontier.py DIR FAMILY...")
    d, names = sys.argv[1], sys.argv[2:]
    cover, summary, wrong = [], {}, []
    for name in names:
        fam = Family(d, name)
        print("### Family `%s`\n" % name)
        print("Ladder of %d rungs, `limits.address_space: %s`; truth measured in %s s; the largest "
              "rung that fits: %s.\n" % (len(fam.rungs), fam.limit_text, fam.truth_s, fam.best))
        old2, old3 = old_strategy(fam, 2), old_strategy(fam, 3)
        errs = rung_table(fam, old3, cover)
        strategy_table(fam, old2, old3, errs, summary)
        wrong += [(name, n, r) for n, r in fit_but_oom(fam)]
        print()
    print("### All families\n")
    print("| strategy | " + " | ".join("%s: oom / passed over / launches to the largest" % n
                                       for n in names) + " |")
    print("|---|" + "---:|" * len(names))
    for strat, per in summary.items():
        print("| %s | %s |" % (strat, " | ".join("%d / %d / %s" % per[n] if n in per else "-"
                                                  for n in names)))
    tested = [c for c in cover if not c[4]]
    inside = len([c for c in tested if c[3]])
    print("\nBands resting on an out-of-sample error: the truth inside the band "
          "for %d of %d predictions of unseen rungs (%.0f%%; such a band claims at least %.0f%%); "
          "above its top (the side that runs out of memory): %d."
          % (inside, len(tested), 100.0 * inside / max(1, len(tested)), 100 * CLAIMED,
             len([c for c in tested if c[5]])))
    for name in names:
        c = [x for x in tested if x[0] == name]
        if c:
            print("- %s: %d of %d" % (name, len([x for x in c if x[3]]), len(c)))
    outside = [c for c in tested if not c[3]]
    if outside:
        print("- outside: " + ", ".join("%s r%d after %d (%s)" % (f, r, n, "above" if a else "below")
                                        for f, n, r, _, _, a in outside))
    prior = [c for c in cover if c[4]]
    if prior:
        print("\nBands resting on the prior of 5%% (widened; marked * above: two sizes, or curves no "
              "launch could judge yet in place of shapes that missed their left-out sizes): the truth "
              "inside for %d of %d, above the top for %d." % (len([c for c in prior if c[3]]), len(prior),
                                                          len([c for c in prior if c[5]])))
    print("\nPredicted to fit and ran out of memory: %d%s." %
          (len(wrong), "" if not wrong else " (" + ", ".join("%s r%d after %d" % (f, r, n)
                                                           for f, n, r in wrong) + ")"))


if __name__ == "__main__":
    main()
