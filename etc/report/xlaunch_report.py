"""Child-side report helper for xlaunch.

A training script launched by ``xlaunch run`` finds the path of a report file
in the environment variable XLAUNCH_REPORT.  This module appends one JSON
object per line to that file, each line with a single append-mode write(2):

    {"kind":"memory","predicted_bytes":N,"per_device_bytes":N,"source":"..."}
    {"kind":"memory","peak_bytes":N,"limit_bytes":N|null,"source":"..."}
    {"kind":"compile","count":N,"cache_hits":H}
    {"kind":"step","step":N,"loss":F|null,"step_time_s":F|null}

When XLAUNCH_REPORT is unset or empty every function is a silent no-op
(values are still computed and returned).  Reporting never raises and never
harms the run: a failure to write or to query a runtime prints one warning
on stderr and the run goes on.

Only the standard library is imported here; jax, torch and torch_xla are
imported inside the functions that use them.

Usage from a JAX script:

    import xlaunch_report as xr
    counter = xr.CompileCounter().start()   # before the first jit call
    compiled = jax.jit(step).lower(params, batch).compile()
    xr.report_predicted_from_jax(compiled, jax.local_devices())
    ...  # train, maybe xr.report_step(i, loss, dt)
    xr.report_peak_from_jax(jax.local_devices())
    counter.report()
"""

import json
import math
import os
import sys
import time

ENV_VAR = "XLAUNCH_REPORT"

_warned = set()


def _warn(key, message):
    """Print MESSAGE on stderr the first time KEY is seen."""
    if key in _warned:
        return
    _warned.add(key)
    try:
        sys.stderr.write("xlaunch_report: %s\n" % message)
        sys.stderr.flush()
    except Exception:
        pass


def _never_raise(func):
    """Wrap a public reporting function so that it returns None instead of
    raising (after one warning): reporting must never harm the run."""
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except Exception as e:
            _warn(func.__name__, "%s failed: %s" % (func.__name__, e))
            return None
    wrapper.__name__ = func.__name__
    wrapper.__doc__ = func.__doc__
    return wrapper


def enabled():
    """True when XLAUNCH_REPORT names a file to report to."""
    return bool(os.environ.get(ENV_VAR))


def _json_number(value):
    """VALUE as a JSON-safe number: None for missing or non-finite values."""
    if value is None:
        return None
    try:
        if isinstance(value, bool):
            return int(value)
        if isinstance(value, int):
            return value
        f = float(value)
    except (TypeError, ValueError):
        return None
    if not math.isfinite(f):
        return None
    return f


def emit(record):
    """Append RECORD (a dict with a "kind") as one JSON line.

    Returns True when the line was written, False when reporting is off or
    the write failed (then one warning is printed, the first time).
    """
    path = os.environ.get(ENV_VAR)
    if not path:
        return False
    try:
        if "t" not in record:
            # when it happened, by the wall clock: xlaunch reads the file
            # later, and places steps among compilations by this time
            record = dict(record, t=round(time.time(), 6))
        line = json.dumps(record, separators=(",", ":"), allow_nan=False)
        data = (line + "\n").encode("utf-8")
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
        fd = os.open(path, flags, 0o644)
        try:
            n = os.write(fd, data)
        finally:
            os.close(fd)
        if n != len(data):
            raise OSError("short write (%d of %d bytes)" % (n, len(data)))
        return True
    except Exception as e:  # never harm the run
        _warn("write", "cannot write to '%s': %s; reports are lost" % (path, e))
        return False


def host_peak_rss_bytes():
    """Peak resident set size of this process in bytes, or None."""
    try:
        import resource
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    except Exception:
        return None
    # Linux reports KiB, macOS bytes.
    return int(rss) if sys.platform == "darwin" else int(rss) * 1024


# ---- predicted memory ------------------------------------------------------

