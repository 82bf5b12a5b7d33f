/* probe_body.h: the self-check kernel, shared by clkernels/probe.cl and
 * shaders/probe.comp (entry point and knob declared in host/kernels:
 * gen/probe.h). It takes more arguments than a push-constant block holds,
 * so on Vulkan they arrive in a parameter block: work-item 0 of group 0
 * writes dst[i] = src[i] + (scalar argument i) for i < 20, then the knob
 * PROBE_K, the local size and the number of groups. */
#ifndef ACCEL_PROBE_BODY_H
#define ACCEL_PROBE_BODY_H

INLINE void probe_args(PROBE_ARGS_PARAMS) {
	if (GROUP_LINEAR_ID() != I64C(0) || LOCAL_ID() != I64C(0)) {
		return;
	}
	ST64(dst, 0, LD64(src, 0) + CAST(u64, ax));
	ST64(dst, 1, LD64(src, 1) + CAST(u64, bx));
	ST64(dst, 2, LD64(src, 2) + CAST(u64, cx));
	ST64(dst, 3, LD64(src, 3) + CAST(u64, dx));
	ST64(dst, 4, LD64(src, 4) + CAST(u64, ex));
	ST64(dst, 5, LD64(src, 5) + CAST(u64, fx));
	ST64(dst, 6, LD64(src, 6) + CAST(u64, gx));
	ST64(dst, 7, LD64(src, 7) + CAST(u64, hx));
	ST64(dst, 8, LD64(src, 8) + CAST(u64, ix));
	ST64(dst, 9, LD64(src, 9) + CAST(u64, jx));
	ST64(dst, 10, LD64(src, 10) + CAST(u64, kx));
	ST64(dst, 11, LD64(src, 11) + CAST(u64, lx));
	ST64(dst, 12, LD64(src, 12) + CAST(u64, mx));
	ST64(dst, 13, LD64(src, 13) + CAST(u64, nx));
	ST64(dst, 14, LD64(src, 14) + CAST(u64, ox));
	ST64(dst, 15, LD64(src, 15) + CAST(u64, px));
	ST64(dst, 16, LD64(src, 16) + CAST(u64, qx));
	ST64(dst, 17, LD64(src, 17) + CAST(u64, rx));
	ST64(dst, 18, LD64(src, 18) + CAST(u64, sx));
	ST64(dst, 19, LD64(src, 19) + CAST(u64, tx));
	ST64(dst, 20, CAST(u64, PROBE_K));
	ST64(dst, 21, CAST(u64, LOCAL_SIZE));
	ST64(dst, 22, CAST(u64, GROUP_TOTAL()));
}

#endif
