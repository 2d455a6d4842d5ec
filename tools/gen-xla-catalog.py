#!/usr/bin/env python3
"""Writes etc/flags/xla.yaml: XLA's flags in every release the knowledge covers.

    tools/gen-xla-catalog.py --releases etc/flags/releases.yaml --xla-git XLA_GIT \
        [--jax-git JAX_GIT] [--torch-xla-git TORCH_XLA_GIT] > etc/flags/xla.yaml

XLA_GIT is a git directory of openxla/xla with history (a mirror or a clone;
nothing is checked out and nothing of it is kept here).  For every jaxlib
and torch_xla release of etc/flags/releases.yaml the script reads, at the
XLA commit that release was built from, xla/debug_options_flags.cc (the
flag registrations) and xla/xla.proto and xla/backends/autotuner/
backends.proto (the names of enum values).  With --jax-git and
--torch-xla-git it first checks every release's XLA commit against the file
that pins it: jax's third_party/xla/workspace.bzl or revision.bzl
(XLA_COMMIT) and torch_xla's WORKSPACE (xla_hash) at the release's commit.

For each flag it writes the entry of the pinned jaxlib release (the one
launcher/xlareader.c models) or, for a flag that release lacks, of the
newest release that registers it; `releases`, the releases that register it
(ranges of releases.yaml's lists); `variants`, the type, reader and values
of the releases where they differ; `removed`, the XLA commit that dropped
the registration after the last release that has it; `replaced_by` and
`evidence` where upstream names a successor (REPLACED below: each one is
checked against the commit message or help text it cites, and the
generator stops when the text does not name both flags).

What is taken from the upstream files are facts: each registered flag's name,
the type its setter takes, its default when it is a literal, and the names
of the values of enum-typed flags.  Descriptions are written here: a few by
hand (HAND below), the rest are derived from the flag's name.  Only the
Python standard library is used.
"""
import argparse
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import flagrel  # noqa: E402

