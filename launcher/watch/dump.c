/* dump.c - XLA's dump directory read as the job runs (see dump.h).
 *
 * A poll reads the directory once: names are grouped by module id, a module
 * not seen before becomes a compilation whose start is its oldest file's
 * time and whose end its newest's, later files move its end.  Its
 * before_optimizations text gives the entry's parameters and the program's
 * hash, its memory-usage report the total.  A module is closed once its
 * files have stopped appearing for a while; its id is remembered, and any
 * later file of it is only deleted (ours) or passed over (a user's dump).
 * A compilation that has started and not yet written the files of its end
 * is not done however long it is quiet: on a TPU or a GPU, XLA writes the
 * before_optimizations text when it starts and nothing more until its
 * passes are over, minutes later for a large program; its end and its
 * memory report come then.
 */
#include "launcher/watch/dump.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define DUMP_INTERVAL_S 0.5      /* between polls, at least */
#define DUMP_MAX_INTERVAL_S 5.0  /* between polls of a dump that is pruned, at most */
#define DUMP_SETTLE_S 5.0        /* a module with no new file for this long is done */
#define DUMP_WAIT_S 3600.0       /* ... unless its compilation has not ended: then after
				  * this long (a compilation that failed writes no end) */
#define DUMP_GIVE_UP_S 2.0       /* a text that does not parse after this long never will */
#define DUMP_MAX_DONE (1L << 22) /* module ids remembered */
#define ENTRY_LINE_MAX (4u << 20)
#define REPORT_SUFFIX "-memory-usage-report.txt"
#define BEFORE_SUFFIX ".before_optimizations.txt"

/* ---- file names -------------------------------------------------------------------- */

/* The program's name of a module's file stem: the TPU compiler's files
 * add a compile id to it ("jit_train_step.cl_933746096"), different at every
 * compile; the program is the name before it. */
static void set_module(struct xl_dump_name *out, const char *s, size_t n)
{
	const char *cl = NULL;

	for (const char *q = s; q + 4 <= s + n; q++)
		if (q[0] == '.' && q[1] == 'c' && q[2] == 'l' && q[3] == '_')
			cl = q;
	if (cl && cl + 4 < s + n && strspn(cl + 4, "0123456789") == (size_t)(s + n - cl - 4))
		n = (size_t)(cl - s);
	if (n == 0 || n >= sizeof(out->module))
		return;
	memcpy(out->module, s, n);
	out->module[n] = '\0';
}

int xl_dump_name_parse(const char *name, bool dir, struct xl_dump_name *out)
{
	const char *p = name, *rest;
	size_t len, rl;
	long id = 0;
	int digits = 0;

	memset(out, 0, sizeof(*out));
	out->id = -1;
	out->kind = XL_DF_OTHER;
	if (!xl_startswith(name, "module_"))
		return out->kind;
	p += 7;
	while (*p >= '0' && *p <= '9' && digits < 12) {
		id = id * 10 + (*p++ - '0');
		digits++;
	}
	if (!digits || *p != '.' || !p[1])
		return out->kind;
	rest = p + 1;
	rl = strlen(rest);
	out->id = id;
	out->kind = XL_DF_MODULE;
	/* written once the passes ran, in text or proto (the kernels' code
	 * may still follow) */
	out->optimized = !dir && (strstr(rest, "after_optimizations") ||
				  strstr(rest, "buffer-assignment") || strstr(rest, REPORT_SUFFIX));
	if (dir) {
		/* JAX: module_NNNN.NAME/ holds the module's MLIR and options */
		set_module(out, rest, rl);
		return out->kind;
	}
	len = strlen(BEFORE_SUFFIX);
	if (rl > len && strcmp(rest + rl - len, BEFORE_SUFFIX) == 0) {
		out->kind = XL_DF_BEFORE;
		set_module(out, rest, rl - len);
		return out->kind;
	}
	if ((p = strstr(rest, ".before_optimizations.")) && p > rest) {
		set_module(out, rest, (size_t)(p - rest));
		return out->kind;
	}
	len = strlen(".after_optimizations.txt");
	if (rl > len && strcmp(rest + rl - len, ".after_optimizations.txt") == 0 &&
	    rest[rl - len - 1] != '_') {
		out->kind = XL_DF_LOADED;
		set_module(out, rest, rl - len);
		return out->kind;
	}
	len = strlen(".debug_options");
	if (rl > len && strcmp(rest + rl - len, ".debug_options") == 0) {
		set_module(out, rest, rl - len);
		return out->kind;
	}
	len = strlen(REPORT_SUFFIX);
	if (rl > len && strcmp(rest + rl - len, REPORT_SUFFIX) == 0) {
		/* NAME.STAGE-memory-usage-report.txt: the stage is the last
		 * dotted part, but a GPU's has a dot of its own
		 * (sm_8.0_gpu_after_optimizations) */
		const char *stem_end = rest + rl - len, *cut = NULL;

		for (const char *q = rest; q < stem_end; q++)
			if (*q == '.' && xl_startswith(q, ".sm_"))
				cut = q;
		if (!cut)
			for (const char *q = stem_end; q > rest; q--)
				if (q[-1] == '.') {
					cut = q - 1;
					break;
				}
		out->kind = XL_DF_MEMORY_REPORT;
		if (cut && cut > rest)
			set_module(out, rest, (size_t)(cut - rest));
		return out->kind;
	}
	return out->kind;
}

