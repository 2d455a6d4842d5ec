/*
 * fake_pjrt.c - a fake PJRT plugin for fault injection in the probe's tests;
 * never a stand-in for a device.  Built by the tests with one of:
 *   -DFAKE_HANG_CREATE    PJRT_Client_Create never returns
 *   -DFAKE_FAIL_COMPILE   everything up to compile works; compile fails
 *   -DFAKE_API_MAJOR=N    announces PJRT C API major version N
 *   -DFAKE_REFUSE_OPTIONS PJRT_Client_Create refuses the option
 *                         memory_fraction, as a plugin older than it would
 *                         (build it with "gpu" in the file name: the probe
 *                         gives allocator options to GPU plugins only)
 * Compilation always fails: nothing here runs a kernel.
 */
#include "probe/pjrt_abi.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef FAKE_API_MAJOR
#define FAKE_API_MAJOR 0
#endif

struct xpj_error { const char *msg; };
static struct xpj_error compile_error = { "fake_pjrt: compilation refused (injected fault)" };
static struct xpj_error option_error = { "fake_pjrt: unknown option memory_fraction (injected fault)" };
static int the_device, the_client, the_desc;

static void error_destroy(struct xpj_error_destroy_args *a) { (void)a; }
static void error_message(struct xpj_error_message_args *a)
{
	a->message = a->error->msg;
	a->message_size = strlen(a->error->msg);
}
static xpj_error *plugin_initialize(struct xpj_plugin_init_args *a) { (void)a; return NULL; }
static xpj_error *client_create(struct xpj_client_create_args *a)
{
#ifdef FAKE_HANG_CREATE
	for (;;)
		pause();
#endif
#ifdef FAKE_REFUSE_OPTIONS
	for (size_t i = 0; i < a->num_options; i++)
		if (a->options[i].name_size == strlen("memory_fraction") &&
		    memcmp(a->options[i].name, "memory_fraction", a->options[i].name_size) == 0)
			return &option_error;
#endif
	a->client = (xpj_client *)&the_client;
	return NULL;
}
static xpj_error *client_string(struct xpj_client_string_args *a)
{
	a->str = "fake";
	a->str_size = 4;
	return NULL;
}
static xpj_device *devices[1] = { (xpj_device *)&the_device };
static xpj_error *addressable_devices(struct xpj_client_devices_args *a)
{
	a->devices = devices;
	a->num_devices = 1;
	return NULL;
}
static xpj_error *get_description(struct xpj_device_desc_args *a)
{
	a->desc = (xpj_devdesc *)&the_desc;
	return NULL;
}
static xpj_error *desc_kind(struct xpj_desc_kind_args *a)
{
	a->kind = "fake_pjrt device";
	a->kind_size = strlen(a->kind);
	return NULL;
}
static xpj_error *memory_stats(struct xpj_memory_stats_args *a)
{
	a->bytes_in_use = 0;
	a->bytes_limit = (int64_t)1 << 30;
	a->bytes_limit_is_set = true;
	return NULL;
}
static xpj_error *compile(struct xpj_compile_args *a)
{
	(void)a;
	return &compile_error;
}

static struct xpj_api api;

const struct xpj_api *GetPjrtApi(void)
{
	api.struct_size = sizeof(api);
	api.version.struct_size = sizeof(api.version);
	api.version.major = FAKE_API_MAJOR;
	api.version.minor = 7;
	api.error_destroy = error_destroy;
	api.error_message = error_message;
	api.plugin_initialize = plugin_initialize;
	api.client_create = client_create;
	api.client_platform_name = client_string;
	api.client_platform_version = client_string;
	api.client_addressable_devices = addressable_devices;
	api.device_get_description = get_description;
	api.desc_kind = desc_kind;
	api.device_memory_stats = memory_stats;
	api.client_compile = compile;
	return &api;
}
