package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/accelkern/accel/accel"
	"github.com/accelkern/accel/cmd/accel/internal/fuzzgen"
	"github.com/accelkern/accel/cmd/accel/internal/ops"
)

// The soak: G goroutines run random ops (package fuzzgen's decoders over
// random bytes: valid and invalid parameters and inputs) on every device
// at once, compare a sample with the reference, and hold some device
// tensors across iterations, releasing some at once and some late. Every
// report interval it prints the ops run, the process RSS, the Go heap and
// each device pool's live and idle bytes; at the end, once everything is
// released, the leak verdict: every pool's live bytes back to zero, and
// the RSS slope over the second half of the run's load (readings before
// the deadline) under the stated bound.

// soakDevice is one device under soak with its counters.
type soakDevice struct {
	name string
	dev  *accel.Device
	ops  atomic.Int64
}

// soakStats are the soak's counters, shared by the goroutines.
type soakStats struct {
	mu         sync.Mutex
	errs       map[string]int64 // errors by kind: the sentinel, or "unexpected"
	mismatches []string         // the first few, and the count below
	nMismatch  int64
	checked    atomic.Int64
	ops        atomic.Int64
	held       atomic.Int64 // tensors held across iterations, now
}

func (s *soakStats) addErr(kind string) {
	s.mu.Lock()
	s.errs[kind]++
	s.mu.Unlock()
}

func (s *soakStats) mismatch(msg string) {
	s.mu.Lock()
	s.nMismatch++
	if len(s.mismatches) < 20 {
		s.mismatches = append(s.mismatches, msg)
	}
	s.mu.Unlock()
}

// errKind names err's sentinel, or "unexpected" (no sentinel: a driver
// error or a validation message), or "closed".
func errKind(err error) string {
	if s := fuzzgen.Sentinel(err); s != nil {
		return s.Error()
	}
	if errors.Is(err, accel.ErrClosed) {
		return "closed"
	}
	if errors.Is(err, accel.ErrGuardBand) {
		return "guard band"
	}
	return "unexpected"
}

// soakSample is one report line's readings.
type soakSample struct {
	ElapsedS  float64          `json:"elapsed_s"`
	Ops       int64            `json:"ops"`
	RSSBytes  int64            `json:"rss_bytes"`
	HeapBytes uint64           `json:"go_heap_bytes"`
	Held      int64            `json:"held_tensors"`
	PoolLive  map[string]int64 `json:"pool_live_bytes"`
	PoolIdle  map[string]int64 `json:"pool_idle_bytes"`
	DeviceOps map[string]int64 `json:"device_ops"`
	// Compiles counts the programs or pipelines each device built so far:
	// they stay cached for the device's life, so RSS grows while rare
	// kernel variants are still being met for the first time.
	Compiles   map[string]int64 `json:"device_compiles"`
	Mismatches int64            `json:"mismatches"`
	// Draining marks a reading taken after the deadline, while the workers
	// finish their last op (often a kernel met for the first time, whose
	// build takes seconds and grows RSS once): printed and kept, but left
	// out of the RSS slope, which measures steady load.
	Draining bool `json:"draining,omitempty"`
}

// soakSummary is what `accel soak --json` writes.
type soakSummary struct {
	DurationS       float64          `json:"duration_s"`
	Goroutines      int              `json:"goroutines"`
	Devices         []string         `json:"devices"`
	Validation      bool             `json:"validation"`
	GuardBytes      int64            `json:"guard_bytes"`
	Seed            int64            `json:"seed"`
	Ops             int64            `json:"ops"`
	Checked         int64            `json:"checked_against_reference"`
	Errors          map[string]int64 `json:"errors_by_kind"`
	Mismatches      int64            `json:"mismatches"`
	MismatchSamples []string         `json:"mismatch_samples,omitempty"`
	Samples         []soakSample     `json:"samples"`
	FinalPoolLive   map[string]int64 `json:"final_pool_live_bytes"`
	RSSSlopeMBMin   float64          `json:"rss_slope_mb_per_min"`
	RSSSlopeOK      bool             `json:"rss_slope_measured"` // the second half of the run's load held enough readings
	RSSSlopeBound   float64          `json:"rss_slope_bound_mb_per_min"`
	Verdict         string           `json:"verdict"`
}

