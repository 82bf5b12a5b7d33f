#version 460
// A word copy and fill, for Vulkan: a thin wrapper over
// clkernels/common/copy_body.h (shared with clkernels/copy.cl), whose
// entry points and knobs are declared in host/kernels
// (clkernels/common/gen/copy.h).
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_buffer_reference : require
#extension GL_GOOGLE_include_directive : require
#include "portable.h"
#include "memory.h"

#define COPY_RUN(d, doff, s, soff, len) \
	for (i64 k_ = I64C(0); k_ < (len); k_++) { \
		ST32(d, (doff) + k_, LD32(s, (soff) + k_)); \
	}

#define FILL_RUN(d, doff, len, a, b) \
	for (i64 k_ = I64C(0); k_ < (len); k_++) { \
		ST32(d, (doff) + k_, (k_ & I64C(1)) != I64C(0) ? (b) : (a)); \
	}

#include "gen/copy.h"
#include "copy_body.h"

COPY_ENTRIES
