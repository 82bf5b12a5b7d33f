/* clshim.c: see clshim.h for why this shim exists. */
#include "clshim.h"

#include <CL/cl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

int acl_flush(void *queue) { return clFlush((cl_command_queue)queue); }

void *acl_queue_device(void *queue) {
	cl_device_id dev = NULL;
	if (clGetCommandQueueInfo((cl_command_queue)queue, CL_QUEUE_DEVICE, sizeof dev, &dev, NULL) != CL_SUCCESS) {
		return NULL;
	}
	return (void *)dev;
}

uint64_t acl_single_fp_config(void *dev) {
	cl_device_fp_config c = 0;
	if (clGetDeviceInfo((cl_device_id)dev, CL_DEVICE_SINGLE_FP_CONFIG, sizeof c, &c, NULL) != CL_SUCCESS) {
		return 0;
	}
	return (uint64_t)c;
}

void *acl_sub_buffer(void *mem, size_t origin, size_t size, int *status) {
	cl_buffer_region region = {origin, size};
	cl_int err = CL_SUCCESS;
	cl_mem sub = clCreateSubBuffer((cl_mem)mem, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
	*status = err;
	return err == CL_SUCCESS ? (void *)sub : NULL;
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

#define ACL_HUGE (2u << 20)

void *acl_huge_alloc(size_t len) {
	if (len == 0 || len > SIZE_MAX - ACL_HUGE) {
		return NULL;
	}
	const size_t span = len + ACL_HUGE;
	unsigned char *raw = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED) {
		return NULL;
	}
	/* keep the 2 MiB-aligned len bytes, unmap the head and tail */
	unsigned char *p = (unsigned char *)(((uintptr_t)raw + ACL_HUGE - 1) & ~(uintptr_t)(ACL_HUGE - 1));
	if (p > raw) {
		munmap(raw, (size_t)(p - raw));
	}
	unsigned char *end = raw + span;
	if (end > p + len) {
		munmap(p + len, (size_t)(end - (p + len)));
	}
#ifdef MADV_HUGEPAGE
	madvise(p, len, MADV_HUGEPAGE);
#endif
	return p;
}

void acl_huge_free(void *p, size_t len) {
	if (p != NULL) {
		munmap(p, len);
	}
}

struct acl_huge_span {
	void *p;
	size_t len;
};

static void CL_CALLBACK acl_huge_release(cl_mem mem, void *user) {
	(void)mem;
	struct acl_huge_span *s = user;
	munmap(s->p, s->len);
	free(s);
}

int acl_huge_free_with(void *mem, void *p, size_t len) {
	struct acl_huge_span *s = malloc(sizeof *s);
	if (s == NULL) {
		return CL_OUT_OF_HOST_MEMORY;
	}
	s->p = p;
	s->len = len;
	const cl_int st = clSetMemObjectDestructorCallback((cl_mem)mem, acl_huge_release, s);
	if (st != CL_SUCCESS) {
		free(s);
	}
	return st;
}