# How XLA's flag reader takes each kind of registration.  A flag's `reader`
# in the catalog is "TYPE [CHECK] [ARG]": TYPE is the type of the tsl::Flag
# hook (bool, int32, int64, float, string), which decides how the text after
# '=' is parsed (xla/tsl/util/command_line_flags.cc); CHECK is what the
# setter itself refuses or how it combines repeated tokens
# (xla/debug_options_flags.cc):
#   enum            the value must be one of `values` exactly (a proto
#                   enum's generated _Parse)
#   enum-upper      upper-cased first, then as enum
#   enum-lower      lower-cased first, then compared with `values`
#   enum-prefix P   upper-cased, P prepended unless already there, then as enum
#   repeated-enum P comma list of enum names (upper-cased, P prepended), all
#                   or none of them written +NAME/-NAME; +/- edit the set
#                   built so far, plain names replace it
#   collectives     comma list, every item an upper-cased enum name;
#                   replaces the set
#   duration        an absl duration ("inf", "0", "1.5s", "2h30m")
#   fuel            comma list of PASS=INTEGER
#   int-ranges      comma list of N, N:M, N:, :M (N <= M); appended
#   append          the value (comma list) is appended to a list
#   map             comma list of KEY[=VALUE], merged key by key
#   min=N           an integer below N is refused
#   needs-nvptx     true is refused by builds without libnvptxcompiler
# Setters that are not generic helpers: setter name -> (catalog type, reader,
# proto enum whose value names are the allowed values).
CUSTOM = {
    "setter_for_xla_gpu_shape_checks": ("enum", "string enum", "ShapeChecks"),
    "setter_for_xla_gpu_deviceless_cub_mode": ("enum", "string enum", "DevicelessCubMode"),
    "setter_for_xla_disable_hlo_passes": ("list", "string append", None),
    "setter_for_xla_enable_hlo_passes_only": ("list", "string append", None),
    "setter_for_xla_gpu_ptx_file": ("list", "string append", None),
    "setter_for_xla_gpu_llvm_ir_file": ("list", "string append", None),
    "setter_for_xla_backend_extra_options": ("list", "string map", None),
    "setter_for_xla_gpu_analytical_latency_estimator_options": ("list", "string map", None),
    "setter_for_xla_gpu_experimental_cost_model_gemm_tiling_options":
        ("list", "string map", None),
    "setter_for_xla_gpu_experimental_pipeline_parallelism_opt_level":
        ("enum", "string enum", "PipelineParallelismOptLevel"),
    "setter_for_xla_gpu_graph_enable_concurrent_region": ("bool", "bool", None),
    "setter_for_xla_gpu_command_buffer_update_mode":
        ("enum", "string enum", "CommandBufferUpdateMode"),
    "setter_for_xla_gpu_command_buffer_scheduling_mode":
        ("enum", "string enum", "CommandBufferSchedulingMode"),
    "setter_for_xla_partitioning_algorithm": ("enum", "string enum", "PartitioningAlgorithm"),
    "setter_for_xla_fuel": ("list", "string fuel", None),
    "setter_for_xla_cpu_experimental_xnn_graph_fusion_mode":
        ("enum", "string enum-upper", "XnnGraphFusionMode"),
    "setter_for_xla_cpu_opt_preset": ("enum", "string enum-prefix CPU_OPT_PRESET_", "CpuOptPreset"),
    "setter_for_xla_cpu_enable_concurrency_optimized_scheduler": ("bool", "bool", None),
    "setter_for_xla_cpu_scheduler_type": ("enum", "string enum", "CpuSchedulerType"),
    "setter_for_xla_gpu_enable_while_loop_unrolling":
        ("enum", "string enum-upper", "WhileLoopUnrolling"),
    "setter_for_xla_gpu_disable_async_collectives": ("list", "string collectives", "CollectiveOpType"),
    "setter_for_xla_gpu_experimental_autotune_cache_mode":
        ("enum", "string enum", "AutotuneCacheMode"),
    "setter_for_xla_step_marker_location": ("enum", "string enum", "StepMarkerLocation"),
    "setter_for_xla_gpu_pgle_accuracy_checker": ("enum", "string enum", "PGLEStrictnessLevel"),
    "setter_for_xla_detect_unstable_reductions": ("enum", "string enum", None),
    "setter_for_xla_detect_unstable_reductions_post_optimizations": ("enum", "string enum", None),
    "setter_for_xla_gpu_detect_nan": ("enum", "string enum", None),
    "setter_for_xla_gpu_detect_inf": ("enum", "string enum", None),
    "setter_for_thunk_buffer_debug_filter_by_thunk_id": ("list", "string int-ranges", None),
    "setter_for_thunk_buffer_debug_filter_by_profile_annotation": ("list", "string append", None),
    "setter_for_xla_gpu_ptx_compiler_extra_flags": ("list", "string append", None),
    # setters of older or newer releases than the pinned one
    "setter_for_xla_gpu_graph_level": ("int", "int32", None),
    "setter_for_xla_gpu_enable_command_buffer":
        ("list", "string repeated-enum", "CommandBufferCmdType"),
    "setter_for_legacy_command_buffer_custom_call_targets": ("list", "string append", None),
    "setter_for_force_split_k": ("int", "int32", None),
    "setter_for_xla_enable_nccl_symmetric_buffers_for_collectives": ("list", "string", None),
    "setter_for_xla_gpu_cudnn_deviceless_compilation_mode":
        ("enum", "string enum", "CudnnDevicelessCompilationMode"),
}
# Values a setter compares against literally (not a proto enum's names).
DETECTION = ["none", "warning", "fail"]
LITERAL_VALUES = {
    "setter_for_xla_detect_unstable_reductions": DETECTION,
    "setter_for_xla_detect_unstable_reductions_post_optimizations": DETECTION,
    "setter_for_xla_gpu_detect_nan": DETECTION,
    "setter_for_xla_gpu_detect_inf": DETECTION,
}
# Generic helpers: helper -> (catalog type, reader).
GENERIC = {
    "bool_setter_for": ("bool", "bool"),
    "int32_setter_for": ("int", "int32"),
    "int64_setter_for": ("int", "int64"),
    "float_setter_for": ("float", "float"),
    "string_setter_for": ("string", "string"),
    "uppercase_string_setter_for": ("string", "string"),
    "duration_setter_for": ("string", "string duration"),
    "setter_for_unroll_factor": ("int", "int32 min=1"),
}
COLLECTIVES_MODE = ["private", "symmetric", "peer"]

# Flags that name a directory or file XLA reuses across runs.
CACHE = {"xla_gpu_per_fusion_autotune_cache_dir", "xla_gpu_kernel_cache_file",
         "xla_gpu_experimental_autotuner_cache_dir"}
