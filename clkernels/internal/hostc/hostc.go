// Package hostc compiles the kernels' shared headers (clkernels/common) as
// C on the host, through cgo, so that tests can call their index math and
// integer arithmetic with sizes no device's memory holds: element counts,
// positions and offsets past 2^31, 2^32 and up to 2^62, where a 32-bit
// intermediate or a signed division would show. The kernels run the same
// text on every device (portable.h); here it runs in its OpenCL C
// spelling, with the work-item ids and the launch's knobs as variables.
package hostc

/*
#cgo CFLAGS: -O2 -I${SRCDIR}/../../common -Wno-unknown-pragmas
#cgo LDFLAGS: -lm
#include "hostc.h"

long hostc_group[3], hostc_groups[3], hostc_local_id, hostc_local_size = 1, hostc_items = 1, hostc_contig;
*/
import "C"

import "sync"

// mu serializes the calls that set the work-item variables.
var mu sync.Mutex

// FDiv32Bits is arith.h's fdiv32_bits: the bits of a / b for float32
// values with bits a and b, correctly rounded, computed in integers.
func FDiv32Bits(a, b uint32) uint32 { return uint32(C.fdiv32_bits(C.uint(a), C.uint(b))) }

// FAdd32Fix is arith.h's fadd32_fix: the bits of a + b for float32 values
// with bits a and b, given r, the bits a device computed for the sum
// (returned unless subnormals were at stake).
func FAdd32Fix(a, b, r uint32) uint32 { return uint32(C.fadd32_fix(C.uint(a), C.uint(b), C.uint(r))) }

// FMul32Fix is arith.h's fmul32_fix: as FAdd32Fix for a * b.
func FMul32Fix(a, b, r uint32) uint32 { return uint32(C.fmul32_fix(C.uint(a), C.uint(b), C.uint(r))) }

// FloorDiv64 is arith.h's floordiv64, FloorMod64 its floormod64.
func FloorDiv64(a, b int64) int64 { return int64(C.floordiv64(C.long(a), C.long(b))) }

// FloorMod64 is arith.h's floormod64.
func FloorMod64(a, b int64) int64 { return int64(C.floormod64(C.long(a), C.long(b))) }

// UDiv64 is arith.h's udiv64, UMod64 its umod64 and CDiv64 its cdiv64
// (operands known non-negative).
func UDiv64(a, b int64) int64 { return int64(C.udiv64(C.long(a), C.long(b))) }

// UMod64 is arith.h's umod64.
func UMod64(a, b int64) int64 { return int64(C.umod64(C.long(a), C.long(b))) }

// CDiv64 is arith.h's cdiv64.
func CDiv64(a, b int64) int64 { return int64(C.cdiv64(C.long(a), C.long(b))) }

// Sext32 is arith.h's sext32.
func Sext32(w uint32) int64 { return int64(C.sext32(C.uint(w))) }

// Launch is the work-item and knobs a call of the elementwise tile math
// runs as.
type Launch struct {
	Group, Groups  [3]int64 // work-group id and count per dimension
	LocalID, Local int64    // work-item id in its group, group size
	Items          int64    // elements per work-item per tile (ITEMS)
	Contig         bool     // CONTIG == 1
}

func (l Launch) set() {
	for d := 0; d < 3; d++ {
		C.hostc_group[d], C.hostc_groups[d] = C.long(l.Group[d]), C.long(l.Groups[d])
	}
	C.hostc_local_id, C.hostc_local_size, C.hostc_items = C.long(l.LocalID), C.long(l.Local), C.long(l.Items)
	C.hostc_contig = 0
	if l.Contig {
		C.hostc_contig = 1
	}
}

// EWTiles is elementwise.h's ew_tiles(count) under launch l.
func EWTiles(l Launch, count int64) int64 {
	mu.Lock()
	defer mu.Unlock()
	l.set()
	return int64(C.ew_tiles(C.long(count)))
}

// EWIndex is elementwise.h's ew_index(tile, j) under launch l.
func EWIndex(l Launch, tile, j int64) int64 {
	mu.Lock()
	defer mu.Unlock()
	l.set()
	return int64(C.ew_index(C.long(tile), C.long(j)))
}

// GroupLinearID is portable.h's GROUP_LINEAR_ID() under launch l, and
// GroupTotal its GROUP_TOTAL().
func GroupLinearID(l Launch) (id, total int64) {
	mu.Lock()
	defer mu.Unlock()
	l.set()
	return int64(C.hostc_group_linear_id()), int64(C.hostc_group_total())
}

// DiagOffset is diag_body.h's diag_offset: the element offset of diagonal
// element j.
func DiagOffset(j, L, base, dstride, n1, n2, s0, s1, s2 int64) int64 {
	return int64(C.diag_offset(C.long(j), C.long(L), C.long(base), C.long(dstride), C.long(n1), C.long(n2),
		C.long(s0), C.long(s1), C.long(s2)))
}

// TriRowCol is tri_math.h's tri_row and tri_col: the row and column of
// element k of a tril/triu layout (see accel/tri.go).
func TriRowCol(k, upper, cols, lead, n, a, t int64) (row, col int64) {
	r := C.tri_row(C.long(k), C.long(upper), C.long(cols), C.long(lead), C.long(n), C.long(a), C.long(t))
	c := C.tri_col(C.long(k), r, C.long(upper), C.long(cols), C.long(lead), C.long(n), C.long(a), C.long(t))
	return int64(r), int64(c)
}
