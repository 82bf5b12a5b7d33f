/* vkshim: our own small cgo shim for the Vulkan backend.
 *
 * vulkan-go (the project's binding) bundles the Vulkan 1.1.88 headers: it
 * has no Vulkan 1.2 feature/property structs, no buffer device addresses, no
 * debug-utils messenger with a C callback, and its CreateInfo wrappers cache
 * their first C copy. The backend therefore uses vulkan-go for loading and
 * for enumeration and properties (host/vulkan.go), and this shim, compiled
 * against the system's <vulkan/vulkan.h>, for what needs 1.2 structs and
 * pNext chains: instance and device creation, buffers with device
 * addresses, pipelines with specialization constants, command submission
 * with timestamps, and the validation-message sink. Handles cross into Go as
 * opaque values; no Go memory is stored in any C structure. */
#ifndef ACCEL_VKSHIM_H
#define ACCEL_VKSHIM_H

#include <stddef.h>
#include <stdint.h>

/* Loading. */
int vks_load(void);               /* dlopen libvulkan.so.1; 0 on success */
void *vks_get_instance_proc_addr(void);

/* Instance: a VkInstance with its own validation-message sink. The
 * debug-utils callback appends warnings and errors to the sink (C memory,
 * guarded by a mutex: drivers may call back from any thread); the Go side
 * drains it after every device call. The sink outlives vkDestroyInstance so
 * that leak reports made while destroying are still read. */
typedef struct vks_instance vks_instance;
int vks_create_instance(int validation, vks_instance **out, char *err, int errlen);
void *vks_vk_instance(vks_instance *vi);        /* the VkInstance */
void vks_destroy_instance(vks_instance *vi);    /* destroys the messenger and the VkInstance */
void vks_free_instance(vks_instance *vi);       /* frees the sink; after vks_destroy_instance */
int vks_take_messages(vks_instance *vi, char *buf, int len); /* copies and clears; returns the message count */

typedef struct {
	uint32_t api_version;
	char driver_name[256];
	char driver_info[256];
	uint32_t subgroup_size;
	uint64_t max_alloc;
	int buffer_device_address;
	int shader_int64;
	int shader_float64;
	int int64_atomics;
	int float32_atomic_add;
	int float64_atomic_add;
	int subgroup_arith;    /* subgroup arithmetic (and basic) in compute shaders */
	int subgroup_ext_types; /* shaderSubgroupExtendedTypes: 64-bit subgroup arithmetic */
	int subgroup_fixed;     /* min = max subgroup size: every dispatch runs subgroup_size lanes */
	int subgroup_ballot;    /* subgroup ballots (and basic) in compute shaders */
	int subgroup_control;   /* a compute pipeline can require subgroup_size lanes in full subgroups (subgroup size control) */
	int subgroup_control_ext; /* ... through VK_EXT_subgroup_size_control (enabled with the device) */
	int has_compute_queue;
	uint32_t timestamp_valid_bits;
	int preserve32; /* shaderSignedZeroInfNanPreserveFloat32 */
	int preserve64; /* shaderSignedZeroInfNanPreserveFloat64 */
	int denorm32;   /* shaderDenormPreserveFloat32 */
	int denorm64;   /* shaderDenormPreserveFloat64 */
	uint32_t compute_units; /* VK_NV_shader_sm_builtins' SMs or VK_AMD_shader_core_properties' units; 0: not told */
	int pipeline_stats; /* VK_KHR_pipeline_executable_properties: the driver's statistics of a pipeline */
} vks_caps;

int vks_query(vks_instance *vi, void *phys, vks_caps *out);

/* Device extension names, space separated, into buf (truncated to len). */
void vks_device_extensions(vks_instance *vi, void *phys, char *buf, int len);

/* Device. */
typedef struct vks_device vks_device;
/* import_host: the device (a CPU driver with VK_EXT_external_memory_host)
 * gets its large buffers in memory we map ourselves, in huge pages, as
 * the OpenCL backend does (see vks_alloc). no_map: device buffers are
 * never mapped, even in host-visible memory (Options.EmulateDiscrete:
 * every transfer goes through staging, as on a discrete GPU). stats: every
 * pipeline keeps the driver's statistics (vks_pipeline_stats), where the
 * device has VK_KHR_pipeline_executable_properties, and with bit 2 set its
 * internal representations too (vks_pipeline_ir). compile_only: a device
 * that builds pipelines and runs nothing (a driver without memory or
 * queues that work, such as RADV's null hardware): no memory type is
 * required, and nothing waits on its queue. */
int vks_open(vks_instance *vi, void *phys, int host_visible_device_memory, int import_host, int no_map, int stats,
	int compile_only, vks_device **out, char *err, int errlen);
