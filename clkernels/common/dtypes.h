/* dtypes.h: the element type T of an arithmetic kernel variant, for both
 * languages. Variant define DT: 1 int32, 2 int64, 3 float32, 4 float64.
 * Defines T, its bit word UBITS and BYTES, TO_BITS/FROM_BITS, T_LOWEST and
 * T_HIGHEST (the identities of max and min), WRAP_ADD/WRAP_MUL (integers
 * wrap: they compute in the unsigned type; float32 keeps subnormals, see
 * below) and for floats T_SUB/T_NEG, MEAN_DIV(a, d) (integers
 * floor), T_DIV(a, b) (floats: the correctly rounded quotient, see
 * below) and the comparisons of amax/amin
 * (T_IS_NAN, T_GT, T_LT, T_EQ, T_SEL, see below). GLSL shaders enable the
 * int64 types first. */
#ifndef ACCEL_DTYPES_H
#define ACCEL_DTYPES_H

#include "portable.h"

/* Float32 division, T_DIV. GPUs divide float32 within 2.5 ulp unless
 * asked for more (OpenCL: -cl-fp32-correctly-rounded-divide-sqrt;
 * Vulkan's OpFDiv has no such request), and the NVIDIA H100 gave quotients
 * 1 ulp off the reference's. T_DIV is the correctly rounded quotient on
 * every device, by the knob FDIV, which the host sets per device
 * (host.DeviceKnobs, Caps.FP32Div): 0 the device's own division, where
 * it is correctly rounded (OpenCL built with that option where the device
 * reports the capability; lavapipe's); 2 arith.h's fdiv32_bits, in
 * integers, which no float rule can touch (every other device). A float64
 * quotient rounded to float32 is not a way: LLVM folds
 * fptrunc(fdiv(fpext a, fpext b)) into the float32 division (it was 1 ulp
 * off on lavapipe and on an NVIDIA H200's OpenCL). A -D option in OpenCL
 * C, a specialization constant of the files that divide in GLSL. */

#ifdef ACCEL_CL
#ifndef FDIV
#define FDIV 2
#endif
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
#define WRAP_ADD(a, b) FROM_BITS(TO_BITS(a) + TO_BITS(b))
#define WRAP_MUL(a, b) FROM_BITS(TO_BITS(a) * TO_BITS(b))
#else
#define WRAP_ADD(a, b) ((a) + (b))
#define WRAP_MUL(a, b) ((a) * (b))
#endif
#define T_SUB(a, b) ((a) - (b))
#define T_NEG(a) (-(a))
#if DT == 3 && FDIV == 2
#define T_DIV(a, b) FROM_BITS(fdiv32_bits(TO_BITS(a), TO_BITS(b)))
#else
#define T_DIV(a, b) ((a) / (b))
#endif
/* OpenCL C keeps IEEE comparisons (NaN unordered, -0 == +0): the
 * comparisons are the operators (the CPU drivers' vector folds rely on
 * it). */
#define T_IS_NAN(v) ((v) != (v))
#define T_GT(a, b) ((a) > (b))
#define T_LT(a, b) ((a) < (b))
#define T_EQ(a, b) ((a) == (b))
#define T_SEL(c, a, b) ((c) ? (a) : (b))

#else /* GLSL */
#if DT == 1
#define T int
#define UBITS uint
#define BYTES 4
#define TO_BITS(v) uint(v) /* 32-ok: an int32 element's value or bits (DT 1), not an index */
#define FROM_BITS(b) int(b) /* 32-ok: an int32 element's value or bits (DT 1), not an index */
#define T_LOWEST int(0x80000000u) /* 32-ok: an int32 element's value or bits (DT 1), not an index */
#define T_HIGHEST int(0x7fffffff) /* 32-ok: an int32 element's value or bits (DT 1), not an index */
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
/* The STRICT variants (shaders/variants.txt) declare that the shader
 * preserves signed zeros, infinities and NaNs at T's width, so that no
 * compiler folds x * 0 to 0 or drops a NaN in the arithmetic either; the
 * STRICT=2 ones (V.strictd, float32 only) also that it keeps subnormals
 * (DenormPreserve), which NVIDIA's compiler flushes to zero otherwise. */
#if defined(STRICT) && STRICT >= 1
#if DT == 3
spirv_execution_mode(extensions = ["SPV_KHR_float_controls"], capabilities = [4466], 4461, 32);
#elif DT == 4
spirv_execution_mode(extensions = ["SPV_KHR_float_controls"], capabilities = [4466], 4461, 64);
#endif
#endif
#if defined(STRICT) && STRICT == 2 && DT == 3
spirv_execution_mode(extensions = ["SPV_KHR_float_controls"], capabilities = [4464], 4459, 32);
#endif
#if DT == 3 && (!defined(STRICT) || defined(DENORM_FIX))
/* Float32 sums and products that keep subnormals on any device. A build
 * without DenormPreserve may flush subnormal operands and results to
 * zero, and NVIDIA's does: a product of -1.47e-43 came out -0 in the
 * bit-reproducible scatter on an H200's Vulkan. So the builds for such
 * devices, the plain ones and V.strictf (DENORM_FIX=1; host.StrictVariant
 * loads them where the device may flush), take each sum and product from
 * the device and redo it in integers (arith.h's fadd32_fix, fmul32_fix)
 * where a subnormal was at stake; T_NEG flips the sign bit, which a
 * flushing negation would not keep either. The V.strict builds leave the
 * arithmetic to the device (lavapipe's keeps subnormals, and its
 * pipelines took twice as long to create with this code in). */
