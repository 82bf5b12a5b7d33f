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

/* The binding proper (clbind.go): thin wrappers that keep casts and
 * out-parameters on the C side. */

int acl_platforms(void **out, unsigned cap, unsigned *n) {
	cl_uint got = 0;
	cl_int st = clGetPlatformIDs(cap, (cl_platform_id *)out, &got);
	*n = got;
	return st;
}

int acl_devices(void *platform, void **out, unsigned cap, unsigned *n) {
	cl_uint got = 0;
	cl_int st = clGetDeviceIDs((cl_platform_id)platform, CL_DEVICE_TYPE_ALL, cap, (cl_device_id *)out, &got);
	*n = got;
	return st;
}

int acl_platform_info(void *platform, unsigned param, size_t cap, void *buf, size_t *n) {
	return clGetPlatformInfo((cl_platform_id)platform, (cl_platform_info)param, cap, buf, n);
}

int acl_device_info(void *dev, unsigned param, size_t cap, void *buf, size_t *n) {
	return clGetDeviceInfo((cl_device_id)dev, (cl_device_info)param, cap, buf, n);
}

void *acl_context(void *dev, int *status) {
	cl_device_id d = (cl_device_id)dev;
	cl_int err = CL_SUCCESS;
	cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &err);
	*status = err;
	return err == CL_SUCCESS ? (void *)c : NULL;
}

int acl_release_context(void *ctx) { return clReleaseContext((cl_context)ctx); }

void *acl_queue(void *ctx, void *dev, int profiling, int *status) {
	cl_int err = CL_SUCCESS;
	cl_command_queue q = clCreateCommandQueue((cl_context)ctx, (cl_device_id)dev,
		profiling ? CL_QUEUE_PROFILING_ENABLE : 0, &err);
	*status = err;
	return err == CL_SUCCESS ? (void *)q : NULL;
}

int acl_finish(void *queue) { return clFinish((cl_command_queue)queue); }
int acl_release_queue(void *queue) { return clReleaseCommandQueue((cl_command_queue)queue); }

void *acl_buffer(void *ctx, size_t size, void *host, int *status) {
	cl_int err = CL_SUCCESS;
	cl_mem_flags flags = CL_MEM_READ_WRITE | (host != NULL ? CL_MEM_USE_HOST_PTR : 0);
	cl_mem m = clCreateBuffer((cl_context)ctx, flags, size, host, &err);
	*status = err;
	return err == CL_SUCCESS ? (void *)m : NULL;
}

int acl_release_mem(void *mem) { return clReleaseMemObject((cl_mem)mem); }

int acl_write(void *queue, void *mem, int blocking, size_t off, size_t n, const void *src, void **ev) {
	return clEnqueueWriteBuffer((cl_command_queue)queue, (cl_mem)mem, blocking ? CL_TRUE : CL_FALSE, off, n, src, 0, NULL, (cl_event *)ev);
}

int acl_read(void *queue, void *mem, size_t off, size_t n, void *dst, void **ev) {
	return clEnqueueReadBuffer((cl_command_queue)queue, (cl_mem)mem, CL_TRUE, off, n, dst, 0, NULL, (cl_event *)ev);
}

int acl_fill(void *queue, void *mem, const void *pat, size_t patn, size_t off, size_t n, void **ev) {
	return clEnqueueFillBuffer((cl_command_queue)queue, (cl_mem)mem, pat, patn, off, n, 0, NULL, (cl_event *)ev);
}

int acl_copy(void *queue, void *src, void *dst, size_t soff, size_t doff, size_t n, void **ev) {
	return clEnqueueCopyBuffer((cl_command_queue)queue, (cl_mem)src, (cl_mem)dst, soff, doff, n, 0, NULL, (cl_event *)ev);
}

int acl_ndrange(void *queue, void *kernel, const size_t *global, const size_t *local, void **ev) {
	return clEnqueueNDRangeKernel((cl_command_queue)queue, (cl_kernel)kernel, 3, NULL, global, local, 0, NULL, (cl_event *)ev);
}

int acl_event_times(void *ev, uint64_t *start, uint64_t *end) {
	cl_ulong s = 0, e = 0;
	cl_int st = clGetEventProfilingInfo((cl_event)ev, CL_PROFILING_COMMAND_START, sizeof s, &s, NULL);
	if (st == CL_SUCCESS) {
		st = clGetEventProfilingInfo((cl_event)ev, CL_PROFILING_COMMAND_END, sizeof e, &e, NULL);
	}
	*start = s;
	*end = e;
	return st;
}

int acl_release_event(void *ev) { return clReleaseEvent((cl_event)ev); }

void *acl_program_from_source(void *ctx, const char *src, int *status) {
	cl_int err = CL_SUCCESS;
	cl_program p = clCreateProgramWithSource((cl_context)ctx, 1, &src, NULL, &err);
	*status = err;
	return err == CL_SUCCESS ? (void *)p : NULL;
}

int acl_build(void *program, void *dev, const char *opts) {
	cl_device_id d = (cl_device_id)dev;
	return clBuildProgram((cl_program)program, 1, &d, opts, NULL, NULL);
}

int acl_build_log(void *program, void *dev, size_t cap, char *buf, size_t *n) {
	return clGetProgramBuildInfo((cl_program)program, (cl_device_id)dev, CL_PROGRAM_BUILD_LOG, cap, buf, n);
}

int acl_release_program(void *program) { return clReleaseProgram((cl_program)program); }

void *acl_kernel(void *program, const char *name, int *status) {
	cl_int err = CL_SUCCESS;
	cl_kernel k = clCreateKernel((cl_program)program, name, &err);
	*status = err;
	return err == CL_SUCCESS ? (void *)k : NULL;
}

int acl_kernel_wg_size(void *kernel, void *dev, size_t *n) {
	return clGetKernelWorkGroupInfo((cl_kernel)kernel, (cl_device_id)dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof *n, n, NULL);
}

int acl_kernel_mem(void *kernel, void *dev, uint64_t *private_bytes, uint64_t *local_bytes) {
	cl_ulong p = 0, l = 0;
	int r = clGetKernelWorkGroupInfo((cl_kernel)kernel, (cl_device_id)dev, CL_KERNEL_PRIVATE_MEM_SIZE, sizeof p, &p, NULL);
	if (r == 0) {
		r = clGetKernelWorkGroupInfo((cl_kernel)kernel, (cl_device_id)dev, CL_KERNEL_LOCAL_MEM_SIZE, sizeof l, &l, NULL);
	}
	*private_bytes = p;
	*local_bytes = l;
	return r;
}

int acl_arg_buffer(void *kernel, unsigned i, void *mem) {
	cl_mem m = (cl_mem)mem;
	return clSetKernelArg((cl_kernel)kernel, i, sizeof m, &m);
}

int acl_arg_u64(void *kernel, unsigned i, uint64_t v) {
	return clSetKernelArg((cl_kernel)kernel, i, sizeof v, &v);
}

int acl_release_kernel(void *kernel) { return clReleaseKernel((cl_kernel)kernel); }