const char *xl_dump_runtime(const char *module)
{
	if (xl_startswith(module, "jit_") || xl_startswith(module, "pmap_"))
		return "jax";
	if (xl_startswith(module, "SyncTensorsGraph"))
		return "torch_xla";
	return "xla";
}

char *xl_dump_function(const char *module)
{
	if (xl_startswith(module, "jit_") && module[4])
		return xl_asprintf("jit(%s)", module + 4);
	if (xl_startswith(module, "pmap_") && module[5])
		return xl_asprintf("pmap(%s)", module + 5);
	/* torch_xla numbers its graphs by an instruction id that moves by one
	 * between graphs of the same step: the graphs of one job are one
	 * program, as its own lines count them (per frame) */
	if (xl_startswith(module, "SyncTensorsGraph."))
		return xl_strdup("SyncTensorsGraph");
	return xl_strdup(module);
}

/* ---- the ENTRY line ---------------------------------------------------------------- */

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *s = p;

	for (size_t i = 0; i < n; i++) {
		h ^= s[i];
		h *= 1099511628211ULL;
	}
	return h;
}

#define FNV_START 14695981039346656037ULL

/* A parameter's type as it is compared and shown: comments, layouts
 * ({1,0}) and spaces at the ends taken out.  Caller frees. */
static char *clean_type(const char *s, size_t n)
{
	struct xl_buf b = XL_BUF_INIT;
	int brace = 0;

	for (size_t i = 0; i < n; i++) {
		if (s[i] == '/' && i + 1 < n && s[i + 1] == '*') {
			const char *e = NULL;

			for (size_t j = i + 2; j + 1 < n; j++)
				if (s[j] == '*' && s[j + 1] == '/') {
					e = s + j;
					break;
				}
			if (!e)
				break;
			i = (size_t)(e - s) + 1;
			continue;
		}
		if (s[i] == '{') {
			brace++;
			continue;
		}
		if (s[i] == '}') {
			if (brace)
				brace--;
			continue;
		}
		if (!brace)
			xl_buf_addc(&b, s[i]);
	}
	{
		char *r = xl_buf_detach(&b), *st = r;
		size_t l = strlen(r);

		while (*st == ' ' || *st == '\t')
			st++;
		while (l && (r[l - 1] == ' ' || r[l - 1] == '\t'))
			r[--l] = '\0';
		if (st != r)
			memmove(r, st, strlen(st) + 1);
		return r;
	}
}

/* Of the parameters past the head, the last XL_HLO_KEEP_TAIL stay. */
static void keep_tail(struct xl_hlo_entry *e)
{
	size_t drop;

	if (e->n <= XL_HLO_MAX_PARAMS)
		return;
	drop = e->n - XL_HLO_MAX_PARAMS;
	for (size_t i = XL_HLO_KEEP_HEAD; i < XL_HLO_KEEP_HEAD + drop; i++) {
		free(e->v[i].name);
		free(e->v[i].type);
	}
	memmove(e->v + XL_HLO_KEEP_HEAD, e->v + XL_HLO_KEEP_HEAD + drop,
		XL_HLO_KEEP_TAIL * sizeof(*e->v));
	e->n = XL_HLO_MAX_PARAMS;
}

/* One "name: type" of the parameter list into e. */
static void add_param(struct xl_hlo_entry *e, const char *s, size_t n)
{
	const char *colon = NULL;
	int depth = 0;
	char *name, *type;

	while (n && (*s == ' ' || *s == '\t')) {
		s++;
		n--;
	}
	/* the comment printers put before every fifth one */
	if (n >= 2 && s[0] == '/' && s[1] == '*') {
		const char *end = NULL;

		for (size_t j = 2; j + 1 < n; j++)
			if (s[j] == '*' && s[j + 1] == '/') {
				end = s + j + 2;
				break;
			}
		if (end) {
			n -= (size_t)(end - s);
			s = end;
		}
		while (n && (*s == ' ' || *s == '\t')) {
			s++;
			n--;
		}
	}
	if (!n)
		return;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '(' || s[i] == '[' || s[i] == '{')
			depth++;
		else if (s[i] == ')' || s[i] == ']' || s[i] == '}')
			depth--;
		else if (s[i] == ':' && depth == 0) {
			colon = s + i;
			break;
		}
	}
	type = colon ? clean_type(colon + 1, n - (size_t)(colon + 1 - s)) : clean_type(s, n);
	if (e->total % 64 == 0)
		e->hash = xl_realloc(e->hash, (e->total + 64) * sizeof(*e->hash));
	e->hash[e->total++] = fnv(FNV_START, type, strlen(type) + 1);
	/* the last ones are not known until the line ends: past the head,
	 * up to twice the tail is kept, then the older half goes */
	if (e->n >= XL_HLO_KEEP_HEAD + 2 * XL_HLO_KEEP_TAIL)
		keep_tail(e);
	if (colon) {
		const char *ns = s;
		size_t nl = (size_t)(colon - s);

		if (nl && *ns == '%') {
			ns++;
			nl--;
		}
		while (nl && (ns[nl - 1] == ' ' || ns[nl - 1] == '\t'))
			nl--;
		name = xl_strndup(ns, nl);
	} else {
		name = xl_strdup("");
	}
	if (e->n % 64 == 0)
		e->v = xl_realloc(e->v, (e->n + 64) * sizeof(*e->v));
	e->v[e->n].name = name;
	e->v[e->n].type = type;
	e->v[e->n].index = e->total - 1;
	e->n++;
}

