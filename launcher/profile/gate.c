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

void xl_profile_detect_runtime(const struct xl_profile *p, char *const *argv, int argc,
			       struct xl_runtime *rt)
{
	/* what the child will find: the profile may set PATH, VIRTUAL_ENV,
	 * PYTHONPATH or PYENV_VERSION */
	char **env = xl_profile_build_env(p, environ);

	xl_runtime_detect(argv, argc, env, rt);
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
