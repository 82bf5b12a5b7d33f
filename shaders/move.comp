#version 460
// Word gathers, scatters and compactions for Vulkan: a thin wrapper over
// clkernels/common/move_body.h (shared with clkernels/move.cl), whose entry
// points and knobs are declared in host/kernels
// (clkernels/common/gen/move.h). Variant define: WB (word bits, 32 or 64).
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_buffer_reference : require
#extension GL_GOOGLE_include_directive : require
#include "portable.h"
#include "memory.h"
#if WB == 64
#define WORD uint64_t
#define LDW(p, i) LD64(p, i)
#define STW(p, i, v) ST64(p, i, v)
#else
#define WORD uint
#define LDW(p, i) LD32(p, i)
#define STW(p, i, v) ST32(p, i, v)
#endif

#include "gen/move.h"
// move_tcount's and move_tcompact's work-group scratch: a count per invocation
shared uint sh[LOCAL_SIZE]; /* 32-ok: flagged elements of one tile */
#define SH(i) sh[int(i)] /* 32-ok: a scratch slot, < the local size */
#define SCRATCH_PARAM
#define SCRATCH_ARG
#include "move_body.h"

MOVE_ENTRIES
