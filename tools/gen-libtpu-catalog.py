#!/usr/bin/env python3
"""Writes etc/flags/libtpu.yaml: the flags each known libtpu release registers.

    tools/gen-libtpu-catalog.py --releases etc/flags/releases.yaml \
        --python build/venv-tpu/bin/python [--wheels build/libtpu-wheels] \
        [--work build/libtpu] > etc/flags/libtpu.yaml

For every libtpu release of releases.yaml that is known, the script takes the
release's wheel from PyPI (`pip download --no-deps --only-binary :all:
libtpu==VERSION` into --wheels, kept there as a cache; nothing of it is
committed), unpacks libtpu.so into --work, and:

  1. reads the candidate names from the shared object's strings (every
     lower-case snake_case word, and each of its tails after an
     underscore, since the linker stores a string that ends another inside
     it), and the names the parser suggests for unknown ones ("Did you
     mean: ..."); absl's own special flags, which do more than set a value,
     are left out (SPECIAL below);
  2. asks that release's own flag parser which of them it registers and what
     each value must be.  libtpu parses LIBTPU_INIT_ARGS when it starts,
     before it looks for a TPU, reports every unknown name and every value it
     refuses ("ERROR: Unknown command line flag 'NAME'", "ERROR: Illegal
     value 'V' specified for flag 'NAME'") and then exits.  The script starts
     it through PYTHON (a Python with jax, which loads the libtpu named by
     TPU_LIBRARY_PATH when it builds a TPU topology: PROBE below), many
     names per process, always with one name no release registers, so that
     every run ends in the parser's report: a run whose report lacks that
     name proves nothing and stops the script, and so does an error line
     it does not know.  One libtpu process at a time: the script holds the
     lock the tests that start libtpu take (tests/integration/lib.sh)
     while it asks about a release.

The type of a registered name comes from the values its parser takes: a
name that takes "zzz" is a string (any text); of the rest, one that takes
"1.5" is a float, one that takes "7" an int, one that takes "yes" a bool
(absl's booleans: true/false, 1/0, yes/no, t/f, y/n, any case), and one
that takes none of them has a value type of libtpu's own, which the second
stage learns (the value types section below: integer widths, durations,
enums).  Each
type is asked once more with a second value it must take and one it must
refuse.  A retired flag ("Accessing retired flag") takes any value and
libtpu starts: it is written as a string, tagged deprecated.  "--noNAME=V"
of a boolean NAME is absl's negative form, not a name of its own.

Each release's answers are kept in --work (answers-VERSION.json, with the
sha256 of the wheel they came from, which must be releases.yaml's commit):
a rerun asks libtpu only about releases it has not asked, newest first,
taking the lock for each release.

Descriptions of the names the earlier hand-written catalog had are kept
(HAND below); the rest are derived from the name.  Only the Python standard
library is used, besides pip (through PYTHON) for the download.
"""
import argparse
import fcntl
import glob
import hashlib
import json
import os
import re
import subprocess
import sys
import time
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import flagrel  # noqa: E402

# absl's flags that act rather than hold a value (help, flag files, ...).
SPECIAL = {"only_check_args", "help", "helpfull", "helpshort", "helppackage", "helpon",
           "helpmatch", "helpxml", "version", "flagfile", "fromenv", "tryfromenv", "undefok"}
SENTINEL = "xlaunch_no_such_flag_zq"

PROBE = r"""
import sys
from jax.experimental import topologies
try:
    topologies.get_topology_desc(platform="tpu", topology_name="v5e:2x2")
except Exception as e:
    print("EXC", str(e)[:200])
"""

