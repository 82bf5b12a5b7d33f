// Package bench measures the library's ops on a device: each op's cases
// timed warm (device time from the device's counters, host wall time, and
// the host round trips per call) against the device's own copy bandwidth
// and the scalar reference, all in one run. `accel bench` prints it.
package bench

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/accelkern/accel/accel"
	"github.com/accelkern/accel/reference"
)

// Result is one row of `accel bench`: an op on one case on one device.
type Result struct {
	Op      string `json:"op"`
	Case    string `json:"case"`
	Backend string `json:"backend"`
	Device  string `json:"device"`
	// MedianS is the median device time of a warm call: the device's
	// busy time (accel.Stats.DeviceNs) over the call and a final Sync.
	MedianS float64 `json:"median_s"`
	// WallS is the median host wall time of a warm call, the final Sync
	// included.
	WallS float64 `json:"wall_s"`
	// FirstS is the wall time of the case's first call in this process,
	// Sync included: its kernels built now (unless an earlier case built
	// them; from the drivers' disk caches where warm) and fresh outputs.
	FirstS float64 `json:"first_s"`
	// ColdS is the wall time of a call with its kernels built but its
	// outputs fresh (the pool trimmed first), Sync included: what a
	// framework's call into a newly allocated output compares with.
	ColdS float64 `json:"cold_s"`
	// Syncs, Submits and Launches are per warm call, the final Sync
	// included: the host's waits for the device, the batches handed to
	// it, and the kernels launched.
	Syncs    float64 `json:"syncs"`
	Submits  float64 `json:"submits"`
	Launches float64 `json:"launches"`
	Reps     int     `json:"reps"` // warm calls measured
	// WarmupCalls is how many calls Options.Warmup added before them.
	WarmupCalls int     `json:"warmup_calls,omitempty"`
	Bytes       int64   `json:"bytes"`     // each input read once, each output written once
	GBps        float64 `json:"gbps"`      // Bytes / MedianS
	CopyGBps    float64 `json:"copy_gbps"` // Device.Copy, read+write bytes / time (the driver's copy, or our copy kernel where the planner picks it: CPU OpenCL)
	FracCopy    float64 `json:"frac_copy"` // GBps / CopyGBps
	// HostCopyGBps is a plain Go copy over every core, on CPU devices
	// only (their memory is the host's); CeilingGBps is the best of it,
	// CopyGBps and the driver's and kernel's copies (a GPU's ceiling is
	// its own copy, the faster one), and FracCeiling is GBps
	// against it: PoCL's own buffer copy reaches about half of what the
	// memory does on a CPU (Device.Copy there runs our copy kernel, which
	// reaches the Go copy).
	HostCopyGBps float64 `json:"host_copy_gbps,omitempty"`
	// DriverCopyGBps and KernelCopyGBps are the driver's buffer copy and
	// our copy kernel, each timed as CopyGBps (Device.CopyBy); the
	// ceiling is at least the faster of them.
	DriverCopyGBps float64 `json:"driver_copy_gbps"`
	KernelCopyGBps float64 `json:"kernel_copy_gbps"`
	CeilingGBps    float64 `json:"ceiling_gbps"`
	FracCeiling    float64 `json:"frac_ceiling"`
	RefMedianS     float64 `json:"ref_median_s"`          // the scalar reference on the host, same machine and run
	Speedup        float64 `json:"speedup"`               // RefMedianS / MedianS
	Items          int64   `json:"items,omitempty"`       // keys or elements processed, where the rate is per item
	MItemsPerS     float64 `json:"mkeys_per_s,omitempty"` // Items / MedianS / 1e6
	Plan           string  `json:"plan"`
	// ModelBytes is the op's traffic as its plan models it (accel's
	// PlanReport.ModelBytes: every pass's bytes read and written), 0 for
	// an op without a model; MinBytes is the op's least as the library
	// counts it. On a GPU, ModelBytes / CopyGBps is the time the plan
	// cannot beat.
	ModelBytes int64 `json:"model_bytes,omitempty"`
	MinBytes   int64 `json:"min_bytes,omitempty"`
	// PeakBytes is the most device memory a warm call held at once in
	// tensors: its inputs, outputs and workspace.
	PeakBytes int64 `json:"peak_bytes"`
	accel.PoolStats
}

// Options choose what Run measures.
type Options struct {
	Ops   []string // op names; empty means every op with bench cases
	Cases []string // case names; empty means every case of the ops
	Reps  int      // warm calls per case (default 5)
	// Warmup is how long a case keeps calling before its measured calls
	// (after its first and cold ones): at least this much wall time, so
	// that a GPU whose clocks fell while the host worked runs them at
	// its steady speed. 0: no more calls.
	Warmup time.Duration
	Quick  bool // smaller cases only (for `make run` and tests)
	// NoRef leaves out the scalar reference on the host (RefMedianS and
	// Speedup 0): a GPU run's calls are short, and a 16M case's
	// reference takes seconds.
	NoRef bool
}