# Flags whose use changes numerics, determinism or compile time in ways a
# timing or production run should not pick up by accident.
PERF_RISK = {
    "xla_cpu_enable_fast_math", "xla_enable_fast_math", "xla_gpu_enable_fast_min_max",
    "xla_cpu_enable_fast_min_max", "xla_backend_optimization_level", "xla_gpu_autotune_level",
    "xla_disable_all_hlo_passes", "xla_disable_hlo_passes", "xla_enable_hlo_passes_only",
    "xla_llvm_disable_expensive_passes", "xla_gpu_deterministic_ops",
    "xla_gpu_exclude_nondeterministic_ops", "xla_gpu_exhaustive_tiling_search",
    "xla_fuel", "xla_gpu_ftz", "xla_allow_excess_precision", "xla_gpu_enable_xla_runtime_executable",
    "xla_gpu_force_compilation_parallelism", "xla_force_host_platform_device_count",
}
DEBUG_RE = re.compile(r"(^xla_dump_|_dump_|debug|hlo_profile|_verify_|verification|"
                      r"crash_on|^xla_detailed_logging|_log_|_logging|detect_cycles|"
                      r"detect_unstable|pgle_accuracy|annotate_with_emitter|generate_line_info|"
                      r"_print_|trace_me|traceme|hlo_graph|_to_html)")
DEBUG_EXCLUDE = {"xla_cmd_buffer_trace_cache_size"}

HAND = {
    "xla_dump_to": "Directory (or sponge/-) where HLO modules and compiler artifacts are written",
    "xla_dump_hlo_as_text": "Write HLO modules as text into the dump directory",
    "xla_dump_hlo_as_proto": "Write HLO modules as binary protos into the dump directory",
    "xla_dump_hlo_pass_re": "Dump the module after every HLO pass whose name matches this regex",
    "xla_dump_hlo_module_re": "Only dump modules whose name matches this regex",
    "xla_gpu_per_fusion_autotune_cache_dir": "Directory of per-fusion autotuning results, read and extended across runs",
    "xla_gpu_kernel_cache_file": "File that stores compiled GPU kernels between runs",
    "xla_gpu_enable_triton_gemm": "Let the GPU compiler emit matrix multiplications through Triton",
    "xla_gpu_autotune_level": "How hard the GPU compiler autotunes kernels: 0 off up to 4 with correctness checks",
    "xla_gpu_enable_latency_hiding_scheduler": "Schedule GPU collectives and compute to overlap with a latency model",
    "xla_gpu_deterministic_ops": "Force deterministic GPU kernels (slower; autotuning restricted)",
    "xla_cpu_enable_fast_math": "Allow CPU codegen to trade IEEE accuracy for speed",
    "xla_force_host_platform_device_count": "Number of devices the host (CPU) platform pretends to have",
    "xla_backend_optimization_level": "Optimization level handed to the backend compiler",
    "xla_disable_hlo_passes": "Comma-separated HLO pass names to skip",
    "xla_enable_hlo_passes_only": "Comma-separated HLO pass names; every other pass is skipped",
    "xla_disable_all_hlo_passes": "Skip every HLO pass (for debugging the compiler only)",
    "xla_gpu_cuda_data_dir": "Directory holding the CUDA toolkit parts (ptxas, libdevice) XLA needs",
    "xla_gpu_enable_command_buffer": "Kinds of GPU commands captured into CUDA graphs",
    "xla_gpu_memory_limit_slop_factor": "Percent of device memory the GPU scheduler plans to use",
    "xla_gpu_all_reduce_combine_threshold_bytes": "Size up to which GPU all-reduces are merged into one",
    "xla_gpu_enable_pipelined_all_gather": "Pipeline GPU all-gathers across loop iterations",
    "xla_gpu_enable_pipelined_all_reduce": "Pipeline GPU all-reduces across loop iterations",
    "xla_gpu_enable_pipelined_reduce_scatter": "Pipeline GPU reduce-scatters across loop iterations",
    "xla_detailed_logging": "Let XLA log detailed compiler information (VLOG and friends)",
    "xla_enable_dumping": "Master switch for every xla_dump_* option",
    "xla_hlo_profile": "Instrument compiled programs with per-HLO profiling counters",
    "xla_gpu_dump_autotune_results_to": "File the GPU autotuning results are written to",
    "xla_gpu_load_autotune_results_from": "File GPU autotuning results are read from",
    "xla_fuel": "Per-pass fuel limits (PASS=N,...) to bisect compiler passes",
    "xla_step_marker_location": "Where a training step begins for profiling (entry, outer while loop, none)",
}

AREAS = [("xla_gpu_", "GPU"), ("xla_cpu_", "CPU"), ("xla_llvm_", "LLVM backends"),
         ("xla_dump_", "Dump"), ("xla_tpu_", "TPU"), ("xla_hlo_", "HLO"),
         ("xla_pjrt_", "PJRT"), ("xla_", "XLA")]
