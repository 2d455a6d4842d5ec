/* targets.c - the fuzz targets (targets.h), on the modules' own interfaces. */
#include "tests/fuzz/targets.h"
#include "bundle/bundle.h"
#include "launcher/flags/flags.h"
#include "calib/calib.h"
#include "launcher/profile/layer.h"
#include "launcher/run/outcome.h"
#include "launcher/run/supervise.h"
#include "launcher/watch/dump.h"

#include <stdlib.h>
#include <string.h>

int xl_fuzz_version(const uint8_t *data, size_t len)
{
	struct xl_version v, w;

	if (xl_version_parse((const char *)data, len, &v) < 0)
		return 0;
	/* the normal form parses back to an equal version with the same form */
	if (xl_version_parse(v.norm, strlen(v.norm), &w) < 0 || xl_version_cmp(&v, &w) != 0 ||
	    strcmp(v.norm, w.norm) != 0)
		abort();
	xl_version_release(&w);
	xl_version_release(&v);
	return 0;
}

int xl_fuzz_specifier(const uint8_t *data, size_t len)
{
	struct xl_specset ss;
	struct xl_version v;
	char *err = NULL;
	static const char *const probes[] = { "0", "1.0", "1.0a1", "1.0.post1", "1!2.0+loc.7" };

	if (xl_specset_parse((const char *)data, len, &ss, &err) < 0) {
		free(err);
		return 0;
	}
	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		if (xl_version_parse(probes[i], strlen(probes[i]), &v) < 0)
			abort();
		(void)xl_specset_contains(&ss, &v, probes[i]);
		xl_version_release(&v);
	}
	free(xl_specset_str(&ss));
	xl_specset_release(&ss);
	return 0;
}

int xl_fuzz_nvidia(const uint8_t *data, size_t len)
{
	char *v = xl_nvidia_driver_parse((const char *)data, len);
	size_t n;

	if (!v)
		return 0;
	/* a version: digits and dots, a digit at each end, at least one dot */
	n = strlen(v);
	if (!n || strspn(v, "0123456789.") != n || v[0] == '.' || v[n - 1] == '.' || !strchr(v, '.'))
		abort();
	free(v);
	return 1;
}

int xl_fuzz_marker(const uint8_t *data, size_t len)
{
	struct xl_marker *m;
	struct xl_marker_env env;
	char *err = NULL;

	if (xl_marker_parse((const char *)data, len, &m, &err) < 0) {
		free(err);
		return 0;
	}
	xl_marker_env_host(&env, "3.13.1");
	(void)xl_marker_eval(m, &env, "tpu", &err);
	free(err);
	(void)xl_marker_uses_extra(m);
	xl_marker_free(m);
	return 0;
}

int xl_fuzz_metadata(const uint8_t *data, size_t len)
{
	struct xl_dist d;

	(void)xl_metadata_parse((const char *)data, len, &d);
	xl_dist_release(&d);
	return 0;
}

int xl_fuzz_bundle_cache(const uint8_t *data, size_t len)
{
	json_t *s = xl_bundle_cache_entry((const char *)data, len, "/v/bin/python", "\t\t\t", false);
	int n = -1;

	/* a summary read is {python: string, packages: {name: string}} */
	if (s) {
		const char *k;
		json_t *v;

		if (!json_is_string(json_object_get(s, "python")) ||
		    !json_is_object(json_object_get(s, "packages")))
			abort();
		json_object_foreach(json_object_get(s, "packages"), k, v)
			if (!json_is_string(v))
				abort();
		n = (int)json_object_size(json_object_get(s, "packages"));
		json_decref(s);
	}
	return n;
}

int xl_fuzz_lint(const uint8_t *data, size_t len)
{
	static const char *const vars[] = { "XLA_FLAGS", "LIBTPU_INIT_ARGS", "TF_XLA_FLAGS",
					    "XLA_PYTHON_CLIENT_PREALLOCATE", "JAX_ENABLE_X64",
					    "PJRT_DEVICE", "JAX_ENABLE_MEMORIES", "GPU_NUM_DEVICES" };
	struct xl_lint l = { 0 };
	struct xl_runtime rt = { 0 };
	struct xl_judge j;
	bool judged = false;
	const char *body;
	size_t blen;
	char *s;
	int n;

	if (len == 0)
		return 0;
	body = (const char *)data + 1;
	blen = len - 1;
	/* bit 6: the bytes up to the first newline are a --release
	 * PKG==VERSION, and the rest is judged against that release */
	if (data[0] & 0x40) {
		const char *nl = memchr(body, '\n', blen);
		char *spec = xl_strndup(body, nl ? (size_t)(nl - body) : blen);

		judged = xl_runtime_of_release(spec, &rt) == 0;
		if (judged)
			xl_judge_init(&j, &rt);
		free(spec);
		if (nl) {
			blen -= (size_t)(nl + 1 - body);
			body = nl + 1;
		} else {
			blen = 0;
		}
	}
	s = xl_strndup(body, blen);
	xl_lint_string_at(judged ? &j : NULL, vars[data[0] % (sizeof(vars) / sizeof(vars[0]))], s,
			  data[0] & 0x80 ? XL_LINT_TIMING : 0, &l);
	n = (int)l.n;
	xl_lint_release(&l);
	xl_runtime_release(&rt);
	free(s);
	return n;
}

