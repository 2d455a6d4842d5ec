#!/usr/bin/env python3
"""Writes etc/flags/torch.yaml: the environment variables of torch.compile.

    tools/gen-torch-catalog.py --root TORCH_PACKAGE_DIR --release 2.9.0 \
        > etc/flags/torch.yaml

TORCH_PACKAGE_DIR is the `torch` directory of a release, from a pytorch/pytorch
checkout at its tag or from the installed wheel (its Python files are the
release's sources: build/venv-torch/lib/python3.11/site-packages/torch after
`tools/venv.sh torch`).  It is read in place; nothing of it is kept here.

Covered: TORCH_LOGS and its companions, every TORCHDYNAMO_*, TORCHINDUCTOR_*
and TORCH_COMPILE_* variable read outside torch/testing, and TRITON_CACHE_DIR.
The reads are found with the ast module and typed by the expression around
them:

- torch.utils._config_module.Config(env_name_default=..., env_name_force=...):
  a boolean option reads exactly "1" as true and "0" as false, and keeps any
  other value as a string, so "true" and "false" are both truthy (parser
  onezero); a string option takes the value as it is;
- get_tristate_env(NAME): "1" true, "0" false, anything else the default
  (parser onezero);
- os.environ.get / os.getenv / os.environ[...] compared with == "1": exactly
  "1" is true (parser one); wrapped in int() or float(): a number; anything
  else: a string.

TORCH_LOGS is a comma-separated list of the registered log and artifact
names of torch/_logging/_registrations.py (each may start with + for more
and - for less), or of importable module names (with a dot); anything else
makes torch raise at import.  Names and types are upstream facts; the
descriptions are this project's own (generic ones name the config option a
variable sets).  Standard library only.
"""
import argparse
import ast
import os
import re
import sys

NAMES = re.compile(r"^(TORCHDYNAMO_[A-Z0-9_]+|TORCHINDUCTOR_[A-Z0-9_]+|TORCH_COMPILE_[A-Z0-9_]+|"
                   r"TORCH_LOGS(_[A-Z_]+)?|TRITON_CACHE_DIR)$")

# Our own words for the variables a profile is most likely to set.
DESCRIPTIONS = {
    "TORCH_LOGS": "Comma-separated logs and artifacts torch prints (dynamo, inductor, recompiles, graph_breaks, ...; + more verbose, - less)",
    "TORCH_LOGS_OUT": "File the TORCH_LOGS output goes to, besides stderr",
    "TORCH_LOGS_FORMAT": "Python logging format of TORCH_LOGS lines ('short' drops the prefix)",
    "TORCH_LOGS_TRACE_ID_FILTER": "Only log compilations with these trace ids ([F/N] prefixes)",
    "TORCH_COMPILE_DEBUG": "Dumps every compilation's graphs, generated code and logs into a debug directory (slow)",
    "TORCH_COMPILE_DEBUG_DIR": "Where TORCH_COMPILE_DEBUG writes its dumps",
    "TORCH_COMPILE_DISABLE": "torch.compile returns the function uncompiled",
    "TORCHDYNAMO_DISABLE": "TorchDynamo is off: compiled functions run in eager mode",
    "TORCHDYNAMO_VERBOSE": "Full Python and internal tracebacks for Dynamo errors",
    "TORCHDYNAMO_CAPTURE_SCALAR_OUTPUTS": "Trace Tensor.item() into the graph instead of breaking it there",
    "TORCHDYNAMO_CAPTURE_DYNAMIC_OUTPUT_SHAPE_OPS": "Trace operators with data-dependent output shapes (nonzero, ...) instead of breaking the graph",
    "TORCHDYNAMO_SUPPRESS_ERRORS": "On a compile error, run the frame in eager mode instead of raising",
    "TORCHINDUCTOR_CACHE_DIR": "Inductor's on-disk caches (FX graph cache, generated kernels); default $TMPDIR/torchinductor_$USER",
    "TRITON_CACHE_DIR": "Triton's compiled-kernel cache; default <Inductor cache>/triton",
    "TORCHINDUCTOR_FX_GRAPH_CACHE": "Inductor's FX graph cache on local disk (a hit skips code generation and the C++/Triton compiler)",
    "TORCHINDUCTOR_AUTOGRAD_CACHE": "AOTAutograd's cache of forward and backward graphs on local disk",
    "TORCHINDUCTOR_FORCE_DISABLE_CACHES": "Every Inductor and AOTAutograd cache is off: everything compiles again",
    "TORCH_COMPILE_FORCE_DISABLE_CACHES": "Every torch.compile cache is off: everything compiles again",
    "TORCHINDUCTOR_MAX_AUTOTUNE": "Benchmark kernel choices at compile time (much longer compilations)",
    "TORCHINDUCTOR_COMPILE_THREADS": "Worker processes compiling kernels in parallel",
    "TORCHINDUCTOR_FREEZING": "Fold parameters into the graph as constants (inference)",
    "TORCHINDUCTOR_CPP_WRAPPER": "Generate the graph's wrapper in C++ instead of Python",
    "TORCHINDUCTOR_CUDAGRAPHS": "Run compiled graphs through CUDA graphs",
    "TORCHINDUCTOR_PROFILE": "Time every generated kernel (debugging)",
}

