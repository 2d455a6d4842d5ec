/* needs.c - which runtime a profile is for, and whether the interpreter a
 * launch starts has it.  A profile is for JAX when it sets JAX_PLATFORMS,
 * for PyTorch/XLA when it sets PJRT_DEVICE; without either, for any of the
 * runtimes whose own variables it sets (a cache profile that sets both JAX's
 * and torch_xla's cache directories is for either); a variable every XLA
 * runtime reads (TF_CPP_MIN_LOG_LEVEL) names none.  `run` and `exec` stop
 * before the start when the interpreter the command names (argv[0] or a
 * script's #!) has none of what the profile is for.
 */
#include "launcher/profile/profile.h"
#include "bundle/bundle.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct {
	unsigned bit;
	const char *family;      /* catalog family of its variables */
	const char *marker;      /* the variable that says a profile is for it alone */
	const char *package;     /* what the interpreter must have */
	const char *title;
} runtimes[] = {
	{ XL_NEEDS_JAX, "jax", "JAX_PLATFORMS", "jax", "JAX" },
	{ XL_NEEDS_TORCH_XLA, "torch_xla", "PJRT_DEVICE", "torch_xla", "PyTorch/XLA" },
	{ XL_NEEDS_TORCH, "torch", NULL, "torch", "PyTorch" },
};
#define NRUNTIMES (sizeof(runtimes) / sizeof(runtimes[0]))

/* The runtimes whose catalogs list variable name, where that tells which
 * runtime a profile is for: a variable the `runtime` catalog lists is read
 * by the layer every XLA runtime loads (TF_CPP_MIN_LOG_LEVEL by TSL's
 * logger, TPU_* by libtpu), by a JAX job as much as by a PyTorch/XLA one,
 * so it tells none, whichever runtime's own catalog lists it too. */
static unsigned families_of(const char *name)
{
	const struct xl_flagdef *d;
	size_t n = xl_catalog_find_all(name, &d);
	unsigned out = 0;

	for (size_t k = 0; k < n; k++)
		if (strcmp(xl_families[d[k].family].name, "runtime") == 0)
			return 0;
	for (size_t k = 0; k < n; k++)
		for (size_t r = 0; r < NRUNTIMES; r++)
			if (strcmp(xl_families[d[k].family].name, runtimes[r].family) == 0)
				out |= runtimes[r].bit;
	return out;
}

/* The runtimes p's marker variables name (*marked) and those whose
 * catalogs list a variable it sets (*any), with the first variable of
 * each. */
static void scan(const struct xl_profile *p, unsigned *marked, unsigned *any,
		 const char **first_marker, const char **first_any)
{
	*marked = *any = 0;
	*first_marker = *first_any = NULL;
	for (size_t i = 0; i < p->nvars; i++) {
		const struct xl_var *v = &p->vars[i];
		unsigned f;

		if (!v->value)
			continue;
		for (size_t r = 0; r < NRUNTIMES; r++)
			if (runtimes[r].marker && strcmp(v->name, runtimes[r].marker) == 0) {
				*marked |= runtimes[r].bit;
				if (!*first_marker)
					*first_marker = v->name;
			}
		if (v->composite)
			continue;
		f = families_of(v->name);
		if (f && !*first_any)
			*first_any = v->name;
		*any |= f;
	}
}

unsigned xl_profile_needs(const struct xl_profile *p, bool *all, const char **because)
{
	unsigned marked, any;
	const char *first_marker, *first_any;

	scan(p, &marked, &any, &first_marker, &first_any);
	*all = marked != 0;
	if (because)
		*because = marked ? first_marker : first_any;
	return marked ? marked : any;
}

static const char *installed(const struct xl_runtime *rt, unsigned bit)
{
	switch (bit) {
	case XL_NEEDS_JAX:
		return rt->jax ? rt->jax : rt->jaxlib;
	case XL_NEEDS_TORCH_XLA:
		return rt->torch_xla;
	default:
		return rt->torch;
	}
}