int xl_fuzz_profile(const uint8_t *data, size_t size)
{
	struct xl_profile *p;
	char *envin[] = { "PATH=/bin", "XLA_FLAGS=--xla_a=1", NULL };

	if (xl_profile_resolve_bytes("fuzz", "fuzz.yaml", (const char *)data, size, NULL,
				     XL_RESOLVE_NO_AMBIENT, &p))
		return -1;
	for (size_t i = 0; i <= p->ncands; i++) {
		struct xl_profile *pc = NULL;

		if (xl_profile_resolve_bytes("fuzz", "fuzz.yaml", (const char *)data, size,
					     i < p->ncands ? p->cands[i].name : NULL, 0, &pc) == 0) {
			json_t *j = xl_profile_to_json(pc);
			char **env = xl_profile_build_env(pc, envin);

			json_decref(j);
			xl_env_free(env);
			xl_profile_free(pc);
		}
	}
	xl_profile_free(p);
	return 0;
}

int xl_fuzz_profile_name(const uint8_t *data, size_t size)
{
	size_t n = 0;
	char *name;
	struct xl_profile *p = NULL;
	int rc;

	while (n < size && n < 64 && data[n] != '\n')
		n++;
	name = xl_strndup((const char *)data, n);
	rc = xl_profile_resolve(NULL, name, NULL, XL_RESOLVE_NO_AMBIENT, &p);
	if ((rc == 0) != (p != NULL))
		abort();
	xl_profile_free(p);
	free(name);
	return rc;
}

extern const struct xl_cmd xl_cmd_env, xl_cmd_exec, xl_cmd_run, xl_cmd_profile, xl_cmd_flags,
	xl_cmd_probe, xl_cmd_calib, xl_cmd_bundle;

/* Parses argv for cmd, then for the subcommand it names; runs nothing. */
static void parse_level(const struct xl_cmd *cmd, const char *path, int argc, char **argv)
{
	struct xl_ctx ctx;
	struct xl_call call;
	void *opts = xl_calloc(1, cmd->opts_size ? cmd->opts_size : 1);
	int verbosity = xl_verbosity;

	if (cmd->opts_init)
		memcpy(opts, cmd->opts_init, cmd->opts_size);
	memset(&ctx, 0, sizeof(ctx));
	if (xl_cmd_parse(cmd, path, &ctx, argc, argv, opts, &call) < 0) {
		/* what the parser hands a command holds together */
		if (call.argc > argc || call.restc > argc || (call.restc && call.restv[call.restc]))
			abort();
		for (int i = 0; i < call.argc; i++)
			if (!call.argv[i])
				abort();
		if (cmd->subs && call.argc) {
			const struct xl_cmd *sub = xl_cmd_find(cmd, path, call.argv[0]);

			if (sub) {
				char *subpath = xl_asprintf("%s %s", path, sub->name);

				parse_level(sub, subpath, call.argc, call.argv);
				free(subpath);
			}
		}
		xl_call_release(&call);
	}
	xl_verbosity = verbosity;
	free(opts);
}

int xl_fuzz_args(const uint8_t *data, size_t len)
{
	static const struct xl_cmd *const cmds[] = {
		&xl_cmd_env, &xl_cmd_exec, &xl_cmd_run, &xl_cmd_profile, &xl_cmd_flags,
		&xl_cmd_probe, &xl_cmd_calib, &xl_cmd_bundle,
	};
	const struct xl_cmd *cmd;
	char *words, *argv[65];
	int argc = 0;

	if (!len)
		return 0;
	cmd = cmds[data[0] % (sizeof(cmds) / sizeof(cmds[0]))];
	words = xl_calloc(1, len);
	memcpy(words, data + 1, len - 1);
	argv[argc++] = (char *)cmd->name;
	for (char *w = words; argc < 64 && w < words + len - 1;) {
		size_t n = strcspn(w, "\n");

		w[n] = '\0';
		argv[argc++] = w;
		w += n + 1;
	}
	argv[argc] = NULL;
	parse_level(cmd, cmd->name, argc, argv);
	free(words);
	return 0;
}

/* The same bytes through the outcome scanner (OOM, peer_exit and
 * device_busy lines, the tail kept for messages) in pieces of 1 to 16
 * bytes, as a pipe delivers them, then classified as a death by SIGABRT
 * (a held device is an error, never a crash); the TPU compiler's figures
 * of an OOM line, when read, are positive. */
