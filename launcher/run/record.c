/* record.c - what a launch is (its signature parts) and what became of it
 * (run directories, manifests, records kept until the store has them). */
#include "launcher/run/record.h"
#include "launcher/run/rundir.h"
#include "launcher/flags/flags.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Settings that cannot change what a job needs, only where it keeps
 * things: cache and dump paths.  A variable tagged cache in the catalogs, or
 * named like one (*_CACHE_DIR, *_CACHE_PATH, *_DUMP_TO, *_DUMP_DIR). */
static bool path_setting_var(const char *name)
{
	const struct xl_flagdef *d = xl_catalog_env(name);

	return (d && (d->tags & XL_FTAG_CACHE)) || xl_endswith(name, "_CACHE_DIR") ||
	       xl_endswith(name, "_CACHE_PATH") || xl_endswith(name, "_DUMP_TO") ||
	       xl_endswith(name, "_DUMP_IR_TO") || xl_endswith(name, "_DUMP_DIR");
}

/* A flag of a composite variable that only says where: xla_dump_* and
 * flags tagged cache. */
static bool path_setting_flag(const char *var, const char *name)
{
	const struct xl_flagdef *d = xl_catalog_flag(var, name);

	return xl_startswith(name, "xla_dump_") || (d && (d->tags & XL_FTAG_CACHE));
}

json_t *xl_signature_parts(const struct xl_profile *p, const json_t *job)
{
	json_t *parts = json_object(), *env = json_object(), *toggles, *limits;
	static const char *const secs[] = { "model", "train", "parallel", "features" };
	json_t *dev = json_object_get(p->signature, "device");

	for (size_t i = 0; i < 4; i++) {
		json_t *s = json_object_get(p->signature, secs[i]);

		if (s)
			json_object_set_new(parts, secs[i], json_deep_copy(s));
	}
	if (dev)
		json_object_set_new(parts, "hardware", json_deep_copy(dev));
	for (size_t i = 0; i < p->nvars; i++) {
		const struct xl_var *v = &p->vars[i];

		if (path_setting_var(v->name))
			continue;
		if (v->composite && v->value) {
			struct xl_flagmap kept = { 0 };
			char *s;

			for (size_t k = 0; k < v->flags.n; k++)
				if (!path_setting_flag(v->name, v->flags.v[k].name))
					xl_flagmap_add(&kept, v->flags.v[k].name, v->flags.v[k].value,
						       v->flags.v[k].src);
			s = xl_flagmap_format(&kept);
			json_object_set_new(env, v->name, json_string(s));
			free(s);
			xl_flagmap_release(&kept);
			continue;
		}
		json_object_set_new(env, v->name, v->value ? json_string(v->value) : json_null());
	}
	toggles = json_pack("{s:o}", "env", env);
	/* limits change what fits, not what the job needs: in the signature,
	 * out of the family */
	limits = json_object();
	if (p->limits.address_space >= 0)
		json_object_set_new(limits, "address_space", json_integer(p->limits.address_space));
	if (json_object_size(limits))
		json_object_set_new(toggles, "limits", limits);
	else
		json_decref(limits);
	json_object_set_new(parts, "toggles", toggles);
	if (job) {
		const char *k;
		json_t *x;

		json_object_foreach((json_t *)job, k, x)
			json_object_set(parts, k, x);
	}
	return parts;
}

/* ---- records waiting for the store -------------------------------------------------- */

/* Writes record into pending/ of root; *where gets the path. */
static int keep_in(const char *root, const json_t *record, char **where)
{
	char *dir = xl_asprintf("%s/pending", root);
	const char *id = json_string_value(json_object_get(record, "id"));
	int rc = -1;

	*where = xl_asprintf("%s/%s.json", dir, id);
	if (xl_mkdirs(dir, 0700) == 0)
		rc = xl_write_json_atomic(*where, record, true);
	free(dir);
	return rc;
}

int xl_record_keep(const json_t *record, char **where)
{
	char *root = xl_keep_dir(), *path = NULL;
	int rc = -1;

	if (root)
		rc = keep_in(root, record, &path);
	if (rc < 0 && xl_keep_where() == XL_KEEP_STATE) {
		char *failed = xl_asprintf("cannot keep the record in '%s': %s", path, strerror(errno));

		if (xl_keep_fall_back(failed)) {
			free(root);
			free(path);
			root = xl_keep_dir();
			rc = keep_in(root, record, &path);
		}
		free(failed);
	}
	free(root);
	if (where)
		*where = path;
	else
		free(path);
	return rc;
}

/* Replays the records kept in root/pending; -1 when the store failed. */
static int replay_dir(struct calib_store *st, const char *root, int *replayed)
{
	char *dir = xl_asprintf("%s/pending", root);
	DIR *d = opendir(dir);
	struct dirent *e;
	int rc = 0;

	if (!d) {
		free(dir);
		return 0;
	}
	while ((e = readdir(d)) && rc == 0) {
		char *path;
		json_t *rec;
		json_error_t jerr;

		if (!xl_endswith(e->d_name, ".json"))
			continue;
		path = xl_asprintf("%s/%s", dir, e->d_name);
		rec = json_load_file(path, 0, &jerr);
		if (!rec) {
			xl_warn("pending record '%s' is unreadable (%s); left in place", path, jerr.text);
		} else {
			int r = calib_record_attempt_json(st, rec);

			if (r == 0) {
				unlink(path);
				xl_run_settled(json_string_value(json_object_get(rec, "id")), "recorded");
				(*replayed)++;
			} else if (r == XL_EX_DATAERR) {
				xl_warn("pending record '%s' was refused by the store: %s", path,
					calib_errmsg(st));
			} else {
				rc = -1; /* the store is failing again: try next time */
			}
		}
		json_decref(rec);
		free(path);
	}
	closedir(d);
	free(dir);
	return rc;
}

int xl_record_replay(struct calib_store *st)
{
	char *roots[2];
	size_t n = xl_keep_dirs(roots);
	int replayed = 0, failed = 0;

	/* the state directory's, and what a launch kept under $TMPDIR */
	for (size_t i = 0; i < n; i++) {
		if (!failed)
			failed = replay_dir(st, roots[i], &replayed);
		free(roots[i]);
	}
	if (replayed)
		xl_info("replayed %d record%s kept while the store was unavailable", replayed,
			replayed == 1 ? "" : "s");
	return replayed;
}
