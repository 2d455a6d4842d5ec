/* envfmt.c - writing a resolved environment as sh, dotenv, k8s or JSON. */
#include "launcher/profile/profile.h"

#include <stdlib.h>
#include <string.h>

char *xl_sh_quote(const char *s)
{
	struct xl_buf b = XL_BUF_INIT;

	/* single quotes keep everything literal; a ' is closed, escaped, reopened */
	xl_buf_addc(&b, '\'');
	for (; *s; s++) {
		if (*s == '\'')
			xl_buf_adds(&b, "'\\''");
		else
			xl_buf_addc(&b, *s);
	}
	xl_buf_addc(&b, '\'');
	return xl_buf_detach(&b);
}

static void dotenv_quote(struct xl_buf *b, const char *s)
{
	xl_buf_addc(b, '"');
	for (; *s; s++) {
		switch (*s) {
		case '"': xl_buf_adds(b, "\\\""); break;
		case '\\': xl_buf_adds(b, "\\\\"); break;
		case '\n': xl_buf_adds(b, "\\n"); break;
		case '$': xl_buf_adds(b, "\\$"); break;
		case '`': xl_buf_adds(b, "\\`"); break;
		default: xl_buf_addc(b, *s);
		}
	}
	xl_buf_addc(b, '"');
}

/* Kubernetes expands $(VAR) in a value (from variables defined before it
 * in the list); "$$(" keeps a literal "$(" as written.  Caller frees. */
static char *k8s_literal(const char *s)
{
	struct xl_buf b = XL_BUF_INIT;

	for (; *s; s++) {
		if (s[0] == '$' && s[1] == '(')
			xl_buf_addc(&b, '$');
		xl_buf_addc(&b, *s);
	}
	return xl_buf_detach(&b);
}

int xl_env_format_parse(const char *s, enum xl_env_format *out)
{
	static const char *const names[] = { "sh", "json", "dotenv", "k8s" };

	for (int i = 0; i < 4; i++) {
		if (strcmp(s, names[i]) == 0) {
			*out = (enum xl_env_format)i;
			return 0;
		}
	}
	return -1;
}

/* A comment line with what the candidate appends to the command (no
 * environment carries it): its args, quoted as a shell would need them. */
static void add_args_note(struct xl_buf *b, const struct xl_profile *p)
{
	const struct xl_strv *a = xl_profile_args(p);

	if (!a)
		return;
	xl_buf_addf(b, "# candidate %s appends to the command:", p->cands[p->cand].name);
	for (size_t i = 0; i < a->n; i++) {
		char *q = xl_sh_quote(a->v[i]);

		xl_buf_addf(b, " %s", q);
		free(q);
	}
	xl_buf_addc(b, '\n');
}

char *xl_env_render(const struct xl_profile *p, enum xl_env_format fmt)
{
	struct xl_buf b = XL_BUF_INIT;

	if (fmt == XL_FMT_JSON) {
		json_t *full = xl_profile_to_json(p);
		json_t *j = json_object();
		char *s;

		json_object_set(j, "profile", json_object_get(full, "profile"));
		json_object_set(j, "candidate", json_object_get(full, "candidate"));
		if (json_object_get(full, "args"))
			json_object_set(j, "args", json_object_get(full, "args"));
		json_object_set(j, "env", json_object_get(full, "env"));
		json_object_set(j, "unset", json_object_get(full, "unset"));
		json_object_set(j, "sources", json_object_get(full, "sources"));
		{
			json_t *st = json_array();

			for (size_t i = 0; i < p->stripped.n; i++)
				json_array_append_new(st, json_string(p->stripped.v[i]));
			json_object_set_new(j, "stripped", st);
		}
		s = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		xl_buf_adds(&b, s);
		xl_buf_addc(&b, '\n');
		free(s);
		json_decref(j);
		json_decref(full);
		return xl_buf_detach(&b);
	}
	if (p->for_target) {
		/* what the target machine's values are, and where they came from */
		xl_buf_addf(&b, "# profile %s%s%s: rendered for another machine (this machine's environment is not read)\n",
			    p->name, p->cand >= 0 ? ", candidate " : "", p->cand >= 0 ? p->cands[p->cand].name : "");
		for (size_t i = 0; i < p->target_notes.n; i++)
			xl_buf_addf(&b, "# %s\n", p->target_notes.v[i]);
	}
	add_args_note(&b, p);
	if (fmt == XL_FMT_K8S)
		xl_buf_adds(&b, "env:\n");
	for (size_t i = 0; i < p->nvars; i++) {
		const struct xl_var *v = &p->vars[i];
		bool set = v->value && (!v->composite || v->flags.n);

		switch (fmt) {
		case XL_FMT_SH:
			if (set) {
				char *q = xl_sh_quote(v->value);

				xl_buf_addf(&b, "export %s=%s\n", v->name, q);
				free(q);
			} else {
				xl_buf_addf(&b, "unset %s\n", v->name);
			}
			break;
		case XL_FMT_DOTENV:
			if (set) {
				xl_buf_addf(&b, "%s=", v->name);
				dotenv_quote(&b, v->value);
				xl_buf_addc(&b, '\n');
			} else {
				xl_buf_addf(&b, "# unset %s (a dotenv file cannot remove a variable)\n",
					    v->name);
			}
			break;
		case XL_FMT_K8S:
			if (set) {
				char *lit = k8s_literal(v->value);

				xl_buf_addf(&b, "- name: %s\n  value: ", v->name);
				xl_json_str(&b, lit);
				xl_buf_addc(&b, '\n');
				free(lit);
			} else {
				xl_buf_addf(&b, "# unset %s: a pod spec cannot remove a variable; keep it out of the image\n",
					    v->name);
			}
			break;
		case XL_FMT_JSON:
			break;
		}
	}
	/* what the ambient policy keeps from the child: eval gives the same */
	for (size_t i = 0; fmt == XL_FMT_SH && i < p->stripped.n; i++)
		xl_buf_addf(&b, "unset %s\n", p->stripped.v[i]);
	return xl_buf_detach(&b);
}