func cmdSoak(args []string) int {
	fs := newFlagSet("soak", `accel soak [--duration D] [--goroutines G] [--backend B]... [--device SEL] [--check-every N] [--report D] [--json FILE]
Runs random valid and invalid ops on every device at once from G goroutines,
checking a sample against the reference, and reports leaks.`)
	duration := fs.Duration("duration", time.Minute, "how long to run")
	goroutines := fs.Int("goroutines", 8, "goroutines running ops")
	var backends multi
	fs.Var(&backends, "backend", "opencl or vulkan (repeatable; default both)")
	device := fs.String("device", "", "device selector")
	checkEvery := fs.Int("check-every", 4, "compare one op in N with the reference")
	report := fs.Duration("report", time.Minute, "interval between readings")
	validation := fs.Bool("validation", true, "Vulkan validation layer on")
	guard := fs.Int64("guard-bytes", 64, "poisoned bytes before and past every tensor, checked when it is read back (0: none)")
	slopeBound := fs.Float64("rss-slope-bound", 2, "largest RSS growth over the second half, MB per minute, that passes")
	seed := fs.Int64("seed", 1, "random seed")
	jsonOut := fs.String("json", "", "write the summary as JSON to this file")
	if _, err := parseInterspersed(fs, args); err != nil {
		return flagExit(err)
	}
	if len(backends) == 0 {
		backends = multi{"opencl", "vulkan"}
	}
	var devs []*soakDevice
	for _, b := range backends {
		d, err := openBackendWith(b, *device, accel.Options{Validation: *validation, GuardBytes: *guard})
		if err != nil || d == nil {
			fmt.Fprintf(os.Stderr, "accel soak: %s: %v\n", b, err)
			return 1
		}
		defer d.Close()
		devs = append(devs, &soakDevice{name: b, dev: d})
	}
	st := &soakStats{errs: map[string]int64{}}
	sum := soakSummary{Goroutines: *goroutines, Validation: *validation, GuardBytes: *guard, Seed: *seed, RSSSlopeBound: *slopeBound}
	for _, d := range devs {
		sum.Devices = append(sum.Devices, d.name+" "+d.dev.Info().Name)
	}
	start := time.Now()
	deadline := start.Add(*duration)
	var wg sync.WaitGroup
	for g := 0; g < *goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			soakWorker(rand.New(rand.NewSource(*seed*1000+int64(g))), devs, st, deadline, *checkEvery)
		}(g)
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	tick := time.NewTicker(*report)
	defer tick.Stop()
	sample := func() soakSample {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		s := soakSample{ElapsedS: time.Since(start).Seconds(), Ops: st.ops.Load(), RSSBytes: rssBytes(), HeapBytes: ms.HeapAlloc,
			Held: st.held.Load(), PoolLive: map[string]int64{}, PoolIdle: map[string]int64{}, DeviceOps: map[string]int64{},
			Compiles: map[string]int64{}}
		st.mu.Lock()
		s.Mismatches = st.nMismatch
		st.mu.Unlock()
		for _, d := range devs {
			ps := d.dev.PoolStats()
			s.PoolLive[d.name], s.PoolIdle[d.name], s.DeviceOps[d.name] = ps.BytesInUse, ps.BytesHeld, d.ops.Load()
			s.Compiles[d.name] = d.dev.Stats().Compiles
		}
		return s
	}
	printSample := func(s soakSample) {
		var pools []string
		for _, d := range devs {
			pools = append(pools, fmt.Sprintf("%s live %s idle %s ops %d kernels %d", d.name, mib(s.PoolLive[d.name]),
				mib(s.PoolIdle[d.name]), s.DeviceOps[d.name], s.Compiles[d.name]))
		}
		fmt.Printf("soak %6.0fs  ops %-8d rss %s  heap %s  held %-4d mismatches %d  %s\n", s.ElapsedS, s.Ops, mib(s.RSSBytes),
			mib(int64(s.HeapBytes)), s.Held, s.Mismatches, strings.Join(pools, "; "))
	}
	for running := true; running; {
		select {
		case <-done:
			running = false
		case <-tick.C:
			s := sample()
			s.Draining = time.Now().After(deadline)
			sum.Samples = append(sum.Samples, s)
			printSample(s)
		}
	}
	// Everything is released: the pools' live bytes must be back to zero.
	for _, d := range devs {
		if err := d.dev.Sync(); err != nil {
			st.addErr("sync: " + errKind(err))
		}
	}
	final := sample()
	final.Draining = true
	printSample(final)
	sum.Samples = append(sum.Samples, final)
	sum.DurationS = time.Since(start).Seconds()
	sum.Ops, sum.Checked = st.ops.Load(), st.checked.Load()
	sum.Errors, sum.Mismatches, sum.MismatchSamples = st.errs, st.nMismatch, st.mismatches
	sum.FinalPoolLive = final.PoolLive
	sum.RSSSlopeMBMin, sum.RSSSlopeOK = rssSlope(sum.Samples)
	var bad []string
	for name, live := range final.PoolLive {
		if live != 0 {
			bad = append(bad, fmt.Sprintf("%s pool holds %d live bytes after every tensor was released", name, live))
		}
	}
	if sum.RSSSlopeOK && sum.RSSSlopeMBMin > *slopeBound {
		bad = append(bad, fmt.Sprintf("RSS grows %.2f MB/min over the second half (bound %.2f)", sum.RSSSlopeMBMin, *slopeBound))
	}
	if sum.Mismatches > 0 {
		bad = append(bad, fmt.Sprintf("%d mismatches against the reference", sum.Mismatches))
	}
	if n := st.errs["unexpected"]; n > 0 {
		bad = append(bad, fmt.Sprintf("%d errors wrapping no sentinel", n))
	}
	if n := st.errs["guard band"]; n > 0 {
		bad = append(bad, fmt.Sprintf("%d writes past the end of a tensor", n))
	}
	if n := st.errs["panic"]; n > 0 {
		bad = append(bad, fmt.Sprintf("%d panics", n))
	}
	sort.Strings(bad)
	sum.Verdict = "pass: no leak, no mismatch"
	if len(bad) > 0 {
		sum.Verdict = "FAIL: " + strings.Join(bad, "; ")
	}
	kinds := make([]string, 0, len(sum.Errors))
	for k, n := range sum.Errors {
		kinds = append(kinds, k+"="+strconv.FormatInt(n, 10))
	}
	sort.Strings(kinds)
	slope := fmt.Sprintf("RSS slope %.2f MB/min (bound %.2f)", sum.RSSSlopeMBMin, *slopeBound)
	if !sum.RSSSlopeOK {
		slope = fmt.Sprintf("RSS slope not measured (%d readings under load; it takes %d)", len(underLoad(sum.Samples)), minSlopeSamples)
	}
	fmt.Printf("soak: %d ops in %.0fs (%d checked against the reference), errors by kind: %s; mismatches %d; %s\n",
		sum.Ops, sum.DurationS, sum.Checked, strings.Join(kinds, ", "), sum.Mismatches, slope)
	for _, m := range sum.MismatchSamples {
		fmt.Println("  mismatch:", m)
	}
	fmt.Println("soak verdict:", sum.Verdict)
	if *jsonOut != "" {
		b, _ := json.MarshalIndent(sum, "", "  ")
		if err := os.WriteFile(*jsonOut, append(b, '\n'), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "accel soak:", err)
			return 1
		}
	}
	if len(bad) > 0 {
		return 1
	}
	return 0
}

