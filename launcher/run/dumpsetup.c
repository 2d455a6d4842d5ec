/* dumpsetup.c - XLA asked to dump its compiled modules for the watch to
 * read (see dumpsetup.h). */
#include "launcher/run/dumpsetup.h"
#include "launcher/flags/flags.h"

#include <stdlib.h>
#include <string.h>

char *xl_xla_dump_tokens(const char *dir)
{
	/* the report comes with any dump; text is the smallest, without
	 * metadata smaller still.  No --xla_dump_max_hlo_modules: XLA counts
	 * the modules a process dumped, deleted or not, and past its cap
	 * writes an error line per file it skips; the reader keeps the dump
	 * small instead (dump.c) */
	return xl_asprintf("--xla_dump_to=%s --xla_dump_hlo_as_text --xla_dump_disable_metadata", dir);
}

/* Whether every runtime of etc/cachekeys.yaml leaves flag NAME ("--xla_x")
 * out of its persistent-cache key: in each one's exclude list and none of
 * its exceptions.  *why says which does not. */
static bool out_of_every_key(const struct xl_ynode *rules, const char *name, char *why, size_t size)
{
	size_t runtimes = 0;

	for (size_t i = 0; rules && rules->kind == XL_Y_MAP && i + 1 < rules->n; i += 2) {
		const struct xl_ynode *rt = rules->items[i + 1];
		const struct xl_ynode *flags = xl_ymap_get(rt, "flags");
		const struct xl_ynode *ex = xl_ymap_get(flags, "exclude");
		const struct xl_ynode *exc = xl_ymap_get(flags, "exceptions");
		bool excluded = false;

		if (!flags)
			continue;
		runtimes++;
		for (size_t k = 0; ex && ex->kind == XL_Y_SEQ && k < ex->n; k++)
			if (ex->items[k]->kind == XL_Y_SCALAR && strcmp(ex->items[k]->str, name) == 0)
				excluded = true;
		for (size_t k = 0; exc && exc->kind == XL_Y_SEQ && k < exc->n; k++) {
			const struct xl_ynode *f = xl_ymap_get(exc->items[k], "flag");

			if (f && f->kind == XL_Y_SCALAR && strcmp(f->str, name) == 0)
				excluded = false;
		}
		if (!excluded) {
			snprintf(why, size, "not asked: %s would enter %s's persistent-cache key"
				 " (etc/cachekeys.yaml)", name, rules->items[i]->str);
			return false;
		}
	}
	if (!runtimes) {
		snprintf(why, size, "not asked: etc/cachekeys.yaml names no runtime");
		return false;
	}
	return true;
}

static bool xla_job(const struct xl_profile *p, const json_t *parts)
{
	const json_t *pk = json_object_get(json_object_get(parts, "bundle"), "packages");
	static const char *const prefixes[] = { "XLA_", "JAX_", "PJRT_", "TPU_", "LIBTPU_", NULL };

	if (json_object_get(pk, "jax") || json_object_get(pk, "jaxlib") ||
	    json_object_get(pk, "torch-xla"))
		return true;
	for (size_t i = 0; i < p->nvars; i++)
		for (size_t k = 0; prefixes[k]; k++)
			if (xl_startswith(p->vars[i].name, prefixes[k]))
				return true;
	return false;
}

/* The index of NAME=... in envp, or -1. */
static ssize_t env_index(char **envp, const char *name)
{
	size_t l = strlen(name);

	for (size_t i = 0; envp[i]; i++)
		if (strncmp(envp[i], name, l) == 0 && envp[i][l] == '=')
			return (ssize_t)i;
	return -1;
}

bool xl_xla_dump_keyless(const char *file, char *why, size_t size)
{
	static const char *const names[] = {
		"--xla_dump_to", "--xla_dump_hlo_as_text", "--xla_dump_disable_metadata", NULL,
	};
	size_t len;
	char *err = NULL, *data = xl_read_file(file, &len, 1 << 20);
	struct xl_ynode *rules = data ? xl_yaml_parse(data, len, &err) : NULL;
	bool ok = rules != NULL;

	free(data);
	free(err);
	if (!rules)
		snprintf(why, size, "not asked: cannot read '%s'", file);
	for (size_t i = 0; ok && names[i]; i++)
		ok = out_of_every_key(rules, names[i], why, size);
	xl_ynode_free(rules);
	return ok;
}

void xl_xla_dump_setup(const struct xl_profile *p, const json_t *parts, const char *run_dir,
		       bool disabled, char ***envp, struct xl_xla_dump *d)
{
	ssize_t at = env_index(*envp, "XLA_FLAGS");
	const char *cur = at >= 0 ? strchr((*envp)[at], '=') + 1 : "";
	struct xl_tokens toks = { NULL, 0 };
	char *err = NULL;
	bool ok;

	memset(d, 0, sizeof(*d));
	if (disabled) {
		snprintf(d->why, sizeof(d->why), "not asked (--no-xla-dump)");
		return;
	}
	if (p->policy.timing) {
		snprintf(d->why, sizeof(d->why), "not asked: policy 'timing: true'");
		return;
	}
	if (!xla_job(p, parts)) {
		snprintf(d->why, sizeof(d->why), "not asked: not an XLA job");
		return;
	}
	if (*cur && cur[strspn(cur, " \t\n")] != '-' && cur[strspn(cur, " \t\n")]) {
		snprintf(d->why, sizeof(d->why), "not asked: XLA_FLAGS names a flags file");
		return;
	}
	if (xl_flags_tokenize(cur, &toks, &err)) {
		for (size_t i = 0; i < toks.n; i++)
			if (toks.v[i].kind == XL_TOK_FLAG && strcmp(toks.v[i].name, "xla_dump_to") == 0 &&
			    toks.v[i].value && *toks.v[i].value) {
				/* the user's own dump: read, never pruned */
				free(d->dir);
				d->dir = xl_strdup(toks.v[i].value);
				d->user = true;
			}
		xl_tokens_release(&toks);
	}
	free(err);
	if (d->dir && (strcmp(d->dir, "-") == 0 || strcmp(d->dir, "sponge") == 0)) {
		/* XLA writes to its stdout, or to a test runner's directory */
		snprintf(d->why, sizeof(d->why), "not read: --xla_dump_to=%s is not a directory",
			 d->dir);
		free(d->dir);
		d->dir = NULL;
	}
	if (d->dir || d->user)
		return;
	ok = xl_xla_dump_keyless_rules(xl_ck_runtimes, xl_ck_nruntimes, d->why, sizeof(d->why));
	if (!ok)
		return;
	d->dir = xl_asprintf("%s/xla-dump", run_dir);
	d->ours = true;
	d->tokens = xl_xla_dump_tokens(d->dir);
	{
		char *v = *cur ? xl_asprintf("XLA_FLAGS=%s %s", cur, d->tokens)
			       : xl_asprintf("XLA_FLAGS=%s", d->tokens);

		if (at >= 0) {
			free((*envp)[at]);
			(*envp)[at] = v;
		} else {
			size_t n = 0;

			while ((*envp)[n])
				n++;
			*envp = xl_realloc(*envp, (n + 2) * sizeof(char *));
			(*envp)[n] = v;
			(*envp)[n + 1] = NULL;
		}
	}
}

void xl_xla_dump_release(struct xl_xla_dump *d)
{
	free(d->dir);
	free(d->tokens);
	memset(d, 0, sizeof(*d));
}
