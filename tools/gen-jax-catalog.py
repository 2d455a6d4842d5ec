#!/usr/bin/env python3
"""Writes etc/flags/jax.yaml from a jax-ml/jax checkout.

    tools/gen-jax-catalog.py --root JAX_CHECKOUT --tag jax-v0.10.2 --commit SHA \
        > etc/flags/jax.yaml

The checkout is read in place (jax/, jaxlib/ and jax_plugins/; tests and the
test helpers left out) and nothing of it is kept here.  With the ast module
it finds:

- every configuration option defined with one of jax/_src/config.py's
  helpers, wherever it is defined.  A *_state() option is read at import from
  the environment variable of its name in upper case; a *_flag() option only
  when its default is taken from bool_env/int_env/os.getenv, and then under
  that variable's name.  The helper gives the type and the parsing:
  bool_state is bool_env (y/yes/t/true/on/1 and n/no/f/false/off/0 in any
  case, anything else raises), enum_state takes exactly one of its values,
  enum_class_state the values of its enum class (and whatever that class's
  _missing_ accepts), int_state int(), float_state float();
- the other variables JAX and its plugins read with os.environ / os.getenv
  whose names start with JAX_, XLA_ or PJRT_ (jaxlib's GPU client settings,
  the distributed-runtime variables), typed by hand in DIRECT from the code
  that reads them; each of those names must still be read, and every such
  read must be in DIRECT, or the generator stops.

Descriptions are this project's own words (HAND), one per option: an option
the checkout defines and HAND lacks stops the generator.  Standard library
only.
"""
import argparse
import ast
import json
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import flagrel  # noqa: E402

HELPERS = {
    "bool_state": "bool", "bool_flag": "bool",
    "enum_state": "enum", "optional_enum_state": "enum", "enum_class_state": "enum",
    "enum_flag": "enum",
    "int_state": "int", "int_flag": "int",
    "float_state": "float", "float_flag": "float",
    "string_state": "string", "optional_string_state": "string",
    "string_or_object_state": "string", "string_flag": "string",
}
# The names of the same helpers in jax 0.4.30 and before.
ALIASES = {
    "define_bool_state": "bool_state", "define_enum_state": "enum_state",
    "define_optional_enum_state": "optional_enum_state", "define_int_state": "int_state",
    "define_float_state": "float_state", "define_string_state": "string_state",
    "define_optional_string_state": "optional_string_state",
    "define_string_or_object_state": "string_or_object_state",
    "DEFINE_bool": "bool_flag", "DEFINE_integer": "int_flag", "DEFINE_float": "float_flag",
    "DEFINE_string": "string_flag", "DEFINE_enum": "enum_flag",
}
ENV_DEFAULT_READERS = {"bool_env": "bool", "int_env": "int", "os.getenv": "string",
                       "os.environ.get": "string"}
SKIP_FILES = re.compile(r"(^|/)(tests?|internal_test_util)/|_test\.py$|(^|/)test_[^/]*\.py$|"
                        r"(^|/)(test_util|test_loader|hypothesis_test_util|test_multiprocess|"
                        r"version|setup|plugin_setup|build_utils)\.py$|^jaxlib/tools/")
COMPOSITE = {"XLA_FLAGS", "LIBTPU_INIT_ARGS"}


def dotted(node):
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted(node.value)
        return base + "." + node.attr if base else None
    return None


def const(node):
    try:
        return ast.literal_eval(node)
    except Exception:
        return None


def py_files(root):
    for top in ("jax", "jaxlib", "jax_plugins"):
        for d, dirs, files in os.walk(os.path.join(root, top)):
            dirs.sort()
            for fn in sorted(files):
                path = os.path.join(d, fn)
                rel = os.path.relpath(path, root)
                if fn.endswith(".py") and not SKIP_FILES.search(rel):
                    yield path, rel


def enum_classes(trees):
    """Enum classes of the scanned modules: name -> (values, case-insensitive)."""
    out = {}
    for tree in trees:
        for node in ast.walk(tree):
            if not isinstance(node, ast.ClassDef):
                continue
            bases = [dotted(b) or "" for b in node.bases]
            if not any(b.endswith(("Enum", "StrEnum", "IntEnum")) for b in bases):
                continue
            values, icase = [], False
            strenum = any(b.endswith("StrEnum") for b in bases)
            for st in node.body:
                if strenum and isinstance(st, ast.Assign) and isinstance(st.value, ast.Constant) \
                        and isinstance(st.value.value, str):
                    values.append(st.value.value)
                if isinstance(st, ast.FunctionDef) and st.name == "_missing_":
                    for sub in ast.walk(st):
                        if isinstance(sub, ast.Compare):
                            for c in [sub.left] + sub.comparators:
                                v = const(c)
                                if isinstance(v, str) and v not in values:
                                    values.append(v)
                        if isinstance(sub, ast.Call) and dotted(sub.func) and \
                                dotted(sub.func).endswith(".upper"):
                            icase = True
            out[node.name] = (values, icase)
    return out


