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

/* What the probe's stages share: the report, the plugin's API, and what each
 * stage makes for the next ones (release() destroys what is left). */
struct pjrt_probe {
	struct xl_probe_rep *r;
	const char *path;
	const struct xpj_api *api;
	json_t *details;
	const char *platform;          /* the client's platform name, in details */
	xpj_client *client;
	xpj_device *dev;               /* the device measured: the first */
	xpj_loaded_exec *exec;
	xpj_buffer *ba, *bb, *bc;      /* the two inputs, the first output */
	size_t n;                      /* elements per array */
	double first;                  /* seconds the first execution took */
};

/* False when e is NULL; otherwise true, with the probe's error "what: the
 * plugin's message" said and e destroyed. */
static bool pj_failed(struct pjrt_probe *p, xpj_error *e, const char *what)
{
	char *m;

	if (!e)
		return false;
	m = pj_take(p->api, e);
	xl_probe_error(p->r, "%s: %s", what, m);
	free(m);
	return true;
}

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

/* The plugin loaded and its API version checked: 0, or -1 with the error
 * said. */
static int load_plugin(struct pjrt_probe *p)
{
	const struct xpj_api *api;
	void *handle = NULL;
	char *err = NULL;

	if (xl_pjrt_load(p->path, &p->api, &handle, &err) < 0) {
		xl_probe_error(p->r, "%s", err);
		free(err);
		return -1;
	}
	api = p->api;
	json_object_set_new(p->r->doc, "version", json_sprintf("PJRT C API %d.%d",
							       api->version.major,
							       api->version.minor));
	json_object_set_new(p->details, "api_version",
			    json_sprintf("%d.%d", api->version.major, api->version.minor));
	xl_probe_reached(p->r, XL_STAGE_INSTALLED);
	if (api->version.major != XPJ_SUPPORTED_MAJOR) {
		xl_probe_error(p->r, "the plugin speaks PJRT C API %d.%d; this xlaunch supports "
			       "major version %d only", api->version.major, api->version.minor,
			       XPJ_SUPPORTED_MAJOR);
		return -1;
	}
	if (api->struct_size < XPJ_API_MIN_SIZE) {
		xl_probe_error(p->r, "the plugin's PJRT API table is too small (%zu bytes, PJRT C "
			       "API %d.%d): the plugin is older than the functions the probe calls",
			       api->struct_size, api->version.major, api->version.minor);
		return -1;
	}
	return 0;
}

/* PJRT_Plugin_Initialize, where the plugin has one. */
static int initialize_plugin(struct pjrt_probe *p)
{
	struct xpj_plugin_init_args ia = { XPJ_SIZE(struct xpj_plugin_init_args, ext), NULL };

	if (p->api->plugin_initialize &&
	    pj_failed(p, p->api->plugin_initialize(&ia), "PJRT_Plugin_Initialize"))
		return -1;
	return 0;
}

/* p->client, made with the client options; when a plugin refuses them, made
 * once more the old way, the refusal kept in the details. */
static int create_client(struct pjrt_probe *p)
{
	const struct xpj_api *api = p->api;

	for (int legacy = 0; legacy < 2 && !p->client; legacy++) {
		struct xpj_named_value opts[3];
		struct xpj_client_create_args ca;
		size_t nopt = client_options(p->path, legacy, opts);
		xpj_error *e;

		memset(&ca, 0, sizeof(ca));
		ca.struct_size = XPJ_SIZE(struct xpj_client_create_args, kv_try_get_arg);
		ca.options = nopt ? opts : NULL;
		ca.num_options = nopt;
		e = api->client_create(&ca);
		if (e && nopt && !legacy) {
			/* a plugin that refuses the options: once more, the old way */
			char *m = pj_take(api, e);

			json_object_set_new(p->details, "client_options_refused", json_string(m));
			free(m);
			continue;
		}
		if (pj_failed(p, e, "PJRT_Client_Create"))
			return -1;
		p->client = ca.client;
		if (nopt)
			json_object_set_new(p->details, "allocator", json_string(legacy ? "platform"
										 : "bfc"));
	}
	return 0;
}

