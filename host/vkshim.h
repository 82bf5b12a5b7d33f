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

/* Validation messages, collected by the debug-utils callback. */
int vks_take_messages(char *buf, int len); /* copies and clears; returns the message count */

/* Instance. */
int vks_create_instance(int validation, void **instance, char *err, int errlen);
void vks_destroy_instance(void *instance);

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
	int has_compute_queue;
	uint32_t timestamp_valid_bits;
} vks_caps;

int vks_query(void *instance, void *phys, vks_caps *out);

/* Device. */
typedef struct vks_device vks_device;
int vks_open(void *instance, void *phys, int host_visible_device_memory, vks_device **out, char *err, int errlen);
void vks_close(vks_device *d);

typedef struct {
	uint64_t buffer; /* VkBuffer */
	uint64_t memory; /* VkDeviceMemory */
	uint64_t address;
	void *mapped; /* non-NULL when host visible */
} vks_buffer;

int vks_alloc(vks_device *d, uint64_t size, int host_visible, vks_buffer *out);
void vks_free(vks_device *d, vks_buffer *b);

/* Pipelines: spec holds n (id, value) pairs of 32-bit specialization constants. */
int vks_pipeline(vks_device *d, const uint32_t *code, size_t code_bytes, const uint32_t *spec, int n,
	uint64_t *pipeline, char *err, int errlen);
void vks_destroy_pipeline(vks_device *d, uint64_t pipeline);

/* Commands; each submits, waits and returns the device time in ns (0 when
 * timestamps are unavailable). Return VkResult. */
int vks_dispatch(vks_device *d, uint64_t pipeline, const void *push, uint32_t push_bytes,
	uint32_t gx, uint32_t gy, uint32_t gz, uint64_t *ns);
int vks_copy(vks_device *d, uint64_t src, uint64_t src_off, uint64_t dst, uint64_t dst_off, uint64_t size, uint64_t *ns);
int vks_fill(vks_device *d, uint64_t buf, uint64_t off, uint64_t size, uint32_t data);
int vks_wait_idle(vks_device *d);

#endif
