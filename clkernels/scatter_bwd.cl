/* The gradient of scatter_reduce for OpenCL C: a thin wrapper over
 * common/scatter_bwd_body.h (shared with shaders/scatter_bwd.comp), whose
 * entry points and knobs are declared in host/kernels
 * (common/gen/scatter_bwd.h). Variant define: DT (3 float32, 4 float64). */
#include "portable.h"
#include "dtypes.h"
#include "memory.h"
#define LDV(p, i) (((__global T*)(p))[(i)])
#define STV(p, i, v) (((__global T*)(p))[(i)] = (v))
#define ATOM_INC_U32(p, i) atomic_inc(&((volatile __global uint*)(p))[(i)])

#include "gen/scatter_bwd.h"
#include "scatter_bwd_body.h"

SCATTER_BWD_ENTRIES
