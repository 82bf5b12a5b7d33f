/* A word copy shaped for CPU drivers, for OpenCL C: a thin wrapper over
 * common/copy_body.h (shared with shaders/copy.comp), whose entry points
 * and knobs are declared in host/kernels (common/gen/copy.h). COPY_RUN is
 * a plain loop over restrict pointers, which LLVM vectorizes. */
#include "portable.h"

#define COPY_RUN(d, doff, s, soff, len) \
	{ \
		__global uint *restrict d_ = (__global uint *)(d) + (doff); \
		const __global uint *restrict s_ = (const __global uint *)(s) + (soff); \
		for (i64 k_ = 0; k_ < (len); k_++) { \
			d_[k_] = s_[k_]; \
		} \
	}

#include "gen/copy.h"
#include "copy_body.h"

COPY_ENTRIES