int xl_hlo_entry_parse(const char *line, size_t len, struct xl_hlo_entry *out)
{
	const char *p = line, *end = line + len, *start;
	int depth = 0;

	memset(out, 0, sizeof(*out));
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if ((size_t)(end - p) < 6 || memcmp(p, "ENTRY", 5) != 0 || (p[5] != ' ' && p[5] != '\t'))
		return -1;
	p += 5;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	/* the computation's name */
	while (p < end && *p != ' ' && *p != '\t' && *p != '(')
		p++;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p >= end || *p != '(')
		return -1;
	start = ++p;
	for (; p < end; p++) {
		if (*p == '/' && p + 1 < end && p[1] == '*') {
			const char *q = p + 2;

			while (q + 1 < end && !(q[0] == '*' && q[1] == '/'))
				q++;
			if (q + 1 >= end)
				break;
			p = q + 1;
			continue;
		}
		if (*p == '(' || *p == '[' || *p == '{') {
			depth++;
		} else if (*p == ']' || *p == '}') {
			depth--;
		} else if (*p == ')') {
			if (depth == 0) {
				add_param(out, start, (size_t)(p - start));
				keep_tail(out);
				return 0;
			}
			depth--;
		} else if (*p == ',' && depth == 0) {
			add_param(out, start, (size_t)(p - start));
			start = p + 1;
		}
		if (depth < 0)
			break;
	}
	xl_hlo_entry_release(out);
	return -1;
}

void xl_hlo_entry_release(struct xl_hlo_entry *e)
{
	for (size_t i = 0; i < e->n; i++) {
		free(e->v[i].name);
		free(e->v[i].type);
	}
	free(e->v);
	free(e->hash);
	memset(e, 0, sizeof(*e));
}

bool xl_hlo_entry_same(const struct xl_hlo_entry *a, const struct xl_hlo_entry *b)
{
	if (a->total != b->total || a->n != b->n)
		return false;
	if (a->total && memcmp(a->hash, b->hash, a->total * sizeof(*a->hash)) != 0)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->v[i].type, b->v[i].type) != 0)
			return false;
	return true;
}

const struct xl_hlo_param *xl_hlo_entry_param(const struct xl_hlo_entry *e, size_t index)
{
	size_t k;

	if (index >= e->total || !e->n)
		return NULL;
	/* the head is kept from index 0, the tail up to the last */
	if (index < XL_HLO_KEEP_HEAD)
		k = index;
	else if (e->total - index <= e->n)
		k = e->n - (e->total - index);
	else
		return NULL;
	return k < e->n && e->v[k].index == index ? &e->v[k] : NULL;
}

void xl_hlo_entry_copy(struct xl_hlo_entry *dst, const struct xl_hlo_entry *src)
{
	xl_hlo_entry_release(dst);
	dst->n = src->n;
	dst->total = src->total;
	dst->v = src->n ? xl_calloc(src->n, sizeof(*dst->v)) : NULL;
	for (size_t i = 0; i < src->n; i++) {
		dst->v[i].name = xl_strdup(src->v[i].name);
		dst->v[i].type = xl_strdup(src->v[i].type);
		dst->v[i].index = src->v[i].index;
	}
	if (src->total) {
		dst->hash = xl_calloc(src->total, sizeof(*dst->hash));
		memcpy(dst->hash, src->hash, src->total * sizeof(*dst->hash));
	}
}

/* The text of a module, fed in pieces: its hash, and its ENTRY line. */
struct entry_scan {
	uint64_t hash;
	int state;               /* 0 at a line's start, 1 in a line, 2 in ENTRY, 3 past it */
	size_t col;              /* bytes of the current line seen (state 0/1) */
	char head[8];            /* its first bytes */
	struct xl_buf line;      /* the ENTRY line */
	bool too_long;
};

