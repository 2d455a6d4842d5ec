#!/usr/bin/env python3
"""Writes etc/flags/jax.yaml from JAX's configuration options.

    tools/gen-jax-catalog.py --config JAX_SRC_CONFIG_PY --commit SHA \
        > etc/flags/jax.yaml

JAX_SRC_CONFIG_PY is jax/_src/config.py of a jax-ml/jax checkout at SHA; it is
read in place and not kept here.  Every option defined with one of the
*_state() helpers is read from the environment variable of its name in upper
case; *_flag() options are read from the environment only when their default
is taken from bool_env/int_env/os.getenv, and then under that variable's
name.  The XLA_PYTHON_CLIENT_* variables (read by jaxlib's xla_client.py, not
config.py) are listed by hand at the end, with the way each one is parsed.
Descriptions are this project's own words (derived from the option name
unless written in HAND).  Standard library only.
"""
import argparse
import ast
import re
import sys

TYPES = {
    "bool_state": "bool", "optional_bool_state": "bool", "bool_flag": "bool",
    "enum_state": "enum", "optional_enum_state": "enum", "enum_class_state": "enum",
    "enum_flag": "enum",
    "int_state": "int", "int_flag": "int",
    "float_state": "float", "float_flag": "float",
    "string_state": "string", "optional_string_state": "string",
    "string_or_object_state": "string", "string_flag": "string",
}
DEBUG = {"JAX_LOG_COMPILES", "JAX_EXPLAIN_CACHE_MISSES", "JAX_DEBUG_NANS", "JAX_DEBUG_INFS",
         "JAX_DISABLE_JIT", "JAX_ENABLE_CHECKS", "JAX_DEBUG_KEY_REUSE", "JAX_DUMP_IR_TO",
         "JAX_DUMP_IR_MODES", "JAX_TRACEBACK_FILTERING", "JAX_DEBUG_LOG_MODULES",
         "JAX_LOGGING_LEVEL", "JAX_INCLUDE_FULL_TRACEBACKS_IN_LOCATIONS",
         "JAX_PALLAS_VERBOSE_ERRORS", "JAX_RAISE_PERSISTENT_CACHE_ERRORS",
         "JAX_CHECK_TRACER_LEAKS", "JAX_LOG_CHECKPOINT_RESIDUALS", "JAX_NO_TRACING",
         "JAX_ENABLE_CHECKS", "JAX_CHECK_STATIC_INDICES", "JAX_DEBUG_LOG_MODULES"}
CACHE = {"JAX_COMPILATION_CACHE_DIR"}
PERF_RISK = {"JAX_DISABLE_JIT", "JAX_DEFAULT_MATMUL_PRECISION", "JAX_ENABLE_X64",
             "JAX_NUMPY_RANK_PROMOTION", "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"}
HAND = {
    "JAX_COMPILATION_CACHE_DIR": "Directory of the persistent compilation cache",
    "JAX_LOG_COMPILES": "Log every jit/pmap compilation (warning level)",
    "JAX_EXPLAIN_CACHE_MISSES": "Explain why a trace or compile cache lookup missed",
    "JAX_DEBUG_NANS": "Re-run operations op by op to find the first NaN (slow)",
    "JAX_DEBUG_INFS": "Re-run operations op by op to find the first infinity (slow)",
    "JAX_DISABLE_JIT": "Run everything eagerly, op by op, without compiling",
    "JAX_ENABLE_X64": "Allow 64-bit types (otherwise they are narrowed to 32 bits)",
    "JAX_PLATFORMS": "Comma-separated platforms to initialize, in order of preference",
    "JAX_DEFAULT_MATMUL_PRECISION": "Default precision of matmuls and convolutions",
    "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "Only cache programs that took at least this long to compile",
    "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "Only cache programs at least this large",
    "JAX_ENABLE_COMPILATION_CACHE": "Master switch for the persistent compilation cache",
    "JAX_DUMP_IR_TO": "Directory where the IR JAX emits is written as text",
}

# jaxlib reads these in xla_client.py with its own rules (see "parser").
CLIENT = [
    ("XLA_PYTHON_CLIENT_PREALLOCATE", "bool", None, "true", "prealloc",
     "Reserve most of GPU memory at start; only false, False or 0 turn it off", []),
    ("XLA_PYTHON_CLIENT_MEM_FRACTION", "float", None, "0.75", None,
     "Fraction of GPU memory to preallocate (older name of XLA_CLIENT_MEM_FRACTION)",
     ["deprecated"]),
    ("XLA_CLIENT_MEM_FRACTION", "float", None, "0.75", None,
     "Fraction of GPU memory to preallocate", []),
    ("XLA_PYTHON_CLIENT_ALLOCATOR", "enum",
     ["default", "platform", "bfc", "cuda_async", "vmm", "address"], "default", None,
     "GPU memory allocator; platform allocates on demand and frees eagerly (slow)", []),
    ("XLA_PYTHON_CLIENT_COLLECTIVE_MEM_SIZE_MB", "int", None, None, None,
     "Memory reserved for collectives, in MiB", []),
    ("XLA_PYTHON_CLIENT_ABORT_COLLECTIVES_ON_FAILURE", "bool", None, "0", "pyint",
     "Abort pending collectives when a peer fails (read with int(), so 0 or 1)", []),
    ("XLA_PYTHON_CLIENT_USE_TFRT_GPU_CLIENT", "bool", None, "0", "pyint",
     "Use the TFRT-based GPU client (read with int(), so 0 or 1)", []),
]


