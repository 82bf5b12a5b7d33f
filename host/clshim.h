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

/* Program binaries, for the disk cache (the binding has neither call). */
/* The binary of a program built for one device: its size, and a copy in
 * buf when buf is not NULL and len is at least the size; 0 on error. */
size_t acl_program_binary(void *program, unsigned char *buf, size_t len);
/* A program created from a binary for dev and built with opts, or NULL
 * with *status set (a CL error, or the binary's status when it was
 * refused). */
void *acl_program_from_binary(void *ctx, void *dev, const unsigned char *bin, size_t len, const char *opts, int *status);

#endif