/* The client's platform name and version into the details, where it tells
 * them; p->platform the name. */
static void read_platform(struct pjrt_probe *p)
{
	struct xpj_client_string_args sa;

	memset(&sa, 0, sizeof(sa));
	sa.struct_size = XPJ_SIZE(struct xpj_client_string_args, str_size);
	sa.client = p->client;
	if (!p->api->client_platform_name(&sa) && sa.str)
		json_object_set_new(p->details, "platform", json_stringn(sa.str, sa.str_size));
	memset(&sa, 0, sizeof(sa));
	sa.struct_size = XPJ_SIZE(struct xpj_client_string_args, str_size);
	sa.client = p->client;
	if (!p->api->client_platform_version(&sa) && sa.str)
		json_object_set_new(p->details, "platform_version",
				    json_stringn(sa.str, sa.str_size));
	p->platform = json_string_value(json_object_get(p->details, "platform"));
}

/* Every addressable device described in the report; the first is the one
 * measured (p->dev), and p->n the triad's elements per array for it. */
static int list_devices(struct pjrt_probe *p)
{
	struct xpj_client_devices_args da;
	const char *rule = NULL;
	json_t *devs;

	memset(&da, 0, sizeof(da));
	da.struct_size = XPJ_SIZE(struct xpj_client_devices_args, num_devices);
	da.client = p->client;
	if (pj_failed(p, p->api->client_addressable_devices(&da),
		      "PJRT_Client_AddressableDevices"))
		return -1;
	if (!da.num_devices) {
		xl_probe_error(p->r, "PJRT_Client_AddressableDevices: the client has no device");
		return -1;
	}
	devs = json_array();
	json_object_set_new(p->r->doc, "devices", devs);
	for (size_t i = 0; i < da.num_devices; i++) {
		json_t *jd = json_object();

		describe_device(p->api, da.devices[i], jd);
		json_array_append_new(devs, jd);
	}
	p->dev = da.devices[0];
	json_object_set_new(p->details, "measured_device", json_integer(0));
	p->n = (size_t)((working_set(p->platform, json_array_get(devs, 0), &rule) + 11) / 12);
	json_object_set_new(p->details, "working_set_bytes", json_integer((json_int_t)(p->n * 12)));
	json_object_set_new(p->details, "working_set_rule", json_string(rule));
	return 0;
}

/* kernels/stablehlo/triad.mlir for p->n elements, compiled into p->exec. */
static int compile_triad(struct pjrt_probe *p)
{
	char *kpath = xl_data_path("kernels/stablehlo/triad.mlir");
	char *tmpl = xl_read_file(kpath, NULL, 1 << 20), *code;
	struct xpj_program prog;
	struct xpj_compile_args cc;
	int rc = 0;

	if (!tmpl) {
		xl_probe_error(p->r, "%s: cannot read the program: %s", kpath, strerror(errno));
		free(kpath);
		return -1;
	}
	code = program_for(tmpl, p->n);
	memset(&prog, 0, sizeof(prog));
	prog.struct_size = XPJ_SIZE(struct xpj_program, format_size);
	prog.code = code;
	prog.code_size = strlen(code);
	prog.format = "mlir";
	prog.format_size = 4;
	memset(&cc, 0, sizeof(cc));
	cc.struct_size = XPJ_SIZE(struct xpj_compile_args, exec);
	cc.client = p->client;
	cc.program = &prog;
	cc.options = compile_options;
	cc.options_size = sizeof(compile_options);
	if (pj_failed(p, p->api->client_compile(&cc), "PJRT_Client_Compile"))
		rc = -1;
	else
		p->exec = cc.exec;
	free(code);
	free(tmpl);
	free(kpath);
	return rc;
}

