/* diagonal_scatter (and its backward) for OpenCL C: a thin wrapper over
 * common/diag_body.h (shared with shaders/diag.comp), whose entry points and
 * knobs are declared in host/kernels (common/gen/diag.h).
 * Variant define: WORD_BITS (32 or 64). */
#include "portable.h"

#if WORD_BITS == 64
#define WORD ulong
#else
#define WORD uint
#endif
#define LOAD(p, i) (((__global WORD*)(p))[(i)])
#define STORE(p, i, v) (((__global WORD*)(p))[(i)] = (v))

#include "gen/diag.h"
#include "diag_body.h"

DIAG_ENTRIES
