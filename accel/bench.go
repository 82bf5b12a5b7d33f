package accel

import (
	"fmt"
	"sort"
	"time"

	"github.com/accelkern/accel/host"
	"github.com/accelkern/accel/reference"
)

// BenchResult is one row of `accel bench`: an op on one case on one device.
type BenchResult struct {
	Op         string  `json:"op"`
	Case       string  `json:"case"`
	Backend    string  `json:"backend"`
	Device     string  `json:"device"`
	MedianS    float64 `json:"median_s"`              // median device time of warm runs
	ColdS      float64 `json:"cold_s"`                // wall time of the first call, fresh output included
	Reps       int     `json:"reps"`                  // warm runs measured
	Bytes      int64   `json:"bytes"`                 // each input read once, each output written once
	GBps       float64 `json:"gbps"`                  // Bytes / MedianS
	CopyGBps   float64 `json:"copy_gbps"`             // the device's own buffer copy, read+write bytes / time
	FracCopy   float64 `json:"frac_copy"`             // GBps / CopyGBps
	RefMedianS float64 `json:"ref_median_s"`          // the scalar reference on the host, same machine and run
	Speedup    float64 `json:"speedup"`               // RefMedianS / MedianS
	Items      int64   `json:"items,omitempty"`       // keys or elements processed, where the rate is per item
	MItemsPerS float64 `json:"mkeys_per_s,omitempty"` // Items / MedianS / 1e6
	Plan       string  `json:"plan"`
	host.PoolStats
}

// BenchOptions choose what Bench measures.
type BenchOptions struct {
	Ops   []string // op names; empty means every op with bench cases
	Reps  int      // warm runs per case (default 5)
	Quick bool     // smaller cases only (for `make run` and tests)
}

type benchCase struct {
	op, name string
	bytes    int64
	items    int64 // keys per run, for rows reported in Mkeys/s (0: none)
	// setup prepares the case on dev and returns the cold call, the warm
	// call (device seconds), the plan text and a cleanup.
	setup func(dev *Device) (cold func() error, warm func() (float64, error), plan string, done func(), err error)
	// ref prepares the scalar reference and returns one run.
	ref func() (run func(), done func())
}

func triBenchCases(quick bool) []benchCase {
	sizes := []int64{1000, 4000, 10000}
	if quick {
		sizes = []int64{1000, 3000}
	}
	var cases []benchCase
	for _, upper := range []bool{false, true} {
		for _, dt := range []DType{Int64, Int32} {
			for _, n := range sizes {
				if dt == Int32 && n != sizes[len(sizes)-1] {
					continue
				}
				upper, dt, n := upper, dt, n
				op := triOp(upper)
				l, _ := newTriLayout(op, n, n, 0, upper, dt)
				cases = append(cases, benchCase{
					op: op, name: fmt.Sprintf("%dx%d_%s", n, n, dt), bytes: 2 * l.N * int64(dt.Size()),
					setup: func(dev *Device) (func() error, func() (float64, error), string, func(), error) {
						// cold: a fresh output from the driver; warm: the op's
						// ordinary call, its output taken from the pool.
						cold := func() error {
							out, _, err := dev.triIndicesTimed(n, n, 0, upper, dt)
							if err == nil {
								out.Release()
							}
							return err
						}
						warm := func() (float64, error) {
							out, secs, err := dev.triIndicesTimed(n, n, 0, upper, dt)
							if err == nil {
								out.Release()
							}
							return secs, err
						}
						done := func() {}
						return cold, warm, dev.plan(host.PlanElementwise(op, dev.caps, l.N)).String(), done, nil
					},
					ref: func() (func(), func()) {
						r, c := make([]int64, l.N), make([]int64, l.N)
						return func() { reference.TriIndicesInto(n, n, 0, upper, r, c) }, func() {}
					},
				})
			}
		}
	}
	return cases
}