/* Whether rt has what needs asks: every bit (all), or one of them. */
static bool satisfied(const struct xl_runtime *rt, unsigned needs, bool all)
{
	for (size_t r = 0; r < NRUNTIMES; r++) {
		bool has;

		if (!(needs & runtimes[r].bit))
			continue;
		has = installed(rt, runtimes[r].bit) != NULL;
		if (all && !has)
			return false;
		if (!all && has)
			return true;
	}
	return all;
}

/* "jax" or "jax or torch_xla" or "jax and torch_xla". */
static char *needs_str(unsigned needs, bool all, bool titles)
{
	struct xl_buf b = XL_BUF_INIT;
	size_t k = 0, n = 0;

	for (size_t r = 0; r < NRUNTIMES; r++)
		n += (needs & runtimes[r].bit) != 0;
	for (size_t r = 0; r < NRUNTIMES; r++) {
		if (!(needs & runtimes[r].bit))
			continue;
		if (k)
			xl_buf_adds(&b, k + 1 == n ? (all ? " and " : " or ") : ", ");
		xl_buf_adds(&b, titles ? runtimes[r].title : runtimes[r].package);
		k++;
	}
	return xl_buf_detach(&b);
}

/* An interpreter near this launch that has what the profile needs:
 * $VIRTUAL_ENV's, ./.venv's, python3 on PATH (not the one refused).
 * *where says how it was found.  Caller frees; NULL for none. */
static char *one_that_has(const struct xl_runtime *refused, unsigned needs, bool all,
			  const char **where)
{
	const char *venv = getenv("VIRTUAL_ENV");
	char *tries[3] = { NULL, NULL, NULL }, *found = NULL;
	static const char *const names[3] = { "VIRTUAL_ENV", "the .venv here", "PATH" };

	if (venv && *venv)
		tries[0] = xl_asprintf("%s/bin/python", venv);
	tries[1] = xl_strdup(".venv/bin/python");
	tries[2] = xl_strdup("python3");
	for (size_t i = 0; i < 3; i++) {
		struct xl_runtime rt = { 0 };

		if (!found && tries[i] && xl_runtime_of_python(tries[i], &rt) == 0 && rt.python &&
		    !(refused->python && strcmp(rt.python, refused->python) == 0) &&
		    satisfied(&rt, needs, all)) {
			found = i == 1 ? xl_strdup(tries[1]) : xl_strdup(rt.python);
			*where = names[i];
		}
		xl_runtime_release(&rt);
		free(tries[i]);
	}
	return found;
}

int xl_profile_runtime_check(const struct xl_profile *p, const struct xl_runtime *rt,
			     const char *anyway)
{
	const char *because, *first_any, *where = NULL;
	unsigned marked, any, needs;
	bool all;
	char *what, *titles, *other;

	/* only an interpreter the command names itself: a shell script or a
	 * binary may start any Python, or none (and costs nothing here) */
	if (!rt || !rt->python || rt->why || !rt->source ||
	    (strcmp(rt->source, "argv[0]") != 0 && strcmp(rt->source, "#!") != 0))
		return 0;
	scan(p, &marked, &any, &because, &first_any);
	all = marked != 0;
	needs = marked ? marked : any;
	if (!needs || satisfied(rt, needs, all))
		return 0;
	what = needs_str(needs, all, false);
	titles = needs_str(needs, all, true);
	/* a profile for one runtime that also sets another's variables (a
	 * shared cache profile), run by a Python that has that other one:
	 * said, not stopped (tpu-v5e's PJRT_DEVICE, for torch_xla, is
	 * harmless to a JAX job) */
	if (satisfied(rt, any | marked, false)) {
		xl_warn("profile '%s' is for %s (it sets %s) and %s has no %s: launching, since it "
			"has another runtime the profile sets variables for", p->name, titles,
			because ? because : first_any, rt->python, what);
		free(what);
		free(titles);
		return 0;
	}
	xl_error("profile '%s' is for %s (it sets %s) and %s (%s) has no %s: the job would fail "
		 "at its first import", p->name, titles, because ? because : first_any, rt->python,
		 strcmp(rt->source, "#!") == 0 ? "the script's #!" : "the command", what);
	other = one_that_has(rt, needs, all, &where);
	if (other)
		xl_info("%s (%s) has it: run the command with that one, or launch anyway with %s",
			other, where, anyway);
	else
		xl_info("no interpreter here has it (VIRTUAL_ENV, .venv, python3 on PATH): install "
			"%s for %s, or launch anyway with %s", what, rt->python, anyway);
	free(other);
	free(what);
	free(titles);
	return XL_EX_UNAVAILABLE;
}

