/*
 * probe_pjrt.c - the pjrt backend: any PJRT C API plugin (libtpu.so, the
 * xla_cuda plugins, a CPU plugin).  Load, check the API version, initialize,
 * create a client (no preallocation on GPUs), list devices with their memory,
 * compile kernels/stablehlo/triad.mlir, transfer, execute, read back, verify.
 * Every failure is the plugin's own PJRT_Error_Message.
 */
#include "probe/probe.h"
#include "probe/pjrt_abi.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TRIAD_N 8388608 /* must match kernels/stablehlo/triad.mlir */

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

/* One execution: runs exec on (ba, bb), waits, returns the output buffer. */
static xpj_error *run_once(const struct xpj_api *api, xpj_loaded_exec *exec,
			   xpj_buffer *ba, xpj_buffer *bb, xpj_buffer **out)
{
	xpj_buffer *args[2] = { ba, bb };
	xpj_buffer *const *arg_lists[1] = { args };
	xpj_buffer *outs[8] = { NULL };
	xpj_buffer **out_lists[1] = { outs };
	xpj_event *done[1] = { NULL };
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
	x.device_complete_events = done;
	e = api->loaded_exec_execute(&x);
	if (e)
		return e;
	e = pj_await(api, done[0]);
	for (int i = 1; i < 8; i++)
		destroy_buffer(api, outs[i]);
	*out = outs[0];
	return e;
}

void xl_probe_pjrt(struct xl_probe_rep *r, const char *path)
{
	const struct xpj_api *api = NULL;
	void *handle = NULL;
	char *err = NULL, *code = NULL, *kpath = NULL;
	xpj_client *client = NULL;
	xpj_device *dev = NULL;
	xpj_loaded_exec *exec = NULL;
	xpj_buffer *ba = NULL, *bb = NULL, *bc = NULL;
	float *ha = NULL, *hb = NULL, *hc = NULL;
	json_t *details = json_object();
	json_t *devs;
	const float s = 3.0f;

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
	{
		struct xpj_named_value opts[2];
		struct xpj_client_create_args ca;
		size_t nopt = 0;

		memset(opts, 0, sizeof(opts));
		if (gpu_plugin(path)) {
			/* allocate on demand: never take most of the device's memory */
			opts[nopt].struct_size = XPJ_SIZE(struct xpj_named_value, value_size);
			opts[nopt].name = "preallocate";
			opts[nopt].name_size = strlen("preallocate");
			opts[nopt].type = XPJ_BOOL;
			opts[nopt].v.b = false;
			opts[nopt].value_size = 1;
			nopt++;
			opts[nopt].struct_size = XPJ_SIZE(struct xpj_named_value, value_size);
			opts[nopt].name = "allocator";
			opts[nopt].name_size = strlen("allocator");
			opts[nopt].type = XPJ_STRING;
			opts[nopt].v.s = "platform";
			opts[nopt].value_size = strlen("platform");
			nopt++;
		}
		memset(&ca, 0, sizeof(ca));
		ca.struct_size = XPJ_SIZE(struct xpj_client_create_args, kv_try_get_arg);
		ca.options = nopt ? opts : NULL;
		ca.num_options = nopt;
		PJ_CHECK(api->client_create(&ca), "PJRT_Client_Create");
		client = ca.client;
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
			struct xpj_device_desc_args dd;
			struct xpj_desc_kind_args kd;
			struct xpj_memory_stats_args ms;
			json_t *jd = json_object();
			xpj_error *e;

			memset(&dd, 0, sizeof(dd));
			dd.struct_size = XPJ_SIZE(struct xpj_device_desc_args, desc);
			dd.device = da.devices[i];
			memset(&kd, 0, sizeof(kd));
			kd.struct_size = XPJ_SIZE(struct xpj_desc_kind_args, kind_size);
			if (!(e = api->device_get_description(&dd))) {
				kd.desc = dd.desc;
				if (!(e = api->desc_kind(&kd)) && kd.kind)
					json_object_set_new(jd, "kind",
							    json_stringn(kd.kind, kd.kind_size));
			}
			if (e)
				free(pj_take(api, e));
			if (!json_object_get(jd, "kind"))
				json_object_set_new(jd, "kind", json_string("unknown"));
			memset(&ms, 0, sizeof(ms));
			ms.struct_size = XPJ_SIZE(struct xpj_memory_stats_args, peak_pool_bytes_is_set);
			ms.device = da.devices[i];
			e = api->device_memory_stats ? api->device_memory_stats(&ms) : NULL;
			if (e) {
				free(pj_take(api, e)); /* optional: UNIMPLEMENTED on some */
				json_object_set_new(jd, "memory_bytes", json_null());
			} else {
				json_object_set_new(jd, "memory_bytes", ms.bytes_limit_is_set
						    ? json_integer(ms.bytes_limit) : json_null());
				json_object_set_new(jd, "bytes_in_use", json_integer(ms.bytes_in_use));
			}
			json_array_append_new(devs, jd);
		}
		dev = da.devices[0];
	}
	xl_probe_reached(r, XL_STAGE_DEVICES);

	kpath = xl_data_path("kernels/stablehlo/triad.mlir");
	code = xl_read_file(kpath, NULL, 1 << 20);
	if (!code) {
		xl_probe_error(r, "%s: cannot read the program: %s", kpath, strerror(errno));
		goto out;
	}
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

	ha = xl_malloc(TRIAD_N * sizeof(float));
	hb = xl_malloc(TRIAD_N * sizeof(float));
	hc = xl_malloc(TRIAD_N * sizeof(float));
	for (size_t i = 0; i < TRIAD_N; i++) {
		ha[i] = (float)(i % 1024) * 0.5f;
		hb[i] = (float)(i % 77) - 30.0f;
		hc[i] = -1.0f;
	}
	{
		int64_t dims[1] = { TRIAD_N };
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
	PJ_CHECK(run_once(api, exec, ba, bb, &bc), "PJRT_LoadedExecutable_Execute");
	if (!bc) {
		xl_probe_error(r, "PJRT_LoadedExecutable_Execute: no output buffer");
		goto out;
	}
	xl_probe_reached(r, XL_STAGE_EXECUTED);
	{
		struct xpj_to_host_args th;

		memset(&th, 0, sizeof(th));
		th.struct_size = XPJ_SIZE(struct xpj_to_host_args, event);
		th.src = bc;
		th.dst = hc;
		th.dst_size = TRIAD_N * sizeof(float);
		PJ_CHECK(api->buffer_to_host(&th), "PJRT_Buffer_ToHostBuffer");
		PJ_CHECK(pj_await(api, th.event), "PJRT_Buffer_ToHostBuffer");
	}
	for (size_t i = 0; i < TRIAD_N; i++) {
		float want = ha[i] + s * hb[i];

		if (!(fabsf(hc[i] - want) <= 1e-5f * (1.0f + fabsf(want)))) {
			xl_probe_error(r, "verification failed: element %zu is %g, expected %g",
				       i, (double)hc[i], (double)want);
			goto out;
		}
	}
	{
		double best = 1e30;

		for (int k = 0; k < 5; k++) {
			xpj_buffer *o = NULL;
			double t0 = xl_mono();

			PJ_CHECK(run_once(api, exec, ba, bb, &o), "PJRT_LoadedExecutable_Execute");
			if (xl_mono() - t0 < best)
				best = xl_mono() - t0;
			destroy_buffer(api, o);
		}
		json_object_set_new(r->doc, "bandwidth_gbs",
				    json_real(round(3.0 * TRIAD_N * sizeof(float) / best / 1e7) / 100));
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
	free(kpath);
}
