/* clshim: our own small OpenCL binding (see clbind.go). Handles cross to
 * Go as opaque pointers; every call returns or sets a cl_int status. A
 * binding of our own, rather than a third-party one, so that a program
 * importing accel compiles its cgo with our flags (CL_TARGET_OPENCL_VERSION
 * set in the #cgo line, no header warnings) and so that every OpenCL call
 * we make is listed here. */
#ifndef ACCEL_CLSHIM_H
#define ACCEL_CLSHIM_H

#include <stddef.h>
#include <stdint.h>

/* clFlush(queue); returns the cl_int status. */
int acl_flush(void *queue);
/* The cl_device_id of queue (CL_QUEUE_DEVICE), or NULL on error. */
void *acl_queue_device(void *queue);

/* CL_DEVICE_SINGLE_FP_CONFIG of dev (the binding has no such query), or
 * 0 where the query fails. */
uint64_t acl_single_fp_config(void *dev);
/* CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT, a bit of that config (cl.h) */
#define ACL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT (1u << 7)
#define ACL_FP_DENORM (1u << 0)

/* Program binaries, for the disk cache (the binding has neither call). */
/* The binary of a program built for one device: its size, and a copy in
 * buf when buf is not NULL and len is at least the size; 0 on error. */
size_t acl_program_binary(void *program, unsigned char *buf, size_t len);
/* A program created from a binary for dev and built with opts, or NULL
 * with *status set (a CL error, or the binary's status when it was
 * refused). */
void *acl_program_from_binary(void *ctx, void *dev, const unsigned char *bin, size_t len, const char *opts, int *status);

/* A sub-buffer of bytes [origin, origin+size) of the buffer mem
 * (clCreateSubBuffer, which the binding leaves out), read-write, or NULL
 * with *status set. */
void *acl_sub_buffer(void *mem, size_t origin, size_t size, int *status);

/* Huge-page host memory for CPU devices (this shim is cgo; see
 * hostAlloc in opencl.go). Faulting fresh 4 KiB pages runs at about
 * 0.5 GB/s on the VMs measured here, so a large fresh output cost more in
 * page faults than in its kernel; with transparent huge pages in "madvise"
 * mode, memory we map 2 MiB-aligned and madvise(MADV_HUGEPAGE) faults in
 * 2 MiB at a time. */
/* len bytes of anonymous memory at a 2 MiB boundary, advised
 * MADV_HUGEPAGE (advice the kernel refuses is ignored), or NULL. */
void *acl_huge_alloc(size_t len);
/* Unmaps memory from acl_huge_alloc. */
void acl_huge_free(void *p, size_t len);
/* Frees p (from acl_huge_alloc, len bytes) when the cl_mem mem is
 * destroyed (clSetMemObjectDestructorCallback: after the runtime is done
 * with it, commands queued on it included); returns the cl_int status. */
int acl_huge_free_with(void *mem, void *p, size_t len);

/* The binding proper: one wrapper per OpenCL call the backend makes. */
int acl_platforms(void **out, unsigned cap, unsigned *n);
int acl_devices(void *platform, void **out, unsigned cap, unsigned *n);
int acl_platform_info(void *platform, unsigned param, size_t cap, void *buf, size_t *n);
int acl_device_info(void *dev, unsigned param, size_t cap, void *buf, size_t *n);
void *acl_context(void *dev, int *status);
int acl_release_context(void *ctx);
void *acl_queue(void *ctx, void *dev, int profiling, int *status);
int acl_finish(void *queue);
int acl_release_queue(void *queue);
/* A read-write buffer; over host memory (CL_MEM_USE_HOST_PTR) when host
 * is not NULL. */
void *acl_buffer(void *ctx, size_t size, void *host, int *status);
int acl_release_mem(void *mem);
int acl_write(void *queue, void *mem, int blocking, size_t off, size_t n, const void *src, void **ev);
int acl_read(void *queue, void *mem, size_t off, size_t n, void *dst, void **ev);
int acl_fill(void *queue, void *mem, const void *pat, size_t patn, size_t off, size_t n, void **ev);
int acl_copy(void *queue, void *src, void *dst, size_t soff, size_t doff, size_t n, void **ev);
int acl_ndrange(void *queue, void *kernel, const size_t *global, const size_t *local, void **ev);
int acl_event_times(void *ev, uint64_t *start, uint64_t *end);
int acl_release_event(void *ev);
void *acl_program_from_source(void *ctx, const char *src, int *status);
int acl_build(void *program, void *dev, const char *opts);
int acl_build_log(void *program, void *dev, size_t cap, char *buf, size_t *n);
int acl_release_program(void *program);
void *acl_kernel(void *program, const char *name, int *status);
int acl_kernel_wg_size(void *kernel, void *dev, size_t *n);
/* A kernel's private memory a work-item (its stack and register spills:
 * local memory on a GPU) and its local memory a work-group, as the driver
 * compiled it. */
int acl_kernel_mem(void *kernel, void *dev, uint64_t *private_bytes, uint64_t *local_bytes);
int acl_arg_buffer(void *kernel, unsigned i, void *mem);
int acl_arg_u64(void *kernel, unsigned i, uint64_t v);
int acl_release_kernel(void *kernel);

#endif