func allBenchCases(quick bool) []benchCase {
	cases := triBenchCases(quick)
	cases = append(cases, diagBenchCases(quick)...)
	cases = append(cases, scatterBenchCases(quick)...)
	cases = append(cases, primBenchCases(quick)...)
	return append(cases, hashBenchCases(quick)...)
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

// CopyBandwidth measures the device's own buffer-to-buffer copy of size
// bytes (warm buffers, median of reps) and returns GB/s counting the bytes
// read plus the bytes written.
func (d *Device) CopyBandwidth(size int64, reps int) (float64, error) {
	if size > d.caps.MaxAllocBytes {
		size = d.caps.MaxAllocBytes
	}
	src, err := d.h.Alloc(size)
	if err != nil {
		return 0, err
	}
	defer src.Release()
	dst, err := d.h.Alloc(size)
	if err != nil {
		return 0, err
	}
	defer dst.Release()
	if err := d.h.Fill(src, 0, size, []byte{1, 2, 3, 4}); err != nil {
		return 0, err
	}
	if err := d.h.Fill(dst, 0, size, []byte{0, 0, 0, 0}); err != nil {
		return 0, err
	}
	var ts []float64
	for i := 0; i < reps+1; i++ {
		dur, err := d.h.Copy(dst, 0, src, 0, size)
		if err != nil {
			return 0, err
		}
		if i > 0 { // the first copy warms caches and page tables
			ts = append(ts, dur.Seconds())
		}
	}
	return 2 * float64(size) / median(ts) / 1e9, nil
}

// Bench measures every selected op's cases on dev against the device's own
// copy bandwidth and the scalar reference, all in this run. refCache, if
// non-nil, keeps reference times across devices (key: op/case).
func Bench(dev *Device, opts BenchOptions, refCache map[string]float64) ([]BenchResult, error) {
	reps := opts.Reps
	if reps <= 0 {
		reps = 5
	}
	want := map[string]bool{}
	for _, o := range opts.Ops {
		want[o] = true
	}
	copySize := int64(256 << 20)
	if opts.Quick {
		copySize = 64 << 20
	}
	copyGBps, err := dev.CopyBandwidth(copySize, reps)
	if err != nil {
		return nil, fmt.Errorf("accel: bench: copy bandwidth: %w", err)
	}
	var out []BenchResult
	for _, c := range allBenchCases(opts.Quick) {
		if len(want) > 0 && !want[c.op] {
			continue
		}
		if c.bytes > dev.caps.MaxAllocBytes {
			continue
		}
		cold, warm, plan, done, err := c.setup(dev)
		if err != nil {
			return out, err
		}
		dev.TrimPool() // the cold call gets fresh buffers
		t0 := time.Now()
		if err := cold(); err != nil {
			done()
			return out, fmt.Errorf("accel: bench %s %s: %w", c.op, c.name, err)
		}
		coldS := time.Since(t0).Seconds()
		var ts []float64
		for i := 0; i < reps; i++ {
			s, err := warm()
			if err != nil {
				done()
				return out, fmt.Errorf("accel: bench %s %s: %w", c.op, c.name, err)
			}
			ts = append(ts, s)
		}
		done()
		key := c.op + "/" + c.name
		refS, ok := refCache[key]
		if !ok {
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
		r := BenchResult{Op: c.op, Case: c.name, Backend: dev.caps.Backend, Device: dev.caps.Name,
			MedianS: median(ts), ColdS: coldS, Reps: reps, Bytes: c.bytes, CopyGBps: copyGBps, RefMedianS: refS, Plan: plan,
			PoolStats: dev.PoolStats()}
		if r.MedianS > 0 {
			r.GBps = float64(r.Bytes) / r.MedianS / 1e9
			r.Speedup = refS / r.MedianS
			if c.items > 0 {
				r.Items = c.items
				r.MItemsPerS = float64(c.items) / r.MedianS / 1e6
			}
		}
		if copyGBps > 0 {
			r.FracCopy = r.GBps / copyGBps
		}
		out = append(out, r)
	}
	return out, nil
}
