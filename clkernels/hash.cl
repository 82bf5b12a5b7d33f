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

/* hash_gather's work-group scratch: a count per lane, then its run's start */
#define SCRATCH_T uint /* 32-ok: held-slot counts */
#define SCRATCH_LEN (LOCAL_SIZE + 2)
#define SH(i) sh[(i)]

#include "gen/hash.h"
#include "hash_body.h"

HASH_ENTRIES