def value_of(node):
    """A literal, or integer arithmetic on literals (2 * 10 ** 9), or None."""
    v = const(node)
    if v is not None or node is None:
        return v
    if isinstance(node, ast.BinOp):
        l, r = value_of(node.left), value_of(node.right)
        if isinstance(l, (int, float)) and isinstance(r, (int, float)):
            ops = {ast.Add: lambda x, y: x + y, ast.Sub: lambda x, y: x - y,
                   ast.Mult: lambda x, y: x * y, ast.Pow: lambda x, y: x ** y,
                   ast.FloorDiv: lambda x, y: x // y}
            if type(node.op) in ops:
                return ops[type(node.op)](l, r)
    return None


def module_constants(tree):
    out = {}
    for st in tree.body:
        if isinstance(st, ast.Assign):
            v = const(st.value)
            for t in st.targets:
                if isinstance(t, ast.Name) and v is not None:
                    out[t.id] = v
    return out


def collect(root):
    """Options (env name -> fact dict) and direct reads (env name -> [where])."""
    parsed = []
    for path, rel in py_files(root):
        tree = ast.parse(open(path, encoding="utf-8").read())
        for node in ast.walk(tree):
            for ch in ast.iter_child_nodes(node):
                ch.parent = node
        parsed.append((rel, tree))
    classes = enum_classes(t for _, t in parsed)
    options, direct, problems = {}, {}, []
    for rel, tree in parsed:
        consts = module_constants(tree)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            f = dotted(node.func) or ""
            helper = f.split(".")[-1]
            helper = ALIASES.get(helper, helper)
            fn = node
            while fn is not None and not isinstance(fn, ast.FunctionDef):
                fn = getattr(fn, "parent", None)
            if helper in HELPERS and not (fn is not None and (fn.name in HELPERS or
                                                               fn.name in ALIASES)):
                opt = option_of(node, helper, rel, consts, classes, problems)
                if opt and opt["env"] not in options:
                    options[opt["env"]] = opt
            elif f in ("os.environ.get", "os.getenv") and node.args:
                name = const(node.args[0])
                if isinstance(name, str):
                    direct.setdefault(name, []).append("%s:%d" % (rel, node.lineno))
        for node in ast.walk(tree):
            name = None
            if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and \
                    dotted(node.value) == "os.environ":
                name = const(node.slice)
            elif isinstance(node, ast.Compare) and len(node.ops) == 1 and \
                    isinstance(node.ops[0], (ast.In, ast.NotIn)) and \
                    dotted(node.comparators[0]) == "os.environ":
                name = const(node.left)
            if isinstance(name, str):
                direct.setdefault(name, []).append("%s:%d" % (rel, node.lineno))
    return options, direct, problems


def option_of(node, helper, rel, consts, classes, problems):
    kw = {k.arg: k.value for k in node.keywords}
    args = list(node.args)
    name = const(kw["name"]) if "name" in kw else (const(args[0]) if args else None)
    if not isinstance(name, str):
        problems.append("%s:%d: %s without a literal name" % (rel, node.lineno, helper))
        return None
    typ = HELPERS[helper]
    # positional layout: (name, default, help) or (name, values, default, help)
    if helper in ("enum_state", "optional_enum_state", "enum_class_state"):
        vnode = kw.get("enum_values", kw.get("enum_class", args[1] if len(args) > 1 else None))
        dnode = kw.get("default", args[2] if len(args) > 2 else None)
    else:
        vnode = kw.get("enum_values") if helper == "enum_flag" else None
        dnode = kw.get("default", args[1] if len(args) > 1 else None)
    env, parser, default, lower, inner_env = None, None, None, False, None
    if helper.endswith("_state"):
        env = name.upper()
        parser = "python" if typ == "bool" else None
        default = value_of(dnode)
        if isinstance(dnode, ast.Call) and \
                (dotted(dnode.func) or "").replace("config.", "") in ENV_DEFAULT_READERS:
            # the default itself comes from a variable (maybe another name)
            inner_env = const(dnode.args[0]) if dnode.args else None
            default = value_of(dnode.args[1]) if len(dnode.args) > 1 else None
    else:
        d = dnode
        if isinstance(d, ast.Call) and isinstance(d.func, ast.Attribute) and \
                d.func.attr == "lower" and isinstance(d.func.value, ast.Call):
            d, lower = d.func.value, True
        if isinstance(d, ast.Call):
            reader = (dotted(d.func) or "").replace("config.", "")
            if reader in ENV_DEFAULT_READERS and d.args:
                env = const(d.args[0])
                default = value_of(d.args[1]) if len(d.args) > 1 else None
                parser = {"bool_env": "python"}.get(reader)
        if env is None:
            return None       # an absl flag only, not read from the environment
    values, icase = None, False
    if typ == "enum":
        if helper == "enum_class_state":
            cls = dotted(vnode)
            values, icase = classes.get(cls, (None, False))
            if isinstance(dnode, ast.Attribute):
                member = dnode.attr
                default = None
                for v in values or []:
                    if v.upper() == member:
                        default = v
        else:
            values = const(vnode) if vnode is not None else None
            if values is None and isinstance(vnode, ast.Name):
                values = consts.get(vnode.id)
        if not values:
            problems.append("%s:%d: %s: enum values not found" % (rel, node.lineno, name))
            typ = "string"
        else:
            values = list(values)
    if isinstance(default, bool):
        default = "true" if default else "false"
    elif isinstance(default, (int, float)):
        default = repr(default)
    elif default is not None and not isinstance(default, str):
        default = None
    return dict(env=env, option=name, helper=helper, type=typ, parser=parser,
                default=default, values=values, icase=icase, lower=lower,
                inner_env=inner_env, where="%s:%d" % (rel, node.lineno))


# ---- this project's words ---------------------------------------------------------------

# One line per option, and the tags xlaunch's policies use.
HAND = {
    "CHECK_VMA": ("shard_map internals: check varying-manual-axes types (not for users)", []),
    "EAGER_CONSTANT_FOLDING": ("Fold constants while staging out a trace", []),
    "JAX2TF_ASSOCIATIVE_SCAN_REDUCTIONS": ("jax2tf: lower cumulative reductions with an associative scan instead of ReduceWindow", []),
    "JAX2TF_DEFAULT_NATIVE_SERIALIZATION": ("jax2tf: default of convert()'s native_serialization", []),
    "JAX_ALLOW_F16_REDUCTIONS": ("Allow reduce_sum on float16 and bfloat16 (off: an error)", []),
    "JAX_ARRAY_GARBAGE_COLLECTION_GUARD": ("What happens when the garbage collector, not reference counting, frees a jax.Array", []),
    "JAX_AUTO_PCAST": ("Insert pvary automatically so simple ops see matching varying axes", []),
    "JAX_BACKEND_TARGET": ("local, or rpc:ADDRESS of a remote service (lower-cased when read)", []),
    "JAX_BCOO_CUSPARSE_LOWERING": ("Lower BCOO sparse ops to cuSPARSE", []),
    "JAX_CAPTURED_CONSTANTS_REPORT_FRAMES": ("Stack frames shown per captured constant in the large-constants report (-1 all, 0 none)", ["debug"]),
    "JAX_CAPTURED_CONSTANTS_WARN_BYTES": ("Bytes of captured constants before JAX warns (-1: never)", []),
    "JAX_CHECK_PROXY_ENVS": ("Warn about proxy variables that can break the distributed client's connections", []),
    "JAX_CHECK_STATIC_INDICES": ("Bounds-check static indices of promise-in-bounds indexing", ["debug"]),
    "JAX_CHECK_TRACER_LEAKS": ("Check for leaked tracers after every trace (turns some caching off)", ["debug", "perf-risk"]),
    "JAX_COMPILATION_CACHE_CHECK_CONTENTS": ("Recompile once per key and compare with what the persistent cache holds", ["debug", "perf-risk"]),
    "JAX_COMPILATION_CACHE_DIR": ("Directory of the persistent compilation cache", ["cache"]),
    "JAX_COMPILATION_CACHE_EXPECT_PGLE": ("Prefer cache entries compiled with profile data, even with PGLE off", []),
    "JAX_COMPILATION_CACHE_INCLUDE_METADATA_IN_KEY": ("Put source file names and lines into the cache key (moving code then misses)", []),
    "JAX_COMPILATION_CACHE_MAX_SIZE": ("Most bytes the persistent cache may hold, oldest evicted first (-1 no limit, 0 off)", []),
    "JAX_COMPILER_DETAILED_LOGGING_MIN_OPS": ("Smallest module, in MLIR ops, that gets XLA's detailed compile logging", []),
    "JAX_COMPILER_ENABLE_REMAT_PASS": ("Let XLA's rematerialization pass trade compute for memory", []),
    "JAX_CPU_COLLECTIVES_IMPLEMENTATION": ("Cross-process collectives of the CPU backend", []),
    "JAX_CPU_ENABLE_ASYNC_DISPATCH": ("Dispatch non-parallel CPU computations asynchronously (off: run inline)", []),
    "JAX_CPU_GET_GLOBAL_TOPOLOGY_TIMEOUT_MINUTES": ("Minutes to wait for the global CPU topology (more than the local one)", []),
    "JAX_CPU_GET_LOCAL_TOPOLOGY_TIMEOUT_MINUTES": ("Minutes to wait for each CPU device's local topology", []),
    "JAX_CUSTOM_VJP3": ("Use the new custom_vjp implementation", []),
    "JAX_DEBUG_INFS": ("Check every result for infinities and rerun op by op to find the first (slow)", ["debug", "perf-risk"]),
    "JAX_DEBUG_KEY_REUSE": ("Track typed PRNG keys and raise on reuse (per-call overhead)", ["debug"]),
    "JAX_DEBUG_LEAKED_CLIENTS_ON_CLEAR_BACKENDS": ("Check that clear_backends really releases the clients", ["debug"]),
    "JAX_DEBUG_LOG_MODULES": ("Comma-separated modules to log at debug level (jax, jax._src.dispatch, ...)", ["debug"]),
    "JAX_DEBUG_NANS": ("Check every result for NaNs and rerun op by op to find the first (slow)", ["debug", "perf-risk"]),
    "JAX_DEFAULT_DEVICE": ("Default device for computations: a platform name such as cpu", []),
    "JAX_DEFAULT_MATMUL_PRECISION": ("Default precision of 32-bit matmuls and convolutions, or a dot algorithm preset", ["perf-risk"]),
    "JAX_DEFAULT_PRNG_IMPL": ("PRNG implementation used when none is given at seeding", []),
    "JAX_DISABLE_BWD_CHECKS": ("Skip the checks of backward passes", []),
    "JAX_DISABLE_JIT": ("Run everything eagerly, op by op, without compiling", ["debug", "perf-risk"]),
    "JAX_DISABLE_MOST_OPTIMIZATIONS": ("Ask XLA to optimize as little as it can (fast compiles, slow programs)", ["perf-risk"]),
    "JAX_DISABLE_VMAP_SHMAP_ERROR": ("Turn off the error check of vmap over shard_map (a workaround)", []),
    "JAX_DISALLOW_MESH_CONTEXT_MANAGER": ("Make `with mesh:` a RuntimeError", []),
    "JAX_DISTRIBUTED_DEBUG": ("Log multi-process details at warning level", ["debug"]),
    "JAX_DUMP_IR_MODES": ("Comma-separated IR kinds to dump: stablehlo, jaxpr, jaxpr_html, eqn_count_pprof", ["debug"]),
    "JAX_DUMP_IR_TO": ("Directory the IR JAX emits is written to (sponge: the test outputs directory)", ["debug"]),
    "JAX_EMBEDDED_CONSTANTS_MAX_BYTES": ("Largest constant embedded in the HLO; bigger ones become arguments", []),
    "JAX_ENABLE_CHECKS": ("Check JAX's internal invariants (slower)", ["debug", "perf-risk"]),
    "JAX_ENABLE_COMPILATION_CACHE": ("Master switch for the persistent compilation cache", []),
    "JAX_ENABLE_CUSTOM_PRNG": ("Allow user-defined PRNG implementations", []),
    "JAX_ENABLE_PGLE": ("Profile-guided latency estimation: recompile after JAX_PGLE_PROFILING_RUNS profiled runs", []),
    "JAX_ENABLE_PREEMPTION_SERVICE": ("Start the preemption sync service with the distributed client", []),
    "JAX_ENABLE_RECOVERABILITY": ("Let a multi-controller job keep running after some tasks fail", []),
    "JAX_ENABLE_X64": ("Allow 64-bit types (otherwise they are narrowed to 32 bits)", ["perf-risk"]),
    "JAX_ERROR_CHECKING_BEHAVIOR_DIVIDE": ("What a checked division by zero does", []),
    "JAX_ERROR_CHECKING_BEHAVIOR_NAN": ("What a checked NaN does", []),
    "JAX_ERROR_CHECKING_BEHAVIOR_OOB": ("What a checked out-of-bounds access does", []),
    "JAX_EXEC_TIME_OPTIMIZATION_EFFORT": ("Compiler effort on run time, from -1.0 to 1.0", []),
    "JAX_EXPERIMENTAL_UNSAFE_XLA_RUNTIME_ERRORS": ("Turn checkify checks into asynchronous XLA runtime errors on CPU and GPU", []),
    "JAX_EXPLAIN_CACHE_MISSES": ("Explain why a trace or compile cache lookup missed", ["debug"]),
    "JAX_EXPLICIT_X64_DTYPES": ("What an explicit 64-bit dtype does while x64 is off", []),
    "JAX_EXPORT_CALLING_CONVENTION_VERSION": ("Calling convention version of jax.export (within what the consumer supports)", []),
    "JAX_EXPORT_IGNORE_FORWARD_COMPATIBILITY": ("jax.export: ignore the forward-compatibility lowering rules", []),
    "JAX_EXPORT_IGNORE_FORWARD_COMPATIBILIY": ("Misspelled name JAX reads too, as the default of JAX_EXPORT_IGNORE_FORWARD_COMPATIBILITY", []),
    "JAX_FORCE_DCN_CROSS_HOST_TRANSFERS": ("Move cross-host transfers over the DCN socket library even when the plugin can do them", []),
    "JAX_HIGH_DYNAMIC_RANGE_GUMBEL": ("Draw Gumbel noise from two samples for rare events", []),
    "JAX_HLO_SOURCE_FILE_CANONICALIZATION_REGEX": ("Regular expression removed from source paths in HLO metadata", []),
    "JAX_INCLUDE_DEBUG_INFO_IN_DUMPS": ("Keep locations and debug information in IR dumps", ["debug"]),
    "JAX_INCLUDE_FULL_TRACEBACKS_IN_LOCATIONS": ("Put Python tracebacks into the MLIR locations of emitted IR", []),
    "JAX_LEGACY_PRNG_KEY": ("What passing a raw uint32 PRNG key to jax.random does", []),
    "JAX_LOGGING_LEVEL": ("Level of every JAX logger, the C++ ones included", ["debug"]),
    "JAX_LOG_CHECKPOINT_RESIDUALS": ("Log the residuals jax.checkpoint saves", ["debug"]),
    "JAX_LOG_COMPILES": ("Log every jit/pmap compilation (warning level)", ["debug"]),
    "JAX_MEMORY_FITTING_EFFORT": ("Compiler effort on memory use, from -1.0 to 1.0", []),
    "JAX_MEMORY_FITTING_LEVEL": ("How hard the compiler tries to make the program fit in memory", []),
    "JAX_MOCK_GPU_TOPOLOGY": ("Pretend multi-host GPU topology SLICESxHOSTSxDEVICES (testing)", []),
    "JAX_MOSAIC_ALLOW_HLO": ("Allow HLO dialects inside Mosaic kernels", []),
    "JAX_MUTABLE_ARRAY_CHECKS": ("Check that mutable arrays are not aliased", []),
    "JAX_NO_EXECUTION": ("Refuse to execute anything", []),
    "JAX_NO_TRACING": ("Refuse to trace for jit (catches unexpected retracing)", ["debug"]),
    "JAX_NUMPY_DTYPE_PROMOTION": ("Implicit dtype promotion rules of jax.numpy", []),
    "JAX_NUMPY_RANK_PROMOTION": ("What implicit rank-promotion broadcasting does", ["perf-risk"]),
    "JAX_NUM_CPU_DEVICES": ("Number of CPU devices (-1: from --xla_force_host_platform_device_count)", []),
    "JAX_OPTIMIZATION_LEVEL": ("How hard the compiler optimizes run time", []),
    "JAX_PALLAS_ENABLE_DEBUG_CHECKS": ("Evaluate pl.debug_check calls at run time", ["debug"]),
    "JAX_PALLAS_POISON_BUFFERS": ("Fill Pallas scratch buffers with poison values (NaN) when allocated", ["debug"]),
    "JAX_PALLAS_USE_MOSAIC_GPU": ("Lower Pallas GPU kernels to Mosaic GPU instead of Triton", []),
    "JAX_PALLAS_VERBOSE_ERRORS": ("Verbose error messages for Pallas kernels", ["debug"]),
    "JAX_PERSISTENT_CACHE_ENABLE_XLA_CACHES": ("XLA caches turned on with the persistent cache (all, none, or a cache's flag name)", []),
    "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": ("Only cache programs that took at least this long to compile", ["perf-risk"]),
    "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": ("Only cache programs at least this large (-1 no limit, 0 the file system's choice)", []),
    "JAX_PGLE_AGGREGATION_PERCENTILE": ("Percentile that merges the devices' profiles under PGLE", []),
    "JAX_PGLE_PROFILING_RUNS": ("Runs profiled before PGLE recompiles", []),
    "JAX_PJRT_CLIENT_CREATE_OPTIONS": ("Extra options for the PJRT client, as k1:v1;k2:v2", []),
    "JAX_PLATFORMS": ("Comma-separated platforms to initialize, in order of preference; any failure is fatal", []),
    "JAX_PLATFORM_NAME": ("Older way to pick the platform (lower-cased when read); JAX_PLATFORMS replaces it", ["deprecated"]),
    "JAX_PPRINT_USE_COLOR": ("Color jaxpr pretty-printing", []),
    "JAX_RAGGED_DOT_USE_GPU_PALLAS_TRITON_LOWERING": ("GPU: lower ragged_dot with Pallas on Triton", []),
    "JAX_RAGGED_DOT_USE_RAGGED_DOT_INSTRUCTION": ("TPU: lower ragged_dot to the chlo.ragged_dot instruction", []),
    "JAX_RAISE_PERSISTENT_CACHE_ERRORS": ("Raise persistent-cache read and write errors instead of warning", ["debug"]),
    "JAX_RANDOM_SEED_OFFSET": ("Offset added to every random seed", []),
    "JAX_REFS_TO_PINS": ("Lower refs to pinned buffers in the HLO", []),
    "JAX_REMAT3": ("Use the new remat implementation", []),
    "JAX_REMOVE_CUSTOM_PARTITIONING_PTR_FROM_CACHE_KEY": ("Hash the program without custom-partitioning pointers (unsafe)", []),
    "JAX_REMOVE_SIZE_ONE_MESH_AXIS_FROM_TYPE": ("Drop mesh axes of size 1 from array shardings", []),
    "JAX_SCAN3": ("Use the new scan implementation", []),
    "JAX_SEND_TRACEBACK_TO_RUNTIME": ("Python traceback sent with each dispatch: off, on (last user frame) or full (costly)", []),
    "JAX_SERIALIZATION_VERSION": ("Older name of JAX_EXPORT_CALLING_CONVENTION_VERSION (0: unset)", ["deprecated"]),
    "JAX_SHARE_BINARY_BETWEEN_HOSTS": ("Compile once and send the binary to the other hosts", []),
    "JAX_SHARE_BINARY_BETWEEN_HOSTS_TIMEOUT_MS": ("Timeout of that binary sharing, in milliseconds", []),
    "JAX_SOFTMAX_CUSTOM_JVP": ("Use the newer custom_jvp rule of jax.nn.softmax", []),
    "JAX_SORT_DEVICES_BY_PROCESS_INDEX": ("Order devices by process index, then id (off: the PJRT client's order)", []),
    "JAX_SOURCE_URL_SCHEMA": ("URL template with {file} and {line} for links in HTML jaxpr dumps", []),
    "JAX_THREAD_GUARD": ("Raise when a multi-process operation runs on another thread than the guard's", ["debug"]),
    "JAX_THREEFRY_GPU_KERNEL_LOWERING": ("GPU: lower threefry to a kernel (faster compiles, more memory)", []),
    "JAX_THREEFRY_PARTITIONABLE": ("Partitionable threefry: no extra communication for sharded random numbers", []),
    "JAX_TRACEBACK_FILTERING": ("How JAX hides its internal frames in tracebacks", ["debug"]),
    "JAX_TRACEBACK_IN_LOCATIONS_LIMIT": ("Most Python frames per MLIR location (negative: no limit)", []),
    "JAX_TRACER_ERROR_NUM_TRACEBACK_FRAMES": ("Stack frames shown in tracer errors", []),
    "JAX_TRANSFER_GUARD": ("Transfer guard for every direction (set only)", ["debug"]),
    "JAX_TRANSFER_GUARD_DEVICE_TO_DEVICE": ("Transfer guard for device-to-device copies", ["debug"]),
    "JAX_TRANSFER_GUARD_DEVICE_TO_HOST": ("Transfer guard for device-to-host copies", ["debug"]),
    "JAX_TRANSFER_GUARD_HOST_TO_DEVICE": ("Transfer guard for host-to-device copies", ["debug"]),
    "JAX_USE_DIRECT_LINEARIZE": ("Linearize directly instead of JVP followed by partial evaluation", []),
    "JAX_USE_EMIT_PIPELINE_PRIMITIVE": ("Use the emit_pipeline primitive in Pallas", []),
    "JAX_USE_MAGMA": ("MAGMA for lax.linalg.eig on GPU", []),
    "JAX_USE_SHARDY_PARTITIONER": ("Lower shardings to Shardy (off: GSPMD)", []),
    "JAX_USE_SIMPLIFIED_JAXPR_CONSTANTS": ("Transitional: simplified closed-over constants in jaxprs", []),
    "JAX_XLA_PROFILE_VERSION": ("Profile version for XLA's remote compilation profiles", []),
    # options of releases other than the pinned one
    "ALLOW_RAGGED_DOT_TPU_EXPLICIT_TRANSPOSE": ("TPU: transpose ragged_dot in Python (the explicit transpose)", []),
    "CHECK_REP": ("shard_map internals: check replication (not for users)", []),
    "EXPERIMENTAL_XMAP_ENSURE_FIXED_SHARDING": ("xmap SPMD lowering: emit extra sharding annotations for intermediates", []),
    "EXPERIMENTAL_XMAP_SPMD_LOWERING": ("Compile multi-device xmap through XLA's SPMD partitioner (not on CPU)", []),
    "EXPERIMENTAL_XMAP_SPMD_LOWERING_MANUAL": ("Compile multi-device xmap with the SPMD partitioner's manual partitioning", []),
    "JAX_CUSTOM_VJP_DISABLE_SHAPE_CHECK": ("Turn off custom_vjp's check of the backward pass's shapes", []),
    "JAX_DATA_DEPENDENT_TRACING_FALLBACK": ("Fall back to dispatch by data dependence instead of an escaped-tracer error", []),
    "JAX_DEFAULT_DTYPE_BITS": ("Default bit width of dtypes (no effect from jax 0.9.0 on; deprecated)", ["deprecated"]),
    "JAX_DYNAMIC_SHAPES": ("Stage out computations with dynamic shapes (experimental)", []),
    "JAX_EAGER_PMAP": ("Run pmap eagerly while jit is disabled", []),
    "JAX_ENABLE_CUSTOM_VJP_BY_CUSTOM_TRANSPOSE": ("Implement custom_vjp by custom_jvp and custom_transpose (internal upgrade)", []),
    "JAX_ENABLE_EMPTY_ARRAYS": ("Allow an Array made from an empty list of single-device arrays (pipeline parallelism, work in progress)", []),
    "JAX_ENABLE_MEMORIES": ("Let shardings carry memory kinds and executables report them", []),
    "JAX_EXPERIMENTAL_COLOCATED_PYTHON_OBJECT_USE_WEAKREFS_AT_BACKEND": ("Colocated Python: free objects at the backend by reference counting (unstable)", []),
    "JAX_HOST_CALLBACK_INLINE": ("host_callback: inline the callback outside a staged context", []),
    "JAX_HOST_CALLBACK_LEGACY": ("host_callback: use the old implementation instead of io_callback", []),
    "JAX_HOST_CALLBACK_MAX_QUEUE_BYTE_SIZE": ("host_callback: bytes of outfeed buffered per device before the device pauses", []),
    "JAX_HOST_CALLBACK_OUTFEED": ("host_callback: use outfeed on CPU and GPU too instead of a custom call", []),
    "JAX_PALLAS_AUTO_ASSIGN_COLLECTIVE_IDS": ("Pallas: assign or override the collective ids of pallas_call from the kernel's hash", []),
    "JAX_PALLAS_DUMP_PROMELA_TO": ("Pallas: directory a Promela model of each kernel is written to (to check for races and deadlocks)", ["debug"]),
    "JAX_PALLAS_ENABLE_RUNTIME_ASSERT": ("Pallas: check checkify.check assertions in the kernel at run time", ["debug"]),
    "JAX_PMAP_NO_RANK_REDUCTION": ("pmap shards keep the rank of the array they come from (false is deprecated)", []),
    "JAX_PMAP_SHMAP_MERGE": ("Implement pmap on top of shard_map", []),
    "JAX_REMAT_OPT_BARRIER": ("Lower remat with optimization barriers", []),
    "JAX_SAFER_RANDINT": ("Use the safer randint algorithm for 8- and 16-bit dtypes", []),
    "JAX_SHARDING_IN_TYPES": ("Carry shardings in abstract values and propagate them forward", []),
    "JAX_SHARE_AUTOTUNE_CONFIG_BETWEEN_HOSTS": ("The coordinator shares autotuning results so every host compiles the same module", []),
    "JAX_SPMD_MODE": ("Whether math on arrays spanning several processes is allowed outside jit", []),
    "JAX_USE_CPP_SHARD_ARGS": ("Shard arguments in C++", []),
    "JAX_USE_RGV3": ("Lower shard_map with StableHLO mesh-axes replica groups (RGV3)", []),
    "JAX_VARYING_AXES_IN_TYPES": ("Track in abstract values the mesh axes an array varies over (shard_map)", []),
    "JAX_VJP3": ("Use the new backward-pass code of jax.vjp", []),
    "JAX_VMAP_PRIMITIVE": ("Make vmap a primitive (experimental)", []),
    "MOSAIC_USE_PYTHON_PIPELINE": ("Mosaic TPU: run the first MLIR passes from Python when a kernel is built", []),
}


# Read directly (not a config option): type, parser, enum values, default,
# description, tags.  The values of XLA_PYTHON_CLIENT_ALLOCATOR come from the
# source (None here).
DIRECT = {
    "JAX_COORDINATOR_ADDRESS": ("string", None, None, None,
                                "host:port of the coordinator jax.distributed.initialize() connects to", ["launcher"]),
    "JAX_COORDINATOR_BIND_ADDRESS": ("string", None, None, None,
                                     "Address the coordinator service binds to (default [::] on the coordinator's port)", ["launcher"]),
    "JAX_ENABLE_CHLO_SCAN": ("bool", "one", None, None,
                             "Lower scans to the CHLO scan op (only exactly 1 turns it on)", []),
    "JAX_COORDINATOR_PORT": ("int", None, None, None,
                             "Coordinator port when the cluster is detected automatically", ["launcher"]),
    "JAX_FORCE_TPU_INIT": ("bool", "nonempty", None, None,
                           "Initialize the TPU backend even where JAX sees no TPU; any value counts, 0 included", []),
    "JAX_LOCAL_DEVICE_IDS": ("list", None, None, None,
                             "Comma-separated local device ids this process uses", []),
    "JAX_PARTITION_INDEX": ("int", None, None, None,
                            "Index of this process's partition (slice) in a multi-slice job", []),
    "JAX_SKIP_CUDA_CONSTRAINTS_CHECK": ("bool", "nonempty", None, None,
                                        "jax-cuda plugin: skip the CUDA library version checks; any non-empty value counts", []),
    "JAX_SLICE_INDEX": ("int", None, None, None,
                        "Older name of JAX_PARTITION_INDEX", ["deprecated"]),
    "PJRT_NAMES_AND_LIBRARY_PATHS": ("list", None, None, None,
                                     "PJRT plugins to register, as NAME:PATH,... (PATH a library or a .json configuration)", []),
    "XLA_CLIENT_MEM_FRACTION": ("float", None, None, "0.75",
                                "Fraction of GPU memory to preallocate", []),
    "XLA_PYTHON_CLIENT_ABORT_COLLECTIVES_ON_FAILURE": ("bool", "pyint", None, "0",
                                                       "Abort pending collectives when a peer fails (read with int())", []),
    "XLA_PYTHON_CLIENT_ALLOCATOR": ("enum", None, None, "default",
                                    "GPU memory allocator (lower-cased when read); platform allocates on demand and frees eagerly (slow)", []),
    "XLA_PYTHON_CLIENT_COLLECTIVE_MEM_SIZE_MB": ("int", None, None, None,
                                                 "GPU memory reserved for collectives, in MiB", []),
    "XLA_PYTHON_CLIENT_MEM_FRACTION": ("float", None, None, "0.75",
                                       "Older name of XLA_CLIENT_MEM_FRACTION; setting both is an error", ["deprecated"]),
    "XLA_PYTHON_CLIENT_PREALLOCATE": ("bool", "prealloc", None, "true",
                                      "Reserve most of GPU memory at start; only false, False or 0 turn it off", []),
    "XLA_PYTHON_CLIENT_USE_TFRT_GPU_CLIENT": ("bool", "pyint", None, "0",
                                              "Use the TFRT-based GPU client (read with int())", []),
}
DIRECT_PREFIX = re.compile(r"^(JAX_|JAX2TF_|XLA_|PJRT_)")
# Read by JAX, cataloged elsewhere or not at all, and why.
ELSEWHERE = ("TPU_* (family runtime), cluster detection (SLURM_*, OMPI_*, Kubernetes' "
             "variables: the job launcher's), build and test variables (Bazel runfiles, "
             "TEST_*, version suffixes, the test-suite options of jax/_src/test_util.py)")


def allocator_values(root):
    """The allocator names jaxlib's xla_client.py accepts."""
    path = os.path.join(root, "jaxlib", "xla_client.py")
    if not os.path.exists(path):
        return None
    tree = ast.parse(open(path).read())
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and isinstance(node.left, ast.Name) and \
                node.left.id == "allocator" and isinstance(node.ops[0], ast.NotIn):
            v = const(node.comparators[0])
            if v:
                return list(v)
    return None


def yq(s):
    return '"' + str(s).replace("\\", "\\\\").replace('"', '\\"') + '"'


# Options upstream renamed or superseded, and where it says so: variable ->
# (successor, evidence).  Evidence is "changelog REF" (a line of jax's
# CHANGELOG.md at REF names both options) or "source REF:PATH" (a line of
# that file names both, a deprecation message); names compare without case,
# so jax_foo in the text is JAX_FOO.  The generator stops when the text
# does not name both.
REPLACED = {}


def check_evidence(a, old, new, ev):
    kind, where = ev.split(None, 1)
    if kind == "changelog":
        ref, path = where, "CHANGELOG.md"
    elif kind == "source":
        ref, path = where.split(":", 1)
    else:
        raise SystemExit("gen-jax-catalog: %s: unknown evidence '%s'" % (old, ev))
    text = flagrel.git_show(a.jax_git, ref, path) or ""
    for line in text.splitlines():
        low = line.lower()
        if old.lower() in low and new.split()[0].lower() in low:
            return "jax-ml/jax %s at %s: %s" % (path, ref, line.strip())
    raise SystemExit("gen-jax-catalog: %s: %s at %s does not name it and %s" % (old, path, ref, new))


def changelog_says(a, ref, name):
    """The bullet of jax's CHANGELOG.md at ref that says option name (jax_foo
    for JAX_FOO) was removed or deleted, or None."""
    text = flagrel.git_show(a.jax_git, ref, "CHANGELOG.md") or ""
    bullets, cur = [], []
    for line in text.splitlines():
        if re.match(r"\s*[*-] ", line) or not line.strip():
            if cur:
                bullets.append(" ".join(cur))
            cur = [line.strip()] if line.strip() else []
        elif cur:
            cur.append(line.strip())
    if cur:
        bullets.append(" ".join(cur))
    opt = name.lower()
    for b in bullets:
        low = b.lower()
        if re.search(r"\b%s\b" % re.escape(opt), low) and re.search(
                r"\b(has been|have been|was|were) (removed|deleted)\b|\b(removed|deleted) the\b", low):
            return "jax-ml/jax CHANGELOG.md at %s: %s" % (ref, b.lstrip("*- ").strip())
    return None


def read_release(root, raw=None):
    """The variables one release's checkout reads: {name: entry}, and the
    problems found (names without a description, reads not in DIRECT).
    raw: what collect() and allocator_values() found there before."""
    if raw is None:
        raw = dict(collect=collect(root), allocator=allocator_values(root))
    options, direct, problems = raw["collect"]
    problems = list(problems)
    entries = {}
    for env, o in options.items():
        entries[env] = dict(name=env, type=o["type"], parser=o["parser"], values=o["values"],
                            icase=o["icase"], default=o["default"], where=o["where"],
                            what="%s %s" % (o["helper"], o["option"]))
        inner = o.get("inner_env")
        if inner and inner != env and inner not in options:
            entries[inner] = dict(entries[env], name=inner,
                                  what="default of %s" % o["option"])
    for name, places in direct.items():
        if name in entries or name in COMPOSITE or not DIRECT_PREFIX.match(name):
            continue
        if name not in DIRECT:
            problems.append("%s is read (%s) but not in DIRECT" % (name, places[0]))
            continue
        typ, parser, values, default, desc, tags = DIRECT[name]
        if name == "XLA_PYTHON_CLIENT_ALLOCATOR":
            values = raw["allocator"]
            if not values:
                typ = "string"
        entries[name] = dict(name=name, type=typ, parser=parser, values=values,
                             icase=name == "XLA_PYTHON_CLIENT_ALLOCATOR", default=default,
                             where=", ".join(places), what="read directly")
    for name in entries:
        if name not in HAND and name not in DIRECT:
            problems.append("%s has no description in HAND" % name)
    return entries, problems, raw


def signature(e):
    return (e["type"], e["parser"] if e["type"] == "bool" else None,
            tuple(e["values"] or ()), bool(e["icase"]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--releases", required=True, help="etc/flags/releases.yaml")
    ap.add_argument("--jax-git", required=True, help="a git directory of jax-ml/jax with its tags")
    ap.add_argument("--cache", help="a directory keeping what each release's sources say "
                    "(by commit), so a rerun reads only new releases")
    a = ap.parse_args()
    packages = flagrel.load_releases(a.releases)
    rels = flagrel.known(packages["jax"]["releases"])
    pinned = packages["jax"]["fields"]["pinned"]
    axis = [r["version"] for r in rels]
    per = {}           # version -> {name: entry}
    problems = []
    for r in rels:
        cached = os.path.join(a.cache, r["commit"] + ".json") if a.cache else None
        if cached and os.path.exists(cached):
            entries, probs, _ = read_release(None, json.load(open(cached)))
        else:
            tops = flagrel.git_ls(a.jax_git, r["commit"])
            root = flagrel.git_tree(a.jax_git, r["commit"],
                                    [t for t in ("jax", "jaxlib", "jax_plugins") if t in tops])
            try:
                entries, probs, raw = read_release(root)
            finally:
                shutil.rmtree(root)
            if cached:
                os.makedirs(a.cache, exist_ok=True)
                json.dump(raw, open(cached, "w"))
        per[r["version"]] = entries
        problems += ["jax %s: %s" % (r["version"], p) for p in probs]
        sys.stderr.write("gen-jax-catalog: jax %s: %d variables\n" % (r["version"], len(entries)))
    for name in DIRECT:
        if not any(name in e for e in per.values()):
            problems.append("%s is in DIRECT but no release reads it" % name)
    if problems:
        for p in sorted(set(problems)):
            sys.stderr.write("gen-jax-catalog: %s\n" % p)
        sys.exit(1)
    names = sorted(set().union(*[set(e) for e in per.values()]))
    merged = []
    for name in names:
        have = [v for v in axis if name in per[v]]
        main_e = dict(per[pinned][name] if name in per[pinned] else per[have[-1]][name])
        main_e["releases"] = flagrel.ranges(axis, set(have))
        groups = {}
        for v in have:
            if signature(per[v][name]) != signature(main_e):
                groups.setdefault(signature(per[v][name]), set()).add(v)
        main_e["variants"] = [dict(type=sig[0], parser=sig[1], values=list(sig[2]) or None,
                                   icase=sig[3], releases=flagrel.ranges(axis, vs))
                              for sig, vs in sorted(groups.items(), key=lambda kv: str(kv[0]))]
        if name in REPLACED:
            new, ev = REPLACED[name]
            main_e["replaced_by"], main_e["evidence"] = new, check_evidence(a, name, new, ev)
        if have[-1] != axis[-1]:
            gone = axis[axis.index(have[-1]) + 1]
            main_e["removed"] = changelog_says(a, rels[-1]["tag"], name) or \
                "no longer read from jax %s on" % gone
        merged.append(main_e)
    write(merged, packages, rels, pinned)


def write(merged, packages, rels, pinned):
    pin = [r for r in rels if r["version"] == pinned][0]
    out = sys.stdout
    out.write("# Environment variables jax reads, in every jax release of\n"
              "# etc/flags/releases.yaml (%s to %s): every configuration option (read\n"
              "# once, at import, from the option's name in upper case; defined in\n"
              "# jax/_src/config.py and the modules named above each entry), the\n"
              "# distributed-runtime variables, and jaxlib's GPU client settings.\n"
              "# Generated by tools/gen-jax-catalog.py; rerun it rather than editing.\n"
              "# An entry describes the variable as jax %s reads it (as the newest\n"
              "# release that reads it, for one %s does not); `releases` are the\n"
              "# releases that read it, `variants` those that read it differently.\n"
              "# Booleans are read with bool_env (y/yes/t/true/on/1, n/no/f/false/off/0,\n"
              "# any case; anything else raises at import), enums must match a value\n"
              "# exactly, int and float options with int() and float().  Names, types,\n"
              "# defaults and values are upstream facts; descriptions are this project's\n"
              "# own.  Cataloged elsewhere or left out:\n"
              % (rels[0]["version"], rels[-1]["version"], pinned, pinned))
    words, line = ELSEWHERE.split() + ["."], "#"
    for w in words:
        if len(line) + len(w) + 1 > 78 and w != ".":
            out.write(line + "\n")
            line = "#"
        line += ("" if w == "." else " ") + w
    out.write(line + "\n")
    out.write("family: jax\nkind: env\ncomplete: true\nbool_parser: python\nreleases: [jax]\n")
    out.write("source:\n  repository: jax-ml/jax\n  path: jax/_src/config.py\n"
              "  commit: %s\n  release: jax %s, tag %s\n"
              "  also: %s; the same files at the tag of every jax release (%s-%s)\n" % (
                  pin["commit"], pinned, pin["tag"], ", ".join(
                      sorted({e["where"].split(":")[0] for e in merged if e["where"]} -
                             {"jax/_src/config.py"})), rels[0]["version"], rels[-1]["version"]))
    out.write("flags:\n")
    for e in merged:
        name = e["name"]
        desc, tags = (HAND[name] if name in HAND else DIRECT[name][4:6])
        out.write("  # %s: %s\n" % (e["what"], e["where"]))
        out.write("  - name: %s\n    type: %s\n" % (name, e["type"]))
        if e["values"]:
            out.write("    values: [%s]\n" % ", ".join(e["values"]))
            if e["icase"]:
                out.write("    case: insensitive\n")
        if e["default"] is not None and not (e["type"] == "enum" and e["default"] == ""):
            out.write("    default: %s\n" % yq(e["default"]))
        if e["parser"] and e["parser"] != "python" and e["type"] == "bool":
            out.write("    parser: %s\n" % e["parser"])
        if tags:
            out.write("    tags: [%s]\n" % ", ".join(tags))
        out.write("    releases: {jax: %s}\n" % yq(e["releases"]))
        if e["variants"]:
            out.write("    variants:\n")
        for v in e["variants"]:
            out.write("      - {releases: {jax: %s}, type: %s%s}\n" % (
                yq(v["releases"]), v["type"],
                ", values: [%s]" % ", ".join(yq(x) for x in v["values"]) if v["values"] else ""))
        if e.get("removed"):
            out.write("    removed: %s\n" % yq(e["removed"]))
        if e.get("replaced_by"):
            out.write("    replaced_by: %s\n    evidence: %s\n" % (yq(e["replaced_by"]),
                                                                 yq(e["evidence"])))
        out.write("    description: %s\n" % yq(desc))
    sys.stderr.write("gen-jax-catalog: %d variables in %d releases\n" % (len(merged), len(rels)))


if __name__ == "__main__":
    main()
