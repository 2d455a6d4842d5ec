/* overrides.c - `--set VAR=VALUE` and `--flag VAR:NAME=VALUE` of run and
 * exec: one more layer, applied after the profile's own and its
 * candidate's, written as the profile text it stands for so that it is
 * checked, merged, explained and signed like any other setting.  Its
 * provenance is the file "the command line".
 */
#include "launcher/profile/layer.h"

#include <stdlib.h>
#include <string.h>

#define CMDLINE "the command line"

static struct xl_strv sets = XL_STRV_INIT, flags = XL_STRV_INIT;

/* The length of a valid variable name at the start of s, ended by stop. */
static size_t var_len(const char *s, char stop)
{
	const char *end = strchr(s, stop);
	char name[256];
	size_t n;

	if (!end || end == s || (n = (size_t)(end - s)) >= sizeof(name))
		return 0;
	memcpy(name, s, n);
	name[n] = '\0';
	return xl_valid_env_name(name) ? n : 0;
}

bool xl_override_valid(const char *arg, bool flag)
{
	size_t n = var_len(arg, flag ? ':' : '=');
	const char *name, *eq;

	if (!n || !flag)
		return n != 0;
	{
		char *var = xl_strndup(arg, n);
		bool composite = xl_is_composite_var(var);

		free(var);
		if (!composite)
			return false;
	}
	name = arg + n + 1;
	if (name[0] == '-' && name[1] == '-')
		name += 2;
	eq = strchr(name, '=');
	if (!eq || eq == name || *name == '-' || *name == '.')
		return false;
	for (const char *c = name; c < eq; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
		      *c == '_' || *c == '-' || *c == '.'))
			return false;
	return true;
}

bool xl_override_list_add(struct xl_override_list *l, const char *arg, bool flag)
{
	if (l->n >= XL_OVERRIDES_MAX || !xl_override_valid(arg, flag))
		return false;
	l->v[l->n++] = (char *)arg;
	l->v[l->n] = NULL;
	return true;
}

bool xl_opt_override_set(const char *value, void *field)
{
	return xl_override_list_add(field, value, false);
}

bool xl_opt_override_flag(const char *value, void *field)
{
	return xl_override_list_add(field, value, true);
}

void xl_profile_set_overrides(char *const *set, size_t nset, char *const *flag, size_t nflag)
{
	xl_strv_release(&sets);
	xl_strv_release(&flags);
	for (size_t i = 0; i < nset; i++)
		xl_strv_push(&sets, set[i]);
	for (size_t i = 0; i < nflag; i++)
		xl_strv_push(&flags, flag[i]);
}

/* "KEY": to b, JSON-quoted (YAML reads JSON strings). */
static void key(struct xl_buf *b, const char *indent, const char *s, size_t n)
{
	char *k = xl_strndup(s, n);

	xl_buf_adds(b, indent);
	xl_json_str(b, k);
	xl_buf_adds(b, ": ");
	free(k);
}

/* The NAME=VALUE of --flag arg whose variable is n bytes long, without
 * the dashes of NAME. */
static const char *flag_name(const char *arg, size_t n)
{
	const char *name = arg + n + 1;

	return name[0] == '-' && name[1] == '-' ? name + 2 : name;
}

/* Whether flag NAME (of name, up to its '=') of the variable of flags.v[k]
 * is given again after it: the last one counts. */
static bool given_later(size_t k, size_t n, const char *name)
{
	size_t len = strcspn(name, "=");

	for (size_t j = k + 1; j < flags.n; j++) {
		const char *other;

		if (strncmp(flags.v[j], flags.v[k], n + 1) != 0)
			continue;       /* another variable's */
		other = flag_name(flags.v[j], n);
		if (strncmp(other, name, len) == 0 && other[len] == '=')
			return true;
	}
	return false;
}

/* The flags section: each variable once, its flags under it, in the order
 * given (a flag given twice: the last). */
static void flags_text(struct xl_buf *b)
{
	xl_buf_adds(b, "flags:\n");
	for (size_t i = 0; i < flags.n; i++) {
		size_t n = strcspn(flags.v[i], ":");
		bool seen = false;

		for (size_t k = 0; k < i && !seen; k++)
			seen = strncmp(flags.v[k], flags.v[i], n + 1) == 0;
		if (seen)
			continue;
		key(b, "  ", flags.v[i], n);
		xl_buf_adds(b, "\n");
		for (size_t k = i; k < flags.n; k++) {
			const char *name, *eq;

			if (strncmp(flags.v[k], flags.v[i], n + 1) != 0)
				continue;       /* another variable's */
			name = flag_name(flags.v[k], n);
			if (given_later(k, n, name))
				continue;
			eq = strchr(name, '=');
			key(b, "    ", name, (size_t)(eq - name));
			xl_json_str(b, eq + 1);
			xl_buf_adds(b, "\n");
		}
	}
}

int overrides_layer(struct layer **out)
{
	struct xl_buf b = XL_BUF_INIT;
	int rc;

	*out = NULL;
	if (!sets.n && !flags.n)
		return 0;
	if (sets.n)
		xl_buf_adds(&b, "env:\n");
	for (size_t i = 0; i < sets.n; i++) {
		size_t n = strcspn(sets.v[i], "=");
		bool later = false;

		/* a variable given twice: the last one counts */
		for (size_t j = i + 1; j < sets.n && !later; j++)
			later = strncmp(sets.v[j], sets.v[i], n + 1) == 0;
		if (later)
			continue;
		key(&b, "  ", sets.v[i], n);
		xl_json_str(&b, sets.v[i] + n + 1);
		xl_buf_adds(&b, "\n");
	}
	if (flags.n)
		flags_text(&b);
	rc = layer_from_bytes(CMDLINE, CMDLINE, xl_buf_str(&b), b.len, out);
	xl_buf_release(&b);
	return rc;
}
