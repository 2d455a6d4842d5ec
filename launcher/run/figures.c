/* figures.c - an attempt's figures: what the sampler saw, the job's report
 * file, the runtime's out-of-memory line, and the headline (see
 * figures.h). */
#include "launcher/run/figures.h"
#include "launcher/run/nvml.h"
#include "launcher/run/sampler.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

int64_t xl_oom_request_bytes(const char *line)
{
	static const char *const keys[] = {
		"allocating ", "allocate ", "Attempting to allocate ", "Tried to allocate ", NULL,
	};

	for (size_t k = 0; line && keys[k]; k++) {
		const char *p = line;

		while ((p = strstr(p, keys[k]))) {
			char *end;
			double v;
			uint64_t mult = 1;

			p += strlen(keys[k]);
			v = strtod(p, &end);
			if (end == p || !(v > 0))
				continue;
			while (*end == ' ')
				end++;
			switch (toupper((unsigned char)*end)) {
			case 'K': mult = 1024; break;
			case 'M': mult = 1024 * 1024; break;
			case 'G': mult = 1024ULL * 1024 * 1024; break;
			case 'T': mult = 1024ULL * 1024 * 1024 * 1024; break;
			case 'B': mult = 1; break;
			default:
				/* a bare number is bytes only when the message says so
				 * further on (XLA: "N bytes") or ends there */
				if (*end && !isspace((unsigned char)*end) && *end != '.')
					continue;
			}
			if (v * (double)mult >= 9.2e18)
				continue;
			return (int64_t)(v * (double)mult);
		}
	}
	return -1;
}

static bool kind_of_source(const char *source, enum calib_kind *k)
{
	static const struct { const char *source; enum calib_kind kind; } map[] = {
		{ "device_memory_stats", CALIB_KIND_DEVICE_PEAK },
		{ "torch_xla_memory_info", CALIB_KIND_DEVICE_PEAK },
		{ "torch_cuda_max_allocated", CALIB_KIND_DEVICE_PEAK },
		{ "host_rss", CALIB_KIND_HOST_PEAK_RSS },
	};

	for (size_t i = 0; source && i < sizeof(map) / sizeof(map[0]); i++)
		if (strcmp(source, map[i].source) == 0) {
			*k = map[i].kind;
			return true;
		}
	return false;
}

static void keep_larger(struct calib_attempt *a, enum calib_kind k, int64_t bytes, const char *src)
{
	const struct calib_figure *f = calib_attempt_figure(a, false, k);

	if (bytes < 0 || (f && f->bytes >= bytes))
		return;
	calib_attempt_add_figure(a, false, k, bytes, CALIB_BASIS_NONE, CALIB_UNSET, src);
}

/* The kind a peak of the job's report file is of: memory_kind when it
 * names one, else the helper's source; a kind xlaunch cannot tell is
 * kept, and related to nothing. */
static enum calib_kind peak_kind(const struct xl_jobreport_peak *p)
{
	enum calib_kind k;

	if (p->has_memory_kind ? calib_kind_parse(p->memory_kind, &k)
			       : kind_of_source(p->has_source ? p->source : NULL, &k))
		return k;
	return CALIB_KIND_UNCLASSIFIED;
}

static void jobreport_what(const char *source, bool has, char *what, size_t size)
{
	snprintf(what, size, "the job's report (%.60s)", has ? source : "no source");
}

void xl_jobreport_figures(const struct xl_jobreport *r, struct calib_attempt *a)
{
	const struct xl_jobreport_peak *next;
	bool xla_done = r->xla_per_device_bytes < 0;
	long after = 0;
	char what[96];

	/* in the order of the lines that gave them, each kind keeping the
	 * first line of its largest figure */
	do {
		next = NULL;
		for (size_t i = 0; i < r->npeaks; i++)
			if (r->peaks[i].line > after && (!next || r->peaks[i].line < next->line))
				next = &r->peaks[i];
		if (!xla_done && (!next || r->xla_per_device_line < next->line)) {
			/* XLA's buffers per device, unless a line before it gave
			 * the kind itself */
			bool before = false;

			for (size_t i = 0; i < r->npeaks; i++)
				before |= r->peaks[i].first_line < r->xla_per_device_line &&
					  peak_kind(&r->peaks[i]) == CALIB_KIND_XLA_BUFFERS;
			jobreport_what("xla_memory_analysis", true, what, sizeof(what));
			if (!before)
				keep_larger(a, CALIB_KIND_XLA_BUFFERS, r->xla_per_device_bytes, what);
			xla_done = true;
		}
		if (next) {
			jobreport_what(next->source, next->has_source, what, sizeof(what));
			keep_larger(a, peak_kind(next), next->bytes, what);
			after = next->line;
		}
	} while (next);
}