static void scan_feed(struct entry_scan *s, const char *p, size_t n)
{
	s->hash = fnv(s->hash, p, n);
	for (size_t i = 0; i < n && s->state != 3; i++) {
		char c = p[i];

		if (s->state == 2) {
			if (c == '\n') {
				s->state = 3;
			} else if (s->line.len < ENTRY_LINE_MAX) {
				xl_buf_addc(&s->line, c);
			} else {
				s->too_long = true;
				s->state = 3;
			}
			continue;
		}
		if (c == '\n') {
			s->state = 0;
			s->col = 0;
			continue;
		}
		if (s->state == 1)
			continue;
		s->head[s->col++] = c;
		if (s->col == 6) {
			if (memcmp(s->head, "ENTRY", 5) == 0 && (s->head[5] == ' ' || s->head[5] == '\t')) {
				xl_buf_add(&s->line, s->head, 6);
				s->state = 2;
			} else {
				s->state = 1;
			}
		}
	}
}

/* The hash goes on over the rest of the text after the ENTRY line. */
static void scan_rest(struct entry_scan *s, const char *p, size_t n)
{
	if (s->state == 3)
		s->hash = fnv(s->hash, p, n);
	else
		scan_feed(s, p, n);
}

static int scan_done(struct entry_scan *s, struct xl_hlo_entry *out, uint64_t *hash)
{
	int rc = -1;

	if (s->line.len && !s->too_long)
		rc = xl_hlo_entry_parse(s->line.buf, s->line.len, out);
	else
		memset(out, 0, sizeof(*out));
	*hash = s->hash;
	xl_buf_release(&s->line);
	return rc;
}

int xl_hlo_text_entry(const char *text, size_t len, struct xl_hlo_entry *out, uint64_t *hash)
{
	struct entry_scan s;

	memset(&s, 0, sizeof(s));
	s.hash = FNV_START;
	scan_rest(&s, text, len);
	return scan_done(&s, out, hash);
}

/* Reads a before_optimizations text of any size.  Returns 0 when its
 * ENTRY line parsed and the text ended after it (a text still being
 * written has not). */
static int read_before(const char *path, struct xl_hlo_entry *out, uint64_t *hash)
{
	struct entry_scan s;
	char chunk[65536];
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	ssize_t n;
	char last = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	if (fd < 0)
		return -1;
	memset(&s, 0, sizeof(s));
	s.hash = FNV_START;
	while ((n = read(fd, chunk, sizeof(chunk))) > 0) {
		scan_rest(&s, chunk, (size_t)n);
		last = chunk[n - 1];
	}
	close(fd);
	rc = scan_done(&s, out, hash);
	/* XLA's texts end with the ENTRY computation's closing brace */
	if (rc == 0 && last != '}' && last != '\n') {
		xl_hlo_entry_release(out);
		rc = -1;
	}
	return rc;
}

/* ---- the set of ids done with ------------------------------------------------------- */

/* Slots hold id + 1 (0: empty); done_kept[slot]: its files stay. */
static size_t done_slot(const struct xl_dump *r, long id)
{
	size_t h = (size_t)((unsigned long)id * 11400714819323198485ULL) & (r->capdone - 1);

	while (r->done[h] && r->done[h] != id + 1)
		h = (h + 1) & (r->capdone - 1);
	return h;
}

static bool done_has(const struct xl_dump *r, long id)
{
	return r->capdone && r->done[done_slot(r, id)] == id + 1;
}

/* Whether a module done with keeps its files in the dump. */
static bool done_kept(const struct xl_dump *r, long id)
{
	size_t s;

	if (!r->capdone)
		return false;
	s = done_slot(r, id);
	return r->done[s] == id + 1 && r->done_keep[s];
}

static void done_add(struct xl_dump *r, long id, bool kept)
{
	if (done_has(r, id)) {
		r->done_keep[done_slot(r, id)] = kept;
		return;
	}
	if ((long)r->ndone >= DUMP_MAX_DONE) {
		r->done_full = true;
		return;
	}
	if (2 * (r->ndone + 1) > r->capdone) {
		long *old = r->done;
		unsigned char *oldk = r->done_keep;
		size_t oldcap = r->capdone;

		r->capdone = oldcap ? oldcap * 2 : 1024;
		r->done = xl_calloc(r->capdone, sizeof(*r->done));
		r->done_keep = xl_calloc(r->capdone, 1);
		for (size_t i = 0; i < oldcap; i++)
			if (old[i]) {
				size_t s = done_slot(r, old[i] - 1);

				r->done[s] = old[i];
				r->done_keep[s] = oldk[i];
			}
		free(old);
		free(oldk);
	}
	{
		size_t s = done_slot(r, id);

		r->done[s] = id + 1;
		r->done_keep[s] = kept;
	}
	r->ndone++;
}

/* ---- deleting ---------------------------------------------------------------------- */

static void delete_file(struct xl_dump *r, const char *path, int64_t size)
{
	if (unlink(path) == 0) {
		r->files_deleted++;
		r->bytes_deleted += size > 0 ? size : 0;
	}
}

/* A directory of a module (one level: its MLIR and options). */
static void delete_dir(struct xl_dump *r, const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;

	if (d) {
		while ((e = readdir(d))) {
			struct stat sb;
			char *p;

			if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
				continue;
			p = xl_asprintf("%s/%s", path, e->d_name);
			if (lstat(p, &sb) == 0 && !S_ISDIR(sb.st_mode))
				delete_file(r, p, (int64_t)sb.st_size);
			free(p);
		}
		closedir(d);
	}
	if (rmdir(path) == 0)
		r->dirs_deleted++;
}

