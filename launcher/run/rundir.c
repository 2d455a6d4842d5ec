/* rundir.c - where a launch keeps its files: the run directories under the
 * state directory, their ids, and the mark that says a run directory's
 * record is settled.  Below both the records (record.c) and the sweep of
 * lost attempts (sweep.c), which use it. */
#include "launcher/run/record.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- run directories ---------------------------------------------------------- */

char *xl_runs_dir(void)
{
	char *state = xl_state_dir();
	char *d = xl_asprintf("%s/runs", state);

	free(state);
	return d;
}

char *xl_new_run_id(int rank, int attempt)
{
	char t[32], host[64];
	const char *h = xl_hostname();
	size_t k = 0;
	struct timespec now;
	struct tm tm;

	/* microseconds keep ids of one host in start order when sorted by name */
	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	strftime(t, sizeof(t), "%Y%m%dT%H%M%S", &tm);
	for (size_t i = 0; h[i] && k < sizeof(host) - 1; i++) {
		char c = h[i];

		if (c == '.')
			break;
		host[k++] = ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			     (c >= '0' && c <= '9') || c == '-') ? c : '_';
	}
	host[k] = '\0';
	return xl_asprintf("%s.%06ldZ-%s-%d-r%d-a%d", t, (long)(now.tv_nsec / 1000), host,
			   (int)getpid(), rank, attempt);
}

/* ---- settled run directories --------------------------------------------------- */

static char *run_path(const char *id, const char *name)
{
	char *runs = xl_runs_dir();
	char *p = xl_asprintf("%s/%s/%s", runs, id, name);

	free(runs);
	return p;
}

void xl_run_settled(const char *id, const char *why)
{
	char *p = run_path(id, "settled");
	int fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);

	if (fd >= 0) {
		if (xl_write_all(fd, why, strlen(why)) < 0 || xl_write_all(fd, "\n", 1) < 0) {
			/* the file's presence is what counts */
		}
		close(fd);
	}
	free(p);
}
