/* yaml.c - a small YAML tree on libyaml's event parser.
 *
 * Every node keeps its position.  Anchors are remembered and aliases are
 * expanded by copying, with a bound on the total number of nodes so that a
 * "billion laughs" document is refused early instead of expanded.
 */
#include "common.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

struct anchor {
	char *name;
	struct xl_ynode *node;
};

struct yctx {
	yaml_parser_t parser;
	struct anchor *anchors;
	size_t nanchors, capanchors;
	size_t nodes;
	char *err;
};

static void set_err(struct yctx *y, unsigned line, unsigned col, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void set_err(struct yctx *y, unsigned line, unsigned col, const char *fmt, ...)
{
	struct xl_buf b = XL_BUF_INIT;
	va_list ap;

	if (y->err)
		return;
	xl_buf_addf(&b, "%u:%u: ", line, col);
	va_start(ap, fmt);
	xl_buf_vaddf(&b, fmt, ap);
	va_end(ap);
	y->err = xl_buf_detach(&b);
}

static struct xl_ynode *new_node(struct yctx *y, enum xl_ynode_kind kind,
				 const yaml_event_t *ev)
{
	struct xl_ynode *n;

	if (++y->nodes > XL_YAML_MAX_NODES) {
		set_err(y, (unsigned)ev->start_mark.line + 1, (unsigned)ev->start_mark.column + 1,
			"document too large (more than %d nodes, aliases expanded)",
			XL_YAML_MAX_NODES);
		return NULL;
	}
	n = xl_calloc(1, sizeof(*n));
	n->kind = kind;
	n->line = (unsigned)ev->start_mark.line + 1;
	n->col = (unsigned)ev->start_mark.column + 1;
	return n;
}

static void add_item(struct xl_ynode *parent, struct xl_ynode *child, size_t *cap)
{
	if (parent->n == *cap) {
		*cap = *cap ? *cap * 2 : 4;
		parent->items = xl_realloc(parent->items, *cap * sizeof(*parent->items));
	}
	parent->items[parent->n++] = child;
}

struct xl_ynode *xl_yaml_read(const char *what, const char *path, int *rc)
{
	char *data, *err = NULL;
	struct xl_ynode *root;
	size_t len;

	data = xl_read_file(path, &len, 0);
	if (!data) {
		xl_error("%s '%s': cannot read: %s", what, path, strerror(errno));
		*rc = XL_EX_NOINPUT;
		return NULL;
	}
	root = xl_yaml_parse(data, len, &err);
	free(data);
	if (!root) {
		xl_error("%s '%s':%s", what, path, err);
		free(err);
		*rc = XL_EX_DATAERR;
	}
	return root;
}

void xl_ynode_free(struct xl_ynode *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->n; i++)
		xl_ynode_free(n->items[i]);
	free(n->items);
	free(n->str);
	free(n->tag);
	free(n);
}

static size_t count_nodes(const struct xl_ynode *n, size_t limit)
{
	size_t c = 1;

	for (size_t i = 0; i < n->n && c <= limit; i++)
		c += count_nodes(n->items[i], limit - c);
	return c;
}

static struct xl_ynode *copy_node(const struct xl_ynode *src, unsigned line, unsigned col)
{
	struct xl_ynode *n = xl_calloc(1, sizeof(*n));

	n->kind = src->kind;
	n->tag = src->tag ? xl_strdup(src->tag) : NULL;
	if (src->str)
		n->str = xl_strndup(src->str, src->len);
	n->len = src->len;
	n->plain = src->plain;
	/* a copy carries the alias' position: that is where the value is used */
	n->line = line;
	n->col = col;
	if (src->n) {
		n->items = xl_calloc(src->n, sizeof(*n->items));
		for (size_t i = 0; i < src->n; i++)
			n->items[i] = copy_node(src->items[i], src->items[i]->line,
						src->items[i]->col);
		n->n = src->n;
	}
	return n;
}

static void remember_anchor(struct yctx *y, const yaml_char_t *name, struct xl_ynode *n)
{
	if (!name)
		return;
	/* a redefined anchor shadows the older one */
	if (y->nanchors == y->capanchors) {
		y->capanchors = y->capanchors ? y->capanchors * 2 : 8;
		y->anchors = xl_realloc(y->anchors, y->capanchors * sizeof(*y->anchors));
	}
	y->anchors[y->nanchors].name = xl_strdup((const char *)name);
	y->anchors[y->nanchors].node = n;
	y->nanchors++;
}

static struct xl_ynode *parse_node(struct yctx *y, yaml_event_t *ev, unsigned depth);