// benchCase is one op on one input.
type benchCase struct {
	op, name string
	bytes    int64
	items    int64 // keys per call, for rows reported in Mkeys/s (0: none)
	// setup prepares the case on dev.
	setup func(dev *accel.Device) (caseRun, error)
	// ref prepares the scalar reference and returns one run.
	ref func() (run func(), done func())
}

func allCases(quick bool) []benchCase {
	cases := triCases(quick)
	cases = append(cases, diagCases(quick)...)
	cases = append(cases, scatterCases(quick)...)
	cases = append(cases, primCases(quick)...)
	cases = append(cases, hashCases(quick)...)
	cases = append(cases, sparseCases(quick)...)
	return append(cases, indiceCases(quick)...)
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// caseRun is a case set up on a device.
type caseRun struct {
	call func() error // one call of the op, its outputs released
	prep func() error // if set, run before each call, untimed
	plan string       // a note on the case, printed before the plans the op reports
	done func()       // the cleanup
}

// measure is one call timed: device seconds, wall seconds and the
// counters it moved.
type measure struct {
	dev, wall float64
	stats     accel.Stats
}

// timed runs call and then Sync, and returns what it cost.
func timed(dev *accel.Device, call func() error) (measure, error) {
	s0 := dev.Stats()
	t0 := time.Now()
	if err := call(); err != nil {
		return measure{}, err
	}
	if err := dev.Sync(); err != nil {
		return measure{}, err
	}
	m := measure{wall: time.Since(t0).Seconds(), stats: dev.Stats().Sub(s0)}
	m.dev = float64(m.stats.DeviceNs) / 1e9
	return m, nil
}

// CopyBandwidth measures the device's buffer-to-buffer copy (Device.Copy:
// the driver's, or where the device's plan picks it our copy kernel) of
// size bytes (warm buffers, median of reps) and returns GB/s counting the
// bytes read plus the bytes written.
func CopyBandwidth(dev *accel.Device, size int64, reps int) (float64, error) {
	return CopyBandwidthBy(dev, size, reps, accel.CopyAuto)
}

// CopyBandwidthBy is CopyBandwidth by the copy method how (the driver's
// copy, or the copy kernel).
func CopyBandwidthBy(dev *accel.Device, size int64, reps int, how accel.CopyMethod) (float64, error) {
	size = min(size, dev.Info().MaxAllocBytes) / 4
	src, err := dev.Zeros(accel.Uint32, size)
	if err != nil {
		return 0, err
	}
	defer src.Release()
	dst, err := dev.Zeros(accel.Uint32, size)
	if err != nil {
		return 0, err
	}
	defer dst.Release()
	var ts []float64
	for i := 0; i < reps+1; i++ {
		m, err := timed(dev, func() error { return dev.CopyBy(dst, src, how) })
		if err != nil {
			return 0, err
		}
		if i > 0 { // the first copy warms caches and page tables
			ts = append(ts, m.dev)
		}
	}
	return 2 * float64(4*size) / median(ts) / 1e9, nil
}

// HostCopyBandwidth measures a plain Go copy of size bytes split over
// every core (warm pages, median of reps) and returns GB/s counting the
// bytes read plus the bytes written: the memory's ceiling as a CPU driver's
// kernels see it. It is measured once per size in a process.
func HostCopyBandwidth(size int64, reps int) float64 {
	hostCopyMu.Lock()
	defer hostCopyMu.Unlock()
	if v, ok := hostCopyCache[size]; ok {
		return v
	}
	src, dst := make([]byte, size), make([]byte, size)
	for i := range src {
		src[i] = byte(i)
	}
	workers := int64(runtime.NumCPU())
	chunk := (size + workers - 1) / workers
	var ts []float64
	for i := 0; i < reps+1; i++ {
		t0 := time.Now()
		var wg sync.WaitGroup
		for w := int64(0); w < workers; w++ {
			lo, hi := min(w*chunk, size), min((w+1)*chunk, size)
			wg.Add(1)
			go func() {
				defer wg.Done()
				copy(dst[lo:hi], src[lo:hi])
			}()
		}
		wg.Wait()
		if i > 0 { // the first copy faults the destination's pages in
			ts = append(ts, time.Since(t0).Seconds())
		}
	}
	v := 2 * float64(size) / median(ts) / 1e9
	hostCopyCache[size] = v
	return v
}

var (
	hostCopyMu    sync.Mutex
	hostCopyCache = map[int64]float64{}
)

// Run measures every selected op's cases on dev against the device's own
// copy bandwidth and the scalar reference, all in this run. dev must be
// opened with accel.Options{Timing: true} (device time is not measured
// otherwise). refCache, if non-nil, keeps reference times across devices
// (key: op/case).
func Run(dev *accel.Device, opts Options, refCache map[string]float64) ([]Result, error) {
	reps := opts.Reps
	if reps <= 0 {
		reps = 5
	}
	want, wantCase := map[string]bool{}, map[string]bool{}
	for _, o := range opts.Ops {
		want[o] = true
	}
	for _, c := range opts.Cases {
		wantCase[c] = true
	}
	copySize := int64(256 << 20)
	if opts.Quick {
		copySize = 64 << 20
	}
	copyGBps, err := CopyBandwidth(dev, copySize, reps)
	if err != nil {
		return nil, fmt.Errorf("bench: copy bandwidth: %w", err)
	}
	if math.IsInf(copyGBps, 0) || math.IsNaN(copyGBps) {
		return nil, fmt.Errorf("bench: %s measured no device time: open it with accel.Options{Timing: true}: %w", dev, accel.ErrUnsupported)
	}
	// the ceiling: the faster of the driver's copy and the copy kernel
	// (NVIDIA's Vulkan buffer copy moved 843 GB/s on the H200, our kernel
	// more), and on a CPU the host's own copy
	driverGBps, err := CopyBandwidthBy(dev, copySize, reps, accel.CopyDriver)
	if err != nil {
		return nil, fmt.Errorf("bench: the driver's copy bandwidth: %w", err)
	}
	kernelGBps, err := CopyBandwidthBy(dev, copySize, reps, accel.CopyKernel)
	if err != nil {
		return nil, fmt.Errorf("bench: the copy kernel's bandwidth: %w", err)
	}
	info := dev.Info()
	ceiling, hostCopy := max(copyGBps, driverGBps, kernelGBps), 0.0
	if info.Type == accel.TypeCPU {
		hostCopy = HostCopyBandwidth(copySize, reps)
		ceiling = max(ceiling, hostCopy)
	}
	var out []Result
	for _, c := range allCases(opts.Quick) {
		if len(want) > 0 && !want[c.op] || len(wantCase) > 0 && !wantCase[c.name] {
			continue
		}
		if c.bytes > info.MaxAllocBytes {
			continue
		}
		r, err := runCase(dev, c, reps, opts.Warmup, refCache, opts.NoRef)
		if err != nil {
			return out, fmt.Errorf("bench %s %s: %w", c.op, c.name, err)
		}
		r.CopyGBps, r.HostCopyGBps, r.CeilingGBps = copyGBps, hostCopy, ceiling
		r.DriverCopyGBps, r.KernelCopyGBps = driverGBps, kernelGBps
		if copyGBps > 0 {
			r.FracCopy = r.GBps / copyGBps
		}
		if ceiling > 0 {
			r.FracCeiling = r.GBps / ceiling
		}
		out = append(out, r)
	}
	return out, nil
}

// withPlans runs call, collecting the plans the op's families report
// (Device.OnPlan), and returns them after note, joined, with the op's
// traffic model: its modelled and least bytes.
func withPlans(dev *accel.Device, note string, call func() (measure, error)) (m measure, plan string, model, least int64, err error) {
	var plans []string
	if note != "" {
		plans = append(plans, note)
	}
	dev.OnPlan(func(r accel.PlanReport) {
		if p := r.Family + ": " + r.Plan; !slices.Contains(plans, p) {
			plans = append(plans, p)
		}
		model += r.ModelBytes
		least += r.MinBytes
	})
	m, err = call()
	dev.OnPlan(nil)
	return m, strings.Join(plans, " | "), model, least, err
}

func runCase(dev *accel.Device, c benchCase, reps int, warmup time.Duration, refCache map[string]float64, noRef bool) (Result, error) {
	cr, err := c.setup(dev)
	if err != nil {
		return Result{}, err
	}
	defer cr.done()
	call := func() (measure, error) {
		if cr.prep != nil {
			if err := cr.prep(); err != nil {
				return measure{}, err
			}
			if err := dev.Sync(); err != nil {
				return measure{}, err
			}
		}
		return timed(dev, cr.call)
	}
	dev.TrimPool() // the first call builds its kernels and gets fresh buffers
	first, plan, model, least, err := withPlans(dev, cr.plan, call)
	if err != nil {
		return Result{}, err
	}
	dev.TrimPool() // the cold call: kernels built, fresh buffers
	cold, err := call()
	if err != nil {
		return Result{}, err
	}
	warmed := 0
	for t := time.Now(); time.Since(t) < warmup; warmed++ {
		if _, err := call(); err != nil {
			return Result{}, err
		}
	}
	var devS, wallS []float64
	var sum accel.Stats
	var peak int64
	for i := 0; i < reps; i++ {
		dev.ResetPoolPeak()
		m, err := call()
		if err != nil {
			return Result{}, err
		}
		peak = max(peak, dev.PoolStats().PeakBytes)
		devS, wallS = append(devS, m.dev), append(wallS, m.wall)
		sum = sum.Add(m.stats)
	}
	key := c.op + "/" + c.name
	refS, ok := refCache[key]
	if !ok && !noRef {
		run, rdone := c.ref()
		run() // warm the reference's memory too
		var rts []float64
		for i := 0; i < min(reps, 3); i++ {
			t := time.Now()
			run()
			rts = append(rts, time.Since(t).Seconds())
		}
		rdone()
		refS = median(rts)
		if refCache != nil {
			refCache[key] = refS
		}
	}
	info := dev.Info()
	per := func(n int64) float64 { return float64(n) / float64(reps) }
	r := Result{Op: c.op, Case: c.name, Backend: info.Backend, Device: info.Name,
		MedianS: median(devS), WallS: median(wallS), FirstS: first.wall, ColdS: cold.wall, Reps: reps, WarmupCalls: warmed,
		Bytes: c.bytes, RefMedianS: refS, Syncs: per(sum.Waits), Submits: per(sum.Submits), Launches: per(sum.Launches),
		Plan: plan, ModelBytes: model, MinBytes: least, PeakBytes: peak, PoolStats: dev.PoolStats()}
	if r.MedianS > 0 {
		r.GBps = float64(r.Bytes) / r.MedianS / 1e9
		r.Speedup = refS / r.MedianS
		if c.items > 0 {
			r.Items = c.items
			r.MItemsPerS = float64(c.items) / r.MedianS / 1e6
		}
	}
	return r, nil
}

func triCases(quick bool) []benchCase {
	sizes := []int64{1000, 4000, 10000}
	if quick {
		sizes = []int64{1000, 3000}
	}
	var cases []benchCase
	for _, upper := range []bool{false, true} {
		for _, dt := range []accel.DType{accel.Int64, accel.Int32} {
			for _, n := range sizes {
				if dt == accel.Int32 && n != sizes[len(sizes)-1] {
					continue
				}
				upper, dt, n := upper, dt, n
				op := map[bool]string{false: "tril_indices", true: "triu_indices"}[upper]
				count, _ := reference.TriCount(n, n, 0, upper)
				cases = append(cases, benchCase{
					op: op, name: fmt.Sprintf("%dx%d_%s", n, n, dt), bytes: 2 * count * int64(dt.Size()),
					setup: func(dev *accel.Device) (caseRun, error) {
						// each call: the op's ordinary output, taken from
						// the pool once warm
						call := func() error {
							f := dev.TrilIndices
							if upper {
								f = dev.TriuIndices
							}
							out, err := f(n, n, 0, dt)
							if err == nil {
								out.Release()
							}
							return err
						}
						return caseRun{call: call, done: func() {}}, nil
					},
					ref: func() (func(), func()) {
						r, c := make([]int64, count), make([]int64, count)
						return func() { reference.TriIndicesInto(n, n, 0, upper, r, c) }, func() {}
					},
				})
			}
		}
	}
	return cases
}

// FirstCase is an op's first quick bench case, which `accel bench
// --first-call` times in a fresh process.
type FirstCase struct {
	Op, Case string
	setup    func(dev *accel.Device) (caseRun, error)
}

// FirstCases returns the first quick case of every op with bench cases,
// in the order of the families (tri, diag, scatter, prim, hash, sparse,
// indice).
func FirstCases() []FirstCase {
	var out []FirstCase
	seen := map[string]bool{}
	for _, c := range allCases(true) {
		if !seen[c.op] {
			seen[c.op] = true
			out = append(out, FirstCase{Op: c.op, Case: c.name, setup: c.setup})
		}
	}
	return out
}

// Setup prepares the case on dev (its inputs uploaded) and returns one
// call of the op (its outputs read back to the host or synced) and the
// cleanup.
func (c FirstCase) Setup(dev *accel.Device) (call func() error, done func(), err error) {
	cr, err := c.setup(dev)
	if err != nil {
		return nil, nil, err
	}
	if cr.prep != nil {
		if err := cr.prep(); err != nil {
			cr.done()
			return nil, nil, err
		}
	}
	return func() error {
		if err := cr.call(); err != nil {
			return err
		}
		return dev.Sync()
	}, cr.done, nil
}
