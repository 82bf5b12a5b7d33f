/* scan_wg.h: the work-group scratch of the scan kernels (scan_body.h),
 * included by the wrappers clkernels/scan.cl and shaders/scan.comp after
 * gen/scan.h (its knobs) so they can size it, and by the body. With
 * CHAIN = 2 (the GPUs' chained scan) a group holds a whole tile of
 * LOCAL_SIZE * ITEMS elements, each 32 padded by one slot so that a lane
 * walking its ITEMS consecutive elements meets few bank conflicts, then
 * the lanes' sums, the tile's carry and the look-back's window; elsewhere
 * LOCAL_SIZE elements. */
#ifndef ACCEL_SCAN_WG_H
#define ACCEL_SCAN_WG_H

#define SCANG_PAD(i) ((i) + ((i) >> 5))
#define SCANG_TILE (I64C(LOCAL_SIZE) * I64C(ITEMS))
#define SCANG_SUMS SCANG_PAD(SCANG_TILE)
#define SCANG_CARRY (SCANG_SUMS + I64C(LOCAL_SIZE))
/* the look-back's window: SCANG_W tiles' states, or sums; then the
 * values of an integer walk's window, and its carry */
#define SCANG_W min64(I64C(LOCAL_SIZE), I64C(32))
#define SCANG_WIN (SCANG_CARRY + I64C(1))
#define SCANG_VALS (SCANG_WIN + I64C(32))
#define SCANG_ACC (SCANG_VALS + I64C(32))
/* in elements of T */
#define SCAN_SCRATCH_LEN (CHAIN == 2 ? LOCAL_SIZE * ITEMS + ((LOCAL_SIZE * ITEMS) >> 5) + LOCAL_SIZE + 1 + 65 : LOCAL_SIZE)

#endif
