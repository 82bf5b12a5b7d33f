/* Sparse COO/CSR tensors and their elementwise ops for OpenCL C: a thin wrapper over
 * common/sparse_body.h (shared with shaders/sparse.comp), whose entry
 * points and knobs are declared in host/kernels (common/gen/sparse.h).
 * Variant define: DT (1 int32, 2 int64, 3 float32, 4 float64). */
#include "portable.h"
#include "dtypes.h"
#include "memory.h"
#define LDV(p, i) (((__global T*)(p))[(i)])
#define STV(p, i, v) (((__global T*)(p))[(i)] = (v))
#define ATOM_MIN_U32(p, i, v) atomic_min(&((volatile __global uint*)(p))[(i)], (v))
#define ATOM_ADD_U32(p, i, v) atomic_add(&((volatile __global uint*)(p))[(i)], (v))

#include "gen/sparse.h"
#include "sparse_body.h"

SPARSE_ENTRIES
