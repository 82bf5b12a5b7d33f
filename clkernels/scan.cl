/* Prefix sums for OpenCL C: a thin wrapper over common/scan_body.h (shared
 * with shaders/scan.comp), whose entry points and knobs are declared in
 * host/kernels (common/gen/scan.h). Variant define: DT (1 32-bit integers,
 * 2 64-bit integers, 3 float32, 4 float64); integers add in the unsigned
 * type, so signed and unsigned sums wrap alike. The subgroup path
 * (SCAN_SG_OK) is Vulkan's only. */
#include "portable.h"
#if DT == 4
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#if DT == 1
#define T uint
#elif DT == 2
#define T ulong
#elif DT == 3
#define T float
#else
#define T double
#endif
#define ADD(a, b) ((a) + (b))
#define LDT(p, i) (((__global T*)(p))[(i)])
#define STT(p, i, v) (((__global T*)(p))[(i)] = (v))
/* The work-group scratch: each scan entry declares it (generated) and
 * passes it on as sh. */
#define SCRATCH_T T
#define SCRATCH_LEN SCAN_SCRATCH_LEN
#define SH(i) sh[(i)]
#define SCRATCH_PARAM , __local T* sh
#define SCRATCH_ARG , sh

#include "gen/scan.h"
/* The chained scans' accesses across work-groups (scan_body.h). */
#define CH_FLAG_LD(f, i) (((volatile __global uint *)(f))[(i)])
#define CH_FLAG_ST(f, i, v) atomic_xchg(((volatile __global uint *)(f)) + (i), (v))
#define CH_PV_LD(p, i) (((volatile __global T *)(p))[(i)])
#define CH_PV_ST(p, i, v) (((volatile __global T *)(p))[(i)] = (v))
#define CH_FENCE() mem_fence(CLK_GLOBAL_MEM_FENCE)
#define CHW_LD(w, i) (((volatile __global ulong *)(w))[(i)])
#define CHW_ST(w, i, v) (((volatile __global ulong *)(w))[(i)] = (v))
#if DT == 1
#define T_PIECES 1
#define T_PIECE(v, q) (v)
#define T_JOIN(lo, hi) (lo)
#elif DT == 2
#define T_PIECES 2
#define T_PIECE(v, q) CAST(uint, (q) == 0 ? (v) : ((v) >> 32)) /* 32-ok: a 32-bit piece */
#define T_JOIN(lo, hi) (CAST(ulong, lo) | (CAST(ulong, hi) << 32))
#elif DT == 3
#define T_PIECES 1
#define T_PIECE(v, q) as_uint(v)
#define T_JOIN(lo, hi) as_float(lo)
#else
#define T_PIECES 2
#define T_PIECE(v, q) CAST(uint, (q) == 0 ? as_ulong(v) : (as_ulong(v) >> 32)) /* 32-ok: a 32-bit piece */
#define T_JOIN(lo, hi) as_double(CAST(ulong, lo) | (CAST(ulong, hi) << 32))
#endif

/* The chained scan's tile loops (scan_body.h, entry chain): 64-byte
 * vectors of TV_LANES elements. A vector's prefix sums take log2(TV_LANES)
 * shift-and-add steps, the lanes shifted in filled with z, SCAN_FILL
 * (-0.0 for floats: x + -0.0 is x for every x, so a -0.0 element keeps its
 * sign); the carry into the next vector is the running carry plus the
 * vector's last sum broadcast, so the loop-carried chain is one add. On
 * CPU drivers (PoCL) the shifts are shuffles of z and the vector
 * (VSHUFFLE, a trick of device_tricks.h), z read through a volatile: with
 * a constant zero LLVM turns the shifts into vpexpand, measured twice as
 * slow on this AMD EPYC; elsewhere they are swizzles. With STREAM, y's
 * vectors go out with non-temporal stores from its first 64-byte boundary
 * on. */