static void delete_path(struct xl_dump *r, const char *path)
{
	struct stat sb;

	if (lstat(path, &sb) < 0)
		return;
	if (S_ISDIR(sb.st_mode))
		delete_dir(r, path);
	else
		delete_file(r, path, (int64_t)sb.st_size);
}

/* A kept file given up: it goes, and is no longer counted as kept. */
static void unkeep(struct xl_dump *r, char **path, int64_t *bytes)
{
	if (!*path)
		return;
	r->bytes_kept -= *bytes;
	r->files_kept--;
	delete_path(r, *path);
	free(*path);
	*path = NULL;
	*bytes = 0;
}

/* ---- keeping ----------------------------------------------------------------------- */

static struct xl_dump_mod *open_find(const struct xl_dump *r, long id)
{
	for (size_t i = 0; i < r->nopen; i++)
		if (r->open[i]->id == id)
			return r->open[i];
	return NULL;
}

/* Whether module m's text and report stay: the first and the latest of
 * each program (the latest before it loses its files), within a cap. */
static void keep_decide(struct xl_dump *r, struct xl_dump_mod *m)
{
	struct xl_dump_keep *k = NULL;

	for (size_t i = 0; i < r->nkeep; i++)
		if (strcmp(r->keep[i].module, m->module) == 0)
			k = &r->keep[i];
	if (!k) {
		if (r->kept_modules >= XL_DUMP_KEEP_MODULES)
			return;
		r->keep = xl_realloc(r->keep, (r->nkeep + 1) * sizeof(*r->keep));
		k = &r->keep[r->nkeep++];
		memset(k, 0, sizeof(*k));
		k->module = xl_strdup(m->module);
		k->first = m->id;
		k->last = -1;
		r->kept_modules++;
		m->keep = true;
		return;
	}
	if (k->last >= 0) {
		struct xl_dump_mod *prev = open_find(r, k->last);

		/* the latest until now gives its files up */
		if (prev) {
			prev->keep = false;
			unkeep(r, &prev->before_path, &prev->kept_bytes);
			unkeep(r, &prev->memreport_path, &prev->kept_bytes);
		} else {
			unkeep(r, &k->last_before, &k->last_bytes);
			unkeep(r, &k->last_memreport, &k->last_bytes);
		}
		if (done_has(r, k->last))
			done_add(r, k->last, false);
		r->kept_modules--;
	} else if (r->kept_modules >= XL_DUMP_KEEP_MODULES) {
		return;
	}
	k->last = m->id;
	r->kept_modules++;
	m->keep = true;
}

/* A text or report of m that was read: kept, or deleted. */
static void keep_or_delete(struct xl_dump *r, struct xl_dump_mod *m, const char *path,
			   int64_t size, bool report)
{
	char **slot = report ? &m->memreport_path : &m->before_path;

	if (!r->ours)
		return;
	if (!m->keep) {
		delete_file(r, path, size);
		return;
	}
	if (*slot)
		return;
	*slot = xl_strdup(path);
	m->kept_bytes += size;
	r->bytes_kept += size;
	r->files_kept++;
}

/* ---- one poll ---------------------------------------------------------------------- */

struct dent {
	long id;
	int kind;
	bool dir;
	bool optimized;
	char *name;
	char module[200];
};

