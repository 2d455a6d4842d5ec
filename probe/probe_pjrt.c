/*
 * probe_pjrt.c - the pjrt backend: any PJRT C API plugin (libtpu.so, the
 * xla_cuda plugins, a CPU plugin).  Load, check the API version, initialize,
 * create a client (no preallocation on GPUs), list devices with their memory
 * (PJRT_Device_MemoryStats, else the device description's attributes, else
 * unknown with the plugin's reason), compile kernels/stablehlo/triad.mlir for
 * a working set sized for a memory bandwidth, transfer, execute, read back,
 * verify, then time the kernel as the device runs it: executions queued
 * back to back, the host transfers outside the timed region.  Every failure
 * is the plugin's own PJRT_Error_Message.
 */
#include "probe/probe.h"
#include "probe/pjrt_abi.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MIB (1024ull * 1024)
#define WINDOW 4          /* executions in flight at once while timing */
#define MIN_EXECS 3       /* per timed batch, at least... */
#define MAX_EXECS 500     /* ...and at most */
#define MEASURE_S 0.5     /* seconds the timed batches may take, at most */

/* The error's message (caller frees), and the error destroyed. */
static char *pj_take(const struct xpj_api *api, xpj_error *e)
{
	struct xpj_error_message_args m = { XPJ_SIZE(struct xpj_error_message_args, message_size),
					    NULL, e, NULL, 0 };
	struct xpj_error_destroy_args d = { XPJ_SIZE(struct xpj_error_destroy_args, error),
					    NULL, e };
	char *s;

	api->error_message(&m);
	s = m.message && m.message_size ? xl_strndup(m.message, m.message_size)
					: xl_strdup("(the plugin gave no message)");
	api->error_destroy(&d);
	return s;
}

#define PJ_CHECK(call, what)                                                  \
	do {                                                                  \
		xpj_error *e_ = (call);                                       \
		if (e_) {                                                     \
			char *m_ = pj_take(api, e_);                          \
			xl_probe_error(r, "%s: %s", what, m_);                \
			free(m_);                                             \
			goto out;                                             \
		}                                                             \
	} while (0)

static xpj_error *pj_await(const struct xpj_api *api, xpj_event *ev)
{
	struct xpj_event_await_args a = { XPJ_SIZE(struct xpj_event_await_args, event), NULL, ev };
	struct xpj_event_destroy_args d = { XPJ_SIZE(struct xpj_event_destroy_args, event), NULL, ev };
	xpj_error *e;

	if (!ev)
		return NULL;
	e = api->event_await(&a);
	api->event_destroy(&d);
	return e;
}

static bool gpu_plugin(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return strstr(base, "cuda") || strstr(base, "rocm") || strstr(base, "gpu");
}

/* The environment a plugin sees in the probe child: nothing that makes it
 * wait on a cloud metadata server or grab most of a device. */
static void child_env(void)
{
	setenv("TPU_SKIP_MDS_QUERY", "1", 0);
	setenv("XLA_PYTHON_CLIENT_PREALLOCATE", "false", 0);
	setenv("TF_CPP_MIN_LOG_LEVEL", "2", 0);
}

/* Serialized xla.CompileOptionsProto: executable_build_options (field 3) with
 * device_ordinal = -1 (1), num_replicas = 1 (4), num_partitions = 1 (5). */
static const char compile_options[] = {
	0x1a, 0x0f,
	0x08, (char)0xff, (char)0xff, (char)0xff, (char)0xff, (char)0xff, (char)0xff,
	(char)0xff, (char)0xff, (char)0xff, 0x01,
	0x20, 0x01,
	0x28, 0x01,
};

static void destroy_buffer(const struct xpj_api *api, xpj_buffer *b)
{
	struct xpj_buffer_destroy_args d = { XPJ_SIZE(struct xpj_buffer_destroy_args, buffer),
					     NULL, b };
	xpj_error *e;

	if (b && (e = api->buffer_destroy(&d)))
		free(pj_take(api, e));
}

