/* clshim.c: see clshim.h for why this shim exists. */
#include "clshim.h"

#include <CL/cl.h>

int acl_flush(void *queue) { return clFlush((cl_command_queue)queue); }

void *acl_queue_device(void *queue) {
	cl_device_id dev = NULL;
	if (clGetCommandQueueInfo((cl_command_queue)queue, CL_QUEUE_DEVICE, sizeof dev, &dev, NULL) != CL_SUCCESS) {
		return NULL;
	}
	return (void *)dev;
}

size_t acl_program_binary(void *program, unsigned char *buf, size_t len) {
	size_t size = 0;
	if (clGetProgramInfo((cl_program)program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL) != CL_SUCCESS) {
		return 0;
	}
	if (buf != NULL && len >= size) {
		unsigned char *bins[1] = {buf};
		if (clGetProgramInfo((cl_program)program, CL_PROGRAM_BINARIES, sizeof bins, bins, NULL) != CL_SUCCESS) {
			return 0;
		}
	}
	return size;
}

void *acl_program_from_binary(void *ctx, void *dev, const unsigned char *bin, size_t len, const char *opts, int *status) {
	cl_int bin_status = CL_SUCCESS, err = CL_SUCCESS;
	cl_device_id d = (cl_device_id)dev;
	cl_program p = clCreateProgramWithBinary((cl_context)ctx, 1, &d, &len, &bin, &bin_status, &err);
	if (p == NULL || err != CL_SUCCESS || bin_status != CL_SUCCESS) {
		*status = err != CL_SUCCESS ? err : bin_status;
		if (p != NULL) {
			clReleaseProgram(p);
		}
		return NULL;
	}
	err = clBuildProgram(p, 1, &d, opts, NULL, NULL);
	if (err != CL_SUCCESS) {
		*status = err;
		clReleaseProgram(p);
		return NULL;
	}
	*status = CL_SUCCESS;
	return p;
}