static int dent_cmp(const void *a, const void *b)
{
	const struct dent *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static double mtime_of(const struct stat *sb)
{
	return (double)sb->st_mtim.tv_sec + sb->st_mtim.tv_nsec / 1e9;
}

static void mod_free(struct xl_dump_mod *m)
{
	xl_hlo_entry_release(&m->entry);
	free(m->module);
	free(m->before_path);
	free(m->memreport_path);
	free(m);
}

/* Reads the text of m (before_optimizations).  Gives up on a text that
 * does not parse once it is old enough to be whole. */
static void read_text(struct xl_dump *r, struct xl_dump_mod *m, const char *path,
		      const struct stat *sb, double now)
{
	uint64_t h = 0;

	if (read_before(path, &m->entry, &h) == 0) {
		m->entry_read = true;
		m->program = h;
		m->changed = true;
	} else if (r->final || now - mtime_of(sb) > DUMP_GIVE_UP_S) {
		m->entry_read = true;
		r->unreadable++;
		m->changed = true;
	}
}

/* The first max bytes of a file (all of it when shorter), NUL-terminated;
 * NULL when it cannot be read. */
static char *read_head(const char *path, size_t max)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	char *text;
	size_t len = 0;

	if (fd < 0)
		return NULL;
	text = xl_malloc(max + 1);
	while (len < max) {
		ssize_t n = read(fd, text + len, max - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	text[len] = '\0';
	return text;
}

/* A memory-usage report's total is in its first lines, before the list of
 * every buffer: a large program's report runs to megabytes, and only its
 * head is read. */
#define REPORT_HEAD_BYTES (1u << 20)

static void read_report(struct xl_dump *r, struct xl_dump_mod *m, const char *path,
			const struct stat *sb, double now)
{
	char *text = read_head(path, REPORT_HEAD_BYTES);
	int64_t total = text ? xl_dump_memory_report_total(text) : -1;

	free(text);
	if (total < 0 && !r->final && now - mtime_of(sb) <= DUMP_GIVE_UP_S)
		return;
	m->memreport_read = true;
	if (total < 0)
		return;
	m->bytes = total;
	m->changed = true;
	{
		json_t *prev = json_object_get(r->memory_reports, m->module);

		if (!prev || json_integer_value(prev) < total)
			json_object_set_new(r->memory_reports, m->module, json_integer((json_int_t)total));
	}
	if (total > r->largest_report) {
		r->largest_report = total;
		snprintf(r->largest_module, sizeof(r->largest_module), "%s", m->module ? m->module : "");
	}
}

/* The files of one module seen in this poll, g[0..n). */
static void take_group(struct xl_dump *r, struct dent *g, size_t n, double now)
{
	struct xl_dump_mod *m = open_find(r, g[0].id);
	struct stat *sb = xl_calloc(n, sizeof(*sb));
	bool *ok = xl_calloc(n, sizeof(*ok));
	double lo = 0, hi = 0;
	const char *module = NULL;
	bool compiled = false, loaded = false, text = false, optimized = false, report = false;

	for (size_t i = 0; i < n; i++) {
		char *p = xl_asprintf("%s/%s", r->dir, g[i].name);

		ok[i] = lstat(p, &sb[i]) == 0;
		free(p);
		if (!ok[i])
			continue;
		r->files_seen++;
		if (!lo || mtime_of(&sb[i]) < lo)
			lo = mtime_of(&sb[i]);
		if (mtime_of(&sb[i]) > hi)
			hi = mtime_of(&sb[i]);
		/* the directory (JAX) and the text name the program exactly */
		if (g[i].module[0] && (!module || g[i].dir || g[i].kind == XL_DF_BEFORE))
			module = g[i].module;
		/* a compilation starts with them; a load writes the
		 * optimized text alone */
		compiled |= g[i].dir || g[i].kind == XL_DF_BEFORE;
		loaded |= g[i].kind == XL_DF_LOADED;
		text |= g[i].kind == XL_DF_BEFORE;
		optimized |= g[i].optimized;
		report |= g[i].kind == XL_DF_MEMORY_REPORT;
	}
	if (!m) {
		/* a user's dump keeps earlier runs' modules: not this run's */
		if (!lo || (!r->ours && hi + 1 < r->since) || r->done_full) {
			if (lo && r->ours)
				for (size_t i = 0; i < n; i++)
					if (ok[i]) {
						char *p = xl_asprintf("%s/%s", r->dir, g[i].name);

						delete_path(r, p);
						free(p);
					}
			free(sb);
			free(ok);
			return;
		}
		/* a module whose name no file says yet waits for the next poll,
		 * unless it has waited long enough */
		if ((!module || (!compiled && !loaded)) && !r->final && now - hi < DUMP_SETTLE_S) {
			free(sb);
			free(ok);
			return;
		}
		m = xl_calloc(1, sizeof(*m));
		m->id = g[0].id;
		m->module = module ? xl_strdup(module) : xl_asprintf("module_%04ld", g[0].id);
		m->start = lo - r->origin;
		m->end = hi - r->origin;
		m->bytes = -1;
		m->handle = -1;
		m->changed = true;
		m->changed_at = hi;
		m->load = loaded && !compiled;
		if (r->nopen == r->capopen) {
			r->capopen = r->capopen ? 2 * r->capopen : 16;
			r->open = xl_realloc(r->open, r->capopen * sizeof(*r->open));
		}
		r->open[r->nopen++] = m;
		if (m->load)
			r->loads++;
		else
			r->modules++;
		if (r->ours && !m->load)
			keep_decide(r, m);
	} else {
		if (m->load && compiled) {
			/* its compilation's first files came late: not a load */
			m->load = false;
			m->changed = true;
			r->loads--;
			r->modules++;
			if (r->ours)
				keep_decide(r, m);
		}
		if (lo - r->origin < m->start) {
			m->start = lo - r->origin;
			m->changed = true;
		}
		if (hi - r->origin > m->end) {
			m->end = hi - r->origin;
			m->changed = true;
		}
		if (hi > m->changed_at)
			m->changed_at = hi;
	}
	m->started |= compiled;
	m->text |= text;
	m->optimized |= optimized;
	m->memreport_seen |= report;
	for (size_t i = 0; i < n; i++) {
		char *p;

		if (!ok[i])
			continue;
		p = xl_asprintf("%s/%s", r->dir, g[i].name);
		if (g[i].kind == XL_DF_BEFORE && !S_ISDIR(sb[i].st_mode)) {
			if (!m->entry_read)
				read_text(r, m, p, &sb[i], now);
			if (m->entry_read)
				keep_or_delete(r, m, p, (int64_t)sb[i].st_size, false);
		} else if (g[i].kind == XL_DF_MEMORY_REPORT && !S_ISDIR(sb[i].st_mode)) {
			if (!m->memreport_read)
				read_report(r, m, p, &sb[i], now);
			if (m->memreport_read)
				keep_or_delete(r, m, p, (int64_t)sb[i].st_size, true);
		} else if (r->ours && !S_ISDIR(sb[i].st_mode)) {
			/* a module's directory goes once the module is done: XLA
			 * may still be writing into it */
			delete_path(r, p);
		}
		free(p);
	}
	free(sb);
	free(ok);
}

/* Whether m's compilation started and has not written its end yet: its
 * optimized files (the memory-usage report too, in a text dump: it comes
 * with them, and it is the xla_buffers figure). */
static bool mod_compiling(const struct xl_dump_mod *m)
{
	if (m->load || !m->started || m->memreport_seen)
		return false;
	return !m->optimized || m->text;
}

/* Closes the modules whose files stopped appearing (and were handed out);
 * a compilation still running waits up to DUMP_WAIT_S for its end. */
static void close_settled(struct xl_dump *r, double now, bool all)
{
	size_t k = 0;

	for (size_t i = 0; i < r->nopen; i++) {
		struct xl_dump_mod *m = r->open[i];
		double quiet = mod_compiling(m) ? DUMP_WAIT_S : DUMP_SETTLE_S;

		if (!all && (m->changed || now - m->changed_at < quiet)) {
			r->open[k++] = m;
			continue;
		}
		done_add(r, m->id, m->keep && (m->before_path || m->memreport_path));
		/* the program's latest: its files go when a later one comes */
		for (size_t j = 0; m->keep && j < r->nkeep; j++)
			if (r->keep[j].last == m->id && strcmp(r->keep[j].module, m->module) == 0) {
				r->keep[j].last_before = m->before_path;
				r->keep[j].last_memreport = m->memreport_path;
				r->keep[j].last_bytes = m->kept_bytes;
				m->before_path = m->memreport_path = NULL;
			}
		mod_free(m);
	}
	r->nopen = k;
	if (r->next_changed > r->nopen)
		r->next_changed = 0;
}

/* Reads the directory's names; what is not a module's file, and files of
 * modules done with, go at once (ours). */
static size_t read_names(struct xl_dump *r, struct dent **out)
{
	DIR *d = opendir(r->dir);
	struct dirent *e;
	struct dent *v = NULL;
	size_t n = 0, cap = 0;

	*out = NULL;
	if (!d) {
		if (errno != ENOENT && !r->err[0])
			snprintf(r->err, sizeof(r->err), "cannot read '%s': %s", r->dir, strerror(errno));
		return 0;
	}
	while ((e = readdir(d))) {
		struct xl_dump_name dn;
		bool dir = e->d_type == DT_DIR;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (e->d_type == DT_UNKNOWN) {
			struct stat sb;
			char *p = xl_asprintf("%s/%s", r->dir, e->d_name);

			dir = lstat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
			free(p);
		}
		xl_dump_name_parse(e->d_name, dir, &dn);
		if (dn.kind == XL_DF_OTHER || done_has(r, dn.id)) {
			/* of a module done with, only its kept text and report stay */
			bool kept = (dn.kind == XL_DF_BEFORE || dn.kind == XL_DF_MEMORY_REPORT) && !dir &&
				    done_kept(r, dn.id);

			if (r->ours && !kept) {
				char *p = xl_asprintf("%s/%s", r->dir, e->d_name);

				delete_path(r, p);
				free(p);
			}
			continue;
		}
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			v = xl_realloc(v, cap * sizeof(*v));
		}
		v[n].id = dn.id;
		v[n].kind = dn.kind;
		v[n].dir = dir;
		v[n].optimized = dn.optimized;
		v[n].name = xl_strdup(e->d_name);
		memcpy(v[n].module, dn.module, sizeof(v[n].module));
		n++;
	}
	closedir(d);
	*out = v;
	return n;
}

static void scan(struct xl_dump *r, double now)
{
	struct dent *v;
	size_t n = read_names(r, &v), i = 0;

	if (!n) {
		free(v);
		return;
	}
	qsort(v, n, sizeof(*v), dent_cmp);
	while (i < n) {
		size_t j = i + 1;

		while (j < n && v[j].id == v[i].id)
			j++;
		take_group(r, v + i, j - i, now);
		i = j;
	}
	for (i = 0; i < n; i++)
		free(v[i].name);
	free(v);
}

void xl_dump_init(struct xl_dump *r, const char *dir, bool ours, double origin, double since)
{
	memset(r, 0, sizeof(*r));
	r->dir = xl_strdup(dir);
	r->ours = ours;
	r->origin = origin;
	r->since = since;
	r->interval = DUMP_INTERVAL_S;
	r->memory_reports = json_object();
	r->largest_report = -1;
}

/* This thread's CPU time, seconds. */
static double cpu_now(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) < 0)
		return 0;
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

