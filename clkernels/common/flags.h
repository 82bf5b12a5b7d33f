/* flags.h: the flag sources of scans and compactions (codes FLAG_*,
 * declared in host/kernels): what a scan or a compaction counts at
 * position i.
 *   FLAG_MASK8  a bool byte (nonzero is true), read through its 32-bit word
 *               (buffers are allocated in whole words)
 *   FLAG_HEAD32 / FLAG_HEAD64  position i starts a run of equal words:
 *               i == 0 or word i differs from word i-1
 * Include after the kernel's generated header. */
#ifndef ACCEL_FLAGS_H
#define ACCEL_FLAGS_H

bool flag_at(BPTR x, i64 i, i64 kind) {
	if (kind == I64C(FLAG_MASK8)) {
		const u32 w = LD32(x, i >> 2); /* 32-ok: four mask bytes */
		return ((w >> (CAST(u32, i & I64C(3)) * 8u)) & 255u) != 0u; /* 32-ok: a byte of the word, < 4 */
	}
	/* word i - 1 loaded at 0 for i = 0, and not compared: no branch
	 * before the loads, so that a work-item's batch of positions has its
	 * loads in flight together (a GPU compiler waits for a load where a
	 * branch around it ends) */
	const i64 h = max64(i - I64C(1), I64C(0));
	if (kind == I64C(FLAG_HEAD32)) {
		return LD32(x, i) != LD32(x, h) || i == I64C(0);
	}
	return LD64(x, i) != LD64(x, h) || i == I64C(0);
}

#endif
