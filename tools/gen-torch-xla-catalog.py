#!/usr/bin/env python3
"""Writes etc/flags/torch_xla.yaml from a pytorch/xla checkout.

    tools/gen-torch-xla-catalog.py --root PYTORCH_XLA_CHECKOUT --commit SHA \
        > etc/flags/torch_xla.yaml

Read in place, never kept here: configuration.yaml (the documented variables,
types and defaults), torch_xla/csrc/runtime/env_vars.h (names of the kEnv*
constants) and every torch_xla/csrc/**/*.cpp for the sys_util::GetEnv*()
calls that actually read a variable (the reader's type wins over the
documented one).  Build-time variables (configuration.yaml's build_variables)
are left out: they do not affect a launch.  Standard library only.
"""
import argparse
import os
import re
import sys

READERS = {"GetEnvBool": "bool", "GetEnvInt": "int", "GetEnvString": "string",
           "GetEnvDouble": "float", "GetEnvOrdinalPath": "string"}
DEBUG = {"PT_XLA_DEBUG", "PT_XLA_DEBUG_LEVEL", "PT_XLA_DEBUG_FILE", "XLA_IR_DEBUG",
         "XLA_HLO_DEBUG", "XLA_SAVE_TENSORS_FILE", "XLA_SAVE_TENSORS_FMT",
         "XLA_SAVE_HLO_FILE", "XLA_METRICS_FILE", "XLA_DUMP_HLO_GRAPH",
         "XLA_DUMP_FATAL_STACK", "XLA_DUMP_POST_OPTIMIZATIONS", "XLA_FNTRACKER_FILE",
         "XLA_FNTRACKER_LIST", "XLA_FNTRACKER_LEVEL", "XLA_TEST_DUMP_GRAPHS",
         "XLA_TEST_DUMP_METRICS", "XLA_TEST_DUMP_TENSORS", "XLA_SYNC_WAIT",
         "XLA_SLOW_COMPILE_HLO_FOLDER", "XLA_USE_EAGER_DEBUG_MODE", "TF_CPP_VMODULE",
         "XLA_COMPILE_TIME_THRESHOLD"}
CACHE = {"XLA_PERSISTENT_CACHE_PATH"}
DEPRECATED = {"XLA_USE_BF16", "XLA_DOWNCAST_BF16", "XLA_USE_32BIT_LONG"}
PERF_RISK = {"XLA_USE_BF16", "XLA_DOWNCAST_BF16", "XLA_SYNC_WAIT", "XLA_NO_SPECIAL_SCALARS",
             "XLA_TENSOR_UPDATE_SYNC", "XLA_DISABLE_FUNCTIONALIZATION"}
ENUMS = {"PJRT_DEVICE": ["TPU", "CPU", "CUDA", "GPU", "NEURON", "XPU", "ROCM"]}
HAND = {
    "PJRT_DEVICE": "PJRT device type torch_xla initializes (TPU, CPU, CUDA, ...)",
    "XLA_USE_SPMD": "Run in SPMD mode: one replicated program partitioned by sharding annotations",
    "XLA_USE_BF16": "Store float32 tensors as bfloat16 on the device",
    "XLA_DOWNCAST_BF16": "Keep float32 tensors as bfloat16 and float64 as float32 on the device",
    "PT_XLA_DEBUG_LEVEL": "Level of torch_xla's execution analysis (0 off, 1 summaries, 2 per graph)",
    "PT_XLA_DEBUG": "Analyze metrics and print a compile/transfer summary",
    "XLA_IR_DEBUG": "Record Python frames for every IR node (slow tracing)",
    "XLA_HLO_DEBUG": "Put Python frame metadata into the HLO (changes the HLO, so the cache key)",
    "XLA_PERSISTENT_CACHE_PATH": "Directory of torch_xla's persistent compilation cache",
    "XLA_FLAGS": "XLA compiler options; see the xla family",
    "TPU_NUM_DEVICES": "Number of TPU devices torch_xla uses on this host",
    "XLA_METRICS_FILE": "File torch_xla writes its metrics report to at exit",
    "XLA_SAVE_TENSORS_FILE": "File the IR/HLO graphs of every sync are appended to",
}


def describe(name, typ):
    if name in HAND:
        return HAND[name]
    words = name.lower().split("_")
    if words[0] in ("xla", "pt", "ptxla"):
        words = [w for w in words[1:] if w != "xla"] or words
    text = " ".join(words)
    return ("torch_xla: switch for %s" if typ == "bool" else "torch_xla: %s setting") % text