size_t xl_dump_poll(struct xl_dump *r, double now, bool force)
{
	double c0 = cpu_now(), real = xl_now(), cost;
	size_t changed = 0;

	if (!r->dir || (!force && now < r->next_at))
		return 0;
	close_settled(r, real, false);
	scan(r, real);
	r->polls++;
	cost = cpu_now() - c0;
	r->poll_cpu_s += cost;
	/* a poll costs at most about 1% of a processor between two; a dump
	 * that is pruned is read at least every DUMP_MAX_INTERVAL_S, so that
	 * what it holds stays bounded */
	r->interval = cost * 100 > DUMP_INTERVAL_S ? cost * 100 : DUMP_INTERVAL_S;
	if (r->interval > (r->ours ? DUMP_MAX_INTERVAL_S : 30))
		r->interval = r->ours ? DUMP_MAX_INTERVAL_S : 30;
	r->next_at = now + r->interval;
	for (size_t i = 0; i < r->nopen; i++)
		changed += r->open[i]->changed;
	r->next_changed = 0;
	return changed;
}

void xl_dump_finish(struct xl_dump *r)
{
	/* texts still being written when the job ended are read as they are */
	r->final = true;
	xl_dump_poll(r, xl_mono(), true);
}

void xl_dump_close_all(struct xl_dump *r)
{
	close_settled(r, xl_now(), true);
	/* what the last modules left besides what is kept goes now */
	if (r->ours && r->dir)
		scan(r, xl_now());
}