void vks_close(vks_device *d);

typedef struct {
	uint64_t buffer; /* VkBuffer */
	uint64_t memory; /* VkDeviceMemory */
	uint64_t address;
	void *mapped; /* non-NULL when host visible */
	void *host;   /* memory we mapped and imported (acl_huge_alloc), or NULL */
	uint64_t host_len;
} vks_buffer;

int vks_alloc(vks_device *d, uint64_t size, int host_visible, vks_buffer *out);
void vks_free(vks_device *d, vks_buffer *b);

/* Pipelines: spec holds n (id, value) pairs of 32-bit specialization
 * constants. With require_subgroup (where the device has subgroup size
 * control) the pipeline runs subgroups of the device's subgroup_size lanes,
 * and with full_subgroups every subgroup whole (the local size a multiple). */
int vks_pipeline(vks_device *d, const uint32_t *code, size_t code_bytes, const uint32_t *spec, int n,
	int require_subgroup, int full_subgroups, uint64_t *pipeline, char *err, int errlen);
void vks_destroy_pipeline(vks_device *d, uint64_t pipeline);
/* The driver's statistics of a pipeline's compute executable as text
 * ("name=value;name=value..."), truncated to len; -1 where the device keeps
 * none (vks_open's stats), else a VkResult. */
int vks_pipeline_stats(vks_device *d, uint64_t pipeline, char *buf, int len);
/* The driver's internal representations of a pipeline's compute executable
 * (RADV: its NIR, ACO's IR and the disassembly), where the device was
 * opened with stats bit 2 and the driver captures them: a malloc'ed string
 * of "name\x1ftext\x1e" records (the caller frees it), status 0; else NULL
 * with status -1 (none kept) or a VkResult. */
char *vks_pipeline_ir(vks_device *d, uint64_t pipeline, int *status);

/* Batches: a command buffer with its fence and timestamp query pool.
 * Commands are recorded into a batch and run when it is submitted; the
 * host waits on the batch's fence. Recording and submitting are
 * externally synchronized (the Go side's device lock); waiting is not. */
typedef struct vks_batch vks_batch;
int vks_batch_new(vks_device *d, uint32_t queries, vks_batch **out);
void vks_batch_free(vks_device *d, vks_batch *b);
/* Resets and begins b: a barrier after all earlier work (and host writes),
 * then timestamp 0 (when the device has timestamps). */
int vks_batch_begin(vks_device *d, vks_batch *b);
/* Writes the next timestamp after all earlier commands of b; returns its
 * query index, or -1 when b has no room or the device no timestamps. */
int vks_cmd_timestamp(vks_device *d, vks_batch *b);
/* A full memory and execution barrier between compute and transfer work. */
void vks_cmd_barrier(vks_device *d, vks_batch *b);
void vks_cmd_dispatch(vks_device *d, vks_batch *b, uint64_t pipeline, const void *push, uint32_t push_bytes,
	uint32_t gx, uint32_t gy, uint32_t gz);
void vks_cmd_copy(vks_device *d, vks_batch *b, uint64_t src, uint64_t src_off, uint64_t dst, uint64_t dst_off, uint64_t size);
/* Copies src[src_off, src_off+chunk) over dst[dst_off, dst_off+size)
 * repeatedly, as one command of several regions (the last one cut short
 * where size is not a multiple of chunk). */
int vks_cmd_copy_repeat(vks_device *d, vks_batch *b, uint64_t src, uint64_t src_off, uint64_t chunk, uint64_t dst,
	uint64_t dst_off, uint64_t size);
void vks_cmd_fill(vks_device *d, vks_batch *b, uint64_t buf, uint64_t off, uint64_t size, uint32_t data);
/* vkCmdUpdateBuffer: size <= 65536, off and size multiples of 4; data is
 * copied into the command buffer at once. */
void vks_cmd_update(vks_device *d, vks_batch *b, uint64_t buf, uint64_t off, uint64_t size, const void *data);
/* Ends b (a barrier to host reads, a last timestamp) and submits it. */
int vks_batch_submit(vks_device *d, vks_batch *b);
/* Waits for b's fence. */
int vks_batch_wait(vks_device *d, vks_batch *b);
/* The device time in ns between queries a and z of a finished batch, or 0. */
uint64_t vks_batch_elapsed(vks_device *d, vks_batch *b, int a, int z);
/* The number of timestamp queries written into b so far. */
int vks_batch_queries(vks_batch *b);
int vks_wait_idle(vks_device *d);

/* Tests only: creates a VkBuffer and drops it, so that the validation layer
 * must report it leaked when the device is destroyed. */
int vks_leak_buffer_for_test(vks_device *d);

#endif
