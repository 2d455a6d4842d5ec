#!/usr/bin/env python3
"""Writes etc/flags/torch_xla.yaml from a pytorch/xla checkout.

    tools/gen-torch-xla-catalog.py --root PYTORCH_XLA_CHECKOUT --tag v2.9.0 \
        --commit SHA > etc/flags/torch_xla.yaml

The checkout is read in place and nothing of it is kept here.  Two kinds of
readers are found:

- C++ (torch_xla/csrc, tests left out): every sys_util::GetEnvBool / GetEnvInt
  / GetEnvDouble / GetEnvString / GetEnvOrdinalPath call, the variable named
  by a string literal or by a kEnv* constant of runtime/env_vars.h, and the
  string lists a file reads variable by variable (env_hash.cpp's raw_vars).
  Comments are skipped, so a commented-out reader does not count.
- Python (torch_xla/**/*.py, tests left out), through the ast module:
  os.environ.get, os.getenv, os.environ[...] reads, `in os.environ`,
  torch_xla.utils.utils.getenv_as and check_env_flag, with the names of
  torch_xla/core/xla_env_vars.py resolved; the expression around a read
  gives its type (int(...), float(...), bool(...), a comparison).

Variables only written (os.environ[...] = ..., setdefault) are not reads.
A variable read in several places gets the type of the runtime's (C++)
reader when there is one; where the readers disagree in a way a user can
trip over, RULES below says which wins and the description says why.
Every reader found is listed in a comment above its entry.  Names, types,
defaults and enum values are upstream facts; the descriptions are this
project's own words.  Standard library only.
"""
import argparse
import ast
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import flagrel  # noqa: E402

CPP_READERS = {"GetEnvBool": "bool", "GetEnvInt": "int", "GetEnvString": "string",
               "GetEnvDouble": "float", "GetEnvOrdinalPath": "string"}
COMPOSITE = {"XLA_FLAGS", "LIBTPU_INIT_ARGS"}


# ---- C++ -----------------------------------------------------------------------------

def strip_cpp_comments(src):
    """src with comments blanked (newlines kept, so line numbers hold)."""
    out, i, n = [], 0, len(src)
    while i < n:
        c = src[i]
        if c == '"' or c == "'":
            j = i + 1
            while j < n and src[j] != c:
                j += 2 if src[j] == "\\" else 1
            out.append(src[i:j + 1])
            i = j + 1
        elif src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def cpp_args(src, start):
    """Top-level arguments of the call whose '(' is just before start."""
    depth, i, args, cur = 1, start, [], []
    while i < len(src) and depth:
        c = src[i]
        if c in "\"'":
            j = i + 1
            while j < len(src) and src[j] != c:
                j += 2 if src[j] == "\\" else 1
            cur.append(src[i:j + 1])
            i = j + 1
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                break
        if c == "," and depth == 1:
            args.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
        i += 1
    args.append("".join(cur).strip())
    return [" ".join(a.split()) for a in args]


def cpp_literal(expr):
    """The value of a C++ literal default, or None."""
    e = expr.strip()
    if e in ("true", "false"):
        return e
    m = re.fullmatch(r"(-?\d+(?:\.\d*)?)(?:[uUlLfF]*)", e)
    if m:
        return m.group(1)
    m = re.fullmatch(r'"((?:[^"\\]|\\.)*)"', e)
    if m:
        return m.group(1)
    return None


def collect_cpp(root, reads, unresolved):
    csrc = os.path.join(root, "torch_xla", "csrc")
    consts = {}
    # the names' constants: `kEnvX[] = "NAME"` in env_vars.h (from 2.8), or
    # `const char* const kEnvX = "NAME"` in env_vars.cc (before)
    for fn in ("env_vars.h", "env_vars.cc"):
        path = os.path.join(csrc, "runtime", fn)
        if os.path.exists(path):
            consts.update(re.findall(r'(kEnv\w+)(?:\[\])?\s*=\s*"([A-Z0-9_]+)"', re.sub(
                r"=\s*\n\s*", "= ", open(path).read())))
    call = re.compile(r"\b(GetEnv(?:Bool|Int|String|Double|OrdinalPath))\s*\(")
    for d, dirs, files in os.walk(csrc):
        dirs.sort()
        for fn in sorted(files):
            if not fn.endswith((".cpp", ".cc", ".h")) or fn.endswith(("_test.cpp", "_test.cc")):
                continue
            if fn in ("sys_util.cpp", "sys_util.cc", "sys_util.h"):
                continue
            path = os.path.join(d, fn)
            rel = os.path.relpath(path, root)
            src = strip_cpp_comments(open(path, encoding="utf-8", errors="replace").read())
            lists = {}
            for m in re.finditer(r"(\w+_vars)\s*=\s*\{([^}]*)\}", src):
                lists[m.group(1)] = re.findall(r'"([A-Z0-9_]+)"', m.group(2))
            for m in call.finditer(src):
                line = src.count("\n", 0, m.start()) + 1
                args = cpp_args(src, m.end())
                key = args[0]
                names = []
                if re.fullmatch(r'"[A-Z0-9_]+"', key):
                    names = [key[1:-1]]
                elif re.sub(r"^(?:runtime::)?env::", "", key) in consts:
                    names = [consts[re.sub(r"^(?:runtime::)?env::", "", key)]]
                else:
                    # a variable holding the name: a *_vars list of the same file
                    # the nearest loop over such a list before the call, else
                    # the first after it (a helper called from that loop)
                    loops = [(l.start(), l.group(1)) for l in re.finditer(
                        r"for\s*\(\s*(?:const\s+)?auto\s*&?\s*%s\s*:\s*(\w+)\s*\)"
                        % re.escape(key.split(".")[0]), src) if l.group(1) in lists]
                    before = [l for l in loops if l[0] < m.start()]
                    loop = before[-1] if before else (loops[0] if loops else None)
                    if loop:
                        names = lists[loop[1]]
                if not names:
                    unresolved.append("%s:%d: %s(%s)" % (rel, line, m.group(1), key))
                    continue
                dflt = args[1] if len(args) > 1 else ""
                for name in names:
                    reads.setdefault(name, []).append(dict(
                        lang="c++", where="%s:%d" % (rel, line), reader=m.group(1),
                        type=CPP_READERS[m.group(1)], default=cpp_literal(dflt),
                        default_expr=dflt))


