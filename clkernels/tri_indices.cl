/* tril_indices / triu_indices for OpenCL C: a thin wrapper over
 * common/tri_indices_body.h (shared with shaders/tri_indices.comp), whose
 * entry point and knobs are declared in host/kernels
 * (common/gen/tri_indices.h). Variant define: IDX_BITS (32 or 64). */
#include "portable.h"

#if IDX_BITS == 64
#define OUT_T long
#else
#define OUT_T int
#endif
#define STORE(p, i, v) (((__global OUT_T*)(p))[(i)] = (v))

#include "gen/tri_indices.h"
#include "tri_indices_body.h"

TRI_INDICES_ENTRIES