TAGS = {
    "TORCH_LOGS": ["debug"],
    "TORCH_LOGS_OUT": ["debug"],
    "TORCH_COMPILE_DEBUG": ["debug", "perf-risk"],
    "TORCH_COMPILE_DEBUG_DIR": ["debug"],
    "TORCH_COMPILE_DEBUG_SAVE_REAL": ["debug"],
    "TORCH_COMPILE_CPROFILE": ["debug", "perf-risk"],
    "TORCHDYNAMO_VERBOSE": ["debug"],
    "TORCHDYNAMO_DEBUG_FUNCTION": ["debug"],
    "TORCHDYNAMO_EXTENDED_DEBUG_GUARD_ADDED": ["debug"],
    "TORCHDYNAMO_EXTENDED_DEBUG_CREATE_SYMBOL": ["debug"],
    "TORCHDYNAMO_EXTENDED_DEBUG_CPP": ["debug"],
    "TORCHDYNAMO_REPRO_AFTER": ["debug"],
    "TORCHDYNAMO_REPRO_LEVEL": ["debug"],
    "TORCHDYNAMO_PRINT_MISSING": ["debug"],
    "TORCHINDUCTOR_PROFILE": ["debug", "perf-risk"],
    "TORCHINDUCTOR_PROFILE_OUTPUT": ["debug"],
    "TORCHINDUCTOR_DEBUG_FUSION": ["debug"],
    "TORCHINDUCTOR_SAVE_ARGS": ["debug"],
    "TORCHINDUCTOR_PATTERN_MATCH_DEBUG": ["debug"],
    "TORCHINDUCTOR_DUMP_LAUNCH_PARAMS": ["debug", "perf-risk"],
    "TORCHINDUCTOR_BENCHMARK_KERNEL": ["debug"],
    "TORCHINDUCTOR_NAN_ASSERTS": ["debug", "perf-risk"],
    "TORCHINDUCTOR_CACHE_DIR": ["cache"],
    "TRITON_CACHE_DIR": ["cache"],
    "TORCHINDUCTOR_FORCE_DISABLE_CACHES": ["perf-risk"],
    "TORCH_COMPILE_FORCE_DISABLE_CACHES": ["perf-risk"],
    "TORCHDYNAMO_DISABLE": ["perf-risk"],
    "TORCH_COMPILE_DISABLE": ["perf-risk"],
}

# TORCH_LOGS items cheap enough for a timing run: one line per recompilation
# or graph break, nothing per step.
TIMING_ALLOWS = ["recompiles", "graph_breaks"]


def call_name(node):
    f = node.func
    if isinstance(f, ast.Attribute):
        base = call_name_expr(f.value)
        return (base + "." if base else "") + f.attr
    if isinstance(f, ast.Name):
        return f.id
    return ""


