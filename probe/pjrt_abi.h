/*
 * pjrt_abi.h - private to the probe: our own declarations of the part of the
 * PJRT C API (major version 0) that the probe calls, laid out as the
 * published ABI lays them out.  Every argument struct starts with its size
 * and an extension pointer; a plugin reads only as many bytes as struct_size
 * says, so declaring fewer trailing fields than a newer header is safe.  The
 * function table is append-only within a major version: slots are listed in
 * ABI order, and the ones the probe never calls are kept as plain pointers.
 */
#ifndef XLAUNCH_PJRT_ABI_H
#define XLAUNCH_PJRT_ABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define XPJ_SUPPORTED_MAJOR 0

typedef struct xpj_error xpj_error;
typedef struct xpj_client xpj_client;
typedef struct xpj_device xpj_device;
typedef struct xpj_devdesc xpj_devdesc;
typedef struct xpj_loaded_exec xpj_loaded_exec;
typedef struct xpj_buffer xpj_buffer;
typedef struct xpj_event xpj_event;
typedef struct xpj_memory xpj_memory;

/* The size an argument struct announces: up to and including `last`. */
#define XPJ_SIZE(type, last) (offsetof(type, last) + sizeof(((type *)0)->last))

struct xpj_version {
	size_t struct_size;
	void *ext;
	int major;
	int minor;
};

struct xpj_error_destroy_args {
	size_t struct_size;
	void *ext;
	xpj_error *error;
};
struct xpj_error_message_args {
	size_t struct_size;
	void *ext;
	const xpj_error *error;
	const char *message;     /* out, lives as long as error */
	size_t message_size;     /* out */
};
struct xpj_error_code_args {
	size_t struct_size;
	void *ext;
	const xpj_error *error;
	int code;                /* out: absl status code */
};

enum xpj_value_type { XPJ_STRING = 0, XPJ_INT64, XPJ_INT64_LIST, XPJ_FLOAT, XPJ_BOOL };
struct xpj_named_value {
	size_t struct_size;
	void *ext;
	const char *name;
	size_t name_size;
	enum xpj_value_type type;
	union {
		const char *s;
		int64_t i64;
		const int64_t *i64_list;
		float f;
		bool b;
	} v;
	size_t value_size;       /* elements for lists and strings, else 1 */
};

struct xpj_plugin_init_args {
	size_t struct_size;
	void *ext;
};

struct xpj_event_destroy_args {
	size_t struct_size;
	void *ext;
	xpj_event *event;
};
struct xpj_event_await_args {
	size_t struct_size;
	void *ext;
	xpj_event *event;
};

struct xpj_client_create_args {
	size_t struct_size;
	void *ext;
	const struct xpj_named_value *options;
	size_t num_options;
	void *kv_get;            /* key-value callbacks: unused by the probe */
	void *kv_get_arg;
	void *kv_put;
	void *kv_put_arg;
	xpj_client *client;      /* out */
	void *kv_try_get;        /* added in later 0.x minors */
	void *kv_try_get_arg;
};
struct xpj_client_destroy_args {
	size_t struct_size;
	void *ext;
	xpj_client *client;
};
struct xpj_client_string_args {  /* PlatformName and PlatformVersion */
	size_t struct_size;
	void *ext;
	xpj_client *client;
	const char *str;         /* out, owned by the client */
	size_t str_size;         /* out */
};
struct xpj_client_devices_args { /* Devices and AddressableDevices */
	size_t struct_size;
	void *ext;
	xpj_client *client;
	xpj_device *const *devices;  /* out */
	size_t num_devices;          /* out */
};

struct xpj_program {
	size_t struct_size;
	void *ext;
	const char *code;
	size_t code_size;
	const char *format;      /* "mlir": MLIR text or bytecode */
	size_t format_size;
};
struct xpj_compile_args {
	size_t struct_size;
	void *ext;
	xpj_client *client;
	const struct xpj_program *program;
	const char *options;     /* serialized xla.CompileOptionsProto */
	size_t options_size;
	xpj_loaded_exec *exec;   /* out */
};

