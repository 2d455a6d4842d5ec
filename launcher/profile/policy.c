/* policy.c - the checks run on every resolved profile before it is used:
 * catalog types and unknown XLA flags (65), then the policy rules (77):
 * cache: local, timing: true, consumer-safe booleans, per-bundle known-bad
 * flags.  Also what PyTorch/XLA adds on its own at start, for
 * `profile show --explain`. */
#include "launcher/profile/profile.h"

#include <errno.h>
#include <stdlib.h>
#include <strings.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *prov_file(const struct xl_prov *s)
{
	return s->file ? s->file : "?";
}

/* "profile 'P': file:line:col: " into b. */
static void where(struct xl_buf *b, const struct xl_profile *p, const struct xl_prov *src)
{
	xl_buf_addf(b, "profile '%s': ", p->name ? p->name : "?");
	if (src->line)
		xl_buf_addf(b, "%s:%u:%u: ", prov_file(src), src->line, src->col);
	else if (src->file)
		xl_buf_addf(b, "%s: ", src->file);
}

static void report(const struct xl_profile *p, const struct xl_prov *src, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void report(const struct xl_profile *p, const struct xl_prov *src, const char *fmt, ...)
{
	struct xl_buf b = XL_BUF_INIT;
	va_list ap;

	where(&b, p, src);
	va_start(ap, fmt);
	xl_buf_vaddf(&b, fmt, ap);
	va_end(ap);
	xl_error("%s", xl_buf_str(&b));
	xl_buf_release(&b);
}

/* ---- cache: local ------------------------------------------------------------ */

/* The directory a cache path names (its parent for a *_FILE path); caller
 * frees. */
static char *cache_dir_of(const char *path, bool is_file)
{
	char *dir = xl_strdup(path);

	if (is_file) {
		char *slash = strrchr(dir, '/');

		if (slash == dir)
			slash[1] = '\0';
		else if (slash)
			*slash = '\0';
	}
	return dir;
}

/* Why dir (st: its stat) is no directory this user may write in, the
 * message beginning with before; NULL when it is one. */
static const char *dir_problem(const char *dir, const struct stat *st, const char *before,
			       char *buf, size_t n)
{
	if (!S_ISDIR(st->st_mode))
		snprintf(buf, n, "%s'%s' is not a directory", before, dir);
	else if (access(dir, W_OK | X_OK) != 0)
		snprintf(buf, n, "%sdirectory '%s' is not writable", before, dir);
	else
		return NULL;
	return buf;
}

/* Why path is not acceptable as a local cache location, or NULL.  Creates
 * nothing: a missing directory is fine when its nearest existing parent is
 * a directory this user may create it in (exec and run create it).  For
 * another machine (local false) only the form is checked. */
static const char *cache_path_problem(const char *path, bool is_file, bool local, char *buf, size_t n)
{
	char *dir;
	struct stat st;
	const char *colon = strstr(path, "://"), *why;

	if (colon) {
		snprintf(buf, n, "a remote URL (%.*s://), not a local path", (int)(colon - path), path);
		return buf;
	}
	if (path[0] != '/') {
		snprintf(buf, n, "a relative path; cache paths must be absolute");
		return buf;
	}
	if (!local)
		return NULL;
	dir = cache_dir_of(path, is_file);
	if (stat(dir, &st) == 0) {
		why = dir_problem(dir, &st, "", buf, n);
		free(dir);
		return why;
	}
	/* the nearest part that exists decides whether it can be created */
	for (;;) {
		char *slash = strrchr(dir, '/');

		if (!slash || slash == dir) {
			strcpy(dir, "/");
		} else {
			*slash = '\0';
		}
		if (stat(dir, &st) == 0)
			break;
		if (strcmp(dir, "/") == 0)
			break;
	}
	why = dir_problem(dir, &st, "it cannot be created: ", buf, n);
	free(dir);
	return why;
}

static bool ends_with_file(const char *name)
{
	return xl_endswith(name, "_file") || xl_endswith(name, "_FILE");
}

/* ---- the check ------------------------------------------------------------------ */

struct verdict {
	bool data;     /* 65 */
	bool policy;   /* 77 */
};

/* Checks one cataloged value (a flag token or a plain variable). */
static void check_one(const struct xl_profile *p, struct verdict *vd, const char *var,
		      const struct xl_flagdef *d, char **valuep, const struct xl_prov *src,
		      bool is_flag, bool *changed)
{
	const char *value = *valuep;
	const char *shown = is_flag ? "flag" : "variable";
	char label[512];

	if (is_flag)
		snprintf(label, sizeof(label), "%s: --%s", var, d->name);
	else
		snprintf(label, sizeof(label), "%s", var);

	if (d->type == XL_FT_BOOL && value) {
		bool misread;
		int parser = xl_flagdef_bool_parser(d);
		const char *norm = xl_bool_normalize(parser, value, &misread);

		if (!norm && misread) {
			bool m;
			const char *off = xl_bool_normalize(parser, "0", &m);

			/* a set-or-not variable has no spelling for false */
			report(p, src, "policy 'boolean' refuses %s='%s': %s would read it differently than it looks; write %s or %s",
			       label, value, xl_families[d->family].name,
			       xl_bool_normalize(parser, "1", &m), off ? off : "leave it unset");
			vd->policy = true;
			return;
		}
		if (!norm) {
			report(p, src, "%s='%s' is not a boolean", label, value);
			vd->data = true;
			return;
		}
		if (strcmp(norm, value) != 0) {
			free(*valuep);
			*valuep = xl_strdup(norm);
			value = *valuep;
			*changed = true;
		}
	} else {
		/* every release the job loads must take it */
		const char *why = xl_flag_value_error(d, value);

		if (why) {
			if (value)
				report(p, src, "%s='%s' is %s (%s expected)", label, value, why,
				       xl_ftype_name(d->type));
			else
				report(p, src, "%s %s (%s)", label, why, xl_ftype_name(d->type));
			vd->data = true;
			return;
		}
	}
	if ((d->tags & XL_FTAG_DEBUG) && p->policy.timing) {
		char *refused = xl_timing_refused(d, value);

		if (refused && d->timing_allows) {
			struct xl_buf ok = XL_BUF_INIT;

			for (size_t i = 0; d->timing_allows[i]; i++)
				xl_buf_addf(&ok, "%s%s", i ? ", " : "", d->timing_allows[i]);
			report(p, src, "policy 'timing: true' (%s:%u) refuses %s %s=%s: %s (a timing run may set only %s)",
			       prov_file(&p->policy.timing_src), p->policy.timing_src.line, shown, label,
			       value ? value : "", refused, xl_buf_str(&ok));
			xl_buf_release(&ok);
			vd->policy = true;
		} else if (refused) {
			report(p, src, "policy 'timing: true' (%s:%u) refuses debug %s %s%s%s",
			       prov_file(&p->policy.timing_src), p->policy.timing_src.line, shown, label,
			       value ? "=" : "", value ? value : "");
			vd->policy = true;
		}
		free(refused);
	}
	if ((d->tags & XL_FTAG_CACHE) && p->policy.cache == XL_CACHE_LOCAL && value && *value) {
		char buf[512];
		const char *why = cache_path_problem(value, ends_with_file(d->name), !p->for_target,
						     buf, sizeof(buf));

		if (why) {
			report(p, src, "policy 'cache: local' (%s:%u) refuses %s='%s': %s",
			       prov_file(&p->policy.cache_src), p->policy.cache_src.line, label, value, why);
			vd->policy = true;
		}
	}
}

/* A flag or variable the judged releases do not take: an error when another
 * release does (XLA aborts, or the setting has no effect), a warning when
 * the release is one xlaunch does not know.  Returns true when it is one of
 * those (reported), false for a name in no release. */
static bool not_in_release(struct xl_profile *p, struct verdict *vd, const struct xl_prov *src,
			   const char *var, const struct xl_rel_verdict *rv)
{
	if (rv->status == XL_RS_ELSEWHERE) {
		report(p, src, "%s: %s%s%s", var, rv->why, rv->hint ? "; " : "", rv->hint ? rv->hint : "");
		vd->data = true;
		return true;
	}
	if (rv->status == XL_RS_UNCONFIRMED) {
		/* said once: run checks the profile, then each candidate */
		static struct xl_strv said = XL_STRV_INIT;
		char *line = xl_asprintf("profile '%s': %s:%u:%u: %s: %s", p->name, prov_file(src),
					 src->line, src->col, var, rv->why);
		bool again = false;

		for (size_t i = 0; i < said.n && !again; i++)
			again = strcmp(said.v[i], line) == 0;
		if (!again) {
			xl_warn("%s", line);
			xl_strv_push_owned(&said, line);
		} else {
			free(line);
		}
		return true;
	}
	return false;
}

/* A name the libtpu the job loads does not register: libtpu exits at start;
 * an XLA flag belongs in XLA_FLAGS. */
static void libtpu_unknown(struct xl_profile *p, const struct xl_judge *j, const struct xl_prov *src,
			   const char *name)
{
	const char *lt = xl_judge_libtpu(j);
	int tpu = xl_family_index("libtpu");
	const char *dym = tpu >= 0 ? xl_judge_suggest(j, tpu, name) : NULL;
	bool xla = xl_catalog_flag("XLA_FLAGS", name) != NULL;

	report(p, src, "LIBTPU_INIT_ARGS: %s '--%s' (libtpu%s%s exits on it at start)%s%s%s",
	       xla ? "XLA flag" : "unknown flag", name, lt ? " " : "", lt ? lt : "",
	       xla ? "; it belongs in XLA_FLAGS" : dym ? "; did you mean '" : "",
	       !xla && dym ? dym : "", !xla && dym ? "'?" : "");
}

/* The flags of composite variable v, judged against j's releases. */
static void check_composite(struct xl_profile *p, struct verdict *vd, const struct xl_judge *j,
			    struct xl_var *v)
{
	int coverage = xl_catalog_coverage(v->name);
	bool changed = false;

	for (size_t k = 0; k < v->flags.n; k++) {
		struct xl_flag *f = &v->flags.v[k];
		struct xl_rel_verdict rv;
		const struct xl_flagdef *d = xl_catalog_flag_at(j, v->name, f->name, &rv);

		if (!d && !not_in_release(p, vd, &f->src, v->name, &rv)) {
			const char *dym = xl_catalog_suggest(v->name, f->name);
			bool tpu = strcmp(v->name, "XLA_FLAGS") == 0 &&
				   xl_catalog_flag("LIBTPU_INIT_ARGS", f->name);

			if (coverage == 0 && strcmp(v->name, "LIBTPU_INIT_ARGS") == 0) {
				libtpu_unknown(p, j, &f->src, f->name);
				vd->data = true;
			} else if (coverage == 0) {
				report(p, &f->src, "%s: unknown flag '--%s' (XLA aborts on it at backend start)%s%s%s",
				       v->name, f->name,
				       tpu ? "; it is a libtpu flag: set it in LIBTPU_INIT_ARGS" : dym ? "; did you mean '" : "",
				       !tpu && dym ? dym : "", !tpu && dym ? "'?" : "");
				vd->data = true;
			} else if (coverage == 1) {
				const char *lt = xl_judge_libtpu(j);
				char *rel = lt ? xl_asprintf(" (the job loads libtpu %s)", lt) : xl_strdup("");

				if (dym)
					xl_warn("profile '%s': %s:%u:%u: %s: '--%s' is not in the partial catalog%s; did you mean '%s'?",
						p->name, prov_file(&f->src), f->src.line, f->src.col,
						v->name, f->name, rel, dym);
				else
					xl_warn("profile '%s': %s:%u:%u: %s: '--%s' is not in the partial catalog%s",
						p->name, prov_file(&f->src), f->src.line, f->src.col,
						v->name, f->name, rel);
				free(rel);
			}
		}
		xl_rel_verdict_release(&rv);
		if (d && strcmp(v->name, "LIBTPU_INIT_ARGS") == 0 && coverage == 0) {
			/* libtpu's verdicts name the release judged */
			const char *lt = xl_judge_libtpu(j);
			char *label = lt ? xl_asprintf("%s (libtpu %s)", v->name, lt) : xl_strdup(v->name);

			if (xl_absl_unlearned(d))
				xl_warn("profile '%s': %s:%u:%u: %s: --%s takes a value of a type of libtpu's own that xlaunch could not learn from its parser: '%s' is not checked",
					p->name, prov_file(&f->src), f->src.line, f->src.col, label, f->name,
					f->value ? f->value : "");
			check_one(p, vd, label, d, &f->value, &f->src, true, &changed);
			free(label);
		} else if (d) {
			check_one(p, vd, v->name, d, &f->value, &f->src, true, &changed);
		}
	}
	if (changed) {
		free(v->value);
		v->value = xl_flagmap_format(&v->flags);
		xl_strv_push_owned(&p->notes, xl_asprintf("%s: boolean flags normalized to what XLA parses", v->name));
	}
}

int xl_profile_check(const struct xl_ctx *ctx, struct xl_profile *p)
{
	struct verdict vd = { false, false };
	struct xl_judge j;

	(void)ctx;
	xl_judge_init(&j, p->runtime);
	for (size_t i = 0; i < p->nvars; i++) {
		struct xl_var *v = &p->vars[i];

		if (v->composite) {
			check_composite(p, &vd, &j, v);
			continue;
		}
		if (!v->value)
			continue;
		struct xl_rel_verdict rv;
		const struct xl_flagdef *d = xl_catalog_env_at(&j, v->name, &rv);
		bool changed = false;
		char *before;

		if (!d) {
			if (!not_in_release(p, &vd, &v->src, v->name, &rv))
				xl_profile_warn_unknown_var(p, v);
			xl_rel_verdict_release(&rv);
			continue;
		}
		xl_rel_verdict_release(&rv);
		xl_profile_warn_value(p, v);
		before = xl_strdup(v->value);
		check_one(p, &vd, v->name, d, &v->value, &v->src, false, &changed);
		if (changed)
			xl_strv_push_owned(&p->notes, xl_asprintf("%s: '%s' normalized to '%s' (what %s parses)",
								   v->name, before, v->value,
								   xl_families[d->family].name));
		free(before);
	}
	/* torch.compile's caches default to $TMPDIR/torchinductor_$USER, a /tmp
	 * that many clusters wipe or share: a local-cache profile that uses
	 * torch.compile's variables should say where they go */
	if (p->policy.cache == XL_CACHE_LOCAL && !xl_profile_var(p, "TORCHINDUCTOR_CACHE_DIR")) {
		for (size_t i = 0; i < p->nvars; i++) {
			const struct xl_flagdef *d = p->vars[i].value ? xl_catalog_env(p->vars[i].name) : NULL;

			if (d && strcmp(xl_families[d->family].name, "torch") == 0) {
				xl_warn("profile '%s': policy 'cache: local' (%s:%u): %s is set but TORCHINDUCTOR_CACHE_DIR is not, so Inductor and Triton cache under $TMPDIR/torchinductor_$USER; set it to a local directory",
					p->name, prov_file(&p->policy.cache_src), p->policy.cache_src.line,
					p->vars[i].name);
				break;
			}
		}
	}
	if (vd.data)
		return XL_EX_DATAERR;
	return vd.policy ? XL_EX_NOPERM : 0;
}

static int make_cache_dir(const struct xl_profile *p, const char *label, const struct xl_flagdef *d,
			  const char *value)
{
	char *dir;

	if (!d || !(d->tags & XL_FTAG_CACHE) || !value || value[0] != '/' || strstr(value, "://"))
		return 0;
	dir = cache_dir_of(value, ends_with_file(d->name));
	if (xl_mkdirs(dir, 0755) != 0) {
		xl_error("profile '%s': cannot create cache directory '%s' for %s: %s",
			 p->name, dir, label, strerror(errno));
		free(dir);
		return XL_EX_CANTCREAT;
	}
	free(dir);
	return 0;
}

int xl_profile_make_cache_dirs(const struct xl_profile *p)
{
	int rc = 0;

	if (p->policy.cache != XL_CACHE_LOCAL)
		return 0;
	for (size_t i = 0; i < p->nvars && !rc; i++) {
		const struct xl_var *v = &p->vars[i];

		if (!v->value)
			continue;
		if (!v->composite) {
			rc = make_cache_dir(p, v->name, xl_catalog_env(v->name), v->value);
			continue;
		}
		for (size_t k = 0; k < v->flags.n && !rc; k++)
			rc = make_cache_dir(p, v->name, xl_catalog_flag(v->name, v->flags.v[k].name),
					    v->flags.v[k].value);
	}
	return rc;
}

/* ---- known-bad flags of a bundle ---------------------------------------------------- */

/* The same value as a flag consumer reads it: a bare flag and 1 are true. */
static bool same_value(const char *bad, const char *have)
{
	const char *h = have ? have : "true";

	if (strcasecmp(bad, h) == 0)
		return true;
	if ((strcasecmp(bad, "true") == 0 && strcmp(h, "1") == 0) ||
	    (strcasecmp(bad, "false") == 0 && strcmp(h, "0") == 0) ||
	    (strcmp(bad, "1") == 0 && strcasecmp(h, "true") == 0) ||
	    (strcmp(bad, "0") == 0 && strcasecmp(h, "false") == 0))
		return true;
	/* libtpu's booleans: yes/no, t/f, y/n as well (a value XLA_FLAGS
	 * refuses never gets this far) */
	{
		bool m;
		const char *x = xl_bool_normalize(XL_BP_ABSL, bad, &m), *y = xl_bool_normalize(XL_BP_ABSL, h, &m);

		return x && y && strcmp(x, y) == 0;
	}
}

int xl_policy_check_known_bad(const struct xl_profile *p, const struct xl_known_bad *bad,
			      size_t n, const char *bundle)
{
	int rc = 0;

	for (size_t i = 0; i < p->nvars; i++) {
		const struct xl_var *v = &p->vars[i];

		for (size_t b = 0; b < n; b++) {
			const char *name = bad[b].flag;

			while (*name == '-')
				name++;
			if (v->composite) {
				const struct xl_flag *f = xl_flagmap_get(&v->flags, name);

				if (!f || (bad[b].value && !same_value(bad[b].value, f->value)))
					continue;
				report(p, &f->src, "policy 'known-bad' refuses %s: --%s on bundle '%s': %s",
				       v->name, name, bundle ? bundle : "?", bad[b].reason);
				rc = XL_EX_NOPERM;
			} else if (v->value && strcmp(v->name, name) == 0 &&
				   (!bad[b].value || same_value(bad[b].value, v->value))) {
				report(p, &v->src, "policy 'known-bad' refuses %s on bundle '%s': %s",
				       v->name, bundle ? bundle : "?", bad[b].reason);
				rc = XL_EX_NOPERM;
			}
		}
	}
	return rc;
}

/* ---- what PyTorch/XLA adds at start ------------------------------------------------- */

/* torch_xla/__init__.py (pytorch/xla v2.9.0, 5fab705): _setup_xla_flags always,
 * _setup_libtpu_flags and _setup_default_env's TPU part when TPU chips are
 * present; each only when the name is not already there. */
static const struct {
	const char *var, *name, *value, *when, *why;
} ptxla_defaults[] = {
	{ "XLA_FLAGS", "xla_cpu_enable_fast_math", "false", "always",
	  "torch_xla keeps CPU fast math off" },
	{ "LIBTPU_INIT_ARGS", "xla_tpu_use_enhanced_launch_barrier", "false", "tpu",
	  "works around a TPU hang" },
	{ "LIBTPU_INIT_ARGS", "xla_latency_hiding_scheduler_rerun", "1", "tpu",
	  "reschedule with less overlap once after an out-of-memory" },
	{ "LIBTPU_INIT_ARGS", "xla_tpu_prefer_async_allgather_to_allreduce", "true", "tpu",
	  "keeps parameters from being resident between forward and backward" },
	{ "LIBTPU_INIT_ARGS", "xla_tpu_enable_flash_attention", "false", "tpu",
	  "the attention rewrite misfires on plain dot-product attention" },
	{ "LIBTPU_INIT_ARGS", "xla_enable_async_all_gather", "true", "tpu-v5",
	  "v5 needs continuation fusion for async collectives" },
	{ "LIBTPU_INIT_ARGS", "xla_enable_async_collective_permute", "true", "tpu-v5",
	  "v5 needs continuation fusion for async collectives" },
};

static const struct {
	const char *name, *value, *when;
} ptxla_env[] = {
	{ "TF_CPP_MIN_LOG_LEVEL", "1", "always" },
	{ "GRPC_VERBOSITY", "ERROR", "always" },
	{ "ALLOW_MULTIPLE_LIBTPU_LOAD", "1", "tpu" },
	{ "TPU_ML_PLATFORM", "PyTorch/XLA", "tpu" },
	{ "ENABLE_RUNTIME_UPTIME_TELEMETRY", "1", "tpu" },
	{ "TPU_MEGACORE", "megacore_dense", "tpu-v4" },
};

static const struct xl_var *find_var(const struct xl_profile *p, const char *name)
{
	for (size_t i = 0; i < p->nvars; i++)
		if (strcmp(p->vars[i].name, name) == 0)
			return &p->vars[i];
	return NULL;
}

/* Whether the job loads torch_xla: the profile is for PyTorch/XLA
 * (PJRT_DEVICE), or, without a runtime's marker, sets a torch_xla
 * variable.  A JAX profile (JAX_PLATFORMS) gets nothing from torch_xla,
 * whatever cache variables it shares with it. */
static bool uses_torch_xla(const struct xl_profile *p)
{
	bool all;

	return (xl_profile_needs(p, &all, NULL) & XL_NEEDS_TORCH_XLA) != 0;
}

json_t *xl_runtime_defaults(const struct xl_profile *p)
{
	json_t *out = json_object();
	const struct xl_var *dev = find_var(p, "PJRT_DEVICE");
	bool tpu_maybe = !dev || !dev->value || strcasecmp(dev->value, "TPU") == 0;

	if (!uses_torch_xla(p))
		return out;
	for (size_t i = 0; i < sizeof(ptxla_defaults) / sizeof(ptxla_defaults[0]); i++) {
		const struct xl_var *v = find_var(p, ptxla_defaults[i].var);
		json_t *arr;
		char *tok;

		if (strcmp(ptxla_defaults[i].when, "always") != 0 && !tpu_maybe)
			continue;
		if (v && xl_flagmap_get(&v->flags, ptxla_defaults[i].name))
			continue;
		arr = json_object_get(out, ptxla_defaults[i].var);
		if (!arr) {
			arr = json_array();
			json_object_set_new(out, ptxla_defaults[i].var, arr);
		}
		tok = xl_asprintf("--%s=%s", ptxla_defaults[i].name, ptxla_defaults[i].value);
		json_array_append_new(arr, json_pack("{s:s,s:s,s:s,s:s,s:s}",
			"name", ptxla_defaults[i].name, "value", ptxla_defaults[i].value,
			"token", tok, "when", ptxla_defaults[i].when, "why", ptxla_defaults[i].why));
		free(tok);
	}
	for (size_t i = 0; i < sizeof(ptxla_env) / sizeof(ptxla_env[0]); i++) {
		const struct xl_var *v = find_var(p, ptxla_env[i].name);
		json_t *arr;

		if (strcmp(ptxla_env[i].when, "always") != 0 && !tpu_maybe)
			continue;
		if (v && v->value)
			continue;
		arr = json_object_get(out, "env");
		if (!arr) {
			arr = json_array();
			json_object_set_new(out, "env", arr);
		}
		json_array_append_new(arr, json_pack("{s:s,s:s,s:s}", "name", ptxla_env[i].name,
						     "value", ptxla_env[i].value, "when", ptxla_env[i].when));
	}
	return out;
}

/* ---- the child's rlimits ----------------------------------------------------------- */

static void set_limit(int res, int64_t v)
{
	struct rlimit rl;

	if (v < 0)
		return;
	rl.rlim_cur = rl.rlim_max = v == INT64_MAX ? RLIM_INFINITY : (rlim_t)v;
	if (setrlimit(res, &rl) < 0) {
		/* lowering the soft limit alone still caps the child */
		getrlimit(res, &rl);
		rl.rlim_cur = v == INT64_MAX ? rl.rlim_max : (rlim_t)v;
		setrlimit(res, &rl);
	}
}

void xl_apply_limits(const struct xl_limits *l)
{
	set_limit(RLIMIT_AS, l->address_space);
	set_limit(RLIMIT_NOFILE, l->open_files);
	set_limit(RLIMIT_CORE, l->core);
	set_limit(RLIMIT_CPU, l->cpu_time);
}