/* Queues one execution of exec on (ba, bb): *out is its output buffer, *done
 * the event of its completion on the device (caller awaits and destroys). */
static xpj_error *exec_start(const struct xpj_api *api, xpj_loaded_exec *exec,
			     xpj_buffer *ba, xpj_buffer *bb, xpj_buffer **out, xpj_event **done)
{
	xpj_buffer *args[2] = { ba, bb };
	xpj_buffer *const *arg_lists[1] = { args };
	xpj_buffer *outs[8] = { NULL };
	xpj_buffer **out_lists[1] = { outs };
	xpj_event *ev[1] = { NULL };
	struct xpj_execute_options opt;
	struct xpj_execute_args x;
	xpj_error *e;

	memset(&opt, 0, sizeof(opt));
	opt.struct_size = XPJ_SIZE(struct xpj_execute_options, incarnation_ids);
	memset(&x, 0, sizeof(x));
	x.struct_size = XPJ_SIZE(struct xpj_execute_args, execute_device);
	x.exec = exec;
	x.options = &opt;
	x.argument_lists = arg_lists;
	x.num_devices = 1;
	x.num_args = 2;
	x.output_lists = out_lists;
	x.device_complete_events = ev;
	*out = NULL;
	*done = NULL;
	e = api->loaded_exec_execute(&x);
	if (e)
		return e;
	for (int i = 1; i < 8; i++)
		destroy_buffer(api, outs[i]);
	*out = outs[0];
	*done = ev[0];
	return NULL;
}

/* One execution, waited for: returns the output buffer in *out. */
static xpj_error *run_once(const struct xpj_api *api, xpj_loaded_exec *exec,
			   xpj_buffer *ba, xpj_buffer *bb, xpj_buffer **out)
{
	xpj_event *done;
	xpj_error *e = exec_start(api, exec, ba, bb, out, &done);

	return e ? e : pj_await(api, done);
}

/* n executions queued back to back, at most WINDOW in flight (each output
 * is destroyed once its execution is done, so memory stays bounded), timed
 * from the first queued to the last completed.  Returns the error, or NULL
 * with *secs the whole batch's time. */
static xpj_error *timed_batch(const struct xpj_api *api, xpj_loaded_exec *exec,
			      xpj_buffer *ba, xpj_buffer *bb, int n, double *secs)
{
	xpj_buffer *out[WINDOW] = { NULL };
	xpj_event *ev[WINDOW] = { NULL };
	xpj_error *e = NULL;
	double t0 = xl_mono();

	for (int i = 0; i < n + WINDOW; i++) {
		int k = i % WINDOW;

		if (ev[k] || out[k]) {
			xpj_error *w = pj_await(api, ev[k]);

			destroy_buffer(api, out[k]);
			ev[k] = NULL;
			out[k] = NULL;
			if (w && !e)
				e = w;
			else if (w)
				free(pj_take(api, w));
		}
		if (i < n && !e)
			e = exec_start(api, exec, ba, bb, &out[k], &ev[k]);
	}
	*secs = xl_mono() - t0;
	return e;
}

/* One PJRT named value as JSON. */
static json_t *named_value_json(const struct xpj_named_value *v)
{
	json_t *a;

	switch (v->type) {
	case XPJ_STRING:
		return v->v.s ? json_stringn(v->v.s, v->value_size) : json_null();
	case XPJ_INT64:
		return json_integer(v->v.i64);
	case XPJ_INT64_LIST:
		a = json_array();
		for (size_t i = 0; v->v.i64_list && i < v->value_size && i < 64; i++)
			json_array_append_new(a, json_integer(v->v.i64_list[i]));
		return a;
	case XPJ_FLOAT:
		return json_real(v->v.f);
	case XPJ_BOOL:
		return json_boolean(v->v.b);
	}
	return json_null();
}