def predicted_bytes_from_jax(compiled):
    """Per-device bytes an XLA executable needs: arguments + outputs + temps
    + generated code - aliased (donated) bytes, from memory_analysis().
    None when the backend gives no analysis."""
    try:
        ma = compiled.memory_analysis()
    except Exception as e:
        _warn("memory_analysis", "memory_analysis() failed: %s" % e)
        return None
    if ma is None:
        return None
    if isinstance(ma, (list, tuple)):  # older jax: one entry per executable
        ma = ma[0] if ma else None
        if ma is None:
            return None

    def field(name):
        v = getattr(ma, name, 0)
        return int(v) if v else 0

    total = (field("argument_size_in_bytes") + field("output_size_in_bytes")
             + field("temp_size_in_bytes") + field("generated_code_size_in_bytes")
             - field("alias_size_in_bytes"))
    return total if total > 0 else None


def _device_memory_stats(device):
    try:
        stats = device.memory_stats()
    except Exception:
        return None
    return stats if stats else None


@_never_raise
def report_predicted_from_jax(compiled, devices=None, source="xla_memory_analysis"):
    """Report the memory XLA predicts for COMPILED (a jax Compiled object).

    The analysis is per device (reported as per_device_bytes, XLA's buffers
    of the program on one device).  When DEVICES is given and they share the
    host's memory (no memory_stats(), as on CPU), predicted_bytes is that
    figure times their number, so it compares with the process's peak.
    Returns the bytes reported as predicted_bytes, or None."""
    per_device = predicted_bytes_from_jax(compiled)
    if per_device is None:
        return None
    total = per_device
    if devices:
        devices = list(devices)
        if all(_device_memory_stats(d) is None for d in devices):
            total = per_device * len(devices)
    emit({"kind": "memory", "predicted_bytes": total, "per_device_bytes": per_device,
          "source": source})
    return total


# ---- observed memory -------------------------------------------------------

@_never_raise
def report_peak(peak_bytes, limit_bytes=None, source="user"):
    """Report an observed peak.  Returns PEAK_BYTES."""
    if peak_bytes is None:
        return None
    emit({"kind": "memory", "peak_bytes": int(peak_bytes),
          "limit_bytes": int(limit_bytes) if limit_bytes else None,
          "source": source})
    return int(peak_bytes)


@_never_raise
def report_peak_from_jax(devices=None):
    """Report the peak memory of DEVICES (default: jax.local_devices()).

    Uses device.memory_stats() (peak_bytes_in_use, bytes_limit) where the
    backend keeps them, reporting the largest per-device peak; otherwise the
    process's host peak RSS with source "host_rss".  Returns the bytes."""
    peaks, limits = [], []
    try:
        if devices is None:
            import jax
            devices = jax.local_devices()
        for d in devices:
            stats = _device_memory_stats(d)
            if stats is None:
                continue
            peak = stats.get("peak_bytes_in_use", stats.get("bytes_in_use"))
            if peak is not None:
                peaks.append(int(peak))
            if stats.get("bytes_limit"):
                limits.append(int(stats["bytes_limit"]))
    except Exception as e:
        _warn("memory_stats", "device.memory_stats() failed: %s" % e)
    if peaks:
        return report_peak(max(peaks), min(limits) if limits else None,
                           "device_memory_stats")
    return report_peak(host_peak_rss_bytes(), None, "host_rss")


def report_peak_from_torch_xla(device=None):
    """Report the peak memory of a PyTorch/XLA device (default: the current
    one) from torch_xla.core.xla_model.get_memory_info.  Returns the bytes."""
    try:
        import torch_xla.core.xla_model as xm
        if device is None:
            device = xm.xla_device()
        info = xm.get_memory_info(device)
        if "peak_bytes_used" in info or "bytes_used" in info:
            peak = info.get("peak_bytes_used", info.get("bytes_used"))
            limit = info.get("bytes_limit")
        else:  # older releases: kb_free / kb_total, current use only
            peak = (info["kb_total"] - info["kb_free"]) * 1024
            limit = info["kb_total"] * 1024
    except Exception as e:
        _warn("torch_xla", "torch_xla memory info unavailable: %s" % e)
        return None
    return report_peak(peak, limit, "torch_xla_memory_info")