def call_name_expr(node):
    if isinstance(node, ast.Attribute):
        b = call_name_expr(node.value)
        return (b + "." if b else "") + node.attr
    if isinstance(node, ast.Name):
        return node.id
    return ""


def strings(node):
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.List, ast.Tuple)):
        return [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


def target_of(parents, node):
    """The attribute or variable an expression is assigned to, if any."""
    while node in parents:
        node = parents[node]
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            t = node.targets[0] if isinstance(node, ast.Assign) else node.target
            if isinstance(t, ast.Name):
                return t.id
            if isinstance(t, ast.Attribute):
                return t.attr
            return None
        if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.Module)):
            return None
    return None


def func_of(parents, node):
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.FunctionDef):
            return node.name
    return None


def scan(root):
    found = {}
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, os.path.dirname(root))
        if "/testing" in "/" + rel or "/test" in "/" + rel.replace("_test", ""):
            continue
        for fn in sorted(filenames):
            if not fn.endswith(".py"):
                continue
            path = os.path.join(dirpath, fn)
            relpath = os.path.relpath(path, os.path.dirname(root))
            try:
                tree = ast.parse(open(path, encoding="utf-8").read())
            except (SyntaxError, UnicodeDecodeError):
                continue
            parents = {}
            for node in ast.walk(tree):
                for c in ast.iter_child_nodes(node):
                    parents[c] = node
            for node in ast.walk(tree):
                if isinstance(node, ast.Call):
                    name = call_name(node)
                    if name.endswith("Config") or name == "Config":
                        kws = {k.arg: k.value for k in node.keywords}
                        envs = strings(kws.get("env_name_default")) + strings(kws.get("env_name_force"))
                        default = kws.get("default", node.args[0] if node.args else None)
                        vt = kws.get("value_type")
                        kind = "string"
                        if isinstance(default, ast.Constant) and isinstance(default.value, bool):
                            kind = "bool-onezero"
                        elif vt is not None and "bool" in ast.unparse(vt):
                            kind = "bool-onezero"
                        dflt = None
                        if isinstance(default, ast.Constant) and default.value is not None:
                            dflt = ("1" if default.value else "0") if isinstance(default.value, bool) else str(default.value)
                        opt = target_of(parents, node)
                        for e in envs:
                            if NAMES.match(e):
                                found.setdefault(e, []).append((relpath, node.lineno, kind, dflt, opt))
                        continue
                    if name.endswith("get_tristate_env") and node.args:
                        for e in strings(node.args[0]):
                            if NAMES.match(e):
                                found.setdefault(e, []).append((relpath, node.lineno, "bool-onezero", None,
                                                                target_of(parents, node)))
                        continue
                    if name in ("os.environ.get", "os.getenv", "environ.get") and node.args:
                        for e in strings(node.args[0]):
                            if NAMES.match(e):
                                found.setdefault(e, []).append(typed_read(parents, node, relpath))
                # os.environ[NAME] read (not written)
                if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and \
                        call_name_expr(node.value) == "os.environ":
                    for e in strings(node.slice):
                        if NAMES.match(e):
                            found.setdefault(e, []).append(typed_read(parents, node, relpath))
    return found


def typed_read(parents, node, relpath):
    par = parents.get(node)
    dflt = None
    if isinstance(node, ast.Call) and len(node.args) > 1 and isinstance(node.args[1], ast.Constant) \
            and node.args[1].value is not None:
        dflt = str(node.args[1].value)
    kind = "string"
    if isinstance(par, ast.Compare) and par.left is node and len(par.ops) == 1:
        comp = par.comparators[0]
        if isinstance(par.ops[0], (ast.Eq, ast.NotEq)) and isinstance(comp, ast.Constant) and comp.value == "1":
            kind = "bool-one"
    elif isinstance(par, ast.Call) and call_name(par) in ("int", "float"):
        kind = call_name(par)
    return (relpath, node.lineno, kind, dflt, target_of(parents, node) or func_of(parents, node))


