/* Hash table of 64-bit keys for OpenCL C: a thin wrapper over
 * common/hash_body.h (shared with shaders/hash.comp), whose entry points and
 * knobs are declared in host/kernels (common/gen/hash.h). Needs
 * cl_khr_int64_base_atomics (the host checks Caps.Int64Atomics first).
 * Variant define: KB (key bits, 64). */
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#include "portable.h"
#include "memory.h"
#define CAS64(p, i, cmp, val) atom_cmpxchg(&((volatile __global ulong*)(p))[(i)], (cmp), (val))
#define ADD64(p, i, v) atom_add(&((volatile __global ulong*)(p))[(i)], (v))

#include "gen/hash.h"
#include "hash_body.h"

HASH_ENTRIES
