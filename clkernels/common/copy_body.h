/* copy_body.h: a copy of 32-bit words shaped for CPU drivers, shared by
 * clkernels/copy.cl and shaders/copy.comp (entry points and knobs declared
 * in host/kernels: gen/copy.h). The n words are cut into chunks of ITEMS
 * consecutive words; work-item w of W takes the w-th of W contiguous runs
 * of chunks and copies each chunk in one plain loop (COPY_RUN, from the
 * wrapper), which the CPU compilers turn into wide vector loads and
 * stores. The host plans one work-item per group and one group per core
 * (accel's planCopy): PoCL runs one group per thread, one long stream per
 * core is what the hardware prefetchers follow best, and one work-item per
 * group keeps PoCL's work-group vectorizer from turning the per-item runs
 * into gathers. */
#ifndef ACCEL_COPY_BODY_H
#define ACCEL_COPY_BODY_H

void copy_words(COPY_WORDS_PARAMS) {
	const i64 workers = GROUP_TOTAL() * I64C(LOCAL_SIZE);
	const i64 w = GROUP_LINEAR_ID() * I64C(LOCAL_SIZE) + LOCAL_ID();
	const i64 chunks = cdiv64(n, I64C(ITEMS));
	const i64 per = cdiv64(chunks, workers);
	const i64 last = min64((w + I64C(1)) * per, chunks);
	for (i64 c = w * per; c < last; c++) {
		const i64 lo = c * I64C(ITEMS);
		const i64 len = min64(lo + I64C(ITEMS), n) - lo;
		COPY_RUN(dst, dst_off + lo, src, src_off + lo, len)
	}
}

#endif
