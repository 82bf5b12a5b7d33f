/* Hash table of 64-bit keys for OpenCL C: a thin wrapper over
 * common/hash_body.h (shared with shaders/hash.comp). Needs
 * cl_khr_int64_base_atomics (the host checks Caps.Int64Atomics first).
 * Variant define: KB (key bits, 64). Knobs: LOCAL_SIZE, ITEMS, CONTIG and
 * MODE (a compile-time mode, so each mode compiles to just its own path). */
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#include "portable.h"
#include "memory.h"
#define CAS64(p, i, cmp, val) atom_cmpxchg(&((volatile __global ulong*)(p))[(i)], (cmp), (val))
#define ADD64(p, i, v) atom_add(&((volatile __global ulong*)(p))[(i)], (v))

#include "hash_body.h"

__kernel __attribute__((reqd_work_group_size(LOCAL_SIZE, 1, 1)))
void hash(__global uchar* table, __global uchar* keys, __global uchar* res, __global uchar* meta,
	__global uchar* aux, long n, long slots, long max_probes, long budget, long step, long capacity,
	long base) {
	hash_run(table, keys, res, meta, aux, n, slots, max_probes, budget, step, capacity, base, MODE);
}