static bool next_event(struct yctx *y, yaml_event_t *ev)
{
	if (!yaml_parser_parse(&y->parser, ev)) {
		const yaml_mark_t *m = y->parser.problem ? &y->parser.problem_mark
							 : &y->parser.context_mark;
		const char *problem = y->parser.problem ? y->parser.problem : "invalid YAML";

		if (y->parser.context)
			set_err(y, (unsigned)m->line + 1, (unsigned)m->column + 1, "%s %s",
				y->parser.context, problem);
		else
			set_err(y, (unsigned)m->line + 1, (unsigned)m->column + 1, "%s", problem);
		return false;
	}
	return true;
}

static struct xl_ynode *parse_collection(struct yctx *y, yaml_event_t *start, unsigned depth)
{
	bool is_map = start->type == YAML_MAPPING_START_EVENT;
	yaml_event_type_t end = is_map ? YAML_MAPPING_END_EVENT : YAML_SEQUENCE_END_EVENT;
	const yaml_char_t *tag = is_map ? start->data.mapping_start.tag
					: start->data.sequence_start.tag;
	const yaml_char_t *anchor = is_map ? start->data.mapping_start.anchor
					   : start->data.sequence_start.anchor;
	struct xl_ynode *n;
	size_t cap = 0;

	if (depth > XL_YAML_MAX_DEPTH) {
		set_err(y, (unsigned)start->start_mark.line + 1,
			(unsigned)start->start_mark.column + 1,
			"nesting deeper than %d levels", XL_YAML_MAX_DEPTH);
		return NULL;
	}
	n = new_node(y, is_map ? XL_Y_MAP : XL_Y_SEQ, start);
	if (!n)
		return NULL;
	if (tag)
		n->tag = xl_strdup((const char *)tag);
	for (;;) {
		yaml_event_t ev;
		struct xl_ynode *child;

		if (!next_event(y, &ev))
			goto fail;
		if (ev.type == end) {
			yaml_event_delete(&ev);
			break;
		}
		child = parse_node(y, &ev, depth + 1);
		yaml_event_delete(&ev);
		if (!child)
			goto fail;
		add_item(n, child, &cap);
	}
	/* anchor after completion: a collection cannot alias itself */
	remember_anchor(y, anchor, n);
	return n;
fail:
	xl_ynode_free(n);
	return NULL;
}

static struct xl_ynode *parse_node(struct yctx *y, yaml_event_t *ev, unsigned depth)
{
	struct xl_ynode *n;

	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		n = new_node(y, XL_Y_SCALAR, ev);
		if (!n)
			return NULL;
		n->str = xl_strndup((const char *)ev->data.scalar.value, ev->data.scalar.length);
		n->len = ev->data.scalar.length;
		n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
		if (ev->data.scalar.tag)
			n->tag = xl_strdup((const char *)ev->data.scalar.tag);
		remember_anchor(y, ev->data.scalar.anchor, n);
		return n;
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT:
		return parse_collection(y, ev, depth);
	case YAML_ALIAS_EVENT: {
		const char *name = (const char *)ev->data.alias.anchor;
		unsigned line = (unsigned)ev->start_mark.line + 1;
		unsigned col = (unsigned)ev->start_mark.column + 1;

		for (size_t i = y->nanchors; i-- > 0;) {
			if (strcmp(y->anchors[i].name, name) == 0) {
				const struct xl_ynode *src = y->anchors[i].node;
				size_t room = XL_YAML_MAX_NODES - y->nodes;
				size_t c = count_nodes(src, room);

				if (c > room) {
					set_err(y, line, col,
						"alias '*%s' expands past %d nodes (refusing an alias bomb)",
						name, XL_YAML_MAX_NODES);
					return NULL;
				}
				y->nodes += c;
				return copy_node(src, line, col);
			}
		}
		set_err(y, line, col, "unknown alias '*%s'", name);
		return NULL;
	}
	default:
		set_err(y, (unsigned)ev->start_mark.line + 1, (unsigned)ev->start_mark.column + 1,
			"unexpected YAML event");
		return NULL;
	}
}

/* Length of the valid UTF-8 prefix of s (overlongs, surrogates and code
 * points past U+10FFFF are invalid). */
static size_t utf8_valid_prefix(const unsigned char *s, size_t len)
{
	size_t i = 0;

	while (i < len) {
		unsigned char c = s[i];
		size_t n;
		uint32_t cp;

		if (c < 0x80) {
			i++;
			continue;
		}
		if ((c & 0xe0) == 0xc0) {
			n = 2;
			cp = c & 0x1f;
		} else if ((c & 0xf0) == 0xe0) {
			n = 3;
			cp = c & 0x0f;
		} else if ((c & 0xf8) == 0xf0) {
			n = 4;
			cp = c & 0x07;
		} else {
			return i;
		}
		if (i + n > len)
			return i;
		for (size_t k = 1; k < n; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return i;
			cp = (cp << 6) | (s[i + k] & 0x3f);
		}
		if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
		    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return i;
		i += n;
	}
	return len;
}

