/* dtypes.h: the element type T of an arithmetic kernel variant, for both
 * languages. Variant define DT: 1 int32, 2 int64, 3 float32, 4 float64.
 * Defines T, its bit word UBITS and BYTES, TO_BITS/FROM_BITS, T_LOWEST and
 * T_HIGHEST (the identities of max and min), WRAP_ADD/WRAP_MUL (integers
 * wrap: they compute in the unsigned type) and MEAN_DIV(a, d) (integers
 * floor). GLSL shaders enable the int64 types first. */
#ifndef ACCEL_DTYPES_H
#define ACCEL_DTYPES_H

#ifdef __OPENCL_VERSION__
#if DT == 4
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#if DT == 1
#define T int
#define UBITS uint
#define TO_BITS(v) as_uint(v)
#define FROM_BITS(b) as_int(b)
#define T_LOWEST INT_MIN
#define T_HIGHEST INT_MAX
#elif DT == 2
#define T long
#define UBITS ulong
#define TO_BITS(v) as_ulong(v)
#define FROM_BITS(b) as_long(b)
#define T_LOWEST LONG_MIN
#define T_HIGHEST LONG_MAX
#elif DT == 3
#define T float
#define UBITS uint
#define TO_BITS(v) as_uint(v)
#define FROM_BITS(b) as_float(b)
#define T_LOWEST (-INFINITY)
#define T_HIGHEST INFINITY
#else
#define T double
#define UBITS ulong
#define TO_BITS(v) as_ulong(v)
#define FROM_BITS(b) as_double(b)
#define T_LOWEST (-(double)INFINITY)
#define T_HIGHEST ((double)INFINITY)
#endif
#if DT == 1 || DT == 2
#define T_IS_NAN(v) false
#define WRAP_ADD(a, b) FROM_BITS(TO_BITS(a) + TO_BITS(b))
#define WRAP_MUL(a, b) FROM_BITS(TO_BITS(a) * TO_BITS(b))
#define MEAN_DIV(a, d) ((T)((a) / (T)(d) - ((((a) % (T)(d)) != 0 && (a) < 0) ? 1 : 0)))
#else
#define T_IS_NAN(v) ((v) != (v))
#define WRAP_ADD(a, b) ((a) + (b))
#define WRAP_MUL(a, b) ((a) * (b))
#define MEAN_DIV(a, d) ((a) / (T)(d))
#endif

#else /* GLSL */
#if DT == 1
#define T int
#define UBITS uint
#define BYTES 4
#define TO_BITS(v) uint(v)
#define FROM_BITS(b) int(b)
#define T_LOWEST int(0x80000000u)
#define T_HIGHEST int(0x7fffffff)
#elif DT == 2
#define T int64_t
#define UBITS uint64_t
#define BYTES 8
#define TO_BITS(v) uint64_t(v)
#define FROM_BITS(b) int64_t(b)
#define T_LOWEST int64_t(0x8000000000000000ul)
#define T_HIGHEST int64_t(0x7ffffffffffffffful)
#elif DT == 3
#define T float
#define UBITS uint
#define BYTES 4
#define TO_BITS(v) floatBitsToUint(v)
#define FROM_BITS(b) uintBitsToFloat(b)
#define T_LOWEST uintBitsToFloat(0xff800000u)
#define T_HIGHEST uintBitsToFloat(0x7f800000u)
#else
#define T double
#define UBITS uint64_t
#define BYTES 8
#define TO_BITS(v) doubleBitsToUint64(v)
#define FROM_BITS(b) uint64BitsToDouble(b)
#define T_LOWEST uint64BitsToDouble(0xfff0000000000000ul)
#define T_HIGHEST uint64BitsToDouble(0x7ff0000000000000ul)
#endif
/* SPIR-V integer arithmetic wraps */
#define WRAP_ADD(a, b) ((a) + (b))
#define WRAP_MUL(a, b) ((a) * (b))
#if DT == 1 || DT == 2
#define T_IS_NAN(v) false
#define MEAN_DIV(a, d) T((a) / T(d) - ((((a) % T(d)) != 0 && (a) < 0) ? 1 : 0))
#else
#define T_IS_NAN(v) ((v) != (v))
#define MEAN_DIV(a, d) ((a) / T(d))
#endif
#endif

#endif
