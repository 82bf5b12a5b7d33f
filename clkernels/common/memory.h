/* memory.h: untyped buffer access shared by OpenCL C and GLSL. A buffer is
 * a BPTR (OpenCL: a global byte pointer; GLSL: a uint64 device address),
 * read and written as 32- or 64-bit words at an element index. Kernels that
 * move bits without arithmetic (sorting, compaction, gathers) use these so
 * one variant serves every dtype of a word size. GLSL shaders enable
 * GL_EXT_buffer_reference and the int64 types before including this. */
#ifndef ACCEL_MEMORY_H
#define ACCEL_MEMORY_H

#ifdef ACCEL_CL
#define BPTR __global uchar*
#define LD32(p, i) (((__global uint*)(p))[(i)])
#define ST32(p, i, v) (((__global uint*)(p))[(i)] = (v))
#define LD64(p, i) (((__global ulong*)(p))[(i)])
#define ST64(p, i, v) (((__global ulong*)(p))[(i)] = (v))
#define LOCAL_BARRIER() barrier(CLK_LOCAL_MEM_FENCE)
#else
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Mem32 { uint x; }; /* 32-ok: a 32-bit word of the buffer, not an index */
layout(buffer_reference, std430, buffer_reference_align = 8) buffer Mem64 { uint64_t x; };
#define BPTR uint64_t
#define LD32(p, i) (Mem32((p) + uint64_t(i) * 4ul).x)
#define ST32(p, i, v) (Mem32((p) + uint64_t(i) * 4ul).x = (v))
#define LD64(p, i) (Mem64((p) + uint64_t(i) * 8ul).x)
#define ST64(p, i, v) (Mem64((p) + uint64_t(i) * 8ul).x = (v))
#define LOCAL_BARRIER() memoryBarrierShared(); barrier()
#endif

#include "device_tricks.h"

/* A 32-bit word read as a signed int64 (int32 indices): arith.h's sext32. */
#define LD32S(p, i) sext32(LD32(p, i))

#endif