def parse_configuration(text):
    """The subset of configuration.yaml's shape: section, NAME, then fields."""
    out, section, cur = {}, None, None
    for line in text.splitlines():
        m = re.match(r"^  (\w+):\s*$", line)
        if m:
            section = m.group(1)
            continue
        m = re.match(r"^    ([A-Z][A-Z0-9_]*):\s*$", line)
        if m:
            cur = out.setdefault(m.group(1), {"section": section})
            continue
        m = re.match(r"^      (type|default_value):\s*(.*?)\s*$", line)
        if m and cur is not None:
            v = m.group(2)
            if len(v) >= 2 and v[0] == v[-1] and v[0] in "\"'":
                v = v[1:-1]
            cur[m.group(1)] = v
    return out


def yq(s):
    return '"' + str(s).replace("\\", "\\\\").replace('"', '\\"') + '"'


def cdefault(expr):
    expr = expr.strip()
    if expr in ("true", "false"):
        return expr
    if re.fullmatch(r"-?\d+(\.\d+)?", expr):
        return expr
    if re.fullmatch(r'"[^"]*"', expr):
        return expr[1:-1]
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--commit", required=True)
    a = ap.parse_args()
    conf = parse_configuration(open(os.path.join(a.root, "configuration.yaml")).read())
    consts = dict(re.findall(r'(kEnv\w+)\[\]\s*=\s*"([A-Z0-9_]+)"', re.sub(
        r"=\s*\n\s*", "= ", open(os.path.join(a.root, "torch_xla/csrc/runtime/env_vars.h")).read())))
    entries = {}
    for name, f in conf.items():
        if f["section"] == "build_variables":
            continue
        typ = {"bool": "bool", "int": "int", "string": "string", "float": "float",
               "double": "float"}.get(f.get("type", "string"), "string")
        entries[name] = {"type": typ, "default": f.get("default_value")}
    for c, name in consts.items():
        entries.setdefault(name, {"type": "string", "default": None})
    call = re.compile(r"(GetEnv(?:Bool|Int|String|Double|OrdinalPath))\(\s*"
                      r"(\"[A-Z0-9_]+\"|(?:env::)?kEnv\w+)\s*,\s*([^;]*?)\)\s*[;,)]", re.S)
    for d, _, files in os.walk(os.path.join(a.root, "torch_xla/csrc")):
        for fn in sorted(files):
            if not fn.endswith((".cpp", ".cc", ".h")):
                continue
            src = open(os.path.join(d, fn), encoding="utf-8", errors="replace").read()
            for m in call.finditer(src):
                key = m.group(2)
                name = key[1:-1] if key.startswith('"') else consts.get(key.replace("env::", ""))
                if not name:
                    continue
                e = entries.setdefault(name, {"type": "string", "default": None})
                e["type"] = READERS[m.group(1)]
                dv = cdefault(m.group(3))
                if dv is not None and e.get("default") is None:
                    e["default"] = dv
    for name, e in entries.items():
        if e["type"] == "bool" and e.get("default") in ("False", "True"):
            e["default"] = e["default"].lower()
    out = sys.stdout
    out.write("# Environment variables PyTorch/XLA reads at import and at runtime start.\n"
              "# Generated by tools/gen-torch-xla-catalog.py from configuration.yaml,\n"
              "# torch_xla/csrc/runtime/env_vars.h and the GetEnv*() readers in\n"
              "# torch_xla/csrc; rerun it rather than editing.  Booleans are read with\n"
              "# sys_util::GetEnvBool: exactly \"true\" or \"false\", else atoi() != 0, so\n"
              "# \"yes\" or \"True\" read as false.  Descriptions are this project's own.\n")
    out.write("family: torch_xla\nkind: env\ncomplete: false\nbool_parser: atoi\n")
    out.write("source:\n  repository: pytorch/xla\n  path: configuration.yaml\n"
              "  commit: %s\n  also: torch_xla/csrc/runtime/env_vars.h, "
              "torch_xla/csrc GetEnv* readers\n" % a.commit)
    out.write("flags:\n")
    for name in sorted(entries):
        if name in ("XLA_FLAGS", "LIBTPU_INIT_ARGS"):
            continue      # composite variables, cataloged token by token
        e = entries[name]
        typ = "enum" if name in ENUMS else e["type"]
        out.write("  - name: %s\n    type: %s\n" % (name, typ))
        if name in ENUMS:
            out.write("    values: [%s]\n" % ", ".join(ENUMS[name]))
        if e.get("default") is not None and not (typ == "enum" and e["default"] == ""):
            out.write("    default: %s\n" % yq(e["default"]))
        tags = [t for t, s in (("cache", CACHE), ("debug", DEBUG), ("perf-risk", PERF_RISK),
                               ("deprecated", DEPRECATED)) if name in s]
        if tags:
            out.write("    tags: [%s]\n" % ", ".join(tags))
        out.write("    description: %s\n" % yq(describe(name, typ)))
    sys.stderr.write("gen-torch-xla-catalog: %d variables\n" % len(entries))


if __name__ == "__main__":
    main()