# The descriptions and tags of the earlier, hand-written catalog (from public
# TPU recipes), for the names a known release registers.
HAND = {
    'xla_enable_async_all_gather': ('Run all-gathers asynchronously so they overlap with compute', None),
    'xla_enable_async_all_reduce': ('Run all-reduces asynchronously', None),
    'xla_enable_async_collective_permute': ('Run collective-permutes asynchronously', None),
    'xla_enable_async_reduce_scatter_fusion': ('Fuse reduce-scatters into async fusions', None),
    'xla_jf_spmd_threshold_for_windowed_einsum_mib': ('Size in MiB above which SPMD einsums become windowed', None),
    'xla_latency_hiding_scheduler_rerun': ('Times the latency hiding scheduler retries with less overlap after running out of memory', None),
    'xla_lhs_prioritize_async_depth_over_stall': ('Latency hiding scheduler prefers async depth over fewer stalls', None),
    'xla_max_concurrent_host_send_recv': ('Most host send/recv operations in flight at once', None),
    'xla_sc_disable_megacore_partitioning': ('Do not split SparseCore work across megacore halves', None),
    'xla_should_add_loop_invariant_op_in_chain': ('Add loop-invariant ops to collective chains', None),
    'xla_should_allow_loop_variant_parameter_in_chain': ('Allow loop-variant parameters in collective chains', None),
    'xla_tpu_aggressive_opt_barrier_removal': ('Remove optimization barriers aggressively', None),
    'xla_tpu_assign_all_reduce_scatter_layout': ('Pick layouts for all-reduce-scatter pairs', None),
    'xla_tpu_data_parallel_opt_different_sized_ops': ('Let the data-parallel all-reduce optimization combine different-sized ops', None),
    'xla_tpu_decompose_all_gather_einsum': ('Decompose all-gather einsums to overlap communication', None),
    'xla_tpu_decompose_einsum_reduce_scatter': ('Decompose einsum reduce-scatters to overlap communication', None),
    'xla_tpu_dot_dot_fusion_duplicated': ('Allow dot-dot fusions that duplicate work', None),
    'xla_tpu_enable_ag_backward_pipelining': ('Pipeline all-gathers of the backward pass', None),
    'xla_tpu_enable_all_experimental_scheduler_features': ('Turn on every experimental TPU scheduler feature', 'perf-risk'),
    'xla_tpu_enable_all_gather_offload_tracing': ('Trace offloaded all-gathers', 'debug'),
    'xla_tpu_enable_all_reduce_offload_tracing': ('Trace offloaded all-reduces', 'debug'),
    'xla_tpu_enable_async_all_to_all': ('Run all-to-alls asynchronously', None),
    'xla_tpu_enable_async_collective_fusion': ('Fuse collectives into async continuation fusions on TPU', 'perf-risk'),
    'xla_tpu_enable_async_collective_fusion_fuse_all_gather': ('Let async collective fusion take all-gathers too', 'perf-risk'),
    'xla_tpu_enable_async_collective_fusion_fuse_all_reduce': ('Let async collective fusion take all-reduces too', 'perf-risk'),
    'xla_tpu_enable_async_collective_fusion_multiple_steps': ('Let an async collective span several scheduling steps', None),
    'xla_tpu_enable_copy_fusion': ('Fuse copies into neighbouring ops', None),
    'xla_tpu_enable_data_parallel_all_reduce_opt': ('Optimize data-parallel gradient all-reduces', None),
    'xla_tpu_enable_dcn_allreduce_with_host_reduction': ('Reduce cross-slice (DCN) all-reduces on the host', None),
    'xla_tpu_enable_dot_strength_reduction': ('Rewrite small dots as cheaper elementwise ops', None),
    'xla_tpu_enable_flash_attention': ('Pattern-match attention in HLO and rewrite it as flash attention', None),
    'xla_tpu_enable_host_aware_passes': ('Run passes that know about host offloading', None),
    'xla_tpu_enable_latency_hiding_scheduler': ('Use the latency hiding scheduler on TPU', None),
    'xla_tpu_enable_megascale_barrier': ('Insert a barrier between slices in multislice (Megascale) runs', None),
    'xla_tpu_enable_reduce_scatter_fusion': ('Fuse reduce-scatters with their producers', None),
    'xla_tpu_enable_reduce_scatter_offload_tracing': ('Trace offloaded reduce-scatters', 'debug'),
    'xla_tpu_enable_scheduler_memory_pressure_tracking': ('Track memory pressure in the TPU scheduler', None),
    'xla_tpu_enable_sparse_core_collective_offload_all_gather': ('Offload all-gathers to the SparseCore', None),
    'xla_tpu_enable_sparse_core_collective_offload_all_reduce': ('Offload all-reduces to the SparseCore', None),
    'xla_tpu_enable_sparse_core_collective_offload_reduce_scatter': ('Offload reduce-scatters to the SparseCore', None),
    'xla_tpu_enable_sunk_dcn_allreduce_done_with_host_reduction': ('Sink cross-slice all-reduce completion and reduce on the host', None),
    'xla_tpu_enable_windowed_einsum_for_all_gather': ('Decompose all-gather plus einsum into a windowed loop', None),
    'xla_tpu_enable_windowed_einsum_for_all_reduce': ('Decompose einsum plus all-reduce into a windowed loop', None),
    'xla_tpu_enable_windowed_einsum_for_reduce_scatter': ('Decompose einsum plus reduce-scatter into a windowed loop', None),
    'xla_tpu_host_transfer_overlap_limit': ('How many host transfers may overlap', None),
    'xla_tpu_impure_oom_fast_exit_threshold': ('Allocation failures tolerated before exiting fast on out-of-memory', None),
    'xla_tpu_iova_dma_chunk_size_bytes': ('DMA chunk size for host-device transfers, in bytes', None),
    'xla_tpu_megacore_fusion_allow_ags': ('Allow all-gathers inside megacore fusions', None),
    'xla_tpu_memory_bound_loop_optimizer_options': ('Options of the memory-bound loop optimizer', None),
    'xla_tpu_overlap_compute_collective_tc': ('Overlap compute and collectives on the TensorCore', None),
    'xla_tpu_pack_vmem_constants': ('Pack constants in vector memory', None),
    'xla_tpu_prefer_async_allgather_to_allreduce': ('Keep async all-gathers instead of turning them into all-reduces (saves memory)', None),
    'xla_tpu_relayout_group_size_threshold_for_reduce_scatter': ('Group size above which reduce-scatters are relaid out', None),
    'xla_tpu_rwb_fusion': ('Fuse reduce-window-backward patterns', None),
    'xla_tpu_scheduler_percent_shared_memory_limit': ('Percent of memory the TPU scheduler may plan to fill', 'perf-risk'),
    'xla_tpu_scoped_vmem_limit_kib': ('Scoped vector memory limit per TPU kernel, in KiB', 'perf-risk'),
    'xla_tpu_spmd_rng_bit_generator_unsafe': ('Partition the RNG bit generator without keeping results identical to unpartitioned runs', 'perf-risk'),
    'xla_tpu_use_enhanced_launch_barrier': ('Use the enhanced launch barrier between TPU program launches (torch_xla turns it off)', None),
    'xla_tpu_use_minor_sharding_for_major_trivial_input': ('Shard trivially-major inputs along the minor dimension', None),
    'xla_tpu_use_tc_device_shape_on_sc': ('Use TensorCore device shapes on the SparseCore', None),
    "xla_jf_dump_to": ("Directory libtpu's compiler dumps HLO and its reports to (libtpu's name for XLA's xla_dump_to)", "debug"),
}