/* Kind, attributes (as the device description lists them) and memory of one
 * device into jd.  The memory is the allocator's bytes_limit from
 * PJRT_Device_MemoryStats (no plugin's description attributes carry the
 * device's memory: a GPU's name memory per block), else null with the
 * plugin's reason in "memory_unknown". */
static void describe_device(const struct xpj_api *api, xpj_device *dev, json_t *jd)
{
	struct xpj_device_desc_args dd;
	struct xpj_memory_stats_args ms;
	struct xl_buf why = XL_BUF_INIT;
	xpj_error *e;

	memset(&dd, 0, sizeof(dd));
	dd.struct_size = XPJ_SIZE(struct xpj_device_desc_args, desc);
	dd.device = dev;
	if (!(e = api->device_get_description(&dd))) {
		struct xpj_desc_kind_args kd;
		struct xpj_desc_attributes_args at;

		memset(&kd, 0, sizeof(kd));
		kd.struct_size = XPJ_SIZE(struct xpj_desc_kind_args, kind_size);
		kd.desc = dd.desc;
		if (!(e = api->desc_kind(&kd)) && kd.kind)
			json_object_set_new(jd, "kind", json_stringn(kd.kind, kd.kind_size));
		if (e)
			free(pj_take(api, e));
		memset(&at, 0, sizeof(at));
		at.struct_size = XPJ_SIZE(struct xpj_desc_attributes_args, attributes);
		at.desc = dd.desc;
		e = api->desc_attributes ? api->desc_attributes(&at) : NULL;
		if (e) {
			free(pj_take(api, e));
		} else if (api->desc_attributes) {
			json_t *attrs = json_object();

			for (size_t i = 0; at.attributes && i < at.num_attributes && i < 64; i++) {
				const struct xpj_named_value *v = &at.attributes[i];
				char *name;

				if (!v->name)
					continue;
				name = xl_strndup(v->name, v->name_size);
				json_object_set_new(attrs, name, named_value_json(v));
				free(name);
			}
			if (json_object_size(attrs))
				json_object_set_new(jd, "attributes", attrs);
			else
				json_decref(attrs);
		}
	} else {
		free(pj_take(api, e));
	}
	if (!json_object_get(jd, "kind"))
		json_object_set_new(jd, "kind", json_string("unknown"));

	memset(&ms, 0, sizeof(ms));
	ms.struct_size = XPJ_SIZE(struct xpj_memory_stats_args, peak_pool_bytes_is_set);
	ms.device = dev;
	e = api->device_memory_stats ? api->device_memory_stats(&ms) : NULL;
	if (!api->device_memory_stats) {
		xl_buf_adds(&why, "the plugin has no PJRT_Device_MemoryStats");
	} else if (e) {
		char *m = pj_take(api, e); /* UNIMPLEMENTED on some */
		size_t l = strlen(m);

		while (l && (m[l - 1] == '.' || m[l - 1] == ' ' || m[l - 1] == '\n'))
			m[--l] = '\0';
		xl_buf_addf(&why, "PJRT_Device_MemoryStats: %s", m);
		free(m);
	} else {
		json_object_set_new(jd, "bytes_in_use", json_integer(ms.bytes_in_use));
		if (ms.bytes_limit_is_set && ms.bytes_limit > 0) {
			json_object_set_new(jd, "memory_bytes", json_integer(ms.bytes_limit));
			json_object_set_new(jd, "memory_source",
					    json_string("PJRT_Device_MemoryStats bytes_limit"));
		} else {
			xl_buf_adds(&why, "PJRT_Device_MemoryStats gives no bytes_limit");
		}
	}
	if (!json_object_get(jd, "memory_bytes")) {
		json_object_set_new(jd, "memory_bytes", json_null());
		json_object_set_new(jd, "memory_unknown", json_string(xl_buf_str(&why)));
	}
	xl_buf_release(&why);
}