def log_names(root):
    """Registered log and artifact names (torch/_logging/_registrations.py)."""
    path = os.path.join(root, "_logging", "_registrations.py")
    tree = ast.parse(open(path, encoding="utf-8").read())
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and call_name(node) in ("register_log", "register_artifact") and node.args:
            for s in strings(node.args[0]):
                names.append(s)
    return ["all"] + sorted(set(names))


def merge(reads):
    """One type for a variable read in several places: a number or a
    boolean wins over a plain string read (os.environ.get(...) passed on)."""
    order = {"bool-onezero": 0, "bool-one": 1, "int": 2, "float": 3, "string": 4}
    return min(reads, key=lambda r: order[r[2]])


def q(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", required=True, help="the torch package directory of the release")
    ap.add_argument("--release", required=True, help="its version, such as 2.9.0")
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    found = scan(root)
    found.setdefault("TORCH_LOGS", [("torch/_logging/_internal.py", 0, "list", None, None)])
    out = sys.stdout
    out.write("# Environment variables of torch.compile in torch %s: TorchDynamo\n" % args.release)
    out.write("# (TORCHDYNAMO_*), Inductor (TORCHINDUCTOR_*), TORCH_COMPILE_*, the TORCH_LOGS\n")
    out.write("# family and TRITON_CACHE_DIR, every read outside torch/testing.  Generated by\n")
    out.write("# tools/gen-torch-catalog.py from the release's Python sources; rerun it rather\n")
    out.write("# than editing.  Above each entry, the places that read it.  Types are the\n")
    out.write("# readers': a Config option or get_tristate_env reads exactly 1 as true and 0\n")
    out.write("# as false and keeps any other word (\"false\" is then true: parser onezero);\n")
    out.write("# os.environ.get(...) == \"1\" is true for exactly 1 (parser one).  Names,\n")
    out.write("# types and defaults are upstream facts; descriptions are this project's own.\n")
    out.write("family: torch\nkind: env\ncomplete: false\nbool_parser: one\nsource:\n")
    out.write("  repository: pytorch/pytorch\n")
    out.write("  path: torch/_dynamo/config.py, torch/_inductor/config.py, torch/_logging/_internal.py, torch/**/*.py\n")
    out.write("  release: torch %s, tag v%s\n" % (args.release, args.release))
    out.write("  also: torch/_logging/_registrations.py (TORCH_LOGS names)\n")
    out.write("flags:\n")
    logs = log_names(root)
    for name in sorted(found):
        reads = found[name]
        where = sorted({"%s:%d" % (r[0], r[1]) for r in reads if r[1]})
        r = merge(reads) if name != "TORCH_LOGS" else ("", 0, "list", None, None)
        kind, dflt, opt = r[2], r[3], r[4]
        desc = DESCRIPTIONS.get(name)
        if not desc:
            owner = "Inductor" if name.startswith("TORCHINDUCTOR_") else \
                "TorchDynamo" if name.startswith("TORCHDYNAMO_") else "torch.compile"
            desc = "%s setting %s" % (owner, opt) if opt else "%s setting read at %s" % (owner, where[0] if where else "?")
        if where:
            out.write("  # read: %s\n" % ", ".join(where[:6]))
        out.write("  - name: %s\n" % name)
        if kind == "bool-onezero":
            out.write("    type: bool\n    parser: onezero\n")
        elif kind == "bool-one":
            out.write("    type: bool\n    parser: one\n")
        elif kind in ("int", "float", "list"):
            out.write("    type: %s\n" % kind)
        else:
            out.write("    type: string\n")
        if dflt is not None and kind != "list":
            out.write("    default: %s\n" % q(dflt))
        if name == "TORCH_LOGS":
            out.write("    values: [%s]\n" % ", ".join(logs))
            out.write("    timing_allows: [%s]\n" % ", ".join(TIMING_ALLOWS))
        if name in TAGS:
            out.write("    tags: [%s]\n" % ", ".join(TAGS[name]))
        out.write("    description: %s\n" % q(desc))


if __name__ == "__main__":
    main()
