/* Word gathers, scatters and compactions for OpenCL C: a thin wrapper over
 * common/move_body.h (shared with shaders/move.comp), whose entry points and
 * knobs are declared in host/kernels (common/gen/move.h). Variant define:
 * WB (word bits, 32 or 64). */
#include "portable.h"
#include "memory.h"
#if WB == 64
#define WORD ulong
#define LDW(p, i) LD64(p, i)
#define STW(p, i, v) ST64(p, i, v)
#else
#define WORD uint
#define LDW(p, i) LD32(p, i)
#define STW(p, i, v) ST32(p, i, v)
#endif

/* move_tcount's and move_tcompact's work-group scratch: a count per lane */
#define SCRATCH_T uint /* 32-ok: flagged elements of one tile */
#define SCRATCH_LEN LOCAL_SIZE
#define SH(i) sh[(i)]
#define SCRATCH_PARAM , __local uint* sh /* 32-ok: flagged elements of one tile */
#define SCRATCH_ARG , sh

#include "gen/move.h"
#include "move_body.h"

MOVE_ENTRIES
