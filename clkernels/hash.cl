/* Hash table of 64-bit keys for OpenCL C: a thin wrapper over
 * common/hash_body.h (shared with shaders/hash.comp). Needs
 * cl_khr_int64_base_atomics (the host checks Caps.Int64Atomics first).
 * Variant define: KB (key bits, 64). Knobs: LOCAL_SIZE, ITEMS, CONTIG. */
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#include "portable.h"
#include "memory.h"
#define CAS64(p, i, cmp, val) atom_cmpxchg(&((volatile __global ulong*)(p))[(i)], (cmp), (val))
#define ADD64(p, i, v) atom_add(&((volatile __global ulong*)(p))[(i)], (v))

#include "hash_body.h"

/* One entry per mode (the mode argument is ignored), so that the compiler
 * drops the other modes' paths and can vectorize the simple passes;
 * Vulkan's one entry takes the mode. */
#define HASH_ARGS __global uchar* table, __global uchar* keys, __global uchar* res, __global uchar* meta, \
	__global uchar* aux, long n, long slots, long max_probes, long budget, long step, long capacity, \
	long base, long mode

__kernel __attribute__((reqd_work_group_size(LOCAL_SIZE, 1, 1)))
void hash_insert(HASH_ARGS) {
	hash_run(table, keys, res, meta, aux, n, slots, max_probes, budget, step, capacity, base, HT_INSERT);
}

__kernel __attribute__((reqd_work_group_size(LOCAL_SIZE, 1, 1)))
void hash_lookup(HASH_ARGS) {
	hash_run(table, keys, res, meta, aux, n, slots, max_probes, budget, step, capacity, base, HT_LOOKUP);
}

__kernel __attribute__((reqd_work_group_size(LOCAL_SIZE, 1, 1)))
void hash_mark(HASH_ARGS) {
	hash_run(table, keys, res, meta, aux, n, slots, max_probes, budget, step, capacity, base, HT_MARK);
}

__kernel __attribute__((reqd_work_group_size(LOCAL_SIZE, 1, 1)))
void hash_commit(HASH_ARGS) {
	hash_run(table, keys, res, meta, aux, n, slots, max_probes, budget, step, capacity, base, HT_COMMIT);
}

__kernel __attribute__((reqd_work_group_size(LOCAL_SIZE, 1, 1)))
void hash_ids(HASH_ARGS) {
	hash_run(table, keys, res, meta, aux, n, slots, max_probes, budget, step, capacity, base, HT_IDS);
}