static void scan_outcome(const struct xl_patterns *pats, const uint8_t *data, size_t len)
{
	static struct xl_scan sc;   /* static: its line buffer is 64 KiB */
	struct xl_sup_result sr = { .exit_code = 134, .signaled = true, .sig = 6 };
	struct xl_classified cl;
	size_t step = 1 + (data[0] & 15);
	char *tail;

	xl_scan_init(&sc, pats);
	for (size_t i = 0; i < len; i += step)
		xl_scan_feed(&sc, (const char *)data + i, len - i < step ? len - i : step);
	xl_scan_finish(&sc);
	xl_classify(&sr, NULL, &sc, NULL, NULL, &cl);
	if (cl.outcome != (sc.oom_id ? XL_OUT_OOM : sc.busy ? XL_OUT_ERROR : XL_OUT_CRASH) ||
	    (sc.peer && !sc.peer_line) || (sc.busy && !sc.busy_line))
		abort();
	if (sc.oom_line) {
		int64_t need, have;

		if (xl_tpu_hbm_oom(sc.oom_line, &need, &have) && (need <= 0 || have <= 0))
			abort();
	}
	tail = xl_scan_tail(&sc, 5);
	free(tail);
	xl_scan_release(&sc);
}

int xl_fuzz_compile(const uint8_t *data, size_t len)
{
	static struct xl_patterns pats;
	static bool loaded;
	struct xl_watch_cfg cfg;
	struct xl_watch w;
	struct xl_cblock b[2];
	struct xl_storm s;
	char *text, summary[256];
	size_t start = 1;
	double t = 100;
	json_t *j;

	if (!loaded) {
		setenv("XLAUNCH_DATADIR", ".", 0);
		if (xl_patterns_load(NULL, &pats) != 0)
			abort();
		loaded = true;
	}
	if (!len)
		return 0;
	memset(&cfg, 0, sizeof(cfg));
	cfg.pats = &pats.compile;
	cfg.rule = pats.compile.rule;
	cfg.step_pattern = "^step ([0-9]+) ";
	cfg.start = 100;
	xl_watch_init(&w, &cfg);
	xl_cblock_init(&b[0]);
	xl_cblock_init(&b[1]);
	text = xl_strndup((const char *)data, len);
	for (size_t i = 1; i <= len; i++) {
		if (i < len && text[i] != '\n')
			continue;
		text[i < len ? i : len] = '\0';
		xl_watch_line(&w, &b[(data[0] >> (start % 8)) & 1], text + start, i - start, t);
		t += (data[0] & 7) * 0.01;
		start = i + 1;
	}
	xl_cblock_close(&w, &b[0]);
	xl_cblock_close(&w, &b[1]);
	xl_watch_finish(&w, t + (data[0] >> 4));
	xl_watch_verdict(&w, &s);
	if (s.compiles < 0 || s.recompiles < 0 || s.recompiles > s.compiles || s.after_warmup < 0)
		abort();
	j = xl_watch_json(&w, &s);
	json_decref(j);
	xl_watch_summary(&w, &s, summary, sizeof(summary));
	xl_watch_release(&w);
	free(text);
	scan_outcome(&pats, data, len);
	return (int)s.compiles;
}

static const char *fuzz_env_get(const void *ctx, const char *name)
{
	char *const *env = ctx;
	size_t n = strlen(name);

	for (size_t i = 0; env[i]; i++)
		if (strncmp(env[i], name, n) == 0 && env[i][n] == '=')
			return env[i] + n + 1;
	return NULL;
}

int xl_fuzz_cachestamp(const uint8_t *data, size_t len)
{
	const char *nul = memchr(data, '\0', len);
	size_t envlen = nul ? (size_t)(nul - (const char *)data) : 0;
	struct xl_strv env = XL_STRV_INIT;
	char *envtext = xl_strndup((const char *)data, envlen);
	const char *stamp = nul ? nul + 1 : (const char *)data;
	size_t slen = len - (size_t)(stamp - (const char *)data);
	int last = -1;

	xl_strv_split(&env, envtext, "\n");
	xl_strv_push(&env, "JAX_COMPILATION_CACHE_DIR=/c");
	/* a NULL-terminated environment */
	env.v = xl_realloc(env.v, (env.n + 1) * sizeof(char *));
	env.v[env.n] = NULL;
	for (size_t k = 0; k < xl_ck_nruntimes; k++) {
		json_t *set = xl_ck_settings(&xl_ck_runtimes[k], fuzz_env_get, env.v, env.v);
		char *diff = NULL, *since = NULL;
		size_t index = 0;

		last = xl_ck_stamp_compare(stamp, slen, set, &index, &diff, &since);
		if ((last == 1) != (diff != NULL) || (last == 0 && since))
			abort();
		for (size_t i = 0; i < env.n; i++) {
			const char *eq = strchr(env.v[i], '=');
			char *name = eq ? xl_strndup(env.v[i], (size_t)(eq - env.v[i])) : NULL;

			if (name && strchr(name, ' ') == NULL)
				(void)xl_ck_flag_invalidates(&xl_ck_runtimes[k], "XLA_FLAGS", name, eq + 1, NULL);
			free(name);
		}
		free(diff);
		free(since);
		json_decref(set);
	}
	xl_strv_release(&env);
	free(envtext);
	return last;
}

