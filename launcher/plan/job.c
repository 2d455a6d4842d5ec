/* job.c - what a command line launches, and under which limits.
 *
 * The job is identified by its own files, not by where xlaunch runs: the
 * script or module in argv (with its git repository's commit and dirty
 * flag, or its content hash outside one), argv itself with that file named
 * the same way wherever it is launched from, and the bundle of the
 * interpreter that will run it (bundle's xl_runtime_detect: `python`,
 * `.venv/bin/python`, `python3 -m pkg`, a script's `#!` line, else
 * $VIRTUAL_ENV's, else python3 on PATH).
 */
#include "launcher/plan/job.h"

#include "bundle/bundle.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- finding files ----------------------------------------------------------------- */

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* ---- the code state ---------------------------------------------------------------- */

/* Runs argv (no shell) with its output captured (at most 4 KiB); NULL when
 * it fails.  Caller frees. */
static char *capture_all(char *const argv[])
{
	int p[2], status;
	pid_t pid;
	char buf[4096];
	size_t len = 0;

	if (pipe2(p, O_CLOEXEC) < 0)
		return NULL;
	if ((pid = fork()) < 0) {
		close(p[0]);
		close(p[1]);
		return NULL;
	}
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDWR);

		dup2(p[1], 1);
		if (devnull >= 0) {
			dup2(devnull, 0);
			dup2(devnull, 2);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	for (;;) {
		ssize_t n = read(p[0], buf + len, sizeof(buf) - 1 - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
		if (len == sizeof(buf) - 1) {
			char junk[4096];

			while (read(p[0], junk, sizeof(junk)) > 0)
				;
			break;
		}
	}
	close(p[0]);
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return NULL;
	buf[len] = '\0';
	return xl_strdup(buf);
}

/* The git work tree holding dir (a .git entry there or above), or NULL;
 * caller frees.  No git process starts outside one. */
static char *work_tree_of(const char *dir)
{
	char *d = xl_strdup(dir);

	for (;;) {
		char *git = xl_asprintf("%s/.git", *d ? d : "/");
		struct stat sb;
		bool found = lstat(git, &sb) == 0;
		char *slash;

		free(git);
		if (found)
			return d;
		slash = strrchr(d, '/');
		if (!slash || slash == d) {
			free(d);
			return NULL;
		}
		*slash = '\0';
	}
}

static json_t *file_hash(const char *file, const char *shown)
{
	struct stat sb;
	size_t len;
	char *data;
	char hex[65];

	if (stat(file, &sb) < 0)
		return json_pack("{s:s}", "file", shown);
	/* a big binary is named by size and time, not read on every launch */
	if (sb.st_size > (4 << 20))
		return json_pack("{s:s, s:I, s:I}", "file", shown, "size", (json_int_t)sb.st_size,
				 "mtime", (json_int_t)sb.st_mtime);
	data = xl_read_file(file, &len, 4 << 20);
	if (!data)
		return json_pack("{s:s}", "file", shown);
	calib_sha256_hex(data, len, hex);
	free(data);
	return json_pack("{s:s, s:s}", "file", shown, "sha256", hex);
}

/* {file, commit, dirty} of a file in a git work tree (file relative to the
 * tree's top), else {file, sha256} with its base name.  *shown (caller
 * frees) is how argv names it in the signature. */
static json_t *code_of_file(const char *file, char **shown)
{
	char *abs = xl_path_absolute(file), *dir = xl_strdup(abs), *slash = strrchr(dir, '/');
	char *top;
	json_t *code = NULL;

	if (slash)
		*slash = '\0';
	top = work_tree_of(dir);
	if (top) {
		char *const rev[] = { "git", "-C", dir, "rev-parse", "HEAD", NULL };
		char *const st[] = { "git", "-C", dir, "status", "--porcelain", "--untracked-files=no", NULL };
		char *commit = capture_all(rev);
		size_t tl = strlen(top);

		if (commit) {
			char *dirty = capture_all(st);

			commit[strcspn(commit, "\n")] = '\0';
			*shown = xl_strdup(strncmp(abs, top, tl) == 0 && abs[tl] == '/' ? abs + tl + 1
											: base_name(abs));
			code = json_pack("{s:s, s:s, s:b}", "file", *shown, "commit", commit, "dirty",
					 dirty && *dirty);
			free(dirty);
		}
		free(commit);
		free(top);
	}
	if (!code) {
		*shown = xl_strdup(base_name(abs));
		code = file_hash(abs, *shown);
	}
	free(abs);
	free(dir);
	return code;
}

/* python -m MOD: the module's file when it is under the current directory
 * (the first place python looks), else NULL. */
static char *module_file(const char *mod)
{
	char *rel = xl_strdup(mod), *cand;

	for (char *p = rel; *p; p++)
		if (*p == '.')
			*p = '/';
	cand = xl_asprintf("%s.py", rel);
	if (!xl_is_regular_file(cand)) {
		free(cand);
		cand = xl_asprintf("%s/__main__.py", rel);
		if (!xl_is_regular_file(cand)) {
			free(cand);
			cand = NULL;
		}
	}
	free(rel);
	return cand;
}

/* Python options that take a value as the next argument. */
static bool python_opt_with_value(const char *a)
{
	return strcmp(a, "-X") == 0 || strcmp(a, "-W") == 0 || strcmp(a, "--check-hash-based-pycs") == 0;
}

/* ---- the job --------------------------------------------------------------------------- */

void xl_job_init(struct xl_job *j)
{
	memset(j, 0, sizeof(*j));
}

void xl_job_release(struct xl_job *j)
{
	free(j->interpreter);
	free(j->file);
	json_decref(j->parts);
	memset(j, 0, sizeof(*j));
}

int xl_job_from_argv(char **argv, int argc, char *const *envp, struct xl_job *j)
{
	json_t *nargv = json_array(), *code = NULL, *bundle;
	char *prog, *shown = NULL;
	int script = -1;       /* index of the job's own file in argv */
	const char *module = NULL, *command = NULL;

	xl_job_init(j);
	if (argc < 1)
		return 0;
	/* the interpreter: the one answer of bundle/ (argv[0], its "#!",
	 * else $VIRTUAL_ENV's, else python3 on PATH) */
	{
		struct xl_runtime rt;

		xl_runtime_detect(argv, argc, envp, &rt);
		j->interpreter = rt.python;
		rt.python = NULL;
		xl_runtime_release(&rt);
	}
	prog = xl_find_program_in(argv[0], envp);
	if (prog && xl_python_name(prog)) {
		/* python [options] (SCRIPT | -m MOD | -c CMD | -) [args] */
		for (int i = 1; i < argc; i++) {
			const char *a = argv[i];

			if (python_opt_with_value(a)) {
				i++;
				continue;
			}
			if (strcmp(a, "-m") == 0 || strcmp(a, "-c") == 0) {
				if (i + 1 < argc) {
					if (a[1] == 'm')
						module = argv[i + 1];
					else
						command = argv[i + 1];
				}
				break;
			}
			if (a[0] != '-' || strcmp(a, "-") == 0) {
				if (strcmp(a, "-") != 0)
					script = i;
				break;
			}
		}
	} else if (prog) {
		/* a launcher (torchrun, accelerate, a console script) runs the
		 * first .py file it is given; otherwise the program is the job */
		for (int i = 1; i < argc && script < 0; i++)
			if (xl_endswith(argv[i], ".py") && xl_is_regular_file(argv[i]))
				script = i;
		if (script < 0)
			script = 0;
	}
	if (module) {
		char *mf = module_file(module);

		if (mf) {
			code = code_of_file(mf, &shown);
			json_object_set_new(code, "module", json_string(module));
			j->file = xl_path_absolute(mf);
		} else {
			code = json_pack("{s:s}", "module", module);
		}
		free(mf);
	} else if (command) {
		char hex[65];

		calib_sha256_hex(command, strlen(command), hex);
		code = json_pack("{s:s}", "command_sha256", hex);
	} else if (script >= 0) {
		const char *f = script == 0 ? prog : argv[script];

		if (f && xl_is_regular_file(f)) {
			code = code_of_file(f, &shown);
			j->file = xl_path_absolute(f);
		}
	}
	/* argv as the signature has it: the interpreter by kind, the job's file
	 * by its name in its repository */
	for (int i = 0; i < argc; i++) {
		if (i == 0 && j->interpreter && prog && xl_python_name(prog))
			json_array_append_new(nargv, json_string("python"));
		else if (i == script && shown)
			json_array_append_new(nargv, json_string(shown));
		else if (i == 0)
			json_array_append_new(nargv, json_string(script == 0 && shown ? shown
									   : base_name(argv[0])));
		else
			json_array_append_new(nargv, json_string(argv[i]));
	}
	bundle = j->interpreter ? xl_bundle_summary_env(j->interpreter, envp, NULL) : NULL;
	j->parts = json_pack("{s:o, s:o, s:o}", "argv", nargv, "code", code ? code : json_object(),
			     "bundle", bundle ? bundle : json_object());
	free(prog);
	free(shown);
	return 0;
}

/* ---- where it runs and its limits ---------------------------------------------------------- */

/* The value the child gets for name: the profile's, else this process's. */
static const char *child_env(const struct xl_profile *p, const char *name)
{
	const struct xl_var *v = xl_profile_var(p, name);

	if (v)
		return v->value;
	return getenv(name);
}

bool xl_job_on_host(const struct xl_profile *p)
{
	const char *jp = child_env(p, "JAX_PLATFORMS");
	const char *pd = child_env(p, "PJRT_DEVICE");
	const char *cv = child_env(p, "CUDA_VISIBLE_DEVICES");

	if (jp && *jp) {
		struct xl_strv v = XL_STRV_INIT;
		bool all_cpu = true;

		xl_strv_split(&v, jp, ",");
		for (size_t i = 0; i < v.n; i++)
			if (strcasecmp(v.v[i], "cpu") != 0)
				all_cpu = false;
		xl_strv_release(&v);
		if (all_cpu)
			return true;
	}
	if (pd && strcasecmp(pd, "CPU") == 0)
		return true;
	return cv && (!*cv || strcmp(cv, "-1") == 0);
}

/* Whether the job runs JAX: its bundle has jax, or the profile sets a JAX
 * or XLA_PYTHON_CLIENT variable. */
static bool runs_jax(const struct xl_profile *p, const json_t *parts)
{
	const json_t *pk = json_object_get(json_object_get(parts, "bundle"), "packages");

	if (json_object_get(pk, "jax") || json_object_get(pk, "jaxlib"))
		return true;
	for (size_t i = 0; i < p->nvars; i++)
		if (xl_startswith(p->vars[i].name, "JAX_") ||
		    xl_startswith(p->vars[i].name, "XLA_PYTHON_CLIENT_"))
			return true;
	return false;
}

/* A byte count given as a number or with units ("80GiB"); -1 when neither. */
static int64_t bytes_value(const json_t *v)
{
	uint64_t b;

	if (json_is_integer(v))
		return json_integer_value(v);
	if (json_is_real(v) && json_real_value(v) > 0 && json_real_value(v) < 9.2e18)
		return (int64_t)json_real_value(v);
	if (json_is_string(v) && xl_parse_bytes(json_string_value(v), &b) && b < (1ull << 62))
		return (int64_t)b;
	return -1;
}
/* The share of a GPU's memory a JAX child's allocator allows itself, its
 * words appended to *why (" x 0.75 (JAX's default)"; nothing for the whole
 * device under the platform allocator but the setting's name). */
static double jax_share(const struct xl_profile *p, struct xl_buf *why)
{
	const char *fr = child_env(p, "XLA_PYTHON_CLIENT_MEM_FRACTION");
	const char *pre = child_env(p, "XLA_PYTHON_CLIENT_PREALLOCATE");
	const char *alloc = child_env(p, "XLA_PYTHON_CLIENT_ALLOCATOR");
	double v;
	char *end;

	if (alloc && strcmp(alloc, "platform") == 0) {
		xl_buf_adds(why, " (XLA_PYTHON_CLIENT_ALLOCATOR=platform)");
		return 1.0;
	}
	if (fr && (v = strtod(fr, &end)) > 0 && v <= 1 && !*end) {
		xl_buf_addf(why, " x %g (XLA_PYTHON_CLIENT_MEM_FRACTION)", v);
		return v;
	}
	xl_buf_addf(why, " x 0.75 (JAX's default%s)",
		    pre && (strcmp(pre, "false") == 0 || strcmp(pre, "0") == 0) ? ", preallocation off" : "");
	return 0.75;
}


size_t xl_job_limits(const struct xl_profile *p, const json_t *parts,
		     const struct calib_hardware *hw, struct calib_limit *out, size_t max)
{
	const json_t *h = json_object_get(parts, "hardware");
	int64_t mem;
	size_t n = 0;
	char b[32];

	if (!h)
		h = json_object_get(parts, "device");
	mem = bytes_value(json_object_get(h, "memory"));
	if (mem < 0)
		mem = bytes_value(json_object_get(h, "memory_bytes"));
	if (p->limits.memory >= 0 && p->limits.memory != INT64_MAX && n < max) {
		char why[300];
		bool had = xl_memcg_possible(why, sizeof(why));

		out[n].kind = CALIB_KIND_HOST_PEAK_RSS;
		out[n].bytes = p->limits.memory;
		snprintf(out[n].source, sizeof(out[n].source), "limits.memory (%s%.100s)",
			 had ? "enforced by " : "not enforced: ", why);
		n++;
	}
	if (calib_parts_on_host(parts) || !h) {
		int64_t as = p->limits.address_space, cg;
		char *where;

		if (as >= 0 && as != INT64_MAX && n < max) {
			out[n].kind = CALIB_KIND_HOST_PEAK_VM;
			out[n].bytes = as;
			snprintf(out[n].source, sizeof(out[n].source), "limits.address_space");
			n++;
		}
		cg = xl_cgroup_memory_max(&where);
		if (cg > 0 && n < max) {
			out[n].kind = CALIB_KIND_HOST_PEAK_RSS;
			out[n].bytes = cg;
			snprintf(out[n].source, sizeof(out[n].source), "cgroup memory.max (%s)", where);
			n++;
		}
		free(where);
		if (mem > 0 && (cg <= 0 || cg > mem) && n < max) {
			out[n].kind = CALIB_KIND_HOST_PEAK_RSS;
			out[n].bytes = mem;
			snprintf(out[n].source, sizeof(out[n].source), "host memory (%s)",
				 hw ? "latest probe" : "signature.device");
			n++;
		}
		return n;
	}
	if (mem > 0 && n < max) {
		double total = (double)mem, frac = 1.0;
		const char *kind = json_string_value(json_object_get(h, "kind"));
		bool gpu = (hw && (strcmp(hw->backend, "cuda") == 0 || strcasestr(hw->kind, "gpu"))) ||
			   (kind && (strcasestr(kind, "nvidia") || strcasestr(kind, "gpu") ||
				     strcasestr(kind, "h100") || strcasestr(kind, "h200") ||
				     strcasestr(kind, "a100") || strcasestr(kind, "amd")));
		bool pjrt_limit = hw && strstr(hw->memory_source, "bytes_limit");
		struct xl_buf src = XL_BUF_INIT, share = XL_BUF_INIT;

		xl_fmt_bytes((uint64_t)mem, b, sizeof(b));
		if (gpu && runs_jax(p, parts))
			frac = jax_share(p, &share);
		/* the figure itself only where a share of it is the limit: the
		 * limit is printed beside its source */
		if (frac != 1.0)
			xl_buf_addf(&src, "device memory %s", b);
		else
			xl_buf_adds(&src, "the device's memory");
		/* PJRT's memory stats give its allocator's limit; the probe
		 * creates the client with memory_fraction 1, so that limit is
		 * the device's memory (on an H200: 150109945856 bytes,
		 * cuDeviceTotalMem 150109880320) */
		if (gpu && pjrt_limit)
			xl_buf_adds(&src, " (PJRT allocator limit at memory_fraction 1)");
		xl_buf_adds(&src, xl_buf_str(&share));
		xl_buf_release(&share);
		out[n].kind = CALIB_KIND_DEVICE_PEAK;
		out[n].bytes = (int64_t)(total * frac);
		snprintf(out[n].source, sizeof(out[n].source), "%s", xl_buf_str(&src));
		xl_buf_release(&src);
		n++;
	}
	return n;
}
