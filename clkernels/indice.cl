/* Sparse convolution index pairs (get_indice_pairs) for OpenCL C: a thin
 * wrapper over common/indice_body.h (shared with shaders/indice.comp),
 * whose entry points and knobs are declared in host/kernels
 * (common/gen/indice.h). Variant: any. indice_table needs
 * cl_khr_int64_base_atomics. */
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#include "portable.h"
#include "memory.h"
#define ATOM_MIN_U32(p, i, v) atomic_min(&((volatile __global uint*)(p))[(i)], (v))
#define ATOM_OR_U32(p, i, v) atomic_or(&((volatile __global uint*)(p))[(i)], (v))
/* indice_table's alone (the host runs it where Caps.Int64Atomics) */
#define CAS64(p, i, cmp, val) atom_cmpxchg(&((volatile __global ulong*)(p))[(i)], (cmp), (val))

/* indice_tcount's and indice_wpairs' work-group scratch: a count per lane */
#define SCRATCH_T uint /* 32-ok: found rows of one tile */
#define SCRATCH_LEN LOCAL_SIZE
#define SH(i) sh[(i)]
#define SCRATCH_PARAM , __local uint* sh /* 32-ok: found rows of one tile */
#define SCRATCH_ARG , sh

#include "gen/indice.h"
#include "indice_body.h"

INDICE_ENTRIES