/* ---- names and values a runtime would not take --------------------------------------- */

/* Values of variables whose catalogs say "string" but whose runtimes take
 * a few words (and the names of PJRT plugins installed, which xlaunch
 * cannot list: a warning, never a refusal). */
static const struct {
	const char *var;
	bool list;               /* comma-separated */
	const char *const values[8];
} enumerated[] = {
	/* jax/_src/xla_bridge.py: the platforms and their aliases */
	{ "JAX_PLATFORMS", true, { "cpu", "cuda", "rocm", "tpu", "gpu", NULL } },
	/* torch_xla/runtime.py: the devices PJRT_DEVICE names (case matters) */
	{ "PJRT_DEVICE", false, { "CPU", "CUDA", "TPU", "XPU", "NEURON", NULL } },
};

/* Says each warning once per process (run checks the profile, then each
 * candidate). */
static void warn_once(const struct xl_profile *p, const struct xl_prov *src, const char *what)
{
	static struct xl_strv said = XL_STRV_INIT;
	char *line = src->line ? xl_asprintf("profile '%s': %s:%u:%u: %s", p->name,
					     src->file ? src->file : "?", src->line, src->col, what)
		   : src->file ? xl_asprintf("profile '%s': %s: %s", p->name, src->file, what)
			       : xl_asprintf("profile '%s': %s", p->name, what);

	for (size_t i = 0; i < said.n; i++)
		if (strcmp(said.v[i], line) == 0) {
			free(line);
			return;
		}
	xl_warn("%s", line);
	xl_strv_push_owned(&said, line);
}

void xl_profile_warn_unknown_var(const struct xl_profile *p, const struct xl_var *v)
{
	const char *dym = xl_catalog_suggest(NULL, v->name);
	char *what;

	/* a variable of the job's own (MICRO_BATCH) is no mistake; one a
	 * letter or two away from a runtime's is */
	if (!dym)
		return;
	what = xl_asprintf("%s: not in any catalog; did you mean '%s'?", v->name, dym);
	warn_once(p, &v->src, what);
	free(what);
}

/* Whether word (len bytes) is one of values. */
static bool one_of(const char *word, size_t len, const char *const *values)
{
	for (size_t i = 0; values[i]; i++)
		if (strlen(values[i]) == len && strncmp(values[i], word, len) == 0)
			return true;
	return false;
}

void xl_profile_warn_value(const struct xl_profile *p, const struct xl_var *v)
{
	for (size_t e = 0; e < sizeof(enumerated) / sizeof(enumerated[0]); e++) {
		const char *s = v->value;

		if (!s || strcmp(v->name, enumerated[e].var) != 0)
			continue;
		while (*s) {
			size_t len = enumerated[e].list ? strcspn(s, ",") : strlen(s);

			if (len && !one_of(s, len, enumerated[e].values)) {
				struct xl_buf b = XL_BUF_INIT;
				char *word = xl_strndup(s, len);
				const char *dym = xl_did_you_mean(word, enumerated[e].values);

				xl_buf_addf(&b, "%s: '%s' is not a %s xlaunch knows (", v->name, word,
					    enumerated[e].list ? "platform" : "device");
				for (size_t i = 0; enumerated[e].values[i]; i++)
					xl_buf_addf(&b, "%s%s", i ? ", " : "", enumerated[e].values[i]);
				xl_buf_addf(&b, ", or an installed PJRT plugin's name); the runtime fails "
					    "at start on a name it does not have%s%s%s", dym ? "; did you mean '" : "",
					    dym ? dym : "", dym ? "'?" : "");
				warn_once(p, &v->src, xl_buf_str(&b));
				xl_buf_release(&b);
				free(word);
			}
			s += len;
			if (*s == ',')
				s++;
		}
	}
}
