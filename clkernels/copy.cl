/* A word copy shaped for CPU drivers, for OpenCL C: a thin wrapper over
 * common/copy_body.h (shared with shaders/copy.comp), whose entry points
 * and knobs are declared in host/kernels (common/gen/copy.h). COPY_RUN is
 * a plain loop over restrict pointers, which LLVM vectorizes; with STREAM
 * (copies larger than the caches) the words from dst's first 64-byte
 * boundary on go in 64-byte non-temporal stores (device_tricks.h's STREAM_STORE),
 * which skip reading the lines they overwrite. */
#include "portable.h"

#define COPY_RUN(d, doff, s, soff, len) \
	{ \
		__global uint *restrict d_ = (__global uint *)(d) + (doff); \
		const __global uint *restrict s_ = (const __global uint *)(s) + (soff); \
		i64 k_ = 0; \
		if (STREAM != 0) { \
			for (; k_ < (len) && (CAST(u64, d_ + k_) & 63ul) != 0ul; k_++) { \
				d_[k_] = s_[k_]; \
			} \
			for (; k_ + 16 <= (len); k_ += 16) { \
				STREAM_STORE(vload16(0, s_ + k_), (__global uint16 *)(d_ + k_)); \
			} \
		} \
		for (; k_ < (len); k_++) { \
			d_[k_] = s_[k_]; \
		} \
	}

#include "gen/copy.h"
#include "copy_body.h"

COPY_ENTRIES