struct xl_dump_mod *xl_dump_next_changed(struct xl_dump *r)
{
	while (r->next_changed < r->nopen) {
		struct xl_dump_mod *m = r->open[r->next_changed++];

		if (m->changed) {
			m->changed = false;
			return m;
		}
	}
	return NULL;
}

void xl_dump_release(struct xl_dump *r)
{
	for (size_t i = 0; i < r->nopen; i++)
		mod_free(r->open[i]);
	free(r->open);
	for (size_t i = 0; i < r->nkeep; i++) {
		free(r->keep[i].module);
		free(r->keep[i].last_before);
		free(r->keep[i].last_memreport);
	}
	free(r->keep);
	free(r->done);
	free(r->done_keep);
	free(r->dir);
	json_decref(r->memory_reports);
	memset(r, 0, sizeof(*r));
}

json_t *xl_dump_memory_reports(const struct xl_dump *r)
{
	return r->memory_reports ? json_deep_copy(r->memory_reports) : json_object();
}

json_t *xl_dump_json(const struct xl_dump *r)
{
	json_t *o = json_pack("{s:s,s:b,s:I,s:I,s:I,s:f}", "dir", r->dir ? r->dir : "", "pruned", r->ours,
			      "modules", (json_int_t)r->modules, "loaded", (json_int_t)r->loads,
			      "polls", (json_int_t)r->polls,
			      "poll_s", (double)((long long)(r->poll_cpu_s * 1e4)) / 1e4);

	json_object_set_new(o, "files_seen", json_integer(r->files_seen));
	json_object_set_new(o, "texts_unreadable", json_integer(r->unreadable));
	json_object_set_new(o, "kept", json_pack("{s:I,s:I,s:I,s:i,s:i,s:s}", "files",
		(json_int_t)r->files_kept, "bytes", (json_int_t)r->bytes_kept, "modules",
		(json_int_t)r->kept_modules, "per_function", XL_DUMP_KEEP_PER_FUNCTION,
		"modules_max", XL_DUMP_KEEP_MODULES, "what",
		r->ours ? "the before_optimizations text and the memory-usage report of the first"
			  " and the latest compilation of each program"
			: "everything (the user's own dump is never changed)"));
	json_object_set_new(o, "dropped", json_pack("{s:I,s:I,s:I}", "files",
		(json_int_t)r->files_deleted, "dirs", (json_int_t)r->dirs_deleted, "bytes",
		(json_int_t)r->bytes_deleted));
	if (r->done_full)
		json_object_set_new(o, "modules_not_read", json_string("more modules than the reader"
			" remembers: later ones were not read"));
	json_object_set_new(o, "error", r->err[0] ? json_string(r->err) : json_null());
	return o;
}

/* ---- the memory-usage report ----------------------------------------------------------- */

int64_t xl_dump_memory_report_total(const char *text)
{
	static const char *const heads[] = { "Total bytes:", "Total bytes used:" };
	const char *p = strstr(text, "Memory Space: default");

	/* "Total bytes: N" of the default memory space, or an older XLA's
	 * report (torch_xla 2.9 has one) of one space: "Total bytes used: N" */
	for (size_t i = 0; i < 2; i++) {
		const char *t = strstr(p && i == 0 ? p : text, heads[i]);
		long long v;
		char *end;

		if (!t)
			continue;
		t += strlen(heads[i]);
		v = strtoll(t, &end, 10);
		return end == t || v < 0 ? -1 : (int64_t)v;
	}
	return -1;
}
