"""host_llc.py - the host's shape as the probe tests read it, on their own.

  host_llc.py                 the last-level cache in bytes (0: none described)
  host_llc.py --rule          "BYTES<TAB>RULE": the working set a bandwidth
                              figure must use on this host, and the rule's words
  host_llc.py --make DIR LLC [AVAIL]
                              a host root for XLAUNCH_HOST_ROOT in DIR: an
                              LLC-byte last-level cache shared by the CPUs this
                              process may use (0: no cache described), and a
                              /proc/meminfo with AVAIL bytes available (none:
                              no meminfo, so nothing caps the working set)

The cache is the highest data or unified level under
$XLAUNCH_HOST_ROOT/sys/devices/system/cpu, each instance (shared_cpu_list)
counted once, over the CPUs this process may use; with no host root set, the
C library's figure where sysfs describes none, as the probe does.  The rule
is stated here in its own words, not read from xlaunch: four times the cache,
64 MiB at least, 1 GiB when the cache is unknown, at most a quarter of the
available memory.
"""
import glob
import os
import sys

MIB = 1 << 20
ROOT = os.environ.get("XLAUNCH_HOST_ROOT", "")


def llc_bytes():
    cpus = os.sched_getaffinity(0)
    best, seen = 0, {}
    pattern = ROOT + "/sys/devices/system/cpu/cpu[0-9]*/cache/index[0-9]*"
    for d in glob.glob(pattern):
        cpu = int(d[len(ROOT):].split("/")[5][3:])
        if cpu not in cpus:
            continue

        def rd(name):
            p = os.path.join(d, name)
            return open(p).read().strip() if os.path.exists(p) else ""

        if rd("type") == "Instruction" or not rd("level") or not rd("size"):
            continue
        level, size = int(rd("level")), rd("size")
        mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(size[-1], 1)
        nbytes = int(size.rstrip("KMG")) * mult
        if level > best:
            best, seen = level, {}
        if level == best:
            seen[rd("shared_cpu_list") or str(cpu)] = nbytes
    total = sum(seen.values())
    if total or ROOT:
        return total
    for name in ("SC_LEVEL4_CACHE_SIZE", "SC_LEVEL3_CACHE_SIZE", "SC_LEVEL2_CACHE_SIZE"):
        try:
            v = os.sysconf(name)
        except (ValueError, OSError):
            continue
        if v > 0:
            return v
    return 0


def mem_available():
    try:
        with open(ROOT + "/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def working_set(llc, avail):
    if not llc:
        ws, rule = 1024 * MIB, "1 GiB (the last-level cache is unknown)"
    elif 4 * llc < 64 * MIB:
        ws, rule = 64 * MIB, "64 MiB (the floor; more than 4 x the last-level cache)"
    else:
        ws, rule = 4 * llc, "4 x the last-level cache"
    if avail and ws > avail // 4:
        ws, rule = avail // 4, "a quarter of the available memory (less than 4 x the last-level cache)"
    return ws, rule


def make(root, llc, avail):
    cpus = sorted(os.sched_getaffinity(0))
    shared = ",".join(str(c) for c in cpus)
    os.makedirs(root + "/sys/devices/system/cpu", exist_ok=True)
    for c in cpus:
        d = "%s/sys/devices/system/cpu/cpu%d/cache/index0" % (root, c)
        if not llc:
            os.makedirs(os.path.dirname(d), exist_ok=True)
            continue
        os.makedirs(d, exist_ok=True)
        for name, val in (("level", "3"), ("type", "Unified"),
                          ("size", "%dK" % (llc // 1024)), ("shared_cpu_list", shared)):
            with open(os.path.join(d, name), "w") as f:
                f.write(val + "\n")
    if avail is not None:
        os.makedirs(root + "/proc", exist_ok=True)
        with open(root + "/proc/meminfo", "w") as f:
            f.write("MemAvailable: %d kB\n" % (avail // 1024))


if len(sys.argv) > 1 and sys.argv[1] == "--make":
    make(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]) if len(sys.argv) > 4 else None)
elif len(sys.argv) > 1 and sys.argv[1] == "--rule":
    print("%d\t%s" % working_set(llc_bytes(), mem_available()))
else:
    print(llc_bytes())
