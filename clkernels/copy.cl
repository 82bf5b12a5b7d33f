/* A word copy and fill, for OpenCL C: a thin wrapper over
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

/* FILL_RUN: len words from doff, a (the first word's value) and b
 * alternating, in a plain loop LLVM vectorizes; with STREAM the words
 * from dst's first 64-byte boundary on in 64-byte non-temporal stores. */
#define FILL_RUN(d, doff, len, a, b) \
	{ \
		__global uint *restrict d_ = (__global uint *)(d) + (doff); \
		const uint a_ = (a); /* 32-ok: a pattern word */ \
		const uint b_ = (b); /* 32-ok: a pattern word */ \
		i64 k_ = 0; \
		if (STREAM != 0) { \
			for (; k_ < (len) && (CAST(u64, d_ + k_) & 63ul) != 0ul; k_++) { \
				d_[k_] = (k_ & 1) != 0 ? b_ : a_; \
			} \
			const uint e_ = (k_ & 1) != 0 ? b_ : a_; /* 32-ok: the word at an even step from here */ \
			const uint o_ = (k_ & 1) != 0 ? a_ : b_; /* 32-ok: the word at an odd step */ \
			const uint16 v_ = (uint16)(e_, o_, e_, o_, e_, o_, e_, o_, e_, o_, e_, o_, e_, o_, e_, o_); \
			for (; k_ + 16 <= (len); k_ += 16) { \
				STREAM_STORE(v_, (__global uint16 *)(d_ + k_)); \
			} \
		} \
		for (; k_ < (len); k_++) { \
			d_[k_] = (k_ & 1) != 0 ? b_ : a_; \
		} \
	}

#include "gen/copy.h"
#include "copy_body.h"

COPY_ENTRIES