/* The two inputs made on the host and copied to the device (p->ba, p->bb);
 * the host's copies are freed once the device has its own. */
static int transfer_inputs(struct pjrt_probe *p)
{
	size_t n = p->n;
	float *ha = malloc(n * sizeof(float)), *hb = malloc(n * sizeof(float));
	int64_t dims[1] = { (int64_t)n };
	float *src[2] = { ha, hb };
	xpj_buffer **dst[2] = { &p->ba, &p->bb };
	int rc = -1;

	if (!ha || !hb) {
		xl_probe_error(p->r, "cannot allocate %zu MiB on the host for the inputs",
			       2 * n * sizeof(float) / (size_t)MIB);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		ha[i] = (float)(i & 1023) * 0.5f;
		hb[i] = (float)(i & 127) - 60.0f;
	}
	for (int k = 0; k < 2; k++) {
		struct xpj_from_host_args fh;

		memset(&fh, 0, sizeof(fh));
		fh.struct_size = XPJ_SIZE(struct xpj_from_host_args, buffer);
		fh.client = p->client;
		fh.data = src[k];
		fh.type = XPJ_F32;
		fh.dims = dims;
		fh.num_dims = 1;
		fh.semantics = XPJ_IMMUTABLE_ONLY_DURING_CALL;
		fh.device = p->dev;
		if (pj_failed(p, p->api->client_buffer_from_host(&fh),
			      "PJRT_Client_BufferFromHostBuffer"))
			goto out;
		*dst[k] = fh.buffer;
		if (pj_failed(p, pj_await(p->api, fh.done_with_host),
			      "PJRT_Client_BufferFromHostBuffer"))
			goto out;
	}
	rc = 0;
out:
	/* the device has its copies: the host's go before the result comes back */
	free(ha);
	free(hb);
	return rc;
}

/* One execution, waited for: its output in p->bc, its time in p->first. */
static int execute_once(struct pjrt_probe *p)
{
	double t0 = xl_mono();

	if (pj_failed(p, run_once(p->api, p->exec, p->ba, p->bb, &p->bc),
		      "PJRT_LoadedExecutable_Execute"))
		return -1;
	p->first = xl_mono() - t0;
	if (!p->bc) {
		xl_probe_error(p->r, "PJRT_LoadedExecutable_Execute: no output buffer");
		return -1;
	}
	return 0;
}

/* The first execution's output read back into hc (n floats) and checked
 * against the host's arithmetic. */
static int check_output(struct pjrt_probe *p, float *hc)
{
	const float s = 3.0f;
	struct xpj_to_host_args th;

	memset(&th, 0, sizeof(th));
	th.struct_size = XPJ_SIZE(struct xpj_to_host_args, event);
	th.src = p->bc;
	th.dst = hc;
	th.dst_size = p->n * sizeof(float);
	if (pj_failed(p, p->api->buffer_to_host(&th), "PJRT_Buffer_ToHostBuffer") ||
	    pj_failed(p, pj_await(p->api, th.event), "PJRT_Buffer_ToHostBuffer"))
		return -1;
	for (size_t i = 0; i < p->n; i++) {
		float want = (float)(i & 1023) * 0.5f + s * ((float)(i & 127) - 60.0f);

		if (!(fabsf(hc[i] - want) <= 1e-5f * (1.0f + fabsf(want)))) {
			xl_probe_error(p->r, "verification failed: element %zu is %g, expected %g",
				       i, (double)hc[i], (double)want);
			return -1;
		}
	}
	return 0;
}

/* The first execution's output verified on the host, then destroyed. */
static int verify_output(struct pjrt_probe *p)
{
	float *hc = malloc(p->n * sizeof(float));

	if (!hc) {
		xl_probe_error(p->r, "cannot allocate %zu MiB on the host for the result",
			       p->n * sizeof(float) / (size_t)MIB);
		return -1;
	}
	if (check_output(p, hc) < 0) {
		free(hc);
		return -1;
	}
	free(hc);
	destroy_buffer(p->api, p->bc);
	p->bc = NULL;
	return 0;
}

