#version 460
// Sparse convolution index pairs (get_indice_pairs) for Vulkan: a thin
// wrapper over clkernels/common/indice_body.h (shared with
// clkernels/indice.cl), whose entry points and knobs are declared in
// host/kernels (clkernels/common/gen/indice.h). Variant: any.
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_shader_atomic_int64 : require
#extension GL_EXT_buffer_reference : require
#extension GL_GOOGLE_include_directive : require
#include "portable.h"
#include "memory.h"
#define ATOM_MIN_U32(p, i, v) atomicMin(Mem32((p) + uint64_t(i) * 4ul).x, (v))
#define ATOM_OR_U32(p, i, v) atomicOr(Mem32((p) + uint64_t(i) * 4ul).x, (v))
// indice_table's alone (its module the one with Int64Atomics; the host
// runs it where Caps.Int64Atomics)
#define CAS64(p, i, cmp, val) atomicCompSwap(Mem64((p) + uint64_t(i) * 8ul).x, (cmp), (val))

#include "gen/indice.h"
// indice_tcount's and indice_wpairs' work-group scratch: a count per invocation
shared uint sh[LOCAL_SIZE]; /* 32-ok: found rows of one tile */
#define SH(i) sh[int(i)] /* 32-ok: a scratch slot, < the local size */
#define SCRATCH_PARAM
#define SCRATCH_ARG
#include "indice_body.h"

INDICE_ENTRIES
