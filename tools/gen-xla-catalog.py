#!/usr/bin/env python3
"""Writes etc/flags/xla.yaml from XLA's flag registrations.

    tools/gen-xla-catalog.py --flags DEBUG_OPTIONS_FLAGS_CC --proto XLA_PROTO \
        --proto BACKENDS_PROTO --commit SHA > etc/flags/xla.yaml

DEBUG_OPTIONS_FLAGS_CC is xla/debug_options_flags.cc, XLA_PROTO is
xla/xla.proto and BACKENDS_PROTO xla/backends/autotuner/backends.proto of an
openxla/xla checkout at SHA: the XLA commit the pinned jaxlib was built from
(jax's third_party/xla/revision.bzl at the jax release tag).  Neither is kept in this
repository: the script reads them from wherever the checkout lives.

What is taken from the upstream files are facts: each registered flag's name,
the type its setter takes, its default when it is a literal, and the names
of the values of enum-typed flags.  Descriptions are written here: a few by
hand (HAND below), the rest are derived from the flag's name.  Only the
Python standard library is used.
"""
import argparse
import re
import sys

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


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flags", required=True)
    ap.add_argument("--proto", required=True, action="append",
                    help="xla/xla.proto, and xla/backends/autotuner/backends.proto")
    ap.add_argument("--commit", required=True)
    ap.add_argument("--repository", default="openxla/xla")
    ap.add_argument("--release", default="jaxlib 0.10.2")
    a = ap.parse_args()
    src = open(a.flags, encoding="utf-8").read()
    enums = {}
    for proto in a.proto:
        enums.update(proto_enums(open(proto, encoding="utf-8").read()))

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
        help_text = " ".join(re.findall(r'"((?:[^"\\]|\\.)*)"', args[-1])).lower()
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
                            order=len(entries)))

    out = sys.stdout
    out.write("# XLA compiler options (DebugOptions), set as --name=value tokens in\n"
              "# XLA_FLAGS (and read by libtpu from LIBTPU_INIT_ARGS as well).\n"
              "# Generated by tools/gen-xla-catalog.py from the flag registrations in\n"
              "# the source file named below; rerun the script rather than editing.\n"
              "# Names, types, enum values and defaults are upstream facts; the\n"
              "# descriptions are this project's own one-line summaries.\n")
    out.write("family: xla\nkind: flags\nvariables: [XLA_FLAGS, LIBTPU_INIT_ARGS]\n")
    out.write("complete: true\n")
    out.write("source:\n  repository: %s\n  path: xla/debug_options_flags.cc\n"
              "  commit: %s\n  release: %s\n"
              "  also: xla/xla.proto and xla/backends/autotuner/backends.proto (enum value names)\n"
              % (a.repository, a.commit, a.release))
    out.write("flags:\n")
    for e in sorted(entries, key=lambda e: e["name"]):
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
        out.write("    description: %s\n" % yq(e["desc"]))
    sys.stderr.write("gen-xla-catalog: %d flags\n" % len(entries))


if __name__ == "__main__":
    main()
