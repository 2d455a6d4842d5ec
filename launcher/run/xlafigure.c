/* xlafigure.c - the compiler's figure of a run: the largest program of
 * XLA's memory-usage reports (see xlafigure.h). */
#include "launcher/run/xlafigure.h"

int64_t xl_xla_modules_figure(json_t *mods, const json_t *prev, const char *prev_run,
			      char *source, size_t size)
{
	const char *k, *largest = NULL;
	json_t *v;
	int64_t best = -1;
	size_t fresh = json_object_size(mods), reused = 0;

	/* a program loaded from a persistent cache is not compiled, and XLA
	 * writes no report for it: its last figure stands */
	json_object_foreach((json_t *)prev, k, v)
		if (!json_object_get(mods, k) && json_is_integer(v)) {
			json_object_set(mods, k, v);
			reused++;
		}
	json_object_foreach(mods, k, v)
		if (json_integer_value(v) > best) {
			best = json_integer_value(v);
			largest = k;
		}
	if (best < 0)
		return -1;
	if (!reused)
		snprintf(source, size, "XLA memory-usage report of %s (%zu program%s compiled)", largest,
			 fresh, fresh == 1 ? "" : "s");
	else if (!fresh)
		snprintf(source, size, "XLA memory-usage report of %s seen in run %s, reused: nothing"
			 " compiled (persistent-cache hit)", largest, prev_run);
	else
		snprintf(source, size, "XLA memory-usage report of %s (%zu program%s compiled, %zu"
			 " reused from run %s)", largest, fresh, fresh == 1 ? "" : "s", reused, prev_run);
	return best;
}