def report_peak_from_torch_cuda(device=None):
    """Report torch.cuda.max_memory_allocated for DEVICE (default: current),
    with the device's total memory as the limit.  Returns the bytes."""
    try:
        import torch
        peak = torch.cuda.max_memory_allocated(device)
        idx = torch.cuda.current_device() if device is None else device
        limit = torch.cuda.get_device_properties(idx).total_memory
    except Exception as e:
        _warn("torch_cuda", "torch.cuda memory statistics unavailable: %s" % e)
        return None
    return report_peak(peak, limit, "torch_cuda_max_allocated")


# ---- compiles and steps ----------------------------------------------------

@_never_raise
def report_compiles(count, cache_hits=None):
    """Report the cumulative number of compilations so far (and, when known,
    how many programs were loaded from the persistent cache instead)."""
    record = {"kind": "compile", "count": int(count)}
    if cache_hits is not None:
        record["cache_hits"] = int(cache_hits)
    emit(record)
    return int(count)


@_never_raise
def report_step(step, loss=None, step_time_s=None):
    """Report one training step's loss and wall time in seconds.

    A CompileCounter that is counting reports its count first when it
    changed since the step before, so xlaunch sees in which step the
    compilations happened (a count reported only at the end is a total,
    and says nothing about when)."""
    for counter in _counting:
        counter._report_if_changed()
    emit({"kind": "step", "step": int(step), "loss": _json_number(loss),
          "step_time_s": _json_number(step_time_s)})


_counting = []  # CompileCounter objects between start() and stop()


class CompileCounter:
    """Counts JAX compilations through jax.monitoring events.

    Every executable JAX builds passes through one backend-compile event,
    whether XLA compiles it or it is loaded from the persistent compilation
    cache; a load also records a cache-hit event.  So:
      requests    executables built (compiled or loaded)
      cache_hits  loaded from the persistent cache
      compiles    requests - cache_hits: real XLA compilations
    A restart with a warm persistent cache shows compiles falling and
    cache_hits rising.  Call start() before the first jit call."""

    BACKEND_COMPILE = "/jax/core/compile/backend_compile_duration"
    CACHE_HIT = "/jax/compilation_cache/cache_hits"
    CACHE_MISS = "/jax/compilation_cache/cache_misses"

    def __init__(self):
        self.requests = 0
        self.cache_hits = 0
        self.cache_misses = 0  # entries written to the persistent cache
        self._active = False
        self._registered = False
        self._reported = None  # (compiles, cache_hits) last reported

    @property
    def compiles(self):
        return max(self.requests - self.cache_hits, 0)

    def _on_event(self, event, **kwargs):
        if not self._active:
            return
        if event == self.CACHE_HIT:
            self.cache_hits += 1
        elif event == self.CACHE_MISS:
            self.cache_misses += 1

    def _on_duration(self, event, duration, **kwargs):
        if self._active and event == self.BACKEND_COMPILE:
            self.requests += 1

    def start(self):
        """Begin counting; returns self.  Safe to call more than once.
        While counting, report_step() reports the count when it changed."""
        self._active = True
        if self not in _counting:
            _counting.append(self)
        if not self._registered:
            try:
                import jax.monitoring as mon
                mon.register_event_listener(self._on_event)
                mon.register_event_duration_secs_listener(self._on_duration)
                self._registered = True
            except Exception as e:
                _warn("monitoring", "jax.monitoring unavailable, compiles not counted: %s" % e)
        return self

    def stop(self):
        """Stop counting (the listeners stay registered but ignore events)."""
        self._active = False
        if self in _counting:
            _counting.remove(self)

    def _report_if_changed(self):
        now = (self.compiles, self.cache_hits)
        if now != self._reported and (self._reported is not None or any(now)):
            self.report()

    def report(self):
        """Report the counts so far as a compile line; returns compiles."""
        self._reported = (self.compiles, self.cache_hits)
        return report_compiles(self.compiles, self.cache_hits)