static void position_of(const char *data, size_t off, unsigned *line, unsigned *col)
{
	*line = 1;
	*col = 1;
	for (size_t i = 0; i < off; i++) {
		if (data[i] == '\n') {
			(*line)++;
			*col = 1;
		} else {
			(*col)++;
		}
	}
}

struct xl_ynode *xl_yaml_parse(const char *data, size_t len, char **err)
{
	struct yctx y;
	struct xl_ynode *root = NULL;
	yaml_event_t ev;
	int docs = 0;

	memset(&y, 0, sizeof(y));
	*err = NULL;
	if (memchr(data, '\0', len)) {
		unsigned line, col;

		position_of(data, (size_t)((const char *)memchr(data, '\0', len) - data), &line, &col);
		*err = xl_asprintf("%u:%u: file contains a NUL byte", line, col);
		return NULL;
	}
	{
		/* a UTF-16 or UTF-32 file starts with a byte order mark libyaml reads */
		bool bom16 = len >= 2 && ((unsigned char)data[0] == 0xff || (unsigned char)data[0] == 0xfe);
		size_t ok = bom16 ? len : utf8_valid_prefix((const unsigned char *)data, len);

		if (ok < len) {
			unsigned line, col;

			position_of(data, ok, &line, &col);
			*err = xl_asprintf("%u:%u: invalid UTF-8 (byte 0x%02x)", line, col,
					   (unsigned char)data[ok]);
			return NULL;
		}
	}
	if (!yaml_parser_initialize(&y.parser))
		xl_oom();
	yaml_parser_set_input_string(&y.parser, (const unsigned char *)data, len);
	for (;;) {
		if (!next_event(&y, &ev))
			break;
		if (ev.type == YAML_STREAM_END_EVENT) {
			yaml_event_delete(&ev);
			break;
		}
		if (ev.type == YAML_DOCUMENT_START_EVENT) {
			if (++docs > 1) {
				set_err(&y, (unsigned)ev.start_mark.line + 1,
					(unsigned)ev.start_mark.column + 1,
					"more than one YAML document; a profile is one document");
				yaml_event_delete(&ev);
				break;
			}
		} else if (ev.type != YAML_STREAM_START_EVENT &&
			   ev.type != YAML_DOCUMENT_END_EVENT) {
			struct xl_ynode *n = parse_node(&y, &ev, 0);

			if (!n) {
				yaml_event_delete(&ev);
				break;
			}
			root = n;
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&y.parser);
	for (size_t i = 0; i < y.nanchors; i++)
		free(y.anchors[i].name);
	free(y.anchors);
	if (y.err) {
		xl_ynode_free(root);
		*err = y.err;
		return NULL;
	}
	if (!root)
		*err = xl_strdup("1:1: file is empty");
	return root;
}

bool xl_ynode_is_null(const struct xl_ynode *n)
{
	if (!n)
		return true;
	if (n->kind != XL_Y_SCALAR)
		return false;
	if (n->tag && strcmp(n->tag, "tag:yaml.org,2002:null") == 0)
		return true;
	if (!n->plain || n->tag)
		return false;
	return n->len == 0 || strcmp(n->str, "~") == 0 || strcmp(n->str, "null") == 0 ||
	       strcmp(n->str, "Null") == 0 || strcmp(n->str, "NULL") == 0;
}

struct xl_ynode *xl_ymap_get(const struct xl_ynode *map, const char *key)
{
	if (!map || map->kind != XL_Y_MAP)
		return NULL;
	for (size_t i = 0; i + 1 < map->n; i += 2) {
		const struct xl_ynode *k = map->items[i];

		if (k->kind == XL_Y_SCALAR && strcmp(k->str, key) == 0)
			return map->items[i + 1];
	}
	return NULL;
}

bool xl_yscalar_bool(const struct xl_ynode *n, bool *out)
{
	static const char *const t[] = { "true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON", NULL };
	static const char *const f[] = { "false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF", NULL };

	if (!n || n->kind != XL_Y_SCALAR || !n->plain)
		return false;
	for (size_t i = 0; t[i]; i++) {
		if (strcmp(n->str, t[i]) == 0) {
			*out = true;
			return true;
		}
		if (strcmp(n->str, f[i]) == 0) {
			*out = false;
			return true;
		}
	}
	return false;
}

bool xl_yscalar_double(const struct xl_ynode *n, double *out)
{
	char *end;

	if (!n || n->kind != XL_Y_SCALAR || !n->len)
		return false;
	errno = 0;
	*out = strtod(n->str, &end);
	return *end == '\0' && errno == 0 && isfinite(*out);
}

const char *xl_ynode_kind_name(const struct xl_ynode *n)
{
	if (!n)
		return "nothing";
	switch (n->kind) {
	case XL_Y_SCALAR: return xl_ynode_is_null(n) ? "null" : "a scalar";
	case XL_Y_SEQ: return "a list";
	case XL_Y_MAP: return "a mapping";
	}
	return "?";
}