/* ---- the attempt's figures -------------------------------------------------------------- */

void xl_observe_figures(struct calib_attempt *a, const struct xl_observe *o,
			long long wait4_rss, const struct xl_jobreport *jobreport,
			const char *oom_line)
{
	char src[160];
	int64_t rss = o->rss_sum_peak;

	if (o->rss_one_peak > rss)
		rss = o->rss_one_peak;
	if (o->samples) {
		snprintf(src, sizeof(src), "process group, sampled every %g ms (%u samples, up to %u"
			 " processes)", o->interval_s * 1000, o->samples, o->max_members);
		if (wait4_rss > rss) {
			rss = wait4_rss;
			snprintf(src, sizeof(src), "the largest process (wait4), above the group's samples");
		}
	} else {
		rss = wait4_rss;
		snprintf(src, sizeof(src), "the largest process (wait4; sampling off)");
	}
	if (rss > 0)
		calib_attempt_add_figure(a, false, CALIB_KIND_HOST_PEAK_RSS, rss, CALIB_BASIS_NONE,
					 CALIB_UNSET, src);
	if (o->vm_peak > 0) {
		snprintf(src, sizeof(src), "the largest process's VmPeak, sampled every %g ms",
			 o->interval_s * 1000);
		calib_attempt_add_figure(a, false, CALIB_KIND_HOST_PEAK_VM, o->vm_peak,
					 CALIB_BASIS_NONE, CALIB_UNSET, src);
	}
	if (o->device_peak >= 0)
		calib_attempt_add_figure(a, false, CALIB_KIND_DEVICE_PEAK, o->device_peak,
					 CALIB_BASIS_NONE, CALIB_UNSET, XL_NVML_SOURCE);
	if (jobreport)
		xl_jobreport_figures(jobreport, a);
	if (oom_line) {
		int64_t req = xl_oom_request_bytes(oom_line);

		if (req > 0)
			calib_attempt_add_figure(a, false, CALIB_KIND_OOM_REQUEST, req, CALIB_BASIS_NONE,
						 CALIB_UNSET, "the runtime's out-of-memory message");
	}
}

void xl_observe_headline(struct calib_attempt *a, const struct calib_estimate *e)
{
	static const enum calib_kind order[] = {
		CALIB_KIND_DEVICE_PEAK, CALIB_KIND_HOST_PEAK_VM, CALIB_KIND_HOST_PEAK_RSS,
	};
	const struct calib_figure *f = NULL;

	/* a job NVML saw on a device, with nothing predicted for it: its
	 * device peak (a GPU job launched before any probe is judged in the
	 * host's kind, and its host peak tells nothing of its OOM) */
	if (!e || !e->known) {
		f = calib_attempt_figure(a, false, CALIB_KIND_DEVICE_PEAK);
		if (f && (!f->source || strcmp(f->source, XL_NVML_SOURCE) != 0))
			f = NULL;
	}
	if (!f && e)
		f = calib_attempt_figure(a, false, e->kind);
	/* the kind the launch was judged in, else the most telling one seen */
	for (size_t i = 0; !f && i < sizeof(order) / sizeof(order[0]); i++)
		f = calib_attempt_figure(a, false, order[i]);
	if (f) {
		a->observed_bytes = f->bytes;
		a->observed_kind = f->kind;
	}
	if (e && e->known) {
		a->predicted_bytes = e->predicted_bytes;
		a->predicted_kind = e->kind;
		a->predicted_basis = e->basis;
		calib_attempt_add_figure(a, true, e->kind, e->predicted_bytes, e->basis, e->error_bytes,
					 e->summary);
	}
}
