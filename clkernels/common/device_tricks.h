/* device_tricks.h: the device-class tricks, all in one place. Everything
 * else in the kernels is OpenCL C or GLSL and their built-ins only
 * (TestNoBuiltinsOutsideTricks in clkernels fails on a __builtin_
 * anywhere else). Each trick speeds up CPU drivers (PoCL: clang, x86) and
 * is compiled in only where the host builds for a CPU device (knob
 * CPU_TRICKS=1, host.DeviceKnobs); elsewhere each falls back to plain
 * OpenCL C, and GLSL never has them. A GPU compiler need not accept
 * them: NVIDIA's refused __builtin_prefetch of a __global pointer
 * ("changes address space of pointer"), which failed every scatter
 * program on the H100.
 *
 *   STREAM_STORE(v, p)  stores v at p (a __global pointer to v's type,
 *                       aligned to its size) with a non-temporal store
 *                       (PoCL emits vmovntdq), so a write-only stream
 *                       larger than the caches does not first read every
 *                       line it overwrites; else a plain store
 *   PREFETCH_RW(p)      a hint that the line at p (a __global pointer)
 *                       will be read and written soon (prefetchw on x86),
 *                       so a loop of data-dependent read-modify-writes
 *                       keeps more misses in flight than its out-of-order
 *                       window reaches; never faults, whatever p; else
 *                       nothing
 *   VSHUFFLE(a, b, ...) clang's __builtin_shufflevector of two vectors of
 *                       one type (lanes of a, then of b, picked by
 *                       constant indices); undefined where the trick is
 *                       off, and the caller spells the shuffle with
 *                       swizzles instead */
#ifndef ACCEL_DEVICE_TRICKS_H
#define ACCEL_DEVICE_TRICKS_H

#ifndef CPU_TRICKS
#define CPU_TRICKS 0
#endif

#if defined(ACCEL_CL) && CPU_TRICKS && defined(__has_builtin)
#if __has_builtin(__builtin_nontemporal_store)
#define STREAM_STORE(v, p) __builtin_nontemporal_store((v), (p))
#endif
#if __has_builtin(__builtin_prefetch)
#define PREFETCH_RW(p) __builtin_prefetch((p), 1, 3)
#endif
#if __has_builtin(__builtin_shufflevector)
#define VSHUFFLE(a, b, ...) __builtin_shufflevector((a), (b), __VA_ARGS__)
#endif
#endif

/* CPU builds use 512-bit vectors (16 floats, 8 longs) on x86 machines
 * without AVX-512, and clang warns (-Wpsabi) at every call of a built-in
 * with such an argument that its ABI differs from an AVX-512 build's.
 * PoCL compiles the kernel and its built-ins for the same target and
 * inlines them, so no call crosses that boundary: the note is noise, and
 * PoCL printed its count ("4 warnings generated.") to the embedding
 * program's stderr on every cold build (issue #30). Only this warning is
 * silenced, and only in CPU builds. */
#if defined(ACCEL_CL) && CPU_TRICKS && defined(__clang__)
#pragma clang diagnostic ignored "-Wpsabi"
#endif

#ifndef STREAM_STORE
#define STREAM_STORE(v, p) (*(p) = (v))
#endif
#ifndef PREFETCH_RW
#define PREFETCH_RW(p)
#endif

#endif
