/* lane_scan.h: a work-group's exclusive scan of one count per lane, in
 * scratch, for the passes that write a tile's kept elements in order after
 * a pass that counted each tile (indice_wpairs, move_tcompact): every lane
 * counts its run of the tile, the counts are scanned here, and each lane
 * writes its run from the tile's start plus the lanes' counts before it.
 * The wrappers define the scratch: SH(i), LOCAL_SIZE words of uint (or of
 * a wider unsigned type: the slotted partition's fold takes its counts in
 * its 64-bit variants' scratch too), and SCRATCH_PARAM and SCRATCH_ARG. */
#ifndef ACCEL_LANE_SCAN_H
#define ACCEL_LANE_SCAN_H

/* The first element of this lane's run of ITEMS in tile t (tiles of
 * LOCAL_SIZE * ITEMS elements, each lane's run consecutive). */
i64 lane_lo(i64 t) {
	return t * I64C(LOCAL_SIZE) * I64C(ITEMS) + LOCAL_ID() * I64C(ITEMS);
}

/* The group's total << 32 | the counts of the lanes before this one
 * (Hillis-Steele in scratch). Every lane of the group calls it: its
 * barriers leave the scratch free for the next call. */
u64 lane_scan(u32 mine SCRATCH_PARAM) { /* 32-ok: a lane's count, the tile's at most LOCAL_SIZE * ITEMS */
	const i64 lid = LOCAL_ID();
	const i64 ls = I64C(LOCAL_SIZE);
	SH(lid) = mine;
	LOCAL_BARRIER();
	for (i64 off = I64C(1); off < ls; off = off * I64C(2)) {
		const u32 v = lid >= off ? CAST(u32, SH(lid - off)) : 0u; /* 32-ok: a tile's count */
		LOCAL_BARRIER();
		SH(lid) = SH(lid) + v;
		LOCAL_BARRIER();
	}
	const u64 res = (CAST(u64, SH(ls - I64C(1))) << 32) | CAST(u64, SH(lid) - mine);
	LOCAL_BARRIER(); /* everyone has read the scratch before the next call */
	return res;
}

#endif
