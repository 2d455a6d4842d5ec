/*
 * cmd-probe.c - `xlaunch probe [--backend LIST] [--timeout DUR] [--json]
 * [--no-record]`: runs the backend probe, prints a table for people or the
 * JSON document, and records it in the calibration store.
 */
#include "bundle/bundle.h"
#include "calib/calib.h"
#include "probe/probe.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Keeps the probe in the calibration store, where it becomes the hardware
 * part of launch signatures.  A store failure is a warning, never a probe
 * failure. */
static void probe_record(const struct xl_ctx *ctx, const json_t *doc)
{
	struct calib_store *st;
	char *err = NULL;

	if (calib_open(ctx->store_path, 0, &st, &err) != 0) {
		xl_warn("%s; the probe is not recorded", err ? err : "store unavailable");
		free(err);
		return;
	}
	if (calib_record_probe(st, doc) != 0)
		xl_warn("the probe is not recorded: %s", calib_errmsg(st));
	calib_close(st);
}

static void print_figures(struct xl_buf *b, const json_t *o)
{
	json_t *bw = json_object_get(o, "bandwidth_gbs"), *gf = json_object_get(o, "gflops");

	if (json_is_number(bw))
		xl_buf_addf(b, "%.1f GB/s", json_number_value(bw));
	if (json_is_number(gf))
		xl_buf_addf(b, "%s%.1f GFLOP/s", b->len ? ", " : "", json_number_value(gf));
	if (!b->len)
		xl_buf_adds(b, "-");
}

#define DEV_COL 44

/* "[N x ][type: ]kind (memory)" in at most DEV_COL columns: the kind is
 * shortened, never the count or the memory. */
static void device_label(struct xl_buf *b, const json_t *d, size_t count)
{
	const char *kind = json_string_value(json_object_get(d, "kind"));
	const char *type = json_string_value(json_object_get(d, "type"));
	json_t *mem = json_object_get(d, "memory_bytes");
	char mb[32], head[64] = "", tail[48] = "";
	size_t room;

	if (count > 1)
		snprintf(head, sizeof(head), "%zu x ", count);
	if (type)
		snprintf(head + strlen(head), sizeof(head) - strlen(head), "%.12s: ", type);
	if (json_is_integer(mem) && json_integer_value(mem) > 0)
		snprintf(tail, sizeof(tail), " (%s)",
			 xl_fmt_bytes((uint64_t)json_integer_value(mem), mb, sizeof(mb)));
	else if (json_object_get(d, "memory_unknown"))
		snprintf(tail, sizeof(tail), " (memory unknown)");
	if (!kind)
		kind = "?";
	room = DEV_COL > strlen(head) + strlen(tail) ? DEV_COL - strlen(head) - strlen(tail) : 4;
	if (strlen(kind) > room && room > 3)
		xl_buf_addf(b, "%s%.*s...%s", head, (int)(room - 3), kind, tail);
	else
		xl_buf_addf(b, "%s%s%s", head, kind, tail);
}

static bool same_device(const json_t *a, const json_t *b)
{
	return json_equal(json_object_get(a, "kind"), json_object_get(b, "kind")) &&
	       json_equal(json_object_get(a, "memory_bytes"), json_object_get(b, "memory_bytes"));
}

/* The DEVICES and MEASURED columns of a backend, one line each.  A backend
 * that measures its devices one by one gets a line per device with that
 * device's figures; otherwise equal devices share a line ("4 x cpu") and the
 * backend's figures stand on the first. */
static void device_lines(const json_t *o, struct xl_strv *devs, struct xl_strv *figs)
{
	json_t *arr = json_object_get(o, "devices"), *d;
	bool own = false;
	size_t i, n = json_array_size(arr);

	json_array_foreach(arr, i, d)
		if (json_object_get(d, "bandwidth_gbs") || json_object_get(d, "stage"))
			own = true;
	for (i = 0; i < n; i++) {
		struct xl_buf dv = XL_BUF_INIT, fg = XL_BUF_INIT;
		size_t count = 1;

		d = json_array_get(arr, i);
		if (own) {
			print_figures(&fg, d);
		} else {
			bool done = false;

			for (size_t k = 0; k < i && !done; k++)
				done = same_device(json_array_get(arr, k), d);
			if (done)
				continue;
			for (size_t k = i + 1; k < n; k++)
				count += same_device(json_array_get(arr, k), d);
			if (!devs->n)
				print_figures(&fg, o);
		}
		device_label(&dv, d, count);
		xl_strv_push_owned(devs, xl_buf_detach(&dv));
		xl_strv_push_owned(figs, xl_buf_detach(&fg));
		xl_buf_release(&fg);
	}
	if (!devs->n) {
		struct xl_buf fg = XL_BUF_INIT;

		print_figures(&fg, o);
		xl_strv_push(devs, "-");
		xl_strv_push_owned(figs, xl_buf_detach(&fg));
	}
}

