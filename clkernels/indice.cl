/* Sparse convolution index pairs (get_indice_pairs) for OpenCL C: a thin
 * wrapper over common/indice_body.h (shared with shaders/indice.comp),
 * whose entry points and knobs are declared in host/kernels
 * (common/gen/indice.h). Variant: any. */
#include "portable.h"
#include "memory.h"
#define ATOM_MIN_U32(p, i, v) atomic_min(&((volatile __global uint*)(p))[(i)], (v))

#include "gen/indice.h"
#include "indice_body.h"

INDICE_ENTRIES
