"""host_llc.py - the last-level cache as sysfs describes it, for the probe
tests: the highest data or unified level, each instance (shared_cpu_list)
counted once, over the CPUs this process may use.  Prints bytes (0: none)."""
import glob
import os

cpus = os.sched_getaffinity(0)
best, seen = 0, {}
for d in glob.glob("/sys/devices/system/cpu/cpu[0-9]*/cache/index[0-9]*"):
    cpu = int(d.split("/")[5][3:])
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
print(sum(seen.values()))
