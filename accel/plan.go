package accel

import "github.com/accelkern/accel/host"

// Every op family plans its work in its own file (scatter_plan.go,
// indice_plan.go, sparse_plan.go, radix_plan.go, scan_plan.go,
// hash_plan.go, copy_plan.go, diag_plan.go): a plain function from the
// device's capabilities and the op's geometry to a plan, printable with
// its reasons and unit-tested without a device. The family's executor
// switches on its plan's path. A Device reaches the planners through one
// seam, Device.planner, which tests replace to force any path on any
// device.

// planner makes the plans of a device's ops. devicePlanner is the
// library's; tests wrap it to force paths, layouts and launch shapes.
type planner interface {
	// launch makes the final launch plan of a kernel whose work does
	// not depend on its launch shape (elementwise launches, the scan,
	// the scatter's CPU passes, the copy, the radix sort's tiled
	// passes), from its family planner's.
	launch(p host.Plan) host.Plan
	scatter(caps host.Caps, s scatterShape) scatterPlan
	// copy plans a copy of n 32-bit words and says whether the copy
	// kernel runs it rather than the driver's buffer copy.
	copy(caps host.Caps, n int64) (host.Plan, bool)
	// fill plans a fill of n 32-bit words and says whether the fill
	// kernel runs it rather than the driver's fill.
	fill(caps host.Caps, n int64) (host.Plan, bool)
	radix(caps host.Caps, n int64, keyBytes int, entryLimit int64) host.Plan
	unique(caps host.Caps, n int64, keyBytes int) uniquePlan
	sparse(caps host.Caps, total int64) sparsePlan
	coalesce(caps host.Caps, n int64, keyBits int) coalescePlan
	union(caps host.Caps, n int64, keyBits int) unionPlan
	// indiceLayout forces get_indice_pairs' layout (shapeAuto: the
	// planner's by device class) and, with noGrid, keeps a regular or
	// transposed conv in rows off the dense grid and a submanifold one
	// off the line table.
	indiceLayout() (shape indiceShape, noGrid bool)
}

// devicePlanner is the library's planner: each family's plan function.
type devicePlanner struct{}

func (devicePlanner) launch(p host.Plan) host.Plan { return p }
func (devicePlanner) scatter(caps host.Caps, s scatterShape) scatterPlan {
	return planScatter(caps, s)
}
func (devicePlanner) copy(caps host.Caps, n int64) (host.Plan, bool) { return planCopy(caps, n) }
func (devicePlanner) fill(caps host.Caps, n int64) (host.Plan, bool) { return planFill(caps, n) }
func (devicePlanner) radix(caps host.Caps, n int64, keyBytes int, entryLimit int64) host.Plan {
	return planRadix(caps, n, keyBytes, entryLimit)
}
func (devicePlanner) unique(caps host.Caps, n int64, keyBytes int) uniquePlan {
	return planUnique(caps, n, keyBytes)
}
func (devicePlanner) sparse(caps host.Caps, total int64) sparsePlan { return planSparse(caps, total) }
func (devicePlanner) coalesce(caps host.Caps, n int64, keyBits int) coalescePlan {
	return planCoalesce(caps, n, keyBits)
}
func (devicePlanner) union(caps host.Caps, n int64, keyBits int) unionPlan {
	return planUnion(caps, n, keyBits)
}
func (devicePlanner) indiceLayout() (indiceShape, bool) { return shapeAuto, false }
