/* memory.h: untyped buffer access shared by OpenCL C and GLSL. A buffer is
 * a BPTR (OpenCL: a global byte pointer; GLSL: a uint64 device address),
 * read and written as 32- or 64-bit words at an element index. Kernels that
 * move bits without arithmetic (sorting, compaction, gathers) use these so
 * one variant serves every dtype of a word size. GLSL shaders enable
 * GL_EXT_buffer_reference and the int64 types before including this. */
#ifndef ACCEL_MEMORY_H
#define ACCEL_MEMORY_H

#ifdef __OPENCL_VERSION__
#define BPTR __global uchar*
#define LD32(p, i) (((__global uint*)(p))[(i)])
#define ST32(p, i, v) (((__global uint*)(p))[(i)] = (v))
#define LD64(p, i) (((__global ulong*)(p))[(i)])
#define ST64(p, i, v) (((__global ulong*)(p))[(i)] = (v))
#define LOCAL_BARRIER() barrier(CLK_LOCAL_MEM_FENCE)
/* STREAM_STORE(v, p): stores v at p (a __global pointer to v's type,
 * aligned to its size) with a non-temporal store where the compiler has
 * one (clang's builtin: PoCL emits vmovntdq), so a write-only stream
 * larger than the caches does not first read every line it overwrites;
 * elsewhere a plain store. OpenCL C only: GLSL has no such store, and the
 * shaders store plainly. */
#ifdef __has_builtin
#if __has_builtin(__builtin_nontemporal_store)
#define STREAM_STORE(v, p) __builtin_nontemporal_store((v), (p))
#endif
#endif
#ifndef STREAM_STORE
#define STREAM_STORE(v, p) (*(p) = (v))
#endif
/* PREFETCH_RW(p): a hint that the line at p (a __global pointer) will be
 * read and written soon (clang's builtin: prefetchw on x86), so a loop of
 * data-dependent read-modify-writes keeps more misses in flight than its
 * out-of-order window reaches. A hint only: it never faults, whatever p.
 * OpenCL C only; GLSL has none, and the shaders leave it out. */
#ifdef __has_builtin
#if __has_builtin(__builtin_prefetch)
#define PREFETCH_RW(p) __builtin_prefetch((p), 1, 3)
#endif
#endif
#ifndef PREFETCH_RW
#define PREFETCH_RW(p)
#endif
#else
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Mem32 { uint x; };
layout(buffer_reference, std430, buffer_reference_align = 8) buffer Mem64 { uint64_t x; };
#define BPTR uint64_t
#define LD32(p, i) (Mem32((p) + uint64_t(i) * 4ul).x)
#define ST32(p, i, v) (Mem32((p) + uint64_t(i) * 4ul).x = (v))
#define LD64(p, i) (Mem64((p) + uint64_t(i) * 8ul).x)
#define ST64(p, i, v) (Mem64((p) + uint64_t(i) * 8ul).x = (v))
#define LOCAL_BARRIER() memoryBarrierShared(); barrier()
#define PREFETCH_RW(p)
#endif

/* A 32-bit word read as a signed int64 (int32 indices). The sign is
 * extended by arithmetic from the zero-extended word: lavapipe (Mesa 22.3)
 * compiled int64_t(int(w)) to a zero extension in places, so the sparse
 * kernels read an index of -1 as 4294967295 and let it pass their range
 * check (the soak's find). */
i64 ld32s_extend(i64 u) { return u >= (I64C(1) << 31) ? u - (I64C(1) << 32) : u; }
#define LD32S(p, i) ld32s_extend(CAST(i64, LD32(p, i)))

#endif