#define SCAN_CHAIN_OK 1
#if DT == 1
#define TV uint16
#elif DT == 2
#define TV ulong8
#elif DT == 3
#define TV float16
#else
#define TV double8
#endif
#if DT == 3 || DT == 4
#define SCAN_FILL (-CAST(T, 0))
#else
#define SCAN_FILL CAST(T, 0)
#endif
#if DT == 1 || DT == 3
#define TV_LANES 16
#define TV_LOAD(p) vload16(0, (p))
#define TV_STORE(v, p) vstore16((v), 0, (p))
#ifdef VSHUFFLE
#define TV_SH1(z, v) VSHUFFLE((z), (v), 0, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30)
#define TV_SH2(z, v) VSHUFFLE((z), (v), 0, 1, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29)
#define TV_SH4(z, v) VSHUFFLE((z), (v), 0, 1, 2, 3, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27)
#define TV_SH8(z, v) VSHUFFLE((z), (v), 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23)
#define TV_BLAST(v) VSHUFFLE((v), (v), 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15)
#else
#define TV_SH1(z, v) ((TV)((z).s0, (v).s0123, (v).s4567, (v).s89ab, (v).scde))
#define TV_SH2(z, v) ((TV)((z).s01, (v).s0123, (v).s4567, (v).s89ab, (v).scd))
#define TV_SH4(z, v) ((TV)((z).s0123, (v).s0123, (v).s4567, (v).s89ab))
#define TV_SH8(z, v) ((TV)((z).s01234567, (v).s01234567))
#define TV_BLAST(v) ((TV)((v).sf))
#endif
#define TV_SCAN8(z, v) v = v + TV_SH8(z, v);
#else
#define TV_LANES 8
#define TV_LOAD(p) vload8(0, (p))
#define TV_STORE(v, p) vstore8((v), 0, (p))
#ifdef VSHUFFLE
#define TV_SH1(z, v) VSHUFFLE((z), (v), 0, 8, 9, 10, 11, 12, 13, 14)
#define TV_SH2(z, v) VSHUFFLE((z), (v), 0, 1, 8, 9, 10, 11, 12, 13)
#define TV_SH4(z, v) VSHUFFLE((z), (v), 0, 1, 2, 3, 8, 9, 10, 11)
#define TV_BLAST(v) VSHUFFLE((v), (v), 7, 7, 7, 7, 7, 7, 7, 7)
#else
#define TV_SH1(z, v) ((TV)((z).s0, (v).s0123, (v).s456))
#define TV_SH2(z, v) ((TV)((z).s01, (v).s0123, (v).s45))
#define TV_SH4(z, v) ((TV)((z).s0123, (v).s0123))
#define TV_BLAST(v) ((TV)((v).s7))
#endif
#define TV_SCAN8(z, v)
#endif
/* v's prefix sums: shift-and-add by 1, 2, 4 (and 8) lanes */
#define TV_SCAN(z, v) \
	{ \
		v = v + TV_SH1(z, v); \
		v = v + TV_SH2(z, v); \
		v = v + TV_SH4(z, v); \
		TV_SCAN8(z, v) \
	}

/* The sum of x[lo, hi): TV_LANES running sums, added in lane order. */
T scan_tile_sum(BPTR x, i64 lo, i64 hi) {
	const __global T *xs = (const __global T *)x;
	TV acc = (TV)(SCAN_FILL);
	i64 i = lo;
	for (; i + I64C(TV_LANES) <= hi; i += I64C(TV_LANES)) {
		acc = acc + TV_LOAD(xs + i);
	}
	T lanes[TV_LANES];
	TV_STORE(acc, lanes);
	T s = lanes[0];
	for (int k = 1; k < TV_LANES; k++) { /* 32-ok: a vector lane, < TV_LANES */
		s = s + lanes[k];
	}
	for (; i < hi; i++) {
		s = s + xs[i];
	}
	return s;
}

/* y[lo, hi) = the prefix sums of x[lo, hi) from carry. */
void scan_tile_write(BPTR x, BPTR y, i64 lo, i64 hi, T carry, i64 exclusive) {
	const __global T *xs = (const __global T *)x;
	__global T *ys = (__global T *)y;
	T run = carry;
	i64 i = lo;
	if (STREAM != 0) {
		for (; i < hi && (CAST(u64, ys + i) & 63ul) != 0ul; i++) {
			const T v = xs[i];
			ys[i] = exclusive != I64C(0) ? run : run + v;
			run = run + v;
		}
	}
	volatile T zsrc = SCAN_FILL;
	const TV z = (TV)(zsrc);
	TV rv = (TV)(run);
	for (; i + I64C(TV_LANES) <= hi; i += I64C(TV_LANES)) {
		TV s = TV_LOAD(xs + i);
		TV_SCAN(z, s)
		const TV r = rv + (exclusive != I64C(0) ? TV_SH1(z, s) : s);
		rv = rv + TV_BLAST(s);
		if (STREAM != 0) {
			STREAM_STORE(r, (__global TV *)(ys + i));
		} else {
			TV_STORE(r, ys + i);
		}
	}
	run = rv.s0;
	for (; i < hi; i++) {
		const T v = xs[i];
		ys[i] = exclusive != I64C(0) ? run : run + v;
		run = run + v;
	}
}
#define SCAN_TILE_SUM(x, lo, hi) scan_tile_sum((x), (lo), (hi))
#define SCAN_TILE_WRITE(x, y, lo, hi, carry, exclusive) scan_tile_write((x), (y), (lo), (hi), (carry), (exclusive))

#include "scan_body.h"

SCAN_ENTRIES
