/* record.c - what became of a launch: records kept until the store has
 * them, and put into it (see record.h). */
#include "launcher/run/record.h"
#include "launcher/run/rundir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