/* The triad's working set on the device, in bytes: from its memory when
 * known (a 64th of it, at least 768 MiB, at most 3 GiB or an eighth); on a
 * CPU platform of unknown memory what the cpu backend uses (four times the
 * host's last-level cache); otherwise 768 MiB (three arrays of 256 MiB). */
static uint64_t working_set(const char *platform, json_t *jd, const char **rule)
{
	json_t *mem = json_object_get(jd, "memory_bytes");
	uint64_t ws;

	if (json_is_integer(mem) && json_integer_value(mem) > 0) {
		uint64_t m = (uint64_t)json_integer_value(mem), cap = m / 8;

		ws = m / 64;
		*rule = "a 64th of the device's memory";
		if (ws < 768 * MIB) {
			ws = 768 * MIB;
			*rule = "3 x 256 MiB";
		}
		if (cap > 3072 * MIB)
			cap = 3072 * MIB;
		if (ws > cap) {
			ws = cap;
			*rule = cap == 3072 * MIB ? "3 GiB (the most the probe uses)"
						  : "an eighth of the device's memory";
		}
	} else if (platform && strcmp(platform, "cpu") == 0) {
		struct xl_host_cache hc;
		cpu_set_t set;

		xl_host_cpus(&set);
		xl_host_cache_read(NULL, &set, &hc);
		ws = xl_host_working_set(&hc, xl_host_mem_available(), rule);
	} else {
		ws = 768 * MIB;
		*rule = "3 x 256 MiB (the device's memory is unknown)";
	}
	return ws;
}

/* The program text with n in place of every {{N}}; caller frees. */
static char *program_for(const char *tmpl, size_t n)
{
	struct xl_buf b = XL_BUF_INIT;
	const char *p = tmpl, *q;

	while ((q = strstr(p, "{{N}}"))) {
		xl_buf_add(&b, p, (size_t)(q - p));
		xl_buf_addf(&b, "%zu", n);
		p = q + 5;
	}
	xl_buf_adds(&b, p);
	return xl_buf_detach(&b);
}

/* Client options.  GPU plugins: the BFC allocator growing on demand (no
 * preallocation) with the whole device as its limit, so that
 * PJRT_Device_MemoryStats can tell the device's memory; `legacy` asks for the
 * platform allocator instead, for plugins that refuse those options.
 * Returns how many options were written to opts (at most 3). */
static size_t client_options(const char *path, bool legacy, struct xpj_named_value *opts)
{
	size_t n = 0;

	memset(opts, 0, 3 * sizeof(*opts));
	if (!gpu_plugin(path))
		return 0;
	opts[n].struct_size = XPJ_SIZE(struct xpj_named_value, value_size);
	opts[n].name = "preallocate";
	opts[n].name_size = strlen("preallocate");
	opts[n].type = XPJ_BOOL;
	opts[n].v.b = false;
	opts[n].value_size = 1;
	n++;
	opts[n].struct_size = XPJ_SIZE(struct xpj_named_value, value_size);
	opts[n].name = "allocator";
	opts[n].name_size = strlen("allocator");
	opts[n].type = XPJ_STRING;
	opts[n].v.s = legacy ? "platform" : "bfc";
	opts[n].value_size = strlen(opts[n].v.s);
	n++;
	if (!legacy) {
		opts[n].struct_size = XPJ_SIZE(struct xpj_named_value, value_size);
		opts[n].name = "memory_fraction";
		opts[n].name_size = strlen("memory_fraction");
		opts[n].type = XPJ_FLOAT;
		opts[n].v.f = 1.0f;
		opts[n].value_size = 1;
		n++;
	}
	return n;
}