/* How many executions a timed batch queues: share seconds' worth at per
 * seconds each (MIN_EXECS when per is not known), within MIN_EXECS and
 * MAX_EXECS, and no more than half of the time left on a slow device. */
static int batch_size(const struct xl_probe_rep *r, double share, double per)
{
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
	return execs;
}

/* The figure: the kernel as the device runs it, executions queued back to
 * back (each launch overlaps the work before it), the inputs already on the
 * device, nothing copied back.  The first batch is sized by the first
 * execution's time, the second by the first batch's; the faster per
 * execution counts. */
static int measure_bandwidth(struct pjrt_probe *p)
{
	double budget = xl_probe_time_left(p->r) / 4, per = p->first, best = 0, used = 0;
	json_t *queued = json_array();

	if (budget > MEASURE_S)
		budget = MEASURE_S;
	json_object_set_new(p->details, "executions_queued", queued);
	for (int b = 0; b < 2 && (b == 0 || used < budget * 0.75); b++) {
		double share = b == 0 ? budget / 2 : budget - used, t = 0;
		int execs = batch_size(p->r, share, per);

		if (pj_failed(p, timed_batch(p->api, p->exec, p->ba, p->bb, execs, &t),
			      "PJRT_LoadedExecutable_Execute"))
			return -1;
		used += t;
		json_array_append_new(queued, json_integer(execs));
		if (t > 0) {
			per = t / execs;
			if (best == 0 || per < best)
				best = per;
		}
	}
	json_object_set_new(p->details, "first_execution_s",
			    json_real(round(p->first * 1e6) / 1e6));
	if (best > 0)
		json_object_set_new(p->r->doc, "bandwidth_gbs",
				    json_real(round(3.0 * p->n * sizeof(float) / best
						    / 1e7) / 100));
	return 0;
}

/* The buffers and the executable destroyed.  The client is not: some
 * plugins block in their teardown, and the child exits right after this. */
static void release(struct pjrt_probe *p)
{
	const struct xpj_api *api = p->api;

	destroy_buffer(api, p->ba);
	destroy_buffer(api, p->bb);
	destroy_buffer(api, p->bc);
	if (p->exec) {
		struct xpj_exec_destroy_args ed = { XPJ_SIZE(struct xpj_exec_destroy_args, exec),
						    NULL, p->exec };
		xpj_error *e = api->loaded_exec_destroy(&ed);

		if (e)
			free(pj_take(api, e));
	}
}

/* What each stage of the ladder takes (xl_probe_climb). */
static int pjrt_rung(void *backend, enum xl_probe_stage st)
{
	struct pjrt_probe *p = backend;

	switch (st) {
	case XL_STAGE_INITIALIZED:
		if (initialize_plugin(p) < 0 || create_client(p) < 0)
			return -1;
		read_platform(p);
		return 0;
	case XL_STAGE_DEVICES:
		return list_devices(p);
	case XL_STAGE_COMPILED:
		return compile_triad(p);
	case XL_STAGE_EXECUTED:
		return transfer_inputs(p) < 0 ? -1 : execute_once(p);
	case XL_STAGE_VERIFIED:
		return verify_output(p) < 0 ? -1 : measure_bandwidth(p);
	default:
		return 0;
	}
}

void xl_probe_pjrt(struct xl_probe_rep *r, const char *path)
{
	struct pjrt_probe p = { .r = r, .path = path, .details = json_object() };

	json_object_set_new(r->doc, "details", p.details);
	child_env();
	if (load_plugin(&p) < 0)
		return;
	xl_probe_climb(r, XL_STAGE_INITIALIZED, pjrt_rung, &p);
	release(&p);
}