#define WRAP_ADD(a, b) FROM_BITS(fadd32_fix(TO_BITS(a), TO_BITS(b), TO_BITS((a) + (b))))
#define WRAP_MUL(a, b) FROM_BITS(fmul32_fix(TO_BITS(a), TO_BITS(b), TO_BITS((a) * (b))))
#define T_SUB(a, b) FROM_BITS(fadd32_fix(TO_BITS(a), TO_BITS(b) ^ 0x80000000u, TO_BITS((a) - (b))))
#define T_NEG(a) FROM_BITS(TO_BITS(a) ^ 0x80000000u)
#else
/* SPIR-V integer arithmetic wraps */
#define WRAP_ADD(a, b) ((a) + (b))
#define WRAP_MUL(a, b) ((a) * (b))
#define T_SUB(a, b) ((a) - (b))
#define T_NEG(a) (-(a))
#endif
#if DT == 3
#define T_DIV(a, b) (FDIV == 0 ? ((a) / (b)) : FROM_BITS(fdiv32_bits(TO_BITS(a), TO_BITS(b))))
#else
#define T_DIV(a, b) ((a) / (b))
#endif
#if DT == 1 || DT == 2
#define T_IS_NAN(v) false
#define T_GT(a, b) ((a) > (b))
#define T_LT(a, b) ((a) < (b))
#define T_EQ(a, b) ((a) == (b))
#define T_SEL(c, a, b) ((c) ? (a) : (b))
#elif defined(STRICT) && !defined(DENORM_FIX)
/* The STRICT builds declare SignedZeroInfNanPreserve (above): the
 * compiler must keep IEEE comparisons, so they are the operators, as in
 * OpenCL C (the comparisons on bits cost lavapipe's few-targets amax
 * twice the time). Not the V.strictf ones: they load where the device
 * may flush subnormals, and a comparison that flushes its operands finds
 * two subnormals equal, so they compare on bits as the plain builds do. */
#define T_IS_NAN(v) isnan(v)
#define T_GT(a, b) ((a) > (b))
#define T_LT(a, b) ((a) < (b))
#define T_EQ(a, b) ((a) == (b))
#define T_SEL(c, a, b) ((c) ? (a) : (b))
#else
/* Without that declaration Vulkan leaves NaNs and the sign of zero to
 * the implementation, and NVIDIA's compiler took the liberty: an amax
 * dropped a NaN and gave +0 for -0. So the plain builds (loaded where the
 * device offers no such float control) compare floats on their bits, in
 * integers no compiler reorders: a NaN is an exponent of ones with a
 * mantissa; T_GT and T_LT order non-NaN values as IEEE does (-0 == +0)
 * through keys that sort as the values; T_EQ is IEEE equality; T_SEL
 * selects the bits of a or b. */
#if DT == 3
#define T_SIGN 0x80000000u
#define T_INF 0x7f800000u
#else
#define T_SIGN 0x8000000000000000ul
#define T_INF 0x7ff0000000000000ul
#endif
bool t_is_nan(T v) { return (TO_BITS(v) & ~T_SIGN) > T_INF; }
/* a key that orders non-NaN values as < does, both zeros one key */
UBITS t_key(T v) {
	const UBITS b = TO_BITS(v);
	if ((b & ~T_SIGN) == UBITS(0)) {
		return T_SIGN;
	}
	return (b & T_SIGN) != UBITS(0) ? ~b : (b | T_SIGN);
}
#define T_IS_NAN(v) t_is_nan(v)
#define T_GT(a, b) (t_key(a) > t_key(b))
#define T_LT(a, b) (t_key(a) < t_key(b))
#define T_EQ(a, b) (!t_is_nan(a) && !t_is_nan(b) && t_key(a) == t_key(b))
#define T_SEL(c, a, b) FROM_BITS((c) ? TO_BITS(a) : TO_BITS(b))
#endif
#endif

/* The integer mean rounds toward negative infinity (the reference's and
 * PyTorch's floor division): a over d > 0 counts, through arith.h. */
#if DT == 1
#define MEAN_DIV(a, d) CAST(T, floordiv64(sext32(TO_BITS(a)), I64C(d)))
#elif DT == 2
#define MEAN_DIV(a, d) CAST(T, floordiv64((a), I64C(d)))
#else
#define MEAN_DIV(a, d) T_DIV((a), CAST(T, d))
#endif

#endif
