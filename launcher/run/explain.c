/* explain.c - what the store's runs of a profile say to `profile show
 * --explain`: a compile storm recorded without compile logging, and the
 * profile that would have named what recompiled. */
#include "launcher/run/run.h"
#include "launcher/run/rundir.h"
#include "launcher/run/outcome.h"

#include <stdlib.h>
#include <string.h>

/* The latest compile storm recorded for a profile: its run id and time. */
struct storm_seen {
	char *id;
	double time;
};

static int latest_storm(const struct calib_attempt *a, void *arg)
{
	struct storm_seen *s = arg;

	s->id = xl_strdup(a->id);
	s->time = a->time;
	return 1;
}

static bool sets_any(const json_t *env, const struct xl_strv *vars)
{
	for (size_t i = 0; i < vars->n; i++) {
		const char *v = json_string_value(json_object_get(env, vars->v[i]));

		if (v && *v && strcmp(v, "0") != 0)
			return true;
	}
	return false;
}

/* `show --explain`: when the store has a compile storm of this profile seen
 * without compile logging, which profile to add to see what recompiles.
 * The store is opened without creating it; nothing is written. */
void xl_run_explain_storms(const struct xl_ctx *ctx, const struct xl_profile *p)
{
	struct xl_patterns pats;
	struct calib_store *st = NULL;
	struct calib_filter f = CALIB_FILTER_INIT;
	struct storm_seen seen = { NULL, 0 };
	json_t *env = json_object();
	char *err = NULL, *runs, *mpath, *text;
	size_t len;
	int q = xl_verbosity;
	bool logged;

	xl_verbosity = -1;
	if (xl_patterns_load(NULL, &pats) != 0) {
		xl_verbosity = q;
		json_decref(env);
		return;
	}
	for (size_t i = 0; i < p->nvars; i++)
		if (p->vars[i].value)
			json_object_set_new(env, p->vars[i].name, json_string(p->vars[i].value));
	logged = sets_any(env, &pats.compile.logging_vars);
	if (!logged && pats.compile.debug_profile &&
	    calib_open(ctx->store_path, CALIB_OPEN_NOCREATE, &st, &err) == 0) {
		f.profile = p->name;
		f.outcome = XL_OUT_COMPILE_STORM;
		f.limit = 1;
		calib_history(st, &f, latest_storm, &seen);
		calib_close(st);
	}
	free(err);
	xl_verbosity = q;
	if (seen.id) {
		json_t *m = NULL;
		char tbuf[40];

		/* the run's own manifest says what it ran with, where it is kept */
		runs = xl_runs_dir();
		mpath = xl_asprintf("%s/%s/manifest.json", runs, seen.id);
		text = xl_read_file(mpath, &len, 16u << 20);
		if (text)
			m = json_loadb(text, len, 0, NULL);
		if (!m || !sets_any(json_object_get(m, "env"), &pats.compile.logging_vars)) {
			printf("\ncompile storm recorded for this profile without compile logging (run %s, %s):\n",
			       seen.id, xl_iso_time(seen.time, tbuf, sizeof(tbuf)));
			printf("  to see which function recompiles and why, launch with a profile that also\n"
			       "  extends %s (a file with 'extends: [%s, %s]'); it turns on",
			       pats.compile.debug_profile, p->name, pats.compile.debug_profile);
			for (size_t i = 0; i < pats.compile.logging_vars.n; i++)
				printf("%s %s", i ? "," : "", pats.compile.logging_vars.v[i]);
			printf("\n");
		}
		json_decref(m);
		free(text);
		free(mpath);
		free(runs);
		free(seen.id);
	}
	json_decref(env);
	xl_patterns_release(&pats);
}
