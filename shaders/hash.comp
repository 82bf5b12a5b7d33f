#version 460
// Hash table of 64-bit keys for Vulkan: a thin wrapper over
// clkernels/common/hash_body.h (shared with clkernels/hash.cl), whose entry
// points and knobs are declared in host/kernels
// (clkernels/common/gen/hash.h). Needs shaderBufferInt64Atomics (the host
// checks Caps.Int64Atomics first). Variant define: KB (key bits, 64).
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_shader_atomic_int64 : require
#extension GL_EXT_buffer_reference : require
#extension GL_GOOGLE_include_directive : require
#include "portable.h"
#include "memory.h"
#define CAS64(p, i, cmp, val) atomicCompSwap(Mem64((p) + uint64_t(i) * 8ul).x, (cmp), (val))
#define ADD64(p, i, v) atomicAdd(Mem64((p) + uint64_t(i) * 8ul).x, (v))

#include "gen/hash.h"
// hash_gather's work-group scratch: a count per invocation, then its run's start
shared uint sh[LOCAL_SIZE + 2]; /* 32-ok: held-slot counts */
#define SH(i) sh[int(i)] /* 32-ok: a scratch slot, < the local size + 2 */
#include "hash_body.h"

HASH_ENTRIES