// heldTensor is a device tensor a worker keeps for a while.
type heldTensor struct {
	t     *accel.DeviceTensor
	until int // the iteration it is released at
}

// soakWorker runs ops until the deadline, then releases what it holds.
func soakWorker(rng *rand.Rand, devs []*soakDevice, st *soakStats, deadline time.Time, checkEvery int) {
	var families []string
	for f := range fuzzgen.Families {
		families = append(families, f)
	}
	sort.Strings(families) // the seed decides the sequence
	var held []heldTensor
	defer func() {
		for _, h := range held {
			h.t.Release()
			st.held.Add(-1)
		}
	}()
	buf := make([]byte, 256)
	for it := 0; time.Now().Before(deadline); it++ {
		d := devs[rng.Intn(len(devs))]
		rng.Read(buf)
		c := fuzzgen.Families[families[rng.Intn(len(families))]](fuzzgen.New(buf[:rng.Intn(len(buf))]))
		if c.Op == "" || !c.Representable() {
			continue
		}
		check := !c.DeviceOnly && rng.Intn(max(checkEvery, 1)) == 0
		soakOne(d, c, check, st)
		// Hold an input across iterations now and then: released at once,
		// soon or late, with a queued op reading it meanwhile.
		if rng.Intn(4) == 0 {
			for _, x := range c.Inputs {
				t, err := d.dev.Upload(x)
				if err != nil {
					st.addErr(errKind(err))
					break
				}
				if x.DType() == accel.Int64 && rng.Intn(2) == 0 {
					if out, err := d.dev.Cumsum(t, false); err == nil {
						held = append(held, heldTensor{out, it + rng.Intn(50)})
						st.held.Add(1)
					}
				}
				held = append(held, heldTensor{t, it + []int{0, 3, 200}[rng.Intn(3)]})
				st.held.Add(1)
				break
			}
		}
		kept := held[:0]
		for _, h := range held {
			if h.until <= it {
				h.t.Release()
				st.held.Add(-1)
			} else {
				kept = append(kept, h)
			}
		}
		held = kept
	}
}