enum { XPJ_F32 = 11 };       /* PJRT_Buffer_Type numbering */
enum { XPJ_IMMUTABLE_ONLY_DURING_CALL = 0 };
struct xpj_from_host_args {
	size_t struct_size;
	void *ext;
	xpj_client *client;
	const void *data;
	int type;
	const int64_t *dims;
	size_t num_dims;
	const int64_t *byte_strides;
	size_t num_byte_strides;
	int semantics;
	xpj_device *device;
	xpj_memory *memory;
	void *device_layout;
	xpj_event *done_with_host; /* out */
	xpj_buffer *buffer;        /* out */
};

struct xpj_device_desc_args {
	size_t struct_size;
	void *ext;
	xpj_device *device;
	xpj_devdesc *desc;       /* out */
};
struct xpj_desc_kind_args {
	size_t struct_size;
	void *ext;
	xpj_devdesc *desc;
	const char *kind;        /* out */
	size_t kind_size;        /* out */
};
struct xpj_desc_attributes_args {
	size_t struct_size;
	void *ext;
	xpj_devdesc *desc;
	size_t num_attributes;                    /* out */
	const struct xpj_named_value *attributes; /* out, owned by the device */
};
struct xpj_memory_stats_args {
	size_t struct_size;
	void *ext;
	xpj_device *device;
	int64_t bytes_in_use;
	int64_t peak_bytes_in_use;
	bool peak_bytes_in_use_is_set;
	int64_t num_allocs;
	bool num_allocs_is_set;
	int64_t largest_alloc_size;
	bool largest_alloc_size_is_set;
	int64_t bytes_limit;
	bool bytes_limit_is_set;
	int64_t bytes_reserved;
	bool bytes_reserved_is_set;
	int64_t peak_bytes_reserved;
	bool peak_bytes_reserved_is_set;
	int64_t bytes_reservable_limit;
	bool bytes_reservable_limit_is_set;
	int64_t largest_free_block_bytes;
	bool largest_free_block_bytes_is_set;
	int64_t pool_bytes;
	bool pool_bytes_is_set;
	int64_t peak_pool_bytes;
	bool peak_pool_bytes_is_set;
};

struct xpj_exec_destroy_args {
	size_t struct_size;
	void *ext;
	xpj_loaded_exec *exec;
};
struct xpj_execute_options {
	size_t struct_size;
	void *ext;
	void **send_callbacks;
	void **recv_callbacks;
	size_t num_send_ops;
	size_t num_recv_ops;
	int launch_id;
	const int64_t *non_donatable;   /* added in later 0.x minors */
	size_t num_non_donatable;
	void *context;
	const char *call_location;
	size_t num_tasks;
	int *task_ids;
	int64_t *incarnation_ids;
};
struct xpj_execute_args {
	size_t struct_size;
	void *ext;
	xpj_loaded_exec *exec;
	struct xpj_execute_options *options;
	xpj_buffer *const *const *argument_lists; /* [devices][args] */
	size_t num_devices;
	size_t num_args;
	xpj_buffer **const *output_lists;         /* [devices][outputs], filled */
	xpj_event **device_complete_events;       /* [devices], filled */
	xpj_device *execute_device;
};

struct xpj_buffer_destroy_args {
	size_t struct_size;
	void *ext;
	xpj_buffer *buffer;
};
struct xpj_to_host_args {
	size_t struct_size;
	void *ext;
	xpj_buffer *src;
	void *host_layout;
	void *dst;
	size_t dst_size;
	xpj_event *event;        /* out */
};

typedef void xpj_void_fn(void *args);
typedef xpj_error *xpj_fn(void *args);

/* The function table, in ABI order.  Named slots are the ones called. */
struct xpj_api {
	size_t struct_size;
	void *ext;
	struct xpj_version version;