void xl_probe_pjrt(struct xl_probe_rep *r, const char *path)
{
	const struct xpj_api *api = NULL;
	void *handle = NULL;
	char *err = NULL, *tmpl = NULL, *code = NULL, *kpath = NULL;
	const char *platform = NULL, *rule = NULL;
	xpj_client *client = NULL;
	xpj_device *dev = NULL;
	xpj_loaded_exec *exec = NULL;
	xpj_buffer *ba = NULL, *bb = NULL, *bc = NULL;
	float *ha = NULL, *hb = NULL, *hc = NULL;
	json_t *details = json_object();
	json_t *devs;
	const float s = 3.0f;
	size_t n = 0;

	json_object_set_new(r->doc, "details", details);
	child_env();
	if (xl_pjrt_load(path, &api, &handle, &err) < 0) {
		xl_probe_error(r, "%s", err);
		free(err);
		return;
	}
	json_object_set_new(r->doc, "version", json_sprintf("PJRT C API %d.%d",
							    api->version.major,
							    api->version.minor));
	json_object_set_new(details, "api_version",
			    json_sprintf("%d.%d", api->version.major, api->version.minor));
	xl_probe_reached(r, XL_STAGE_INSTALLED);
	if (api->version.major != XPJ_SUPPORTED_MAJOR) {
		xl_probe_error(r, "the plugin speaks PJRT C API %d.%d; this xlaunch supports "
			       "major version %d only", api->version.major, api->version.minor,
			       XPJ_SUPPORTED_MAJOR);
		return;
	}
	if (api->struct_size < XPJ_API_MIN_SIZE) {
		xl_probe_error(r, "the plugin's PJRT API table is too small (%zu bytes, PJRT C API "
			       "%d.%d): the plugin is older than the functions the probe calls",
			       api->struct_size, api->version.major, api->version.minor);
		return;
	}

	{
		struct xpj_plugin_init_args ia = { XPJ_SIZE(struct xpj_plugin_init_args, ext), NULL };

		if (api->plugin_initialize)
			PJ_CHECK(api->plugin_initialize(&ia), "PJRT_Plugin_Initialize");
	}
	for (int legacy = 0; legacy < 2 && !client; legacy++) {
		struct xpj_named_value opts[3];
		struct xpj_client_create_args ca;
		size_t nopt = client_options(path, legacy, opts);
		xpj_error *e;

		memset(&ca, 0, sizeof(ca));
		ca.struct_size = XPJ_SIZE(struct xpj_client_create_args, kv_try_get_arg);
		ca.options = nopt ? opts : NULL;
		ca.num_options = nopt;
		e = api->client_create(&ca);
		if (e && nopt && !legacy) {
			/* a plugin that refuses the options: once more, the old way */
			char *m = pj_take(api, e);

			json_object_set_new(details, "client_options_refused", json_string(m));
			free(m);
			continue;
		}
		PJ_CHECK(e, "PJRT_Client_Create");
		client = ca.client;
		if (nopt)
			json_object_set_new(details, "allocator", json_string(legacy ? "platform"
									       : "bfc"));
	}
	{
		struct xpj_client_string_args sa;

		memset(&sa, 0, sizeof(sa));
		sa.struct_size = XPJ_SIZE(struct xpj_client_string_args, str_size);
		sa.client = client;
		if (!api->client_platform_name(&sa) && sa.str)
			json_object_set_new(details, "platform", json_stringn(sa.str, sa.str_size));
		memset(&sa, 0, sizeof(sa));
		sa.struct_size = XPJ_SIZE(struct xpj_client_string_args, str_size);
		sa.client = client;
		if (!api->client_platform_version(&sa) && sa.str)
			json_object_set_new(details, "platform_version",
					    json_stringn(sa.str, sa.str_size));
		platform = json_string_value(json_object_get(details, "platform"));
	}
	xl_probe_reached(r, XL_STAGE_INITIALIZED);

	{
		struct xpj_client_devices_args da;

		memset(&da, 0, sizeof(da));
		da.struct_size = XPJ_SIZE(struct xpj_client_devices_args, num_devices);
		da.client = client;
		PJ_CHECK(api->client_addressable_devices(&da), "PJRT_Client_AddressableDevices");
		if (!da.num_devices) {
			xl_probe_error(r, "PJRT_Client_AddressableDevices: the client has no device");
			goto out;
		}
		devs = json_array();
		json_object_set_new(r->doc, "devices", devs);
		for (size_t i = 0; i < da.num_devices; i++) {
			json_t *jd = json_object();

			describe_device(api, da.devices[i], jd);
			json_array_append_new(devs, jd);
		}
		dev = da.devices[0];
		json_object_set_new(details, "measured_device", json_integer(0));
		n = (size_t)((working_set(platform, json_array_get(devs, 0), &rule) + 11) / 12);
		json_object_set_new(details, "working_set_bytes", json_integer((json_int_t)(n * 12)));
		json_object_set_new(details, "working_set_rule", json_string(rule));
	}
	xl_probe_reached(r, XL_STAGE_DEVICES);

	kpath = xl_data_path("kernels/stablehlo/triad.mlir");
	tmpl = xl_read_file(kpath, NULL, 1 << 20);
	if (!tmpl) {
		xl_probe_error(r, "%s: cannot read the program: %s", kpath, strerror(errno));
		goto out;
	}
	code = program_for(tmpl, n);
	{
		struct xpj_program prog;
		struct xpj_compile_args cc;

		memset(&prog, 0, sizeof(prog));
		prog.struct_size = XPJ_SIZE(struct xpj_program, format_size);
		prog.code = code;
		prog.code_size = strlen(code);
		prog.format = "mlir";
		prog.format_size = 4;
		memset(&cc, 0, sizeof(cc));
		cc.struct_size = XPJ_SIZE(struct xpj_compile_args, exec);
		cc.client = client;
		cc.program = &prog;
		cc.options = compile_options;
		cc.options_size = sizeof(compile_options);
		PJ_CHECK(api->client_compile(&cc), "PJRT_Client_Compile");
		exec = cc.exec;
	}
	xl_probe_reached(r, XL_STAGE_COMPILED);

	ha = malloc(n * sizeof(float));
	hb = malloc(n * sizeof(float));
	if (!ha || !hb) {
		xl_probe_error(r, "cannot allocate %zu MiB on the host for the inputs",
			       2 * n * sizeof(float) / (size_t)MIB);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		ha[i] = (float)(i & 1023) * 0.5f;
		hb[i] = (float)(i & 127) - 60.0f;
	}
	{
		int64_t dims[1] = { (int64_t)n };
		float *src[2] = { ha, hb };
		xpj_buffer **dst[2] = { &ba, &bb };

		for (int k = 0; k < 2; k++) {
			struct xpj_from_host_args fh;

			memset(&fh, 0, sizeof(fh));
			fh.struct_size = XPJ_SIZE(struct xpj_from_host_args, buffer);
			fh.client = client;
			fh.data = src[k];
			fh.type = XPJ_F32;
			fh.dims = dims;
			fh.num_dims = 1;
			fh.semantics = XPJ_IMMUTABLE_ONLY_DURING_CALL;
			fh.device = dev;
			PJ_CHECK(api->client_buffer_from_host(&fh), "PJRT_Client_BufferFromHostBuffer");
			*dst[k] = fh.buffer;
			PJ_CHECK(pj_await(api, fh.done_with_host), "PJRT_Client_BufferFromHostBuffer");
		}
	}
	/* the device has its copies: the host's go before the result comes back */
	free(ha);
	free(hb);
	ha = hb = NULL;
	{
		double t0 = xl_mono(), first;

		PJ_CHECK(run_once(api, exec, ba, bb, &bc), "PJRT_LoadedExecutable_Execute");
		first = xl_mono() - t0;
		if (!bc) {
			xl_probe_error(r, "PJRT_LoadedExecutable_Execute: no output buffer");
			goto out;
		}
		xl_probe_reached(r, XL_STAGE_EXECUTED);
		hc = malloc(n * sizeof(float));
		if (!hc) {
			xl_probe_error(r, "cannot allocate %zu MiB on the host for the result",
				       n * sizeof(float) / (size_t)MIB);
			goto out;
		}
		{
			struct xpj_to_host_args th;

			memset(&th, 0, sizeof(th));
			th.struct_size = XPJ_SIZE(struct xpj_to_host_args, event);
			th.src = bc;
			th.dst = hc;
			th.dst_size = n * sizeof(float);
			PJ_CHECK(api->buffer_to_host(&th), "PJRT_Buffer_ToHostBuffer");
			PJ_CHECK(pj_await(api, th.event), "PJRT_Buffer_ToHostBuffer");
		}
		for (size_t i = 0; i < n; i++) {
			float want = (float)(i & 1023) * 0.5f + s * ((float)(i & 127) - 60.0f);

			if (!(fabsf(hc[i] - want) <= 1e-5f * (1.0f + fabsf(want)))) {
				xl_probe_error(r, "verification failed: element %zu is %g, expected %g",
					       i, (double)hc[i], (double)want);
				goto out;
			}
		}
		free(hc);
		hc = NULL;
		destroy_buffer(api, bc);
		bc = NULL;

		/* the figure: the kernel as the device runs it, executions queued
		 * back to back (each launch overlaps the work before it), the
		 * inputs already on the device, nothing copied back.  The first
		 * batch is sized by the first execution's time, the second by
		 * the first batch's; the faster per execution counts. */
		{
			double budget = xl_probe_time_left(r) / 4, per = first, best = 0, used = 0;
			json_t *queued = json_array();

			if (budget > MEASURE_S)
				budget = MEASURE_S;
			json_object_set_new(details, "executions_queued", queued);
			for (int b = 0; b < 2 && (b == 0 || used < budget * 0.75); b++) {
				double share = b == 0 ? budget / 2 : budget - used, t = 0;
				int execs = per > 0 ? (int)(share / per) : MIN_EXECS;

				if (execs < MIN_EXECS)
					execs = MIN_EXECS;
				if (execs > MAX_EXECS)
					execs = MAX_EXECS;
				/* a slow device: no more than half of the time left */
				if (per > 0 && execs * per > xl_probe_time_left(r) / 2)
					execs = (int)(xl_probe_time_left(r) / 2 / per);
				if (execs < 1)
					execs = 1;
				PJ_CHECK(timed_batch(api, exec, ba, bb, execs, &t),
					 "PJRT_LoadedExecutable_Execute");
				used += t;
				json_array_append_new(queued, json_integer(execs));
				if (t > 0) {
					per = t / execs;
					if (best == 0 || per < best)
						best = per;
				}
			}
			json_object_set_new(details, "first_execution_s",
					    json_real(round(first * 1e6) / 1e6));
			if (best > 0)
				json_object_set_new(r->doc, "bandwidth_gbs",
						    json_real(round(3.0 * n * sizeof(float) / best
								    / 1e7) / 100));
		}
	}
	xl_probe_reached(r, XL_STAGE_VERIFIED);
out:
	destroy_buffer(api, ba);
	destroy_buffer(api, bb);
	destroy_buffer(api, bc);
	if (exec) {
		struct xpj_exec_destroy_args ed = { XPJ_SIZE(struct xpj_exec_destroy_args, exec),
						    NULL, exec };
		xpj_error *e = api->loaded_exec_destroy(&ed);

		if (e)
			free(pj_take(api, e));
	}
	/* the client is not destroyed: some plugins block in their teardown, and
	 * the child exits right after this */
	free(ha);
	free(hb);
	free(hc);
	free(code);
	free(tmpl);
	free(kpath);
}