// soakOne runs c on d (and on the reference when check) and records the
// result.
func soakOne(d *soakDevice, c fuzzgen.Case, check bool, st *soakStats) {
	defer func() {
		if r := recover(); r != nil {
			st.addErr("panic")
			st.mismatch(fmt.Sprintf("%s %v on %s: panic: %v", c.Op, c.Params, d.name, r))
		}
	}()
	st.ops.Add(1)
	d.ops.Add(1)
	got, err := ops.Run(d.dev, c.Op, c.Params, c.Inputs)
	if err != nil {
		st.addErr(errKind(err))
	}
	if c.DeviceOnly && err == nil {
		st.mismatch(fmt.Sprintf("%s %v on %s: a huge output was not rejected", c.Op, c.Params, d.name))
	}
	if !check {
		return
	}
	st.checked.Add(1)
	want, werr := ops.Run(nil, c.Op, c.Params, c.Inputs)
	switch {
	case werr != nil && err == nil:
		st.mismatch(fmt.Sprintf("%s %v on %s: the reference rejects the input (%v), the device does not", c.Op, c.Params, d.name, werr))
	case werr == nil && err != nil && errors.Is(err, accel.ErrInvalidArgument):
		st.mismatch(fmt.Sprintf("%s %v on %s: the device rejects what the reference accepts: %v", c.Op, c.Params, d.name, err))
	case werr == nil && err == nil:
		if e := fuzzgen.Compare(c, want, got); e != nil {
			st.mismatch(fmt.Sprintf("on %s: %v", d.name, e))
		}
	}
}

// rssBytes is the process's resident set (0 where /proc is missing).
func rssBytes() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

// underLoad returns the readings taken before the deadline.
func underLoad(all []soakSample) []soakSample {
	var s []soakSample
	for _, p := range all {
		if !p.Draining {
			s = append(s, p)
		}
	}
	return s
}

// minSlopeSamples is the fewest readings under load a run needs for its
// RSS slope: the first half (the drivers' and the pools' warm-up) is left
// out, and the rest must be enough to fit a line to.
const minSlopeSamples = 10

// rssSlope fits RSS against time over the second half of the samples
// taken under load (least squares; draining readings left out) and
// returns MB per minute; ok=false with fewer than minSlopeSamples of them.
func rssSlope(all []soakSample) (slope float64, ok bool) {
	s := underLoad(all)
	if len(s) < minSlopeSamples {
		return 0, false
	}
	s = s[len(s)/2:]
	var mx, my float64
	for _, p := range s {
		mx += p.ElapsedS / 60
		my += float64(p.RSSBytes) / (1 << 20)
	}
	mx, my = mx/float64(len(s)), my/float64(len(s))
	var num, den float64
	for _, p := range s {
		dx := p.ElapsedS/60 - mx
		num += dx * (float64(p.RSSBytes)/(1<<20) - my)
		den += dx * dx
	}
	if den == 0 {
		return 0, false
	}
	return num / den, true
}

func mib(b int64) string { return fmt.Sprintf("%.1fMiB", float64(b)/(1<<20)) }