# ---- Python --------------------------------------------------------------------------

def dotted(node):
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted(node.value)
        return base + "." + node.attr if base else None
    return None


def py_const(node):
    try:
        return ast.literal_eval(node)
    except Exception:
        return None


def collect_py(root, reads, unresolved):
    pkg = os.path.join(root, "torch_xla")
    xenv = {}
    tree = ast.parse(open(os.path.join(pkg, "core", "xla_env_vars.py")).read())
    for st in tree.body:
        if isinstance(st, ast.Assign) and isinstance(st.value, ast.Constant):
            for t in st.targets:
                if isinstance(t, ast.Name):
                    xenv[t.id] = st.value.value

    def enclosing(node, kinds):
        while node is not None and not isinstance(node, kinds):
            node = getattr(node, "parent", None)
        return node

    def names_of(node):
        """The variable names node can hold: a literal, an xla_env_vars
        constant, or a loop variable over a literal list."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return [node.value]
        if isinstance(node, ast.Attribute) and dotted(node.value) == "xenv":
            return [xenv[node.attr]] if node.attr in xenv else []
        if isinstance(node, ast.Name):
            loop = enclosing(node, ast.For)
            while loop is not None:
                if isinstance(loop.target, ast.Name) and loop.target.id == node.id:
                    it = loop.iter
                    if isinstance(it, ast.Name):
                        fn = enclosing(loop, (ast.FunctionDef, ast.Module))
                        for st in ast.walk(fn):
                            if isinstance(st, ast.Assign) and any(
                                    isinstance(t, ast.Name) and t.id == it.id for t in st.targets):
                                it = st.value
                    v = py_const(it)
                    if isinstance(v, (list, tuple)) and all(isinstance(x, str) for x in v):
                        return list(v)
                    return []
                loop = enclosing(getattr(loop, "parent", None), ast.For)
        return []

    for d, dirs, files in os.walk(pkg):
        dirs[:] = sorted(x for x in dirs if x not in ("test", "tests", "__pycache__"))
        for fn in sorted(files):
            if not fn.endswith(".py") or fn.endswith("_test.py") or fn.startswith("test_"):
                continue
            path = os.path.join(d, fn)
            rel = os.path.relpath(path, root)
            if rel == os.path.join("torch_xla", "core", "xla_env_vars.py"):
                continue
            tree = ast.parse(open(path, encoding="utf-8").read())
            for node in ast.walk(tree):
                for ch in ast.iter_child_nodes(node):
                    ch.parent = node
            for node in ast.walk(tree):
                rec = None
                if isinstance(node, ast.Call):
                    f = dotted(node.func) or ""
                    args = node.args
                    kw = {k.arg: k.value for k in node.keywords}
                    if f.endswith("getenv_as") and args:
                        typ = dotted(args[1]) if len(args) > 1 else "str"
                        dv = args[2] if len(args) > 2 else kw.get("defval")
                        rec = dict(reader="getenv_as(%s)" % typ,
                                   type={"bool": "bool", "int": "int", "float": "float",
                                         "str": "string"}.get(typ, "string"),
                                   parser="pyint" if typ == "bool" else None,
                                   default=py_const(dv) if dv is not None else None,
                                   default_expr=ast.unparse(dv) if dv is not None else "")
                    elif f.endswith("check_env_flag") and args:
                        rec = dict(reader="check_env_flag", type="bool", parser="true-or-digits",
                                   default=None, default_expr="")
                    elif f in ("os.environ.get", "os.getenv") and args:
                        dv = args[1] if len(args) > 1 else None
                        rec = dict(reader=f, type="string", parser=None,
                                   default=py_const(dv) if dv is not None else None,
                                   default_expr=ast.unparse(dv) if dv is not None else "")
                        p = node.parent
                        if isinstance(p, ast.Call) and dotted(p.func) in ("int", "float", "bool"):
                            rec["reader"] = "%s(%s)" % (dotted(p.func), f)
                            rec["type"] = {"int": "int", "float": "float", "bool": "bool"}[dotted(p.func)]
                            rec["parser"] = {"int": "pyint", "float": None,
                                             "bool": "nonempty"}[dotted(p.func)]
                        elif isinstance(p, ast.Compare) and len(p.ops) == 1 and \
                                isinstance(p.ops[0], (ast.Eq, ast.NotEq)):
                            other = p.comparators[0] if p.left is node else p.left
                            rec["reader"] = "%s %s %r" % (
                                f, "==" if isinstance(p.ops[0], ast.Eq) else "!=", py_const(other))
                            rec["compared"] = py_const(other)
                        elif isinstance(p, (ast.If, ast.BoolOp, ast.UnaryOp)) or \
                                (isinstance(p, ast.Compare) and isinstance(p.ops[0], (ast.Is, ast.IsNot))):
                            rec["reader"] = "%s (set or not)" % f
                    a0 = args[0] if args else None
                    if rec is not None:
                        fn = enclosing(node, ast.FunctionDef)
                        if fn is not None and fn.name in ("getenv_as", "check_env_flag"):
                            continue      # the helpers themselves, counted at their calls
                        names = names_of(a0)
                        if not names:
                            unresolved.append("%s:%d: %s(%s)" % (rel, node.lineno, f, ast.unparse(a0)))
                            continue
                elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and \
                        dotted(node.value) == "os.environ":
                    a0 = node.slice
                    rec = dict(reader="os.environ[...]", type="string", parser=None,
                               default=None, default_expr="")
                    names = names_of(a0)
                    if not names:
                        unresolved.append("%s:%d: os.environ[%s]" % (rel, node.lineno, ast.unparse(a0)))
                        continue
                elif isinstance(node, ast.Compare) and len(node.ops) == 1 and \
                        isinstance(node.ops[0], (ast.In, ast.NotIn)) and \
                        dotted(node.comparators[0]) == "os.environ":
                    rec = dict(reader="in os.environ", type="string", parser=None,
                               default=None, default_expr="")
                    names = names_of(node.left)
                    if not names:
                        unresolved.append("%s:%d: %s in os.environ" % (rel, node.lineno, ast.unparse(node.left)))
                        continue
                if rec is None:
                    continue
                rec.update(lang="python", where="%s:%d" % (rel, node.lineno))
                for name in names:
                    reads.setdefault(name, []).append(dict(rec))


def collect(root):
    reads, unresolved = {}, []
    collect_cpp(root, reads, unresolved)
    collect_py(root, reads, unresolved)
    return reads, unresolved


# ---- what the readers do not say -------------------------------------------------------

# Per variable: the description (this project's words) and, where the readers
# alone would give the wrong type, parser, default or values, the fact that
# decides it.  Keys: d (description), type, parser, default, values, tags.
# A variable the readers find and this table lacks stops the generator, so a
# newer torch_xla cannot slip in an undescribed name.
HAND = {
    "ALLREDUCE_GRADIENTS_BUCKET_SIZE_MB": dict(
        d="MiB per bucket when xm.reduce_gradients all-reduces in buckets; 0 is one all-reduce for all gradients"),
    "CLOUD_TPU_TASK_ID": dict(
        d="Index of this host in a TPU slice (wins over TPU_WORKER_ID when both are set)"),
    "CPU_NUM_DEVICES": dict(d="Number of CPU devices the PJRT CPU client creates"),
    "DISABLE_NUMERIC_CC_TOKEN": dict(
        d="Reuse one token for every collective instead of one derived from its input values"),
    "DIST_SERVICE_HEARTBEAT_INTERVAL_IN_SEC": dict(
        d="Heartbeat timeout of the distributed runtime service torch_xla starts, in seconds"),
    "DIST_SERVICE_MAX_MISSING_HEARTBEATS": dict(
        d="Heartbeats a peer of the distributed runtime service may miss before it counts as gone"),
    "DIST_SERVICE_SHUTDOWN_TIMEOUT_IN_MIN": dict(
        d="How long the distributed runtime service waits for peers at shutdown, in minutes"),
    "ENABLE_COLLECTIVE_MATMUL_IN_MP": dict(
        d="Compile with SPMD partitioning and XLA's all-gather/einsum decomposition (collective matmul)"),
    "EXPERIMENTAL_XLA_UNBOUNDED_DYNAMISM": dict(
        d="Lower ops with unbounded dynamic shapes (experimental)"),
    "GPU_NUM_DEVICES": dict(d="Number of GPUs the CUDA PJRT client of torch_xla uses (PJRT_DEVICE=CUDA)"),
    "LOCAL_RANK": dict(tags=["launcher"], d="Rank of this process on its host, as set by the job launcher"),
    "LOCAL_WORLD_SIZE": dict(tags=["launcher"], d="Number of processes on this host, as set by the job launcher"),
    "MASTER_ADDR": dict(tags=["launcher"], d="Address of the rank-0 host for the coordinator and rendezvous"),
    "MASTER_PORT": dict(tags=["launcher"], d="Port of torch_xla's rendezvous TCP store on MASTER_ADDR"),
    "MODELCMP_SAVEDIR": dict(d="Directory torch_xla.debug.model_comparator saves tensors to",
                             tags=["debug"]),
    "NEURONCORE_NUM_DEVICES": dict(d="Neuron: number of NeuronCores per process"),
    "NEURON_LIBRARY_PATH": dict(
        d="Path of the Neuron PJRT plugin (libneuronpjrt.so; set by torch_xla from the installed libneuronxla)"),
    "NEURON_PJRT_PROCESSES_NUM_DEVICES": dict(
        d="Neuron: devices of each process; torch_xla only checks whether it is set and derives it otherwise"),
    "NEURON_PJRT_WORLD_SIZE": dict(
        d="Neuron: number of processes; torch_xla only checks whether it is set and derives it otherwise"),
    "NEURON_RT_ROOT_COMM_ID": dict(
        d="Neuron: host:port of the root communicator; derived from MASTER_ADDR when unset"),
    "NEURON_RT_VISIBLE_CORES": dict(
        d="Neuron: NeuronCores this process may use; defaults to LOCAL_RANK"),
    "PJRT_ALLOCATOR_CUDA_ASYNC": dict(
        type="bool", default="false",
        d="CUDA client: use the CUDA asynchronous allocator (setting any PJRT_ALLOCATOR_* replaces the default allocator options)"),
    "PJRT_ALLOCATOR_FRACTION": dict(
        type="float", default="0.75", d="CUDA client: fraction of GPU memory the allocator may take"),
    "PJRT_ALLOCATOR_PREALLOCATE": dict(
        type="bool", default="true", d="CUDA client: reserve the allocator's memory at start"),
    "PJRT_CPU_ASYNC_CLIENT": dict(d="Create the PJRT CPU client in asynchronous mode"),
    "PJRT_DEVICE": dict(
        d="Device type torch_xla initializes: CPU, TPU, XPU, NEURON, or a registered plugin's name such as CUDA; chosen from the host when unset"),
    "PJRT_DYNAMIC_PLUGINS": dict(
        type="bool", parser="pyint",
        d="Initialize the device through a registered PJRT plugin (set by torch_xla itself; Python reads it with int())"),
    "PJRT_GPU_ASYNC_CLIENT": dict(d="Create the CUDA PJRT client in asynchronous mode"),
    "PJRT_LIBRARY_PATH": dict(d="Path of the PJRT plugin of torch_xla's test-only library plugin"),
    "PJRT_LOCAL_PROCESS_COUNT": dict(tags=["launcher"],
        default="1", d="Number of torch_xla processes on this host (falls back to LOCAL_WORLD_SIZE)"),
    "PJRT_LOCAL_PROCESS_RANK": dict(tags=["launcher"],
        d="Rank of this torch_xla process on its host (falls back to LOCAL_RANK)"),
    "PJRT_SELECT_DEFAULT_DEVICE": dict(
        d="0 stops torch_xla from picking PJRT_DEVICE from the host (TPU, Neuron, else CPU) when it is unset"),
    "PTXLA_TPU_LIBRARY_PATH": dict(
        d="libtpu path torch_xla found in its own wheel or the libtpu package (set at import; TPU_LIBRARY_PATH wins)"),
    "PT_XLA_DEBUG": dict(
        type="bool", parser="pyint",
        d="Print torch_xla's compile and transfer analysis; read with int() at import, so true or yes fail",
        tags=["debug"]),
    "PT_XLA_DEBUG_FILE": dict(d="File the PT_XLA_DEBUG analysis is appended to instead of stderr",
                              tags=["debug"]),
    "PT_XLA_DEBUG_LEVEL": dict(
        d="Detail of the debug analysis (1 compiles and transfers, 2 every execution); -1 follows PT_XLA_DEBUG",
        tags=["debug"]),
    "PT_XLA_DEBUG_MAX_FRAME": dict(d="Python frames shown per event in the debug analysis",
                                   tags=["debug"]),
    "RANK": dict(tags=["launcher"], d="Global rank of this process, as set by the job launcher (falls back to the local rank)"),
    "RATE_TRACKER_SMOOTHING": dict(d="Smoothing factor of xm.RateTracker's moving average"),
    "SAVE_GRAPH_FMT": dict(type="enum", values=["text", "dot", "hlo"],
                           d="Format of the graphs torch_xla.debug.graph_saver writes",
                           tags=["debug"]),
    "SKIP_MEGASCALE_PJRT_CLIENT": dict(
        d="Read by the TPU runtime; torch_xla sets it to true while it imports JAX and then restores it"),
    "TF_CPP_MIN_LOG_LEVEL": dict(
        type="int", default="1",
        d="Least severity the C++ runtime logs; torch_xla sets 1 when unset and 0 also turns on its Python INFO log"),
    "TORCHELASTIC_RESTART_COUNT": dict(tags=["launcher"],
        d="torchelastic restart number; keys the rendezvous store prefix"),
    "TORCHELASTIC_USE_AGENT_STORE": dict(tags=["launcher"],
        d="Set by torchelastic; exactly True makes torch_xla's rendezvous use the agent's TCP store"),
    "TORCH_DIST_INIT_BARRIER": dict(
        d="0 skips torch.distributed's init barrier; with XLA_USE_DUMMY_STORE=1 torch_xla then uses no TCP store"),
    "TPU_ACCELERATOR_TYPE": dict(
        d="TPU type and size (v5litepod-8, ...); with it set, torch_xla does not ask the metadata server"),
    "TPU_CHIPS_PER_HOST_BOUNDS": dict(d="Older name of TPU_CHIPS_PER_PROCESS_BOUNDS"),
    "TPU_CHIPS_PER_PROCESS_BOUNDS": dict(d="Chip grid of one process, as X,Y,Z"),
    "TPU_HOST_BOUNDS": dict(d="Older name of TPU_PROCESS_BOUNDS"),
    "TPU_LIBRARY_PATH": dict(
        default="libtpu.so", d="Path of the libtpu.so to load; wins over the one torch_xla finds itself"),
    "TPU_MEGACORE": dict(
        d="Megacore mode of v4 chips (torch_xla sets megacore_dense when unset); part of torch_xla's compile cache key"),
    "TPU_PROCESS_BOUNDS": dict(d="Grid of processes on the host, as X,Y,Z"),
    "TPU_SKIP_MDS_QUERY": dict(
        type="bool", parser="nonempty",
        d="Take the TPU topology from variables, not the metadata server; any non-empty value counts, 0 and false included"),
    "TPU_WORKER_HOSTNAMES": dict(tags=["launcher"], type="list", d="Comma-separated hostnames of every host in the TPU slice"),
    "TPU_WORKER_ID": dict(tags=["launcher"], type="int", d="Index of this host in the TPU slice"),
    "WORLD_SIZE": dict(tags=["launcher"], d="Number of processes in the job, as set by the job launcher"),
    "XLA_ALWAYS_ALLREDUCE": dict(d="All-reduce even when the job has one device (read with int())"),
    "XLA_AUTO_SPMD": dict(d="Let XLA's auto-sharding choose the shardings (implies SPMD)"),
    "XLA_AUTO_SPMD_MESH": dict(
        d="Device mesh for auto-sharding as comma-separated sizes (2,2); its product must be the device count"),
    "XLA_AUTO_USE_GROUP_SHARDING": dict(d="Let auto-sharding use group sharding"),
    "XLA_COMPILATION_CACHE_SIZE": dict(d="Compiled programs torch_xla keeps in memory"),
    "XLA_COORDINATOR_PORT": dict(type="int", default="8547",
                                 d="Port of the distributed coordinator a PJRT plugin asks for, on MASTER_ADDR"),
    "XLA_DENSE_GATHER_FACTOR": dict(d="Threshold (times 10, against the input size) between dense and sparse gather"),
    "XLA_DENSE_SCATTER_FACTOR": dict(d="Threshold (times the index count, against the input size) for dense scatter"),
    "XLA_DISABLE_FUNCTIONALIZATION": dict(
        d="Turn off PyTorch's functionalization pass; FSDP reads any non-empty value as on, so use 1 or leave it unset",
        tags=["perf-risk"]),
    "XLA_DOWNCAST_BF16": dict(d="Keep float32 as bfloat16 and float64 as float32 on the device (deprecated; cast the model)",
                              tags=["perf-risk", "deprecated"]),
    "XLA_DOWNCAST_FP16": dict(d="No longer has an effect; torch_xla only warns that it is set",
                              tags=["deprecated"]),
    "XLA_DUMP_FATAL_STACK": dict(d="Install a stack-trace handler when the runtime client starts",
                                 tags=["debug"]),
    "XLA_DUMP_POST_OPTIMIZATIONS": dict(
        d="Save the optimized HLO instead of the input (with XLA_SAVE_TENSORS_FMT=hlo)", tags=["debug"]),
    "XLA_DYNAMO_DEBUG": dict(d="1 prints the torch.compile bridge's decisions (read with int(), compared with 1)",
                             tags=["debug"]),
    "XLA_DYNAMO_INPUT_SHARDING_CHECK_THRESHOLD": dict(
        d="Calls the torch.compile bridge skips between checks of its inputs' shardings"),
    "XLA_EMIT_STEPLOG": dict(d="Print a line to stderr at every torch_xla.sync() (read with int())",
                             tags=["debug"]),
    "XLA_ENABLE_PARAM_ALIASING": dict(
        d="Alias updated parameters with outputs so their buffers are reused", tags=["perf-risk"]),
    "XLA_EXPERIMENTAL": dict(
        d="Colon-separated experiments to turn on (nonzero, masked_select, nms, early_sync)"),
    "XLA_FALLBACK_CPU": dict(
        d="Run ops that have no XLA lowering on the CPU quietly (unset: each such fallback is reported)"),
    "XLA_FNTRACKER_FILE": dict(d="File the function tracker writes to (unset: tracker off)", tags=["debug"]),
    "XLA_FNTRACKER_LEVEL": dict(default="2147483647",
                                d="Function tracker: only functions up to this level are tracked", tags=["debug"]),
    "XLA_FNTRACKER_LIST": dict(d="Function tracker: colon-separated tags to track", tags=["debug"]),
    "XLA_HLO_DEBUG": dict(
        d="Put Python frame metadata into the HLO (changes the HLO, so the compile cache key)",
        tags=["debug"]),
    "XLA_IR_DEBUG": dict(d="Record the Python frame of every IR node (slow tracing)", tags=["debug"]),
    "XLA_IR_SHAPE_CACHE_SIZE": dict(d="Entries of the IR shape cache"),
    "XLA_LAYOUTS": dict(d="Device layouts to force, as SHAPE=LAYOUT;... with comma-separated integers"),
    "XLA_MAX_ASYNC_QUEUE": dict(
        type="int",
        d="Meant as the async step-closure queue size; the value reaches the queue as a string, so any value makes the first async closure raise TypeError",
        tags=["perf-risk"]),
    "XLA_MAX_PADDING_FACTOR": dict(d="Most padding a layout may add before torch_xla picks another layout"),
    "XLA_METRICS_FILE": dict(d="File torch_xla appends its metrics report to at every step", tags=["debug"]),
    "XLA_METRICS_PERCENTILES": dict(d="Colon-separated percentiles the metrics report shows"),
    "XLA_METRICS_SAMPLES": dict(d="Samples each metric keeps"),
    "XLA_NO_SPECIAL_SCALARS": dict(d="Do not turn scalar constants 0 and 1 into special constants",
                                   tags=["perf-risk"]),
    "XLA_OP_PRINT_COMPUTATIONS": dict(d="Print the HLO of every user computation registered through xla_op_registry",
                                      tags=["debug"]),
    "XLA_PARAMETER_WRAPPING_THREADSHOLD": dict(
        d="Above this many parameters a graph takes them as one tuple (name spelled as upstream)"),
    "XLA_PERSISTENT_CACHE_PATH": dict(d="Directory of torch_xla's persistent compilation cache",
                                      tags=["cache"]),
    "XLA_PERSISTENT_CACHE_READ_ONLY": dict(d="Read the persistent compilation cache but never write it"),
    "XLA_REGISTER_INSTALLED_PLUGINS": dict(
        type="bool", parser="one", default="1",
        d="Register the PJRT plugins of installed packages at import; anything but 1 (true included) turns it off"),
    "XLA_RELEASE_GIL_DURING_TRANSFER": dict(d="Release the Python GIL during host-device transfers"),
    "XLA_RESIZE_SPLIT_FACTOR": dict(d="Above this ratio a resize is done one dimension at a time"),
    "XLA_RNG_BIT_GENERATOR": dict(type="enum", values=["default", "philox", "three_fry"], default="default",
                                  d="Random bit generator of the device RNG; another name is an error"),
    "XLA_SAVE_TENSORS_FILE": dict(
        d="File the graph of every sync is appended to (a .N suffix per device ordinal); grows without bound",
        tags=["debug"]),
    "XLA_SAVE_TENSORS_FMT": dict(type="enum", values=["text", "hlo", "dot", "stablehlo"],
                                 d="Format of XLA_SAVE_TENSORS_FILE; another name is an error", tags=["debug"]),
    "XLA_STABLEHLO_COMPILE": dict(d="Hand StableHLO instead of HLO to the PJRT client (experimental)"),
    "XLA_SYNC_WAIT": dict(default="0",
                          d="Make every torch_xla.sync() wait for the device (read with int())",
                          tags=["debug", "perf-risk"]),
    "XLA_TENSOR_UPDATE_SYNC": dict(d="Copy into device tensors synchronously", tags=["perf-risk"]),
    "XLA_THREAD_POOL_SIZE": dict(d="Threads of torch_xla's thread pool (default: the hardware threads)"),
    "XLA_TPU_MAX_INFLIGHT_COMPUTATIONS": dict(d="Executions the TPU client keeps in flight"),
    "XLA_USE_32BIT_LONG": dict(d="Keep int64 tensors as int32 on the device (deprecated)", tags=["deprecated"]),
    "XLA_USE_BF16": dict(
        d="Keep float32 tensors as bfloat16 on the device (deprecated; Pallas kernels see it only as exactly 1)",
        tags=["perf-risk", "deprecated"]),
    "XLA_USE_DUMMY_STORE": dict(d="1, with TORCH_DIST_INIT_BARRIER=0, gives rendezvous a dummy store instead of a TCP store (compared with 1)"),
    "XLA_USE_EAGER_DEBUG_MODE": dict(
        type="bool", parser="one", default="0",
        d="Run every op eagerly, compiling op by op (exactly 1; true is off)", tags=["debug", "perf-risk"]),
    "XLA_USE_FP16": dict(d="No longer has an effect; torch_xla only warns that it is set", tags=["deprecated"]),
    "XLA_USE_IFRT": dict(d="Use the IFRT runtime client instead of the PJRT one (experimental)"),
    "XLA_USE_SPMD": dict(
        d="SPMD mode: one replicated program partitioned by sharding annotations (runtime.use_spmd() is preferred)"),
    "XPU_LIBRARY_PATH": dict(d="Path of the XPU PJRT plugin"),
    "ZERO_COPY_ENABLED": dict(
        d="torch.compile bridge: pass tensors to and from the device by DLPack instead of copying"),
}

# Read, but left out: a name too generic to check in every profile, read only
# when a caller of a helper asks for it.
LEFT_OUT = {
    "DEBUG": "torch_xla.utils.utils.get_print_fn() reads it with int() when called without "
             "a debug argument",
}


def yq(s):
    return '"' + str(s).replace("\\", "\\\\").replace('"', '\\"') + '"'


def decide(name, rs):
    """Type, parser, default of variable name from its reads rs."""
    cpp = [r for r in rs if r["lang"] == "c++"]
    py = [r for r in rs if r["lang"] == "python"]
    typ, parser, default = "string", None, None
    if cpp:
        typ = cpp[0]["type"]
        defaults = [r["default"] for r in cpp if r["default"] is not None]
        default = defaults[0] if defaults else None
    else:
        typed = [r for r in py if r["type"] != "string"] or py
        typ = typed[0]["type"]
        parser = typed[0].get("parser") if typ == "bool" else None
        defaults = [r["default"] for r in typed if r["default"] is not None]
        default = defaults[0] if defaults else None
        if isinstance(default, bool):
            default = "1" if default else "0"
        elif default is not None and not isinstance(default, (str, int, float)):
            default = None
    return typ, parser, default


# Readers in code nothing calls: variable -> the function whose callers
# decide.  In a release where nothing calls that function the read is dead,
# and the release does not count as reading the variable.
# CheckComputationStatus has no caller in any release from 2.5 to 2.9 (2.9's
# linker drops it: its wheel's _XLAC lacks both names, which
# tests/integration/flags_releases.sh noticed).
DEAD_UNLESS_CALLED = {
    "XLA_DUMP_HLO_GRAPH": "CheckComputationStatus",
    "XLA_SAVE_HLO_FILE": "CheckComputationStatus",
}


def called(root, func):
    """Whether anything in torch_xla/csrc calls func (a mention that is not
    its declaration or definition, "TYPE func(")."""
    csrc = os.path.join(root, "torch_xla", "csrc")
    pat = re.compile(r"\b%s\s*\(" % re.escape(func))
    for d, _, files in os.walk(csrc):
        for fn in files:
            if not fn.endswith((".cpp", ".cc", ".h")) or fn.endswith(("_test.cpp", "_test.cc")):
                continue
            src = strip_cpp_comments(open(os.path.join(d, fn), errors="replace").read())
            for m in pat.finditer(src):
                line = src[src.rfind("\n", 0, m.start()) + 1:m.start()]
                if not re.search(r"\b(void|bool|int|auto|absl::Status)\s*$", line):
                    return True
    return False


# Variables upstream renamed or superseded, and where it says so: name ->
# (successor, evidence).  Evidence is "commit SHA" (the pytorch/xla commit's
# message names both) or "source REF:PATH" (a line of that file names
# both); the generator stops when the text does not.
REPLACED = {}


def git(gitdir, *args):
    r = subprocess.run(["git", "--git-dir=" + gitdir] + list(args), capture_output=True)
    if r.returncode != 0:
        raise SystemExit("gen-torch-xla-catalog: git %s failed" % " ".join(args))
    return r.stdout.decode("utf-8", errors="replace")


def check_evidence(a, old, new, ev):
    kind, where = ev.split(None, 1)
    if kind == "commit":
        msg = git(a.torch_xla_git, "log", "-1", "--format=%s%n%b", where)
        if old in msg and new in msg:
            return "pytorch/xla %s: %s" % (where[:12], msg.splitlines()[0])
    elif kind == "source":
        ref, path = where.split(":", 1)
        for line in (flagrel.git_show(a.torch_xla_git, ref, path) or "").splitlines():
            if old in line and new in line:
                return "pytorch/xla %s at %s: %s" % (path, ref, line.strip())
    raise SystemExit("gen-torch-xla-catalog: %s: %s does not name it and %s" % (old, ev, new))


def removal(a, name, last, first_absent):
    """The pytorch/xla commit between two releases that stops reading name."""
    out = git(a.torch_xla_git, "log", "--format=%H%x09%cs%x09%s", "-S", name,
              "%s..%s" % (last, first_absent), "--", "torch_xla").splitlines()
    if not out:
        return None
    sha, date, subject = out[-1].split("\t", 2)
    return "pytorch/xla %s (%s): %s" % (sha[:12], date, subject)


def entry_of(name, rs):
    """The catalog facts of variable name from its reads rs."""
    h = HAND[name]
    typ, parser, default = decide(name, rs)
    typ = h.get("type", typ)
    if "parser" in h:
        parser = h["parser"]
    if typ != "bool":
        parser = None
    if "default" in h:
        default = h["default"]
    if typ == "bool" and parser in ("pyint", "one") and default in ("false", "true"):
        default = "1" if default == "true" else "0"
    if (typ == "enum" and default == "") or parser == "nonempty":
        default = None    # unset is the default; no value spells it
    return dict(type=typ, parser=parser, default=default,
                values=h.get("values") if typ == "enum" else None)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--releases", required=True, help="etc/flags/releases.yaml")
    ap.add_argument("--torch-xla-git", required=True,
                    help="a git directory of pytorch/xla with its tags")
    a = ap.parse_args()
    packages = flagrel.load_releases(a.releases)
    rels = flagrel.known(packages["torch_xla"]["releases"])
    pinned = packages["torch_xla"]["fields"]["pinned"]
    axis = [r["version"] for r in rels]
    per, named = {}, set()
    for r in rels:
        root = flagrel.git_tree(a.torch_xla_git, r["commit"], ["torch_xla"])
        try:
            named |= set(re.findall(r"^\w+\s*=\s*['\"]([A-Z0-9_]+)['\"]", open(os.path.join(
                root, "torch_xla", "core", "xla_env_vars.py")).read(), re.M))
            reads, unresolved = collect(root)
            for name, func in DEAD_UNLESS_CALLED.items():
                if name in reads and not called(root, func):
                    sys.stderr.write("gen-torch-xla-catalog: %s: %s is read only under %s, which "
                                     "nothing calls\n" % (r["version"], name, func))
                    del reads[name]
        finally:
            shutil.rmtree(root)
        for u in unresolved:
            sys.stderr.write("gen-torch-xla-catalog: %s: unresolved read: %s\n" % (r["version"], u))
        per[r["version"]] = {n: rs for n, rs in reads.items()
                             if n not in COMPOSITE and n not in LEFT_OUT}
    names = sorted(set().union(*[set(p) for p in per.values()]))
    missing = [n for n in names if n not in HAND]
    if missing:
        sys.stderr.write("gen-torch-xla-catalog: no description for: %s\n" % " ".join(missing))
        sys.exit(1)
    for n in sorted(n for n in HAND if n not in names):
        sys.stderr.write("gen-torch-xla-catalog: %s is described but no release reads it\n" % n)
    runtime = set(re.findall(r"name: ([A-Z0-9_]+)", open(os.path.join(
        os.path.dirname(a.releases), "runtime.yaml")).read()))
    a.unread = sorted(named - set(names) - runtime - set(LEFT_OUT) - COMPOSITE)
    write(a, per, names, axis, rels, pinned)


def write(a, per, names, axis, rels, pinned):
    pin = [r for r in rels if r["version"] == pinned][0]
    out = sys.stdout
    out.write("# Environment variables torch_xla reads at import and at runtime, in every\n"
              "# torch_xla release of etc/flags/releases.yaml (%s to %s): every\n"
              "# sys_util::GetEnv*() call in torch_xla/csrc and every environment read in\n"
              "# its Python package (tests left out).  Generated by\n"
              "# tools/gen-torch-xla-catalog.py; rerun it rather than editing.  Above each\n"
              "# entry, the places %s reads it (the newest release that reads it,\n"
              "# for a variable %s does not); `releases` are the releases that read\n"
              "# it, `variants` those that read it differently.  Types are the readers':\n"
              "# GetEnvBool is exactly \"true\" or \"false\", else atoi() != 0 (so \"True\" or\n"
              "# \"yes\" read as false); GetEnvInt is atol(), GetEnvDouble atof(); a Python\n"
              "# getenv_as(bool) or int() raises on anything but an integer.  Names,\n"
              "# types, defaults and values are upstream facts; descriptions are this\n"
              "# project's own.\n" % (axis[0], axis[-1], pinned, pinned))
    for name, why in sorted(LEFT_OUT.items()):
        out.write("# Left out: %s (%s).\n" % (name, why))
    if a.unread:
        out.write("# Named in torch_xla/core/xla_env_vars.py but read by no code of these\n"
                  "# releases (setting them changes nothing; tests/torch_xla_wheel_ref.py\n"
                  "# finds the same in each wheel): %s.\n" % ", ".join(a.unread))
    out.write("family: torch_xla\nkind: env\ncomplete: true\nbool_parser: atoi\n"
              "releases: [torch_xla]\n")
    out.write("source:\n  repository: pytorch/xla\n  path: torch_xla/csrc, torch_xla/**/*.py\n"
              "  commit: %s\n  release: torch_xla %s, tag %s\n"
              "  also: torch_xla/csrc/runtime/env_vars.h, torch_xla/core/xla_env_vars.py (names);"
              " the same files at the tag of every torch_xla release (%s-%s)\n"
              % (pin["commit"], pinned, pin["tag"], axis[0], axis[-1]))
    out.write("flags:\n")
    for name in names:
        have = [v for v in axis if name in per[v]]
        src = pinned if name in per[pinned] else have[-1]
        rs = per[src][name]
        h = HAND[name]
        e = entry_of(name, rs)
        sig = lambda x: (x["type"], x["parser"], tuple(x["values"] or ()))
        groups = {}
        for v in have:
            ev = entry_of(name, per[v][name])
            if sig(ev) != sig(e):
                groups.setdefault(sig(ev), set()).add(v)
        where_groups = {}
        for r in rs:
            f, ln = r["where"].replace("torch_xla/", "", 1).rsplit(":", 1)
            lines = where_groups.setdefault((f, r["reader"]), [])
            if ln not in lines:
                lines.append(ln)
        where = ["%s:%s (%s)" % (f, ",".join(lines), rd) for (f, rd), lines in where_groups.items()]
        line = "  # read:"
        for w in where:
            if len(line) + len(w) + 2 > 96:
                out.write(line.rstrip(",") + "\n")
                line = "  #  "
            line += " " + w + ","
        out.write(line.rstrip(",") + "\n")
        out.write("  - name: %s\n    type: %s\n" % (name, e["type"]))
        if e["type"] == "enum":
            out.write("    values: [%s]\n" % ", ".join(e["values"]))
        if e["parser"]:
            out.write("    parser: %s\n" % e["parser"])
        if e["default"] is not None:
            out.write("    default: %s\n" % yq(e["default"]))
        if h.get("tags"):
            out.write("    tags: [%s]\n" % ", ".join(h["tags"]))
        out.write("    releases: {torch_xla: %s}\n" % yq(flagrel.ranges(axis, set(have))))
        if groups:
            out.write("    variants:\n")
        for sg, vs in sorted(groups.items(), key=lambda kv: str(kv[0])):
            out.write("      - {releases: {torch_xla: %s}, type: %s%s}\n" % (
                yq(flagrel.ranges(axis, vs)), sg[0],
                ", values: [%s]" % ", ".join(sg[2]) if sg[2] else ""))
        if have[-1] != axis[-1]:
            nxt = rels[axis.index(have[-1]) + 1]
            last = rels[axis.index(have[-1])]
            gone = removal(a, name, last["commit"], nxt["commit"])
            out.write("    removed: %s\n" % yq(gone or "no longer read from torch_xla %s on"
                                                 % nxt["version"]))
        if name in REPLACED:
            new, ev = REPLACED[name]
            out.write("    replaced_by: %s\n    evidence: %s\n" % (
                yq(new), yq(check_evidence(a, name, new, ev))))
        out.write("    description: %s\n" % yq(h["d"]))
    sys.stderr.write("gen-torch-xla-catalog: %d variables in %d releases\n" % (len(names), len(rels)))


if __name__ == "__main__":
    main()