WORDS = {"cudnn": "cuDNN", "cublas": "cuBLAS", "cublaslt": "cuBLASLt", "nccl": "NCCL",
         "hlo": "HLO", "llvm": "LLVM", "ptx": "PTX", "ptxas": "ptxas", "spmd": "SPMD",
         "gemm": "GEMM", "fmha": "FMHA", "pgle": "PGLE", "mlir": "MLIR", "ir": "IR",
         "sol": "SOL", "p2p": "P2P", "cub": "CUB", "fp8": "FP8", "onednn": "oneDNN",
         "xnn": "XNN", "ynn": "YNN", "cpu": "CPU", "gpu": "GPU", "tpu": "TPU", "rng": "RNG",
         "mb": "MB", "mib": "MiB", "gb": "GB", "ms": "ms", "aot": "AOT", "tma": "TMA"}


def describe(name, typ):
    if name in HAND:
        return HAND[name]
    area, rest = "XLA", name
    for pfx, label in AREAS:
        if name.startswith(pfx):
            area, rest = label, name[len(pfx):]
            break
    words = [WORDS.get(w, w) for w in rest.split("_") if w]
    tail = ""
    if "unsupported" in words:
        words.remove("unsupported")
        tail = " (marked unsupported upstream)"
    elif "experimental" in words:
        words.remove("experimental")
        tail = " (experimental)"
    text = " ".join(words)
    if typ == "bool" and words and words[0] in ("enable", "use", "allow", "disable"):
        text = "%s: %s%s" % (area, text, tail)
    elif typ == "bool":
        text = "%s: switch for %s%s" % (area, text, tail)
    else:
        text = "%s: %s setting%s" % (area, text, tail)
    return text


def c_args(s, start):
    """Splits the argument list of a call whose '(' is at s[start-1] into
    top-level argument strings; returns (args, end)."""
    depth, i, cur, args, instr = 0, start, [], [], None
    while i < len(s):
        ch = s[i]
        if instr:
            cur.append(ch)
            if ch == "\\":
                cur.append(s[i + 1])
                i += 2
                continue
            if ch == instr:
                instr = None
        elif ch in "\"'":
            instr = ch
            cur.append(ch)
        elif ch in "([{":
            depth += 1
            cur.append(ch)
        elif ch in ")]}":
            if depth == 0:
                args.append("".join(cur).strip())
                return args, i
            depth -= 1
            cur.append(ch)
        elif ch == "," and depth == 0:
            args.append("".join(cur).strip())
            cur = []
        elif ch == "/" and s[i + 1] == "/":
            while s[i] != "\n":
                i += 1
            continue
        elif ch == "/" and s[i + 1] == "*":
            i = s.index("*/", i) + 2
            continue
        else:
            cur.append(ch)
        i += 1
    raise ValueError("unterminated call")


def proto_enums(text):
    enums = {}
    for m in re.finditer(r"enum\s+(\w+)\s*\{(.*?)\}", text, re.S):
        body = re.sub(r"//[^\n]*", "", m.group(2))
        enums[m.group(1)] = re.findall(r"(\w+)\s*=\s*-?\d+", body)
    return enums


def literal(expr):
    expr = expr.strip()
    if re.fullmatch(r"(true|false)", expr):
        return expr
    if re.fullmatch(r"-?\d+(\.\d+)?f?(LL)?", expr):
        return expr.rstrip("fL")
    if re.fullmatch(r'"[^"\\]*"', expr):
        return expr[1:-1]
    m = re.fullmatch(r"DebugOptions::(\w+)", expr)
    if m:
        return m.group(1)
    m = re.fullmatch(r"(\d+)LL\s*<<\s*(\d+)", expr)
    if m:
        return str(int(m.group(1)) << int(m.group(2)))
    return None


