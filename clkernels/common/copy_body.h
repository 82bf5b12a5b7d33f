/* copy_body.h: a copy (and fill) of 32-bit words, shared by
 * clkernels/copy.cl and shaders/copy.comp (entry points and knobs declared
 * in host/kernels: gen/copy.h). The n words are cut into chunks of ITEMS
 * consecutive words; work-item w of W takes the w-th of W contiguous runs
 * of chunks and copies each chunk in one plain loop (COPY_RUN, from the
 * wrapper), which the CPU compilers turn into wide vector loads and
 * stores. The host plans one work-item per group and one group per core
 * (accel's planCopy): PoCL runs one group per thread, one long stream per
 * core is what the hardware prefetchers follow best, and one work-item per
 * group keeps PoCL's work-group vectorizer from turning the per-item runs
 * into gathers.
 *
 * GPUs (CONTIG = 0) take the words in elementwise.h's interleaved tiles
 * (lane l copies words j * LOCAL_SIZE + l of a tile, so each load and
 * store of a subgroup covers consecutive words, tiles by grid stride), a
 * lane's ITEMS words COPY_ILP at a time, loaded before any is stored (the
 * compilers cannot move a load above a store that may alias it). The host
 * plans it where the driver's own copy is slow (NVIDIA's Vulkan buffer
 * copy: 843 GB/s on the H200, whose OpenCL copy runs at 4.08 TB/s).
 *
 * copy_fill writes a pattern of one or two 32-bit words the same ways
 * (the wrapper's FILL_RUN for a chunk): GPUs fill with it where the
 * driver's fill is slow (NVIDIA's OpenCL fill: 413 GB/s on the H100). */
#ifndef ACCEL_COPY_BODY_H
#define ACCEL_COPY_BODY_H

#include "elementwise.h"

#define COPY_ILP 4

/* The CPU shape's run of chunks (of ITEMS words, n words in all) of this
 * work-item: its first chunk (end 0) or the one past its last (end 1). */
i64 copy_chunk(i64 n, i64 end) {
	const i64 workers = GROUP_TOTAL() * I64C(LOCAL_SIZE);
	const i64 w = GROUP_LINEAR_ID() * I64C(LOCAL_SIZE) + LOCAL_ID();
	const i64 chunks = cdiv64(n, I64C(ITEMS));
	const i64 per = cdiv64(chunks, workers);
	return min64((w + end) * per, chunks);
}

INLINE void copy_words(COPY_WORDS_PARAMS) {
	if (CONTIG == 0) {
		uint v[COPY_ILP]; /* 32-ok: words copied */
		const i64 tiles = ew_tiles(n);
		for (i64 t = GROUP_LINEAR_ID(); t < tiles; t += GROUP_TOTAL()) {
			for (i64 j0 = I64C(0); j0 < I64C(ITEMS); j0 += I64C(COPY_ILP)) {
				UNROLL for (int k = 0; k < COPY_ILP; k++) { /* 32-ok: a word of the lane's batch, < COPY_ILP */
					const i64 i = ew_index(t, j0 + I64C(k));
					if (j0 + I64C(k) < I64C(ITEMS) && i < n) {
						v[k] = LD32(src, src_off + i);
					}
				}
				UNROLL for (int k = 0; k < COPY_ILP; k++) { /* 32-ok: a word of the lane's batch, < COPY_ILP */
					const i64 i = ew_index(t, j0 + I64C(k));
					if (j0 + I64C(k) < I64C(ITEMS) && i < n) {
						ST32(dst, dst_off + i, v[k]);
					}
				}
			}
		}
		return;
	}
	const i64 last = copy_chunk(n, I64C(1));
	for (i64 c = copy_chunk(n, I64C(0)); c < last; c++) {
		const i64 lo = c * I64C(ITEMS);
		const i64 len = min64(lo + I64C(ITEMS), n) - lo;
		COPY_RUN(dst, dst_off + lo, src, src_off + lo, len)
	}
}

/* The pattern's word at absolute word w: lo where w is even, hi where odd. */
uint copy_pattern(i64 w, i64 lo, i64 hi) { /* 32-ok: a pattern word */
	return CAST(uint, ((w & I64C(1)) != I64C(0) ? hi : lo) & I64C(0xffffffff)); /* 32-ok: a pattern word */
}

INLINE void copy_fill(COPY_FILL_PARAMS) {
	if (CONTIG == 0) {
		const i64 tiles = ew_tiles(n);
		for (i64 t = GROUP_LINEAR_ID(); t < tiles; t += GROUP_TOTAL()) {
			for (i64 j = I64C(0); j < I64C(ITEMS); j++) {
				const i64 i = ew_index(t, j);
				if (i < n) {
					ST32(dst, dst_off + i, copy_pattern(dst_off + i, lo, hi));
				}
			}
		}
		return;
	}
	const i64 last = copy_chunk(n, I64C(1));
	for (i64 c = copy_chunk(n, I64C(0)); c < last; c++) {
		const i64 lo0 = c * I64C(ITEMS);
		const i64 len = min64(lo0 + I64C(ITEMS), n) - lo0;
		FILL_RUN(dst, dst_off + lo0, len, copy_pattern(dst_off + lo0, lo, hi), copy_pattern(dst_off + lo0 + I64C(1), lo, hi))
	}
}

#endif
