/* hostc.h: the kernels' shared headers compiled as C on the host (package
 * hostc), in their OpenCL C spelling: just enough of OpenCL C's types and
 * built-ins for the pure functions of index math and arithmetic, with the
 * work-item ids and the knobs LOCAL_SIZE, ITEMS and CONTIG as variables a
 * test sets. */
#ifndef ACCEL_HOSTC_H
#define ACCEL_HOSTC_H

#include <stdint.h>
#include <stdbool.h>
#include <math.h>

typedef unsigned char uchar;
typedef unsigned int uint;
typedef unsigned long ulong;
_Static_assert(sizeof(long) == 8, "OpenCL C's long is 64 bits");
#define __OPENCL_VERSION__ 120
#define __global
#define __kernel
#define CLK_LOCAL_MEM_FENCE 0
static inline void barrier(int f) { (void)f; }
static inline uint clz(uint x) { return x ? (uint)__builtin_clz(x) : 32u; }
static inline uint min(uint a, uint b) { return a < b ? a : b; }

/* the work-item a call runs as, and the launch's knobs */
extern long hostc_group[3], hostc_groups[3], hostc_local_id, hostc_local_size, hostc_items, hostc_contig;
static inline ulong get_group_id(uint d) { return (ulong)hostc_group[d]; }
static inline ulong get_num_groups(uint d) { return (ulong)hostc_groups[d]; }
static inline ulong get_local_id(uint d) { return d == 0 ? (ulong)hostc_local_id : 0; }
#define LOCAL_SIZE hostc_local_size
#define ITEMS hostc_items
#define CONTIG hostc_contig

/* diag_body.h's element access (the kernel's wrapper defines these) */
#define WORD uint
#define LOAD(p, i) (((__global WORD*)(p))[(i)])
#define STORE(p, i, v) (((__global WORD*)(p))[(i)] = (v))

#include "portable.h"
#include "elementwise.h"
#include "tri_math.h"
#include "gen/diag.h"
#include "diag_body.h"

static inline long hostc_group_linear_id(void) { return GROUP_LINEAR_ID(); }
static inline long hostc_group_total(void) { return GROUP_TOTAL(); }

#endif