def yq(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'




def read_release(src, enums):
    """The flags src (xla/debug_options_flags.cc) registers, in order: a
    list of dicts (name, type, values, reader, default, tags, desc, order,
    help)."""
    defaults = {}
    for m in re.finditer(r"opts\.set_(\w+)\(\s*([^;]*?)\);", src, re.S):
        v = literal(m.group(2))
        if v is not None:
            defaults.setdefault(m.group(1), v)

    entries, seen = [], set()
    for m in re.finditer(r"tsl::Flag\(", src):
        args, _ = c_args(src, m.end())
        if len(args) < 3 or not re.fullmatch(r'"\w+"', args[0]):
            raise SystemExit("gen-xla-catalog: cannot read registration at offset %d" % m.start())
        name = args[0][1:-1]
        setter = args[1]
        head = re.match(r"[\w:<>]+", setter)
        head = head.group(0) if head else setter[:1]
        values, typ, reader = None, None, None
        if head in GENERIC:
            typ, reader = GENERIC[head]
        elif head == "collectives_mode_setter_for":
            typ, reader, values = "enum", "string enum-lower", COLLECTIVES_MODE
        elif head.startswith("noop_flag_setter<"):
            typ, reader = {"bool": ("bool", "bool"), "int": ("int", "int32")}.get(
                head[17:-1], ("string", "string"))
        elif head.startswith("SetterForRepeatedEnum<"):
            en = re.search(r"(\w+)>$", head).group(1)
            inner, _ = c_args(setter, setter.index("(") + 1)
            pfx = literal(inner[1]) or ""
            typ, reader, values = "list", ("string repeated-enum " + pfx).rstrip(), enums[en]
        elif head in CUSTOM:
            typ, reader, en = CUSTOM[head]
            if en:
                values = enums[en]
            values = LITERAL_VALUES.get(head, values)
        elif setter.startswith("["):
            pm = re.match(r"\[[^\]]*\]\s*\(\s*(const\s+)?([\w:]+)", setter)
            ptype = pm.group(2) if pm else ""
            typ, reader = {"bool": ("bool", "bool"), "int": ("int", "int32"),
                           "int32_t": ("int", "int32"), "int64_t": ("int", "int64"),
                           "float": ("float", "float")}.get(ptype, ("string", "string"))
            if "IsLibNvPtxCompilerSupported()" in setter and "return false" in setter:
                reader = "bool needs-nvptx"
            elif "return false" in setter:
                raise SystemExit("gen-xla-catalog: flag '%s': a lambda that refuses values" % name)
        elif setter.startswith("debug_options->mutable_"):
            typ, reader = "string", "string"
        else:
            raise SystemExit("gen-xla-catalog: flag '%s': unknown setter '%s'" % (name, head))
        if name in seen:
            raise SystemExit("gen-xla-catalog: flag '%s' registered twice" % name)
        seen.add(name)
        # default: the third argument when the setter takes the value
        # directly, else the value set in DefaultDebugOptionsIgnoringFlags
        default = None
        if setter.startswith("debug_options->mutable_"):
            default = defaults.get(name)
        else:
            default = literal(args[2]) if len(args) >= 4 else None
            if default is None:
                default = defaults.get(name)
        if typ == "enum" and default is not None and values and default not in values:
            default = None
        help_raw = " ".join(re.findall(r'"((?:[^"\\]|\\.)*)"', args[-1]))
        help_text = help_raw.lower()
        tags = []
        if name in CACHE:
            tags.append("cache")
        if DEBUG_RE.search(name) and name not in DEBUG_EXCLUDE:
            tags.append("debug")
        if name in PERF_RISK:
            tags.append("perf-risk")
        if head.startswith("noop_flag_setter") or "deprecated" in help_text \
                or "no longer supported" in help_text or "no-op" in help_text:
            tags.append("deprecated")
        entries.append(dict(name=name, type=typ, values=values, reader=reader,
                            default=default, tags=tags, desc=describe(name, typ),
                            order=len(entries), help=re.sub(r"\s+", " ", help_raw)))
    return entries


# Flags upstream renamed or superseded, and where it says so: old name ->
# (successor, evidence).  Evidence is "commit SHA" (the commit's message, or
# the message of the commit it reverts, names both) or "help" (the help text
# of the old flag's last registration names the successor).  The successor is
# a flag of this family or, where the text says so, what took the flag's
# place ("NAME (an execution option)").
REPLACED = {
    "xla_use_shardonnay": ("xla_use_shardy", "commit d69e2bfe8ae565c8e6341921aef11b5fb721f9ab"),
    "xla_use_shardy": ("use_shardy_partitioner (an execution option; JAX sets it from "
                       "jax_use_shardy_partitioner)",
                       "commit 4228782cc8ecaa8411e988bae08aa9251507e8e9"),
    "xla_gpu_enable_address_computation_fusion":
        ("xla_gpu_enable_dynamic_slice_fusion", "commit a517228de8d0ff179ff77c0ecb7acddb65ae24d6"),
    "xla_gpu_enable_triton_softmax_priority_fusion":
        ("xla_gpu_experimental_enable_triton_softmax_priority_fusion",
         "commit 61c874246622b40f8eb250a60add9a9eb104e1a1"),
    "xla_gpu_enable_triton_softmax_fusion":
        ("xla_gpu_experimental_enable_triton_softmax_priority_fusion",
         "commit 61c874246622b40f8eb250a60add9a9eb104e1a1"),
    "xla_gpu_enable_pgle_accuracy_checker":
        ("xla_gpu_pgle_accuracy_checker", "diff d881e8a0ad611bf585d0392a671629ceb65ac394"),
    "xla_experimental_ignore_channel_id":
        ("xla_ignore_channel_id", "commit 6d91ac1a35edc70e82ab7a6c0e21fe5de9581a95"),
    "xla_gpu_enable_experimental_pipeline_parallelism_opt":
        ("xla_gpu_experimental_enable_pipeline_parallelism_opt",
         "commit 0ccd4022d0cc3e708740d36b4cf4a55697f0596e"),
    "xla_gpu_experimental_enable_sync_collective_combining":
        ("xla_gpu_experimental_enable_heuristic_collective_combining",
         "diff 59067d5fd3a354363b3fccd9f18e40d0b509f61f"),
    "xla_gpu_unsupported_enable_generic_triton_emitter_for_gemms":
        ("xla_gpu_unsupported_generic_triton_emitter_features",
         "commit 47df0142646187b25b9f2367df36e6ed556541a8"),
    "xla_gpu_dump_hlo_unoptimized_snapshots":
        ("xla_dump_hlo_unoptimized_snapshots", "commit ce466b79ae0ec7b931ee558b06ede213f27c70c8"),
    "xla_gpu_graph_level": ("xla_gpu_enable_command_buffer", "help"),
    "xla_gpu_experimental_enable_split_k_rewrite":
        ("xla_disable_hlo_passes=splitk-rewriter (to keep the rewrite off)",
         "commit fd5efcb52747c329091840f2f1dcc4be0ffff6b4"),
}


def git(gitdir, *args):
    r = subprocess.run(["git", "--git-dir=" + gitdir] + list(args), capture_output=True)
    if r.returncode != 0:
        raise SystemExit("gen-xla-catalog: git %s: %s" % (" ".join(args),
                                                          r.stderr.decode(errors="replace")))
    return r.stdout.decode("utf-8", errors="replace")


def commit_says(gitdir, sha, old, new):
    """The commit's subject line when its message (or that of the commit it
    reverts) names old and new (new up to its first blank or '=')."""
    msg = git(gitdir, "log", "-1", "--format=%s%n%b", sha)
    subject = msg.splitlines()[0]
    m = re.match(r"Reverts ([0-9a-f]{40})", subject)
    if m:     # a revert of a revert: the original change says it
        inner = git(gitdir, "log", "-1", "--format=%s%n%b", m.group(1))
        m2 = re.match(r"Reverts ([0-9a-f]{40})", inner)
        if m2:
            msg = git(gitdir, "log", "-1", "--format=%s%n%b", m2.group(1))
            subject = msg.splitlines()[0]
    key = re.split(r"[ =]", new)[0]
    return subject if old in msg and key in msg else None


def diff_says(gitdir, sha, old, new):
    """The commit's subject line when its change of the registrations
    deletes old's and adds new's."""
    diff = git(gitdir, "show", "--format=%s", sha, "--", "xla/debug_options_flags.cc")
    gone = re.search(r'^-.*"%s"' % re.escape(old), diff, re.M)
    added = re.search(r'^\+.*"%s"' % re.escape(new), diff, re.M)
    return diff.splitlines()[0] if gone and added else None


def removal(gitdir, name, last, first_absent):
    """The commit between two XLA commits that deletes name's registration."""
    out = git(gitdir, "log", "--format=%H%x09%cs%x09%s", "-S", '"%s"' % name,
              "%s..%s" % (last, first_absent), "--", "xla/debug_options_flags.cc").splitlines()
    if not out:
        return None
    sha, date, subject = out[-1].split("\t", 2)
    m = re.match(r"Reverts ([0-9a-f]{40})", subject)
    if m:     # it undid an undo: the original change says what it does
        inner = git(gitdir, "log", "-1", "--format=%s", m.group(1)).strip()
        m2 = re.match(r"Reverts ([0-9a-f]{40})", inner)
        if m2:
            orig = git(gitdir, "log", "-1", "--format=%s", m2.group(1)).strip()
            return "openxla/xla %s (%s), which reinstates %s: %s" % (
                sha[:12], date, m2.group(1)[:12], orig)
        return "openxla/xla %s (%s), a revert of %s: %s" % (sha[:12], date, m.group(1)[:12],
                                                            inner)
    return "openxla/xla %s (%s): %s" % (sha[:12], date, subject)


def check_pins(a, packages):
    """Every release's XLA commit is the one its own sources pin."""
    for r in flagrel.known(packages["jaxlib"]["releases"]) if a.jax_git else []:
        text = flagrel.git_show(a.jax_git, r["commit"], "third_party/xla/revision.bzl") or \
            flagrel.git_show(a.jax_git, r["commit"], "third_party/xla/workspace.bzl") or ""
        m = re.search(r'XLA_COMMIT = "([0-9a-f]{40})"', text)
        if not m or m.group(1) != r["xla"]:
            raise SystemExit("gen-xla-catalog: jaxlib %s: releases.yaml says XLA %s, jax %s pins %s"
                             % (r["version"], r["xla"], r["commit"][:12],
                                m.group(1) if m else "nothing"))
    for r in packages["torch_xla"]["releases"] if a.torch_xla_git else []:
        text = flagrel.git_show(a.torch_xla_git, r["commit"], "WORKSPACE") or ""
        m = re.search(r"^xla_hash = '([0-9a-f]{40})'", text, re.M)
        if not m or m.group(1) != r["xla"]:
            raise SystemExit("gen-xla-catalog: torch_xla %s: releases.yaml says XLA %s, WORKSPACE pins %s"
                             % (r["version"], r["xla"], m.group(1) if m else "nothing"))


def signature(e):
    return (e["type"], e["reader"], tuple(e["values"] or ()))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--releases", required=True)
    ap.add_argument("--xla-git", required=True)
    ap.add_argument("--jax-git")
    ap.add_argument("--torch-xla-git")
    a = ap.parse_args()
    packages = flagrel.load_releases(a.releases)
    check_pins(a, packages)
    axes = [("jaxlib", [r for r in flagrel.known(packages["jaxlib"]["releases"])]),
            ("torch_xla", flagrel.known(packages["torch_xla"]["releases"]))]
    pinned = packages["jaxlib"]["fields"]["pinned"]
    parsed = {}        # XLA commit -> {name: entry}
    for _, rels in axes:
        for r in rels:
            c = r["xla"]
            if c in parsed:
                continue
            src = flagrel.git_show(a.xla_git, c, "xla/debug_options_flags.cc")
            if src is None:
                raise SystemExit("gen-xla-catalog: %s lacks xla/debug_options_flags.cc" % c)
            enums = {}
            for proto in ("xla/xla.proto", "xla/backends/autotuner/backends.proto"):
                enums.update(proto_enums(flagrel.git_show(a.xla_git, c, proto) or ""))
            parsed[c] = {e["name"]: e for e in read_release(src, enums)}
    # the builds, oldest XLA first: the newest registration speaks for a
    # flag the pinned release lacks
    dates = {c: git(a.xla_git, "log", "-1", "--format=%ct", c).strip() for c in parsed}
    pin_commit = [r["xla"] for r in axes[0][1] if r["version"] == pinned][0]
    names = sorted(set().union(*[set(p) for p in parsed.values()]))
    jax_axis = [r["version"] for r in axes[0][1]]
    entries = []
    for name in names:
        regs = {}      # (package, version) -> entry
        for pkg, rels in axes:
            for r in rels:
                if name in parsed[r["xla"]]:
                    regs[(pkg, r["version"])] = parsed[r["xla"]][name]
        if name in parsed[pin_commit]:
            main_e = parsed[pin_commit][name]
        else:
            newest = max((c for c in parsed if name in parsed[c]), key=lambda c: dates[c])
            main_e = parsed[newest][name]
        e = dict(main_e)
        e["releases"] = {pkg: flagrel.ranges([r["version"] for r in rels],
                                             {v for (p, v) in regs if p == pkg})
                         for pkg, rels in axes}
        groups = {}
        for (pkg, v), reg in regs.items():
            if signature(reg) != signature(main_e):
                groups.setdefault(signature(reg), {}).setdefault(pkg, set()).add(v)
        e["variants"] = []
        for sig, by_pkg in sorted(groups.items(), key=lambda kv: str(kv[0])):
            e["variants"].append(dict(
                type=sig[0], reader=sig[1], values=list(sig[2]) or None,
                releases={pkg: flagrel.ranges([r["version"] for r in rels], by_pkg.get(pkg, set()))
                          for pkg, rels in axes}))
        # dropped before the newest known jaxlib: the commit that did it
        jl = [v for v in jax_axis if ("jaxlib", v) in regs]
        if jl and jl[-1] != jax_axis[-1]:
            last = [r for r in axes[0][1] if r["version"] == jl[-1]][0]["xla"]
            nxt = axes[0][1][jax_axis.index(jl[-1]) + 1]["xla"]
            e["removed"] = removal(a.xla_git, name, last, nxt)
        if name in REPLACED:
            new, ev = REPLACED[name]
            if ev == "help":
                last_help = main_e["help"]
                if new not in last_help:
                    raise SystemExit("gen-xla-catalog: %s: its help text does not name %s"
                                     % (name, new))
                e["evidence"] = "help text of the last release that registers it: '%s'" % last_help
            else:
                kind, sha = ev.split()
                says = commit_says if kind == "commit" else diff_says
                subject = says(a.xla_git, sha, name, new)
                if not subject:
                    raise SystemExit("gen-xla-catalog: %s: commit %s does not name it and %s"
                                     % (name, sha[:12], new))
                e["evidence"] = "openxla/xla %s: %s" % (sha[:12], subject)
            e["replaced_by"] = new
        entries.append(e)
    write(entries, packages, pinned, pin_commit, axes)


def write(entries, packages, pinned, pin_commit, axes):
    out = sys.stdout
    out.write("# XLA compiler options (DebugOptions), set as --name=value tokens in\n"
              "# XLA_FLAGS, in every jaxlib and torch_xla release of\n"
              "# etc/flags/releases.yaml.  libtpu takes none of them in LIBTPU_INIT_ARGS:\n"
              "# its own flags are etc/flags/libtpu.yaml.\n"
              "# Generated by tools/gen-xla-catalog.py from the flag registrations of\n"
              "# each release's XLA commit; rerun the script rather than editing.\n"
              "# An entry describes the flag as the pinned release registers it (as the\n"
              "# newest release that has it, for a flag the pinned one lacks);\n"
              "# `releases` are the releases that register it, `variants` the releases\n"
              "# whose type, reader or values differ, `removed` the commit that dropped\n"
              "# it, `replaced_by` its successor where upstream names one (`evidence`\n"
              "# says where).  Names, types, enum values and defaults are upstream\n"
              "# facts; the descriptions are this project's own one-line summaries.\n")
    out.write("family: xla\nkind: flags\nvariables: [XLA_FLAGS]\n")
    out.write("complete: true\nreleases: [%s]\n" % ", ".join(p for p, _ in axes))
    span = "; ".join("%s %s-%s" % (p, rels[0]["version"], rels[-1]["version"]) for p, rels in axes)
    out.write("source:\n  repository: openxla/xla\n  path: xla/debug_options_flags.cc\n"
              "  commit: %s\n  release: jaxlib %s\n"
              "  also: xla/xla.proto and xla/backends/autotuner/backends.proto (enum value"
              " names); the same files at the XLA commit of every release (%s)\n"
              % (pin_commit, pinned, span))
    out.write("flags:\n")
    for e in entries:
        out.write("  - name: %s\n    type: %s\n" % (e["name"], e["type"]))
        out.write("    reader: %s\n    order: %d\n" % (yq(e["reader"]), e["order"]))
        if e["values"]:
            out.write("    values: [%s]\n" % ", ".join(e["values"]))
            if e["reader"].split()[1:2] in (["enum-upper"], ["enum-lower"], ["enum-prefix"],
                                            ["repeated-enum"], ["collectives"]):
                out.write("    case: insensitive\n")
        if e["default"] is not None:
            out.write("    default: %s\n" % yq(e["default"]))
        if e["tags"]:
            out.write("    tags: [%s]\n" % ", ".join(e["tags"]))
        out.write("    releases: {%s}\n" % ", ".join(
            "%s: %s" % (p, yq(r)) for p, r in e["releases"].items() if r))
        if e["variants"]:
            out.write("    variants:\n")
        for v in e["variants"]:
            out.write("      - {releases: {%s}, type: %s, reader: %s%s}\n" % (
                ", ".join("%s: %s" % (p, yq(r)) for p, r in v["releases"].items() if r),
                v["type"], yq(v["reader"]),
                ", values: [%s]" % ", ".join(v["values"]) if v["values"] else ""))
        if e.get("removed"):
            out.write("    removed: %s\n" % yq(e["removed"]))
        if e.get("replaced_by"):
            out.write("    replaced_by: %s\n    evidence: %s\n" % (yq(e["replaced_by"]),
                                                                 yq(e["evidence"])))
        out.write("    description: %s\n" % yq(e["desc"]))
    sys.stderr.write("gen-xla-catalog: %d flags in %d releases\n" % (
        len(entries), sum(len(r) for _, r in axes)))


if __name__ == "__main__":
    main()