	void (*error_destroy)(struct xpj_error_destroy_args *);
	void (*error_message)(struct xpj_error_message_args *);
	xpj_error *(*error_get_code)(struct xpj_error_code_args *);

	xpj_error *(*plugin_initialize)(struct xpj_plugin_init_args *);
	void *plugin_attributes;

	xpj_error *(*event_destroy)(struct xpj_event_destroy_args *);
	void *event_is_ready;
	void *event_error;
	xpj_error *(*event_await)(struct xpj_event_await_args *);
	void *event_on_ready;

	xpj_error *(*client_create)(struct xpj_client_create_args *);
	xpj_error *(*client_destroy)(struct xpj_client_destroy_args *);
	xpj_error *(*client_platform_name)(struct xpj_client_string_args *);
	void *client_process_index;
	xpj_error *(*client_platform_version)(struct xpj_client_string_args *);
	void *client_devices;
	xpj_error *(*client_addressable_devices)(struct xpj_client_devices_args *);
	void *client_lookup_device;
	void *client_lookup_addressable_device;
	void *client_addressable_memories;
	xpj_error *(*client_compile)(struct xpj_compile_args *);
	void *client_default_device_assignment;
	xpj_error *(*client_buffer_from_host)(struct xpj_from_host_args *);

	void *desc_id;
	void *desc_process_index;
	xpj_error *(*desc_attributes)(struct xpj_desc_attributes_args *);
	xpj_error *(*desc_kind)(struct xpj_desc_kind_args *);
	void *desc_debug_string;
	void *desc_to_string;

	xpj_error *(*device_get_description)(struct xpj_device_desc_args *);
	void *device_is_addressable;
	void *device_local_hardware_id;
	void *device_addressable_memories;
	void *device_default_memory;
	xpj_error *(*device_memory_stats)(struct xpj_memory_stats_args *);

	void *memory_id;
	void *memory_kind;
	void *memory_debug_string;
	void *memory_to_string;
	void *memory_addressable_by_devices;

	void *executable_destroy;
	void *executable_name;
	void *executable_num_replicas;
	void *executable_num_partitions;
	void *executable_num_outputs;
	void *executable_code_size;
	void *executable_cost_analysis;
	void *executable_output_memory_kinds;
	void *executable_optimized_program;
	void *executable_serialize;

	xpj_error *(*loaded_exec_destroy)(struct xpj_exec_destroy_args *);
	void *loaded_exec_get_executable;
	void *loaded_exec_addressable_devices;
	void *loaded_exec_delete;
	void *loaded_exec_is_deleted;
	xpj_error *(*loaded_exec_execute)(struct xpj_execute_args *);
	void *executable_deserialize_and_load;
	void *loaded_exec_fingerprint;

	xpj_error *(*buffer_destroy)(struct xpj_buffer_destroy_args *);
	void *buffer_element_type;
	void *buffer_dimensions;
	void *buffer_unpadded_dimensions;
	void *buffer_dynamic_dimension_indices;
	void *buffer_get_memory_layout;
	void *buffer_on_device_size;
	void *buffer_device;
	void *buffer_memory;
	void *buffer_delete;
	void *buffer_is_deleted;
	void *buffer_copy_to_device;
	xpj_error *(*buffer_to_host)(struct xpj_to_host_args *);
	/* ... more slots follow; the probe needs none of them */
};

/* The smallest table that holds every slot the probe calls. */
#define XPJ_API_MIN_SIZE XPJ_SIZE(struct xpj_api, buffer_to_host)

typedef const struct xpj_api *xpj_get_api_fn(void);

/* In the current process: dlopen the plugin, call GetPjrtApi and check that
 * the table holds a version.  Returns 0 with the table and the open handle,
 * or -1 with *err (caller frees). */
int xl_pjrt_load(const char *path, const struct xpj_api **api, void **handle, char **err);

#endif
