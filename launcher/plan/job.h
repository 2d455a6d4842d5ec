/* job.h - job.c's functions, private to launcher/plan/: what a command line
 * launches and the limits it runs under. */
#ifndef XLAUNCH_LAUNCHER_PLAN_JOB_H
#define XLAUNCH_LAUNCHER_PLAN_JOB_H

#include "launcher/plan/plan.h"
#include "calib/calib.h"

struct xl_job {
	char *interpreter;   /* the Python that runs it (absolute, links kept), or NULL */
	char *file;          /* the job's own file (script or module), or NULL */
	json_t *parts;       /* {argv, code, bundle}: the signature parts that
			      * identify it; owned */
};

void xl_job_init(struct xl_job *j);
void xl_job_release(struct xl_job *j);
/* Reads argv[0..argc) as a child started with environment envp (NULL:
 * this process's) runs it: the interpreter (bundle's xl_runtime_detect:
 * argv[0] when it is a Python, else the Python of its "#!" line, else
 * $VIRTUAL_ENV's, else python3 on PATH), the job's file (the script after the
 * interpreter's options, the module of -m when it lies under the current
 * directory, else the first existing .py argument of a launcher such as
 * torchrun, else argv[0] itself), and the parts:
 *   argv    argv with argv[0] written "python" for a Python and the job's
 *           file written as code.file names it
 *   code    {file, commit, dirty} for a file in a git work tree (file
 *           relative to its top), {file, sha256} outside one (files over
 *           4 MiB: {file, size, mtime}), {module} for an installed module,
 *           {command_sha256} for -c, {} when there is no file
 *   bundle  xl_bundle_summary() of the interpreter ({} without one)
 * Returns 0; an empty argv gives a job without parts. */
int xl_job_from_argv(char **argv, int argc, char *const *envp, struct xl_job *j);

/* Whether the profile's job runs on the host's processor: JAX_PLATFORMS
 * naming cpu alone, PJRT_DEVICE=CPU, or CUDA_VISIBLE_DEVICES empty or -1
 * (the profile's value, else this process's). */
bool xl_job_on_host(const struct xl_profile *p);

/* The limits a launch of p with these parts runs under, each with the kind
 * it bounds (at most max): on the host, limits.address_space (host_peak_vm),
 * the cgroup's memory.max and the host's memory (host_peak_rss); on an
 * accelerator, what the runtime allows itself of the device (device_peak):
 * for JAX on a GPU XLA_PYTHON_CLIENT_MEM_FRACTION (0.75 unless the
 * resolved environment says otherwise) of the device memory, where a PJRT
 * probe's figure (its allocator's limit at 0.75) is first taken back to the
 * device's size.  hw is the probe's device (NULL when the profile names the
 * hardware).  Returns how many. */
size_t xl_job_limits(const struct xl_profile *p, const json_t *parts,
		     const struct calib_hardware *hw, struct calib_limit *out, size_t max);

#endif
