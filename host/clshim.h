/* clshim: our own small cgo shim for calls the OpenCL binding (go-opencl)
 * lacks or gets wrong. Its CommandQueue.Flush calls clFinish, so the
 * backend flushes through the raw queue handle here; the handles cross
 * from the binding's structs as opaque pointers (see rawHandle in
 * opencl.go, checked once per device with acl_queue_device). */
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

#endif
