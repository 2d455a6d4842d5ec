/* jobrank.c - which job launch a rank belongs to, and how many ranks it
 * has: the engine's own variables (srun, torchrun, a JobSet) or xlaunch's. */
#include "launcher/run/jobrank.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* A whole non-negative number in v (at most max), or -1. */
static long env_count(const char *name, long max)
{
	const char *v = getenv(name);
	char *end;
	long n;

	if (!v || !*v)
		return -1;
	errno = 0;
	n = strtol(v, &end, 10);
	return *end || errno || n < 0 || n > max ? -1 : n;
}

int xl_rank(const char **from)
{
	static const char *const vars[] = {
		"RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "TPU_WORKER_ID", NULL,
	};

	for (size_t i = 0; vars[i]; i++) {
		const char *v = getenv(vars[i]);
		char *end;
		long r;

		if (!v || !*v)
			continue;
		errno = 0;
		r = strtol(v, &end, 10);
		if (*end || errno || r < 0 || r > 1000000)
			continue;
		if (from)
			*from = vars[i];
		return (int)r;
	}
	if (from)
		*from = NULL;
	return 0;
}

int xl_world_size(const char **from)
{
	static const char *const vars[] = {
		"WORLD_SIZE", "SLURM_NTASKS", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", NULL,
	};

	for (size_t i = 0; vars[i]; i++) {
		long n = env_count(vars[i], 1000000);

		if (n >= 1) {
			if (from)
				*from = vars[i];
			return (int)n;
		}
	}
	if (from)
		*from = NULL;
	return 1;
}

char *xl_job_launch_id(const char **from)
{
	static const char *const ids[] = {
		"XLAUNCH_JOB_ID", "SLURM_JOB_ID", "TORCHELASTIC_RUN_ID", "JOBSET_NAME", NULL,
	};
	static const char *const restarts[] = {
		"XLAUNCH_JOB_ATTEMPT", "TORCHELASTIC_RESTART_COUNT", "SLURM_RESTART_COUNT", NULL,
	};
	const char *id = NULL, *used = "";
	long n = 0, step;

	if (from)
		*from = NULL;
	for (size_t i = 0; ids[i] && !id; i++) {
		const char *v = getenv(ids[i]);

		if (v && *v && strlen(v) <= 200 && !strchr(v, '#')) {
			id = v;
			used = ids[i];
			if (from)
				*from = ids[i];
		}
	}
	if (!id)
		return NULL;
	/* each srun in one allocation is a launch of its own: its step */
	step = strcmp(used, "SLURM_JOB_ID") == 0 ? env_count("SLURM_STEP_ID", 1L << 40) : -1;
	for (size_t i = 0; restarts[i]; i++) {
		long r = env_count(restarts[i], 1000000);

		if (r >= 0) {
			n = r;
			break;
		}
	}
	if (step >= 0)
		return n > 0 ? xl_asprintf("%s.%ld#%ld", id, step, n) : xl_asprintf("%s.%ld", id, step);
	return n > 0 ? xl_asprintf("%s#%ld", id, n) : xl_strdup(id);
}
