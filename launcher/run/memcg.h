/* memcg.h - memcg.c's functions, private to launcher/run/: a memory cgroup
 * of the launch's own, made under the one xlaunch runs in, so that the
 * kernel says the child's peak (cgroup v2 memory.peak, v1
 * memory.max_usage_in_bytes) and enforces limits.memory, and an OOM kill
 * at that limit is known as such.  Where none can be made but xlaunch is
 * alone in its own cgroup (a Slurm step, a pod, a container), that one is
 * read instead: its peak where it rose during the launch, its OOM kills;
 * nothing is enforced or moved there.  Whether one can be made is the
 * plan room's xl_memcg_possible (a launch's limits say it). */
#ifndef XLAUNCH_LAUNCHER_RUN_MEMCG_H
#define XLAUNCH_LAUNCHER_RUN_MEMCG_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct xl_memcg {
	char *dir;          /* the launch's cgroup; NULL: none could be made */
	char *procs;        /* its cgroup.procs */
	int version;        /* 1 or 2 */
	int64_t limit;      /* the limit it enforces; -1: none */
	bool joined;        /* the child is in it (xlaunch moved it there too) */
	bool own;           /* it is the cgroup xlaunch was alone in, not made */
	int64_t base_peak;  /* own: its peak when the launch began */
	long base_ooms;     /* own: its OOM kills when the launch began */
	char why[300];      /* where it is, or why there is none */
};

/* Makes the launch's cgroup under this process's, with limit (bytes; < 0:
 * none), or, where none can be made, takes this process's own when it is
 * alone in it (m->own; m->limit -1: nothing enforced).  False (m->why says
 * why) when neither can be had. */
bool xl_memcg_open(struct xl_memcg *m, int64_t limit);
/* In the forked child, before exec: moves the calling process into it.
 * Only system calls. */
void xl_memcg_enter(const struct xl_memcg *m);
/* In xlaunch, after the fork: moves pid there too (whichever is first),
 * and records that the child is in it. */
void xl_memcg_adopt(struct xl_memcg *m, pid_t pid);
/* The kernel's peak of the cgroup's memory (-1: not known); source (size
 * n) says which file gave it. */
int64_t xl_memcg_peak(const struct xl_memcg *m, char *source, size_t n);
/* The number of processes the OOM killer ended in it (-1: not known). */
long xl_memcg_oom_kills(const struct xl_memcg *m);
/* Removes the cgroup (once its processes are gone) and frees m. */
void xl_memcg_close(struct xl_memcg *m);

#endif
