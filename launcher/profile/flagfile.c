/* flagfile.c - one value of a composite flag variable, read the way XLA
 * reads it, merged into a profile's flags.
 *
 * XLA (xla/parse_flags_from_env.cc at the commit xlareader.h names) takes a
 * value whose first non-blank byte is not '-' as the path of a flags file
 * and reads the file's contents in its place.  A profile does the same
 * before its layers merge: the file is read once, at resolution, and its
 * tokens are inlined, each with the file, line and column it stands at, so
 * the child gets the flags themselves.
 *
 * Within one value XLA hands every token to the flag's setter in order, so
 * a list-valued flag (xlareader.h: xl_xla_list_valued) repeated there
 * builds up, and both tokens are kept.  Across layers the later layer's
 * tokens of a flag replace the earlier layer's, lists included; the flag
 * then remembers where the replaced value was set (xl_flag.prev).
 */
#include "launcher/profile/layer.h"
#include "launcher/flags/flags.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Line and column (1-based) of byte off in text. */
static void position(const char *text, size_t off, unsigned *line, unsigned *col)
{
	*line = 1;
	*col = 1;
	for (size_t i = 0; i < off && text[i]; i++) {
		if (text[i] == '\n') {
			(*line)++;
			*col = 1;
		} else {
			(*col)++;
		}
	}
}

/* Whether name appears among m->v[from..]. */
static bool seen_since(const struct xl_flagmap *m, size_t from, const char *name)
{
	for (size_t i = from; i < m->n; i++)
		if (strcmp(m->v[i].name, name) == 0)
			return true;
	return false;
}

void xl_flagmap_set_layer(struct xl_flagmap *m, const char *var, const char *name,
			  const char *value, struct xl_prov src)
{
	const struct xl_flag *old = xl_flagmap_get(m, name);
	struct xl_prov prev = { NULL, 0, 0 };
	bool list = xl_xla_list_valued(xl_catalog_flag(var, name));

	if (old && list)
		prev = old->src;
	xl_flagmap_set(m, name, value, src);
	if (prev.file) {
		for (size_t i = 0; i < m->n; i++) {
			if (strcmp(m->v[i].name, name) == 0) {
				m->v[i].prev = prev;
				break;
			}
		}
	}
}

bool xl_flagmap_read(struct xl_flagmap *m, const char *var, const char *value,
		     struct xl_prov src, struct xl_strv *paths, struct xl_prov *at_err,
		     char **err)
{
	struct xl_tokens t;
	char *content = NULL;
	const char *text = value, *file = NULL;
	size_t len = 0;
	struct xl_flagmap cur = { NULL, 0, 0 };
	struct xl_strv done = XL_STRV_INIT;

	*err = NULL;
	*at_err = src;
	if (xl_xla_is_file(value)) {
		if (!paths) {
			*err = xl_asprintf("'%s' names a flags file, and none is read here", value);
			return false;
		}
		/* [env] the whole value, blanks included, is the path */
		content = xl_read_file(value, &len, XL_PROFILE_MAX_BYTES);
		if (!content) {
			*err = xl_asprintf("'%s' does not start with '-', so XLA reads it as the path of a flags file, which cannot be read: %s",
					   value, errno == EFBIG ? "larger than 16 MiB" : strerror(errno));
			return false;
		}
		if (memchr(content, '\0', len)) {
			*err = xl_asprintf("flags file '%s' holds a NUL byte", value);
			free(content);
			return false;
		}
		xl_strv_push(paths, value);
		file = paths->v[paths->n - 1];
		text = content;
	}
	if (!xl_flags_tokenize(text, &t, err)) {
		free(content);
		return false;
	}
	for (size_t i = 0; i < t.n; i++) {
		const struct xl_token *k = &t.v[i];
		struct xl_prov at = src;

		if (file) {
			at.file = file;
			position(text, k->offset, &at.line, &at.col);
		}
		if (k->kind != XL_TOK_FLAG || !k->name[0]) {
			*at_err = at;
			*err = xl_asprintf("'%s' is not a --flag (XLA stops reading %s here)", k->raw,
					   file ? "the file" : "flags");
			xl_tokens_release(&t);
			xl_flagmap_release(&cur);
			free(content);
			return false;
		}
		/* [opts] a repeated list-valued flag builds up; any other
		 * repeated flag is set again, the last token winning */
		if (seen_since(&cur, 0, k->name) &&
		    xl_xla_list_valued(xl_catalog_flag(var, k->name)))
			xl_flagmap_add(&cur, k->name, k->value, at);
		else
			xl_flagmap_set(&cur, k->name, k->value, at);
	}
	xl_tokens_release(&t);
	free(content);
	/* this value's tokens replace what earlier layers set */
	for (size_t i = 0; i < cur.n; i++) {
		const struct xl_flag *f = &cur.v[i];

		if (xl_strv_contains(&done, f->name)) {
			xl_flagmap_add(m, f->name, f->value, f->src);
		} else {
			xl_flagmap_set_layer(m, var, f->name, f->value, f->src);
			xl_strv_push(&done, f->name);
		}
	}
	xl_strv_release(&done);
	xl_flagmap_release(&cur);
	return true;
}