def log(*a):
    print("gen-libtpu-catalog:", *a, file=sys.stderr, flush=True)


def wheel_so(args, version):
    """libtpu.so of release version, unpacked under --work (downloaded once)."""
    found = glob.glob(os.path.join(args.wheels, "libtpu-%s-*.whl" % version))
    if not found:
        log("downloading libtpu", version)
        subprocess.run([args.python, "-m", "pip", "download", "-q", "--no-deps", "--only-binary", ":all:",
                        "libtpu==" + version, "-d", args.wheels], check=True)
        found = glob.glob(os.path.join(args.wheels, "libtpu-%s-*.whl" % version))
    if not found:
        raise SystemExit("no wheel of libtpu %s" % version)
    dest = os.path.join(args.work, version)
    so = os.path.join(dest, "libtpu.so")
    if not os.path.exists(so):
        os.makedirs(dest, exist_ok=True)
        with zipfile.ZipFile(found[0]) as z, open(so + ".part", "wb") as out:
            with z.open("libtpu/libtpu.so") as src:
                while True:
                    b = src.read(1 << 20)
                    if not b:
                        break
                    out.write(b)
        os.rename(so + ".part", so)
    return so


def candidates(so):
    out = subprocess.run(["strings", "-n", "4", so], capture_output=True, check=True).stdout
    words = set()
    pat = re.compile(rb"^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$")
    for w in out.split(b"\n"):
        if 1 <= len(w) <= 100 and pat.match(w):
            w = w.decode()
            words.add(w)
            # the linker keeps a string that ends another only once, inside
            # the longer one: every tail after an underscore is a candidate
            parts = w.split("_")
            for i in range(1, len(parts) - 1):
                words.add("_".join(parts[i:]))
    return sorted(words - SPECIAL)


DYM = re.compile(r"Did you mean: (.*?) \?$")
ERR = re.compile(r"^ERROR: (?:Unknown command line flag '([^']+)'|(?:Illegal value '([^']*)' specified for (?:[a-z0-9]+ )?flag|Failed validation of new value '[^']*' for flag) '([^']+)')")
# a retired flag: libtpu says so and takes any value (it starts)
RETIRED = re.compile(r"^ERROR: Accessing retired flag '([^']+)'")
# "--noNAME=V" of a boolean NAME: absl's negative form, not a name of its own
NEG = re.compile(r"^ERROR: Negative form with assignment is not valid for the boolean flag '([^']+)'")