static void print_table(const json_t *doc)
{
	json_t *arr = json_object_get(doc, "backends"), *o;
	size_t i, w = 7;

	json_array_foreach(arr, i, o) {
		size_t l = strlen(json_string_value(json_object_get(o, "name")));

		if (l > w)
			w = l;
	}
	if (w > 40)
		w = 40;
	printf("%-*s  %-9s  %-11s  %-*s  %-26s  %s\n", (int)w, "BACKEND", "STATE", "STAGE",
	       DEV_COL, "DEVICES", "MEASURED", "TIME");
	json_array_foreach(arr, i, o) {
		struct xl_strv dv = XL_STRV_INIT, fg = XL_STRV_INIT;
		const char *err = json_string_value(json_object_get(o, "error"));
		const char *ver = json_string_value(json_object_get(o, "version"));

		device_lines(o, &dv, &fg);
		printf("%-*.*s  %-9s  %-11s  %-*s  %-26s  %.2fs\n", (int)w, (int)w,
		       json_string_value(json_object_get(o, "name")),
		       json_string_value(json_object_get(o, "state")),
		       json_string_value(json_object_get(o, "stage")),
		       DEV_COL, dv.v[0], fg.v[0],
		       json_number_value(json_object_get(o, "elapsed_s")));
		for (size_t k = 1; k < dv.n; k++)
			printf("%-*s  %-9s  %-11s  %-*s  %s\n", (int)w, "", "", "", DEV_COL, dv.v[k],
			       fg.v[k]);
		if (ver && xl_verbosity >= 0)
			printf("%*s  version: %s\n", (int)w, "", ver);
		if (err)
			printf("%*s  %s\n", (int)w, "", err);
		xl_strv_release(&dv);
		xl_strv_release(&fg);
	}
}

struct probe_cmd_opts {
	const char *backends;
	double timeout_s;
	bool no_record;
};

/* Checks a --backend list; the probe options take it again in cmd_probe. */
static bool check_backends(const char *value, void *field)
{
	struct xl_probe_opts po;
	char *err = NULL;
	bool ok;

	xl_probe_opts_init(&po);
	ok = xl_probe_parse_backends(&po, value, &err);
	free(err);
	xl_probe_opts_release(&po);
	if (ok)
		*(const char **)field = value;
	return ok;
}

static const struct xl_opt probe_options[] = {
	XL_OPTION_CALLBACK(0, "backend", "LIST", struct probe_cmd_opts, backends, const char *,
			   check_backends, "a list of cpu, opencl, cuda, pjrt and pjrt:PATH",
			   "comma-separated: cpu, opencl, cuda, pjrt (every plugin\n"
			   "found), pjrt:PATH (one plugin); default: all"),
	{ .name = "timeout", .kind = XL_OPT_DURATION, .arg = "DUR",
	  .offset = XL_FIELD(struct probe_cmd_opts, timeout_s, double),
	  .flags = XL_OPTF_RANGE | XL_OPTF_ABOVE_MIN, .min = 0, .max = 3600,
	  .what = "a duration above 0 and up to 1h (e.g. 5s, 500ms)",
	  .help = "wall-clock limit per backend (default 10s)" },
	XL_OPTION_FLAG(0, "no-record", struct probe_cmd_opts, no_record,
		       "do not record the result in the calibration store"),
	XL_OPTION_END,
};

static const struct probe_cmd_opts probe_defaults = { .timeout_s = XL_PROBE_DEFAULT_TIMEOUT };

static enum xl_exit cmd_probe(struct xl_ctx *ctx, const struct xl_call *call)
{
	const struct probe_cmd_opts *o = call->opts;
	struct xl_probe_opts po;
	json_t *doc;
	int code = 0;
	char *err = NULL;

	xl_probe_opts_init(&po);
	if (o->backends && !xl_probe_parse_backends(&po, o->backends, &err)) {
		/* checked while parsing */
		free(err);
		xl_probe_opts_release(&po);
		return XL_EX_SOFTWARE;
	}
	if (xl_probe_wants_plugin_search(&po)) {
		/* PJRT plugins are looked for where the job's interpreter installs */
		struct xl_pyenv env;

		if (xl_pyenv_open(NULL, XL_PYENV_QUIET | XL_PYENV_PATHS, &env) == 0)
			for (size_t i = 0; i < env.libdirs.n; i++)
				xl_strv_push(&po.sitedirs, env.libdirs.v[i]);
		xl_pyenv_release(&env);
	}
	po.timeout_s = o->timeout_s;
	po.record = !o->no_record;
	po.progress = !ctx->json && xl_verbosity >= 0 && isatty(2);
	doc = xl_probe_run(ctx, &po, &code);
	if (po.record)
		probe_record(ctx, doc);
	if (ctx->json) {
		char *s = json_dumps(doc, JSON_INDENT(2) | JSON_REAL_PRECISION(6));

		printf("%s\n", s);
		free(s);
	} else {
		print_table(doc);
	}
	json_decref(doc);
	xl_probe_opts_release(&po);
	return code;
}

const struct xl_cmd xl_cmd_probe = {
	.name = "probe",
	.summary = "load, initialize and run a real kernel on each backend",
	.json = "{host, time, backends: [{name, state, stage, error, version, devices,\n"
		"bandwidth_gbs, gflops, elapsed_s}]}",
	.help =
		"Each backend climbs absent, installed, initialized, devices, compiled,\n"
		"executed, verified in a forked child under a wall-clock limit; the table\n"
		"(or --json) says how far each got and why it stopped.\n",
	.epilog =
		"Exit status: 0 when every backend that is at least installed is alive,\n"
		"69 otherwise; 64 on a bad command line.\n",
	.options = probe_options,
	XL_CMD_OPTS(struct probe_cmd_opts, &probe_defaults),
	.run = cmd_probe,
};