def describe(env, typ):
    if env in HAND:
        return HAND[env]
    words = env.lower().split("_")
    if words[0] == "jax":
        words = words[1:]
    text = " ".join(words)
    if typ == "bool":
        return "JAX: switch for %s" % text
    return "JAX: %s setting" % text


def call_args(src, start):
    """Keyword arguments of the call whose '(' ends at start, via ast."""
    depth, i, q = 1, start, None
    while depth:
        ch = src[i]
        if q:
            if ch == "\\":
                i += 1
            elif src.startswith(q, i):
                i += len(q) - 1
                q = None
        elif ch == "#":
            i = src.index("\n", i)
        elif ch in "\"'":
            q = src[i:i + 3] if src[i:i + 3] in ('"""', "'''") else ch
            i += len(q) - 1
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        i += 1
    text = src[start - 1:i]
    return ast.parse("f" + text, mode="eval").body


def const(node):
    try:
        return ast.literal_eval(node)
    except Exception:
        return None


def yq(s):
    return '"' + str(s).replace("\\", "\\\\").replace('"', '\\"') + '"'


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", required=True)
    ap.add_argument("--commit", required=True)
    a = ap.parse_args()
    src = open(a.config, encoding="utf-8").read()
    entries = {}
    pat = re.compile(r"(?<![\w.])(%s)\(" % "|".join(sorted(TYPES, key=len, reverse=True)))
    for m in pat.finditer(src):
        line_start = src.rfind("\n", 0, m.start()) + 1
        if src[line_start:m.start()].strip().startswith("def "):
            continue
        try:
            call = call_args(src, m.end())
        except SyntaxError:
            continue          # a definition or annotation, not a call
        kw = {k.arg: k.value for k in call.keywords}
        args = list(call.args)
        name = const(kw.get("name")) if "name" in kw else (const(args[0]) if args else None)
        if not isinstance(name, str):
            continue
        fn = m.group(1)
        typ = TYPES[fn]
        dnode = kw.get("default", args[1] if len(args) > 1 else None)
        env = None
        default = None
        if isinstance(dnode, ast.Call):
            fname = ast.unparse(dnode.func)
            if fname in ("bool_env", "int_env", "os.getenv", "os.environ.get") and dnode.args:
                env = const(dnode.args[0])
                if len(dnode.args) > 1:
                    default = const(dnode.args[1])
        else:
            default = const(dnode) if dnode is not None else None
        if env is None:
            if fn.endswith("_flag"):
                continue      # an absl flag only, not read from the environment
            env = name.upper()
        values = None
        if typ == "enum":
            ev = kw.get("enum_values")
            values = const(ev) if ev is not None else None
            if not values:
                typ = "string"
        if isinstance(default, bool):
            default = "true" if default else "false"
        if env in entries:
            continue
        tags = []
        if env in CACHE:
            tags.append("cache")
        if env in DEBUG:
            tags.append("debug")
        if env in PERF_RISK:
            tags.append("perf-risk")
        entries[env] = dict(name=env, type=typ, values=values, default=default,
                            tags=tags, desc=describe(env, typ), parser=None)
    njax = len(entries)
    for name, typ, values, default, parser, desc, tags in CLIENT:
        entries[name] = dict(name=name, type=typ, values=values, default=default,
                             tags=tags, desc=desc, parser=parser)
    out = sys.stdout
    out.write("# Environment variables read by JAX: the JAX_* configuration options of\n"
              "# jax/_src/config.py (read once, at import), and jaxlib's\n"
              "# XLA_PYTHON_CLIENT_* GPU client settings.  Generated by\n"
              "# tools/gen-jax-catalog.py; rerun it rather than editing.  Names, types\n"
              "# and defaults are upstream facts; descriptions are this project's own.\n")
    out.write("family: jax\nkind: env\ncomplete: false\nbool_parser: python\n")
    out.write("source:\n  repository: jax-ml/jax\n  path: jax/_src/config.py\n"
              "  commit: %s\n  also: jaxlib/xla_client.py (XLA_PYTHON_CLIENT_*)\n" % a.commit)
    out.write("flags:\n")
    for e in sorted(entries.values(), key=lambda e: e["name"]):
        out.write("  - name: %s\n    type: %s\n" % (e["name"], e["type"]))
        if e["values"]:
            out.write("    values: [%s]\n" % ", ".join(str(v) for v in e["values"]))
        if e["default"] is not None:
            out.write("    default: %s\n" % yq(e["default"]))
        if e["parser"]:
            out.write("    parser: %s\n" % e["parser"])
        if e["tags"]:
            out.write("    tags: [%s]\n" % ", ".join(e["tags"]))
        out.write("    description: %s\n" % yq(e["desc"]))
    sys.stderr.write("gen-jax-catalog: %d options, %d client variables\n"
                     % (njax, len(entries) - njax))


if __name__ == "__main__":
    main()