def probe(args, so, pairs):
    """Runs the parser of so on --name=value for pairs: (unknown, refused) sets."""
    toks = ["--%s=%s" % p for p in pairs] + ["--%s=1" % SENTINEL]
    env = dict(os.environ, TPU_LIBRARY_PATH=so, LIBTPU_INIT_ARGS=" ".join(toks),
               JAX_PLATFORMS="", TPU_SKIP_MDS_QUERY="1")
    r = subprocess.run([args.python, "-c", PROBE], env=env, capture_output=True, timeout=300)
    unknown, refused = set(), set()
    for line in r.stderr.decode(errors="replace").splitlines():
        m = ERR.match(line)
        if m and m.group(1):
            unknown.add(m.group(1))
            d = DYM.search(line)
            if d:
                args.suggested.update(x.strip() for x in d.group(1).split(","))
        elif m:
            refused.add(m.group(3))
        elif RETIRED.match(line):
            args.retired.setdefault(so, set()).add(RETIRED.match(line).group(1))
        elif NEG.match(line):
            unknown.add("no" + NEG.match(line).group(1))
        elif line.startswith("ERROR:"):
            raise SystemExit("libtpu at %s: an error this script does not know: %s" % (so, line))
    if SENTINEL not in unknown:
        raise SystemExit("libtpu at %s did not report its parse (no '%s' in its errors):\n%s" %
                         (so, SENTINEL, r.stderr.decode(errors="replace")[-2000:]))
    unknown.discard(SENTINEL)
    return unknown, refused


def probe_all(args, so, names, value):
    """Names of names the parser takes with value, and those it refuses
    (unknown names are dropped), in batches that fit one variable."""
    taken, refused, unknown = set(), set(), set()
    batch, size = [], 0
    for n in names + [None]:
        if n is not None and size + len(n) + len(value) + 4 < 120000:
            batch.append(n)
            size += len(n) + len(value) + 4
            continue
        if batch:
            u, r = probe(args, so, [(b, value) for b in batch])
            unknown |= u
            refused |= r & set(batch)
            taken |= set(batch) - u - r
        batch, size = ([n], len(n) + len(value) + 4) if n is not None else ([], 0)
    return taken, refused, unknown


def wheel_sha256(args, version):
    found = glob.glob(os.path.join(args.wheels, "libtpu-%s-*.whl" % version))
    if not found:
        return None
    h = hashlib.sha256()
    with open(found[0], "rb") as f:
        for b in iter(lambda: f.read(1 << 20), b""):
            h.update(b)
    return "sha256:" + h.hexdigest()


def registered_cached(args, version, commit):
    """registered(), or its answer kept in --work from an earlier run on
    the same wheel (commit is releases.yaml's sha256 of that wheel)."""
    cache = os.path.join(args.work, "answers-%s.json" % version)
    if os.path.exists(cache):
        with open(cache) as f:
            kept = json.load(f)
        if kept.get("commit") == commit and commit == wheel_sha256(args, version):
            log("libtpu %s: the answers of an earlier run on the same wheel" % version)
            return kept["types"]
    types = registered(args, version)
    have = wheel_sha256(args, version)
    if have != commit:
        raise SystemExit("libtpu %s: the wheel's sha256 is %s, releases.yaml says %s" % (version, have, commit))
    with open(cache + ".part", "w") as f:
        json.dump({"commit": commit, "types": types}, f)
    os.rename(cache + ".part", cache)
    return types


