/* gate.c - the bundle gate of a profile, before exec and run.
 *
 * Only a profile that names bundles (policy.bundle) pays for reading the
 * installed packages of the Python the job will load (xl_profile's
 * runtime, found once in bundle/): the installed bundle must match one of
 * the names, and the flags the matrix records as known-bad on it are
 * refused.
 */
#include "launcher/profile/profile.h"
#include "bundle/bundle.h"

#include <stdlib.h>
#include <string.h>

extern char **environ;

/* Whether variable entry e ("NAME=value") may change what the detection
 * finds: where commands and interpreters are (PATH, VIRTUAL_ENV, pyenv's,
 * the loader's), what an interpreter's site directories are (PYTHON*,
 * HOME), where the bundle cache is (XDG_*, HOME) and which libtpu is
 * loaded.  The rest (a candidate's batch size, XLA_FLAGS) never does. */
static bool detect_var(const char *e)
{
	static const char *const names[] = { "PATH=", "HOME=", "VIRTUAL_ENV=", "TPU_LIBRARY_PATH=",
					     "PYTHON", "PYENV_", "XDG_", "LD_", "CONDA_", NULL };

	for (size_t i = 0; names[i]; i++)
		if (strncmp(e, names[i], strlen(names[i])) == 0)
			return true;
	return false;
}

/* What the detection depends on: argv and those variables. */
static char *detect_key(char *const *argv, int argc, char *const *env, size_t *len)
{
	struct xl_buf b = XL_BUF_INIT;

	for (int i = 0; argv && i < argc; i++)
		xl_buf_add(&b, argv[i], strlen(argv[i]) + 1);
	xl_buf_add(&b, "\1", 2);
	for (size_t i = 0; env[i]; i++)
		if (detect_var(env[i]))
			xl_buf_add(&b, env[i], strlen(env[i]) + 1);
	*len = b.len;
	return xl_buf_detach(&b);
}

static char *dup_or_null(const char *s)
{
	return s ? xl_strdup(s) : NULL;
}

static void runtime_copy(struct xl_runtime *to, const struct xl_runtime *from)
{
	to->python = dup_or_null(from->python);
	to->source = from->source;
	to->why = dup_or_null(from->why);
	to->jaxlib = dup_or_null(from->jaxlib);
	to->jax = dup_or_null(from->jax);
	to->torch = dup_or_null(from->torch);
	to->torch_xla = dup_or_null(from->torch_xla);
	to->libtpu = dup_or_null(from->libtpu);
}

/* The last detection of this process: a launch judges its profile and each
 * candidate against the interpreter of one command line, in environments
 * that differ in what the detection never reads, and asks once. */
static struct {
	char *key;
	size_t len;
	struct xl_runtime rt;
} last_detect;

void xl_profile_detect_runtime(const struct xl_profile *p, char *const *argv, int argc,
			       struct xl_runtime *rt)
{
	/* what the child will find: the profile may set PATH, VIRTUAL_ENV,
	 * PYTHONPATH or PYENV_VERSION */
	char **env = xl_profile_build_env(p, environ);
	size_t len;
	char *key = detect_key(argv, argc, env, &len);

	memset(rt, 0, sizeof(*rt));
	if (last_detect.key && last_detect.len == len && memcmp(last_detect.key, key, len) == 0) {
		runtime_copy(rt, &last_detect.rt);
		free(key);
	} else {
		xl_runtime_detect(argv, argc, env, rt);
		free(last_detect.key);
		xl_runtime_release(&last_detect.rt);
		last_detect.key = key;
		last_detect.len = len;
		runtime_copy(&last_detect.rt, rt);
	}
	xl_env_free(env);
}

int xl_profile_bundle_gate(const struct xl_ctx *ctx, const struct xl_profile *p)
{
	const struct xl_prov *src = &p->policy.bundle_src;
	char *why = NULL;
	json_t *bad = NULL, *o;
	char **env;
	size_t i;
	int rc;

	(void)ctx;
	if (!p->policy.bundle.n)
		return 0;
	/* the installed bundle of the Python the job will load (the one the
	 * flags were judged against); none found: as `bundle show` finds one */
	env = xl_profile_build_env(p, environ);
	rc = xl_bundle_gate(p->runtime ? p->runtime->python : NULL, env, &p->policy.bundle, &bad, &why);
	xl_env_free(env);
	if (rc) {
		xl_error("profile '%s': %s:%u:%u: policy 'bundle' refuses the launch: %s", p->name,
			 src->file, src->line, src->col, why ? why : "the installed bundle does not match");
		free(why);
		return rc;
	}
	json_array_foreach(bad, i, o) {
		struct xl_known_bad kb;
		const char *var = json_string_value(json_object_get(o, "var"));
		const char *flag = json_string_value(json_object_get(o, "flag"));
		const struct xl_var *v;

		if (!flag)
			continue;
		/* a flag is bad in the composite variable the matrix names */
		v = var ? xl_profile_var(p, var) : NULL;
		if (var && (!v || !xl_flagmap_get(&v->flags, flag)))
			continue;
		kb.flag = flag;
		kb.reason = json_string_value(json_object_get(o, "reason"));
		kb.value = json_string_value(json_object_get(o, "value"));
		if (!kb.reason)
			kb.reason = "recorded as known-bad";
		if (xl_policy_check_known_bad(p, &kb, 1,
					      json_string_value(json_object_get(o, "bundle"))))
			rc = XL_EX_NOPERM;
	}
	json_decref(bad);
	return rc;
}
