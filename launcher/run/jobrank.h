/* jobrank.h - jobrank.c's functions, private to launcher/run/: which rank
 * this process is, how many ranks its job has, and which job launch it
 * belongs to. */
#ifndef XLAUNCH_LAUNCHER_RUN_JOBRANK_H
#define XLAUNCH_LAUNCHER_RUN_JOBRANK_H

#include "common/common.h"

/* The rank from RANK, SLURM_PROCID, OMPI_COMM_WORLD_RANK, PMI_RANK or
 * TPU_WORKER_ID; 0 when none is set.  *from names the variable (or NULL). */
int xl_rank(const char **from);
/* The number of ranks from WORLD_SIZE, SLURM_NTASKS, OMPI_COMM_WORLD_SIZE or
 * PMI_SIZE; 1 when none is set.  *from names the variable (or NULL). */
int xl_world_size(const char **from);
/* The job launch this process belongs to: the id from XLAUNCH_JOB_ID,
 * SLURM_JOB_ID (with ".STEP" when SLURM_STEP_ID is set: each srun of an
 * allocation is a launch of its own), TORCHELASTIC_RUN_ID or JOBSET_NAME
 * (the first set; *from names it), followed by "#N" for the engine's Nth
 * restart of it
 * (XLAUNCH_JOB_ATTEMPT, TORCHELASTIC_RESTART_COUNT, SLURM_RESTART_COUNT;
 * nothing for 0).  NULL when no id is set.  Caller frees. */
char *xl_job_launch_id(const char **from);

#endif
