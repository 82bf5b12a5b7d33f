/* elementwise.h: the tile loop of one-output-per-element kernels. Include
 * after the knobs LOCAL_SIZE, ITEMS and CONTIG are defined. A launch covers
 * `count` elements in tiles of LOCAL_SIZE*ITEMS; work-groups take tiles
 * with a grid stride; inside a tile, CONTIG == 1 gives each work-item ITEMS
 * consecutive elements (CPU drivers), any other value interleaves
 * work-items (coalesced on GPUs and SIMD lanes). Usage:
 *   EW_FOR(count, i)
 *       ... element i (continue skips to the next) ...
 *   EW_END
 * or, spelled out:
 *   for (i64 tile = GROUP_LINEAR_ID(); tile < ew_tiles(count); tile += GROUP_TOTAL())
 *     for (i64 j = 0; j < ITEMS; j++) { i64 i = ew_index(tile, j); if (i < count) ... } */
#ifndef ACCEL_ELEMENTWISE_H
#define ACCEL_ELEMENTWISE_H

i64 ew_tiles(i64 count) {
	const i64 tile = I64C(LOCAL_SIZE) * I64C(ITEMS);
	return cdiv64(count, tile);
}

i64 ew_index(i64 tile, i64 j) {
	const i64 base = tile * I64C(LOCAL_SIZE) * I64C(ITEMS);
	if (CONTIG == 1) {
		return base + LOCAL_ID() * I64C(ITEMS) + j;
	}
	return base + j * I64C(LOCAL_SIZE) + LOCAL_ID();
}

#define EW_FOR(count, i) \
	{ \
		const i64 ew_n_ = (count); \
		const i64 ew_tiles_ = ew_tiles(ew_n_); \
		for (i64 ew_tile_ = GROUP_LINEAR_ID(); ew_tile_ < ew_tiles_; ew_tile_ += GROUP_TOTAL()) { \
			for (i64 ew_j_ = I64C(0); ew_j_ < I64C(ITEMS); ew_j_++) { \
				const i64 i = ew_index(ew_tile_, ew_j_); \
				if (i >= ew_n_) { \
					continue; \
				}
#define EW_END \
			} \
		} \
	}

#endif