def registered(args, version):
    # one libtpu a host: the lock the tests take (tests/integration/lib.sh)
    with open("/tmp/xlaunch-tests-libtpu.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return registered_locked(args, version)


def registered_locked(args, version):
    so = wheel_so(args, version)
    t0 = time.time()
    names = candidates(so)
    args.suggested = set()
    taken, refused, unknown = probe_all(args, so, names, "zzz")
    # names the parser itself suggests for unknown ones (short names such
    # as "v" are no words of the strings read)
    extra = sorted(args.suggested - set(names) - SPECIAL)
    if extra:
        t2, r2, _ = probe_all(args, so, extra, "zzz")
        taken |= t2
        refused |= r2
        names += extra
    types = {n: "string" for n in taken}
    rest = sorted(refused)
    for value, typ in (("1.5", "float"), ("7", "int"), ("yes", "bool")):
        taken, refused, _ = probe_all(args, so, rest, value)
        for n in taken:
            types[n] = typ
        rest = sorted(refused)
    for n in rest:
        types[n] = "other"
    for n in args.retired.get(so, ()):
        if n in types:
            types[n] = "retired"
    # each type once more: a name typed bool must take "no" and refuse "zzz"
    check = {"bool": ("no", "maybe"), "int": ("-3", "1.5"), "float": ("2e3", "zzz")}
    for typ, (good, bad_) in check.items():
        ns = sorted(n for n, t in types.items() if t == typ)
        ok, ref, _ = probe_all(args, so, ns, good)
        if ref:
            log("libtpu %s: %d %s flags refuse '%s' (typed other): %s" % (version, len(ref), typ, good,
                                                                          " ".join(sorted(ref)[:5])))
            for n in ref:
                types[n] = "other"
        ok, ref, _ = probe_all(args, so, ns, bad_)
        for n in ok:
            raise SystemExit("libtpu %s: %s takes '%s', not a %s" % (version, n, bad_, typ))
    log("libtpu %s: %d candidates, %d registered, in %.0f s" % (version, len(names), len(types),
                                                              time.time() - t0))
    if not args.keep:
        os.unlink(so)
    return types


# ---- value types: what each name's parser takes ---------------------------
#
# Every name of a release that is not a boolean, a float or retired is set
# to each value of SHAPES (all names in one process a value, split only by
# the size of one variable); libtpu reports every value it refuses, with its
# reason.  The pattern of taken values decides the type (value_type); the
# words of an enum come from libtpu's own refusal ("Valid options are: ...",
# "Supported values are: ...") and are each asked again, as is the first
# word in the other case.  A name whose pattern fits no type stays
# "unlearned": xlaunch warns and does not check its values.
SHAPES = ["true", "1", "auto", "yes", "0", "-1", "1.5", "1s", "100ms", "", "word", "a=b,c=d",
          "2147483648", "4294967296", "-2147483649", "9223372036854775808", "18446744073709551616"]
REFUSAL = re.compile(r"^ERROR: (?:Illegal value '(?:[^']*)' specified for (?:[a-z0-9]+ )?flag|"
                     r"(Failed validation) of new value '(?:[^']*)' for flag) '([^']+)'(.*)$")
WORDS = (re.compile(r"Valid options(?: are)?: (.*?)\.?$"), re.compile(r"Supported values are: (.*?)\.?$"),
         re.compile(r"Must be one of \{(.*?)\}"), re.compile(r"Possible values are: (.*?)\.?$"),
         re.compile(r"must be ((?:'[^']+',? )+or '[^']+')"), re.compile(r"expected one of (.*?)\.?$"))


def refusals(args, so, pairs):
    """{name: libtpu's reason} for the pairs libtpu refuses; exits like probe()
    when the parse was not reported."""
    out, unknown = {}, set()
    batch, size = [], 0
    for p in list(pairs) + [None]:
        if p is not None and size + len(p[0]) + len(p[1]) + 4 < 120000:
            batch.append(p)
            size += len(p[0]) + len(p[1]) + 4
            continue
        if batch:
            toks = ["--%s=%s" % b for b in batch] + ["--%s=1" % SENTINEL]
            env = dict(os.environ, TPU_LIBRARY_PATH=so, LIBTPU_INIT_ARGS=" ".join(toks),
                       JAX_PLATFORMS="", TPU_SKIP_MDS_QUERY="1")
            r = subprocess.run([args.python, "-c", PROBE], env=env, capture_output=True, timeout=300)
            err = r.stderr.decode(errors="replace")
            if "'%s'" % SENTINEL not in err:
                raise SystemExit("libtpu at %s did not report its parse:\n%s" % (so, err[-2000:]))
            for line in err.splitlines():
                m = REFUSAL.match(line)
                if m:   # a validator's refusal: the type took the value
                    out[m.group(2)] = ("validation: " if m.group(1) else "") + m.group(3).lstrip("; ")
                elif line.startswith("ERROR: Unknown command line flag"):
                    unknown.add(line.split("'")[1])
        batch, size = ([p], len(p[0]) + len(p[1]) + 4) if p is not None else ([], 0)
    unknown.discard(SENTINEL)
    if unknown:
        raise SystemExit("libtpu at %s does not register %s" % (so, " ".join(sorted(unknown)[:5])))
    return out


def enum_words(reason):
    for w in WORDS:
        m = w.search(reason or "")
        if m:
            items = re.split(r",\s*|\s+or\s+|/", m.group(1))
            return [i.strip(" '\"") for i in items if i.strip(" '\"")]
    return None


def value_type(taken, words, validated=()):
    """The type of a name that takes the values taken of SHAPES (words: the
    enum words its parser took, or None): a dict of type, reader[, values,
    icase]."""
    t = set(taken)
    opt = " optional" if "" in t else ""
    if validated:   # the parser took values a validator then refused
        opt += " validated"
        t |= set(validated)
    if {"word", "a=b,c=d", "", "-1", "1.5"} <= t:
        return {"type": "string"}
    if words:
        extra = [v for v in SHAPES if v in t and v and v.lower() not in {w.lower() for w in words}]
        return {"type": "enum", "reader": "string enum" + opt, "values": words + extra}
    if {"0", "1s", "100ms"} <= t and not t & {"1", "word", "-1"}:
        return {"type": "string", "reader": "string duration" + opt}
    if {"0", "1"} <= t and not t & {"word", "1.5", "1s", "true"}:
        opt += " auto" if "auto" in t else ""    # an integer, or the word auto
        if "-1" in t:
            return {"type": "int", "reader": ("int64" if "2147483648" in t else "int32") + opt}
        return {"type": "int", "reader": ("uint64" if "4294967296" in t else "uint32") + opt}
    return {"type": "string", "reader": "string unlearned"}


def learn_values(args, version, so, types):
    """{name: value type} for the names of types (name: base type) that are
    not booleans, floats or retired."""
    names = sorted(n for n, t in types.items() if t not in ("bool", "float", "retired"))
    taken = {n: [] for n in names}
    validated = {n: [] for n in names}
    reason = {}
    for v in SHAPES:
        ref = refusals(args, so, [(n, v) for n in names])
        for n in names:
            if n in ref and ref[n].startswith("validation: "):
                validated[n].append(v)
            elif n in ref:
                reason.setdefault((n, v), ref[n])
            else:
                taken[n].append(v)
    # enum words: from the refusal of a word, each asked again
    # (a name whose refusal another release gave in the same words took the
    # same words there: they are not asked again)
    words = {n: enum_words(reason.get((n, "word"))) for n in names}
    seen = {n: args.known_words.get((n, reason.get((n, "word")))) for n in names}
    asked = {n: list(ws) for n, ws in words.items() if ws and not seen[n]}
    good = {n: [] for n in asked}
    for k in range(max([len(ws) for ws in asked.values()] or [0])):
        pairs = [(n, ws[k]) for n, ws in asked.items() if k < len(ws)]
        ref = refusals(args, so, pairs)
        for n, w in pairs:
            if n not in ref:
                good[n].append(w)
    # the first word in the other case: does the enum ignore case?
    pairs = [(n, ws[0].swapcase()) for n, ws in good.items() if ws and ws[0].swapcase() != ws[0]]
    ref = refusals(args, so, pairs) if pairs else {}
    out = {}
    for n in names:
        if seen[n]:
            good[n] = seen[n][0]
            if not seen[n][1]:
                ref[n] = "in the same case only, as in another release"
        vt = value_type(taken[n], good.get(n) or None, validated[n])
        if vt["type"] == "enum" and n not in ref and good[n][0].swapcase() != good[n][0]:
            vt["icase"] = True
            vt["reader"] = vt["reader"].replace("string enum", "string enum-icase")
        out[n] = vt
        args.asked.setdefault(version, {})[n] = {"taken": taken[n], "validated": validated[n],
                                                 "word": reason.get((n, "word")),
                                                 "words": good.get(n), "icase": vt.get("icase", False)}
    remember(args, args.asked[version])
    kinds = {}
    for vt in out.values():
        k = vt.get("reader", vt["type"]).split()[-1]
        kinds[k] = kinds.get(k, 0) + 1
    log("libtpu %s: value types of %d names: %s" % (version, len(out), kinds))
    return out


def confirm_widths(args, so, vals):
    """A 32-bit integer type is confirmed by the largest value of its width
    (2147483647, 4294967295); one that refuses it is asked for the largest
    of 16 bits, else its width is not known (unlearned)."""
    def ask(width):
        pairs = []
        for n, vt in vals.items():
            r = (vt.get("reader") or "").split()
            if r and r[0] in width:
                pairs.append((n, width[r[0]][0]))
        ref = refusals(args, so, pairs) if pairs else {}
        return [n for n, _ in pairs if n in ref and not ref[n].startswith("validation: ")]
    top = {"int32": ("2147483647", "int16"), "uint32": ("4294967295", "uint16")}
    narrow = ask(top)
    for n in narrow:
        r = vals[n]["reader"].split()
        r[0] = top[r[0]][1]
        vals[n]["reader"] = " ".join(r)
    small = ask({"int16": ("32767",), "uint16": ("65535",)})
    for n in small:
        vals[n] = {"type": "string", "reader": "string unlearned"}
    log("%d 32-bit integer types are narrower, %d of them of a width not learned" % (len(narrow), len(small)))
    return vals


def remember(args, asked):
    """The enum words each name took, by libtpu's refusal that listed them."""
    for n, a in (asked or {}).items():
        if a.get("words"):
            args.known_words[(n, a["word"])] = (a["words"], a["icase"])


def values_cached(args, version, commit, types):
    cache = os.path.join(args.work, "values-%s.json" % version)
    if os.path.exists(cache):
        with open(cache) as f:
            kept = json.load(f)
        if kept.get("commit") == commit and kept.get("widths"):
            remember(args, kept.get("asked"))
            return kept["values"]
        if kept.get("commit") == commit:      # learned before widths were confirmed
            remember(args, kept.get("asked"))
            args.asked[version] = kept.get("asked")
            vals = locked_widths(args, version, commit, kept["values"])
            with open(cache + ".part", "w") as f:
                json.dump({"commit": commit, "values": vals, "asked": kept.get("asked"), "widths": True}, f,
                          indent=0)
            os.rename(cache + ".part", cache)
            return vals
    with open("/tmp/xlaunch-tests-libtpu.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        t0 = time.time()
        so = wheel_so(args, version)
        have = wheel_sha256(args, version)
        if have != commit:
            raise SystemExit("libtpu %s: the wheel's sha256 is %s, releases.yaml says %s" % (version, have, commit))
        vals = confirm_widths(args, so, learn_values(args, version, so, types))
        log("libtpu %s: value types learned in %.0f s" % (version, time.time() - t0))
        if not args.keep:
            os.unlink(so)
    with open(cache + ".part", "w") as f:
        json.dump({"commit": commit, "values": vals, "asked": args.asked.get(version), "widths": True}, f,
                  indent=0)
    os.rename(cache + ".part", cache)
    return vals


def locked_widths(args, version, commit, vals):
    with open("/tmp/xlaunch-tests-libtpu.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        so = wheel_so(args, version)
        log("libtpu %s: integer widths" % version)
        vals = confirm_widths(args, so, vals)
        if not args.keep:
            os.unlink(so)
    return vals


def catalog_types(path, axis):
    """{version: {name: base type}} from a libtpu.yaml this script wrote: the
    names each release registers, for a run without kept answers."""
    per = {v: {} for v in axis}

    def expand(r):
        out = set()
        for part in r.split():
            lo, _, hi = part.partition("-")
            out |= set(axis[axis.index(lo):axis.index(hi or lo) + 1])
        return out
    name = None
    with open(path) as f:
        for line in f:
            m = re.match(r"  - name: (\S+)", line)
            if m:
                name, typ, var = m.group(1), None, []
                continue
            if name is None:
                continue
            m = re.match(r"    type: (\S+)", line)
            if m:
                typ = m.group(1)
            m = re.match(r'    releases: \{libtpu: "([^"]*)"\}', line)
            if m:
                rels = expand(m.group(1))
            m = re.match(r'      - \{releases: \{libtpu: "([^"]*)"\}, type: (\w+)', line)
            if m:
                var.append((expand(m.group(1)), m.group(2)))
            if line.startswith("    description:"):
                for v in rels:
                    t = next((vt for vs, vt in var if v in vs), typ)
                    per[v][name] = "retired" if "retired" in line else t
                name = None
    return per


def describe(name):
    words = name
    for pre, what in (("xla_tpu_", "TPU compiler: "), ("xla_jf_", "TPU compiler: "), ("xla_sc_", "SparseCore: "),
                      ("megascale_", "Megascale (multislice): "), ("tpu_", "TPU runtime: "), ("xla_", "TPU compiler: ")):
        if name.startswith(pre):
            return what + name[len(pre):].replace("_", " ")
    return "libtpu: " + words.replace("_", " ")


def spec_of(per, vals, v, n):
    """The type of n in release v: base type, and the value type learned."""
    t = per[v][n]
    vt = vals.get(v, {}).get(n)
    if vt:
        return vt
    if t == "other" or (t in ("string", "enum") and v not in vals and
                        any(vals[u].get(n, {}).get("reader") for u in vals)):
        # a type of libtpu's own, learned for other releases only
        return {"type": "string", "reader": "string unlearned"}
    return {"type": "string" if t in ("retired", "enum") else t}


def spec_yaml(vt):
    out = "type: %s" % vt["type"]
    if vt.get("reader"):
        out += ", reader: %s" % flagrel.yq(vt["reader"])
    if vt.get("values"):
        out += ", values: [%s]" % ", ".join(flagrel.yq(x) for x in vt["values"])
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--releases", required=True)
    ap.add_argument("--python", required=True)
    ap.add_argument("--wheels", default="build/libtpu-wheels")
    ap.add_argument("--work", default="build/libtpu")
    ap.add_argument("--keep", action="store_true", help="keep the unpacked libtpu.so files")
    ap.add_argument("--names-from", help="a libtpu.yaml this script wrote: the names of each release "
                    "whose answers are not kept in --work, instead of asking libtpu for them again")
    ap.add_argument("--learn", help="learn value types only for these releases (comma-separated); "
                    "the others keep what --work holds of them")
    args = ap.parse_args()
    args.retired = {}
    args.asked = {}
    args.known_words = {}
    pk = flagrel.load_releases(args.releases).get("libtpu")
    if not pk:
        raise SystemExit("%s: no libtpu package" % args.releases)
    known = [r for r in pk["releases"] if r.get("known", True) is not False]
    axis = [r["version"] for r in known]
    os.makedirs(args.work, exist_ok=True)
    from_cat = catalog_types(args.names_from, axis) if args.names_from else {}
    # newest first; each release's answers are kept in --work
    per, vals = {}, {}
    learn = set(args.learn.split(",")) if args.learn else set(axis)
    for r in reversed(known):
        v = r["version"]
        kept = os.path.exists(os.path.join(args.work, "answers-%s.json" % v))
        per[v] = from_cat[v] if from_cat and not kept else registered_cached(args, v, r.get("commit"))
        if v in learn or os.path.exists(os.path.join(args.work, "values-%s.json" % v)):
            vals[v] = values_cached(args, v, r.get("commit"), per[v])
    pinned = pk["fields"]["pinned"]
    names = sorted(set().union(*per.values()))
    out = sys.stdout
    out.write(HEADER % {"known": ", ".join(axis), "pinned": pinned,
                        "learned": ", ".join(v for v in axis if v in vals) or "none"})
    for n in names:
        have = [v for v in axis if n in per[v]]
        main_v = pinned if pinned in have else have[-1]
        spec = {v: spec_of(per, vals, v, n) for v in have}
        main = spec[main_v]
        desc, tag = HAND.get(n, (describe(n), None))
        if per[main_v][n] == "retired":
            desc += " (retired: libtpu takes any value and says it is retired)"
            tag = "deprecated"
        elif main.get("reader") == "string unlearned":
            desc += " (a value type of libtpu's own that xlaunch could not learn: values not checked)"
        elif per[main_v][n] in ("other", "string", "enum") and main_v not in vals:
            desc += " (a value type of libtpu's own: values not checked)"
        out.write("  - name: %s\n    type: %s\n" % (n, main["type"]))
        if main.get("reader"):
            out.write("    reader: %s\n" % flagrel.yq(main["reader"]))
        if main.get("values"):
            out.write("    values: [%s]\n" % ", ".join(flagrel.yq(x) for x in main["values"]))
        if main.get("icase"):
            out.write("    case: insensitive\n")
        if tag:
            out.write("    tags: [%s]\n" % tag)
        out.write("    releases: {libtpu: %s}\n" % flagrel.yq(flagrel.ranges(axis, set(have))))
        diff = {}
        for v in have:
            if spec[v] != main:
                diff.setdefault(spec_yaml(spec[v]), set()).add(v)
        if diff:
            out.write("    variants:\n")
            for t, vs in sorted(diff.items(), key=lambda kv: axis.index(min(kv[1], key=axis.index))):
                out.write("      - {releases: {libtpu: %s}, %s}\n" % (flagrel.yq(flagrel.ranges(axis, vs)), t))
        out.write("    description: %s\n" % flagrel.yq(desc))


HEADER = """\
# libtpu's own flags, set as --name=value tokens in LIBTPU_INIT_ARGS, in
# every libtpu release of etc/flags/releases.yaml that is known (%(known)s).
# Generated by tools/gen-libtpu-catalog.py from each release's wheel on PyPI:
# the names are the words of its libtpu.so that its own flag parser
# registers, and each type is what that parser takes (asked at generation
# time, on a host without a TPU: libtpu parses LIBTPU_INIT_ARGS before it
# looks for one); rerun the script rather than editing.  None of these
# releases registers XLA's general flags (xla_dump_to, xla_cpu_*,
# xla_gpu_*, ...): they belong in XLA_FLAGS (a few names, such as
# xla_use_shardy, are registered by both).  libtpu reads booleans as
# true/false, 1/0, yes/no, t/f, y/n in any case, and numbers without a unit.
# A value of libtpu's own type has a reader, learned from the values that
# release's parser takes and refuses (learned for: %(learned)s):
# "int32", "int64", "uint32", "uint64" (absl's integers of that width),
# "string duration" (absl's durations: 0, inf, or numbers each with a unit
# of ns, us, ms, s, m, h), "string enum" / "string enum-icase" (the values
# listed, the words from libtpu's own refusal; -icase: in any case), each
# with "optional" when the empty value is taken too; "string unlearned": a
# type xlaunch could not learn (values not checked, a warning).
# Names, types and releases are facts of the wheels; descriptions are this
# project's own (a few from public TPU recipes, the rest from the name).
family: libtpu
kind: flags
variables: [LIBTPU_INIT_ARGS]
complete: true
bool_parser: absl
releases: [libtpu]
source:
  repository: PyPI libtpu wheels
  path: libtpu/libtpu.so (its strings, and its flag parser's answers)
  release: libtpu %(pinned)s
flags:
"""

if __name__ == "__main__":
    main()