int xl_fuzz_location(const uint8_t *data, size_t len)
{
	char *loc = xl_strndup((const char *)data, len);
	char *shown = calib_location_display(loc);
	const char *scheme = strstr(loc, "://");

	/* taking out never adds; a URI keeps its scheme; with neither a user
	 * part nor a parameter there is nothing to take out */
	if (strlen(shown) > strlen(loc) ||
	    (scheme && strncmp(shown, loc, (size_t)(scheme - loc)) != 0) ||
	    (!strchr(loc, '@') && !strchr(loc, '=') && strcmp(shown, loc) != 0))
		abort();
	free(shown);
	free(loc);
	return 0;
}

int xl_fuzz_dumpname(const uint8_t *data, size_t len)
{
	struct xl_dump_name n;
	char *name;
	int kind;

	if (!len)
		return XL_DF_OTHER;
	name = xl_strndup((const char *)data + 1, len - 1);
	kind = xl_dump_name_parse(name, data[0] & 1, &n);
	if (kind != n.kind || kind < XL_DF_OTHER || kind > XL_DF_LOADED)
		abort();
	if (kind == XL_DF_OTHER ? n.id != -1 || n.module[0] : n.id < 0 || !xl_startswith(name, "module_"))
		abort();
	/* a module's name is a part of the file's name */
	if (strlen(n.module) >= sizeof(n.module) || (n.module[0] && !strstr(name, n.module)))
		abort();
	if (n.module[0]) {
		char *f = xl_dump_function(n.module);

		if (!*f || !xl_dump_runtime(n.module))
			abort();
		free(f);
	}
	free(name);
	return kind;
}

int xl_fuzz_hloentry(const uint8_t *data, size_t len)
{
	struct xl_hlo_entry e, c;
	uint64_t h = 0;
	int rc;

	if (!len)
		return -1;
	if (data[0] & 1)
		rc = xl_hlo_text_entry((const char *)data + 1, len - 1, &e, &h);
	else
		rc = xl_hlo_entry_parse((const char *)data + 1, len - 1, &e);
	if (rc < 0) {
		if (e.n || e.v)
			abort();
		return -1;
	}
	if (e.n > XL_HLO_MAX_PARAMS || e.n > e.total || (e.total && !e.hash) ||
	    e.n != (e.total < XL_HLO_MAX_PARAMS ? e.total : XL_HLO_MAX_PARAMS))
		abort();
	for (size_t i = 0; i < e.n; i++)
		if (!e.v[i].name || !e.v[i].type || e.v[i].index >= e.total ||
		    (i && e.v[i].index <= e.v[i - 1].index) || xl_hlo_entry_param(&e, e.v[i].index) != &e.v[i])
			abort();
	memset(&c, 0, sizeof(c));
	xl_hlo_entry_copy(&c, &e);
	if (!xl_hlo_entry_same(&e, &c))
		abort();
	xl_hlo_entry_release(&c);
	rc = (int)e.n;
	xl_hlo_entry_release(&e);
	return rc;
}

int xl_fuzz_override(const uint8_t *data, size_t len)
{
	char *text = xl_strndup((const char *)data, len), *save = NULL;
	char *set[16], *flag[16];
	size_t ns = 0, nf = 0;
	bool printable = true;
	struct layer *l = NULL;
	int rc;

	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		bool is_flag = strncmp(line, "flag ", 5) == 0;
		char *arg = is_flag ? line + 5 : line;

		if (!xl_override_valid(arg, is_flag) || (is_flag ? nf : ns) == 16)
			continue;
		for (const char *c = arg; *c; c++)
			printable &= *c >= 0x20 && *c < 0x7f;
		if (is_flag)
			flag[nf++] = arg;
		else
			set[ns++] = arg;
	}
	xl_profile_set_overrides(set, ns, flag, nf);
	rc = overrides_layer(&l);
	if ((ns || nf) && printable && (rc != 0 || !l))
		abort();
	if (rc != 0 && rc != XL_EX_DATAERR)
		abort();
	layer_free(l);
	xl_profile_set_overrides(NULL, 0, NULL, 0);
	free(text);
	return 0;
}
