"""lock_holder.py PATH - the live processes that hold a lock on PATH, as
/proc/locks lists them: one "pid N (COMMAND)" line each, nothing when none
does (or PATH does not exist)."""
import os
import sys

try:
    st = os.stat(sys.argv[1])
except OSError:
    sys.exit(0)
want = "%02x:%02x:%d" % (os.major(st.st_dev), os.minor(st.st_dev), st.st_ino)
seen = set()
with open("/proc/locks") as f:
    for line in f:
        # "1: POSIX  ADVISORY  WRITE 1234 08:01:5678 0 EOF"; a waiter's
        # line has "->" after its number
        parts = line.replace("->", "").split()
        if len(parts) < 6:
            continue
        pid, dev = parts[4], parts[5]
        if dev != want or not pid.isdigit() or pid in seen:
            continue
        try:
            comm = open("/proc/%s/comm" % pid).read().strip()
        except OSError:
            continue
        seen.add(pid)
        print("pid %s (%s)" % (pid, comm))
