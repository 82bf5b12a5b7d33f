package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/accelkern/accel/accel"
	"github.com/accelkern/accel/cmd/accel/internal/bench"
	"github.com/accelkern/accel/cmd/accel/internal/fuzzgen"
	"github.com/accelkern/accel/cmd/accel/internal/ops"
	"github.com/accelkern/accel/host"
	"github.com/accelkern/accel/reference"
)

func printJSON(v interface{}) int {
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		fmt.Fprintln(os.Stderr, "accel:", err)
		return 1
	}
	return 0
}

func cmdBench(args []string) int {
	fs := newFlagSet("bench", `accel bench [--op OP]... [--case NAME]... [--backend B]... [--device SEL] [--reps N] [--warmup D] [--quick] [--no-ref] [--json] [--first-call] [--svg FILE [--peers SIDE_BY_SIDE.json]]
Measures each op's bench cases on each backend's device (default: opencl and
vulkan, a backend without a device is skipped with a note) against the
device's own buffer copy and the scalar reference on the host. With
--first-call it measures instead the first call of an op in a fresh process,
with the drivers' disk caches cold and warm. --svg FILE draws a bar chart of
ratios per workload, the device named in its title: with --peers, the
peers' times over ours from a side-by-side JSON (bench/results/) without
running anything (--device names the device the file was measured on,
where the file does not); else this run's scalar-reference times over ours.`)
	var ops, backends multi
	fs.Var(&ops, "op", "op to measure (repeatable; default every op with bench cases)")
	fs.Var(&backends, "backend", "opencl or vulkan (repeatable; default both)")
	device := fs.String("device", "", "device selector: opencl:0, vulkan:llvmpipe, or an index/name for each --backend")
	reps := fs.Int("reps", 5, "warm runs per case")
	warmup := fs.Duration("warmup", 0, "before a case's measured runs, more warm runs for at least this long (a GPU's clocks, say: 200ms)")
	quick := fs.Bool("quick", false, "small cases only")
	var cases multi
	fs.Var(&cases, "case", "case to measure (repeatable; default every case of the ops)")
	noRef := fs.Bool("no-ref", false, "leave out the scalar reference's time on the host (a GPU run's short calls)")
	asJSON := fs.Bool("json", false, "print a JSON array of results")
	first := fs.Bool("first-call", false, "measure first-call latency in fresh processes (driver caches cold and warm): each op, then a whole program without and with Warm")
	runs := fs.Int("runs", 1, "with --first-call: rounds over every backend, alternating (quote minima)")
	svg := fs.String("svg", "", "write a bar chart of speed ratios (SVG) to this file")
	peers := fs.String("peers", "", "with --svg: a side-by-side JSON whose peer/ours ratios to draw (nothing is run)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return flagExit(err)
	}
	if len(pos) > 0 {
		fmt.Fprintf(os.Stderr, "accel bench: unexpected argument %q (ops go in --op)\n", pos[0])
		return 2
	}
	for _, b := range backends {
		if b != host.OpenCL && b != host.Vulkan {
			fmt.Fprintf(os.Stderr, "accel bench: --backend %q: must be opencl or vulkan\n", b)
			return 2
		}
	}
	if *peers != "" && *svg == "" {
		fmt.Fprintln(os.Stderr, "accel bench: --peers needs --svg FILE")
		return 2
	}
	if *peers != "" {
		name := ""
		if *device != "" {
			all, _ := accel.Devices()
			c, err := accel.SelectDevice(all, *device)
			if err != nil {
				fmt.Fprintln(os.Stderr, "accel bench:", err)
				return 1
			}
			name = c.ID() + " " + c.Name + " (" + platformName(c) + ")"
		}
		bars, title, err := peerBars(*peers, name)
		if err == nil {
			err = saveRatioSVG(*svg, title, bars)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "accel bench:", err)
			return 1
		}
		return 0
	}
	if *first {
		rs, code := firstCalls(backends, *device, ops, *runs)
		if *asJSON {
			if rs == nil {
				rs = []firstCall{}
			}
			if c := printJSON(rs); c != 0 {
				return c
			}
		} else {
			printFirstCalls(rs)
		}
		return code
	}
	results, code := benchAll(backends, *device, bench.Options{Ops: ops, Cases: cases, Reps: *reps, Warmup: *warmup, Quick: *quick, NoRef: *noRef})
	if *svg != "" {
		bars, title := refBars(results)
		if err := saveRatioSVG(*svg, title, bars); err != nil {
			fmt.Fprintln(os.Stderr, "accel bench:", err)
			code = 1
		}
	}
	if *asJSON {
		if results == nil {
			results = []bench.Result{}
		}
		if c := printJSON(results); c != 0 {
			return c
		}
		return code
	}
	printBenchTable(results)
	return code
}

// chooseBackends returns the device backends to visit: the ones asked
// for, else the one a "backend:..." --device names, else opencl and vulkan.
// explicit says whether a backend without a device is an error rather
// than a note.
func chooseBackends(asked []string, device string) (backends []string, explicit bool) {
	if len(asked) > 0 {
		return asked, true
	}
	if b, _, ok := strings.Cut(strings.ToLower(device), ":"); ok && (b == host.OpenCL || b == host.Vulkan) {
		return []string{b}, true
	}
	return []string{host.OpenCL, host.Vulkan}, false
}

// openFor opens backend b's device (nil for the reference). A --device
// that names the other device backend is an error.
func openFor(b, device string) (*accel.Device, error) {
	if other, _, ok := strings.Cut(strings.ToLower(device), ":"); ok && b != "reference" && other != b && (other == host.OpenCL || other == host.Vulkan) {
		return nil, fmt.Errorf("--device %s names a device of the %s backend, but --backend is %s (leave --backend out to follow --device): %w", device, other, b, accel.ErrNoDevice)
	}
	return openBackendWith(b, device, accel.Options{Timing: true})
}

// benchAll runs bench.Run on each backend's device with one shared cache
// of reference timings. A backend without a device is skipped with a note
// on stderr, and is an error (status 1) when it was asked for by name.
func benchAll(asked []string, device string, opts bench.Options) ([]bench.Result, int) {
	backends, explicit := chooseBackends(asked, device)
	refCache := map[string]float64{}
	var all []bench.Result
	code := 0
	for _, b := range backends {
		dev, err := openFor(b, device)
		if err != nil {
			fmt.Fprintf(os.Stderr, "note: %s skipped: %v\n", b, err)
			if explicit {
				code = 1
			}
			continue
		}
		if dev == nil {
			continue
		}
		rs, err := bench.Run(dev, opts, refCache)
		all = append(all, rs...)
		dev.Close()
		if err != nil {
			fmt.Fprintf(os.Stderr, "accel bench: %s: %v\n", b, err)
			code = 1
		}
	}
	return all, code
}

func mkeys(r bench.Result) string {
	if r.MItemsPerS == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f", r.MItemsPerS)
}

func printBenchTable(rs []bench.Result) {
	// at most 96 columns: op and case cut to their widths
	const row = "%-17.17s %-24.24s %-6.6s %7s %5s %6s %8s %7s %8s\n"
	fmt.Printf(row, "op", "case", "device", "ms", "GB/s", "% copy", "ref ms", "speed-up", "first ms")
	devices := map[string]string{}
	var ids []string
	for _, r := range rs {
		id := r.Backend
		if _, ok := devices[id]; !ok {
			devices[id] = r.Device
			ids = append(ids, id)
		}
		ref, speedup := "-", "-" // --no-ref
		if r.RefMedianS > 0 {
			ref, speedup = fmt.Sprintf("%.2f", r.RefMedianS*1e3), fmt.Sprintf("%.1fx", r.Speedup)
		}
		fmt.Printf(row, r.Op, r.Case, id, fmt.Sprintf("%.2f", r.MedianS*1e3), fmt.Sprintf("%.1f", r.GBps),
			fmt.Sprintf("%.0f%%", 100*r.FracCopy), ref, speedup, fmt.Sprintf("%.1f", r.FirstS*1e3))
	}
	fmt.Println(benchLegend)
	for _, id := range ids {
		fmt.Printf("  %s = %s\n", id, devices[id])
	}
}

// benchLegend explains the speed table's columns (the bench's JSON,
// accel bench --json, has every figure).
const benchLegend = `ms: the kernels' median time (warm, device timestamps); GB/s: the bytes
the op must move (inputs read, outputs written) per second; % copy: that
rate against the device's own copy of a buffer, read+write, in the same
run (over 100% where the op's bytes stay in the caches, or where it only
writes: a write-only stream runs faster than a copy's reads and writes);
ref ms: the scalar Go reference; speed-up: ref ms / ms; first ms: the
op's first call on the opened device, kernel builds (or disk-cache loads)
included. accel bench --json has every figure (wall time, syncs, cold).`

// selftestCase is one op invocation the self-test runs on every device and
// on the reference, comparing outputs bit for bit (fz nil) or as the
// fuzz targets do (fz: the decoded case, which says how).
type selftestCase struct {
	op     string
	params map[string]string
	inputs map[string]*accel.Tensor
	fz     *fuzzgen.Case
}

// selftestFuzzCases are perCase cases of every op family the fuzz targets
// decode (fuzzgen.Families: every op of the CLI), from fixed seeds: each
// op of a family appears among them. Cases the decoder marks too big to
// run, device-only or not representable are left out.
func selftestFuzzCases(perFamily int) []selftestCase {
	var fams []string
	for f := range fuzzgen.Families {
		fams = append(fams, f)
	}
	sort.Strings(fams)
	var cs []selftestCase
	for _, f := range fams {
		rng := rand.New(rand.NewSource(int64(len(f)) * 7919))
		for n, tries := 0, 0; n < perFamily && tries < 20*perFamily; tries++ {
			b := make([]byte, 96)
			rng.Read(b)
			c := fuzzgen.Families[f](fuzzgen.New(b))
			if c.Op == "" || c.DeviceOnly || !c.Representable() {
				continue
			}
			cs = append(cs, selftestCase{op: c.Op, params: c.Params, inputs: c.Inputs, fz: &c})
			n++
		}
	}
	return cs
}

func selftestCases() []selftestCase {
	var cs []selftestCase
	// Every op without inputs whose parameters are row/col/offset/dtype
	// (tril_indices, triu_indices) gets the same parameter sets.
	for _, op := range ops.Ops() {
		if len(op.Inputs) > 0 || !hasParams(op, "row", "col", "offset", "dtype") {
			continue
		}
		for _, s := range [][3]int64{{0, 0, 0}, {1, 1, 0}, {3, 3, 0}, {4, 3, -1}, {3, 4, 1}, {100, 57, -20}, {1000, 1000, 0}, {2000, 1500, 7}} {
			for _, dt := range []string{"int32", "int64"} {
				cs = append(cs, selftestCase{op: op.Name, params: map[string]string{
					"row": fmt.Sprint(s[0]), "col": fmt.Sprint(s[1]), "offset": fmt.Sprint(s[2]), "dtype": dt}})
			}
		}
	}
	rng := rand.New(rand.NewSource(1))
	for _, c := range []struct {
		shape           []int64
		off, dim1, dim2 int64
	}{
		{[]int64{4, 4}, 0, 0, 1}, {[]int64{3, 5}, 1, 0, 1}, {[]int64{2, 3, 4}, -1, 0, 1},
		{[]int64{64, 32, 32}, 0, -2, -1}, {[]int64{5, 3}, 1, 1, 0}, {[]int64{3, 4, 5, 6}, -2, 3, 1},
	} {
		// src: the input's shape without the two dims, then the diagonal
		r := int64(len(c.shape))
		d1, d2 := (c.dim1+r)%r, (c.dim2+r)%r
		var srcShape []int64
		for k, n := range c.shape {
			if int64(k) != d1 && int64(k) != d2 {
				srcShape = append(srcShape, n)
			}
		}
		srcShape = append(srcShape, reference.DiagLen(c.shape[d1], c.shape[d2], c.off))
		for _, dt := range []accel.DType{accel.Float32, accel.Float64, accel.Int32, accel.Int64} {
			in, _ := accel.NewTensor(dt, c.shape...)
			rng.Read(in.Bytes())
			src, _ := accel.NewTensor(dt, srcShape...)
			rng.Read(src.Bytes())
			cs = append(cs, selftestCase{op: "diagonal_scatter",
				params: map[string]string{"offset": fmt.Sprint(c.off), "dim1": fmt.Sprint(c.dim1), "dim2": fmt.Sprint(c.dim2)},
				inputs: map[string]*accel.Tensor{"input": in, "src": src}})
		}
	}
	// scatter_reduce: reductions whose result does not depend on the order
	// of the atomics (integers, float amax/amin) compare bit for bit.
	for _, c := range []struct {
		dt      accel.DType
		reduces []string
	}{
		{accel.Int32, []string{"sum", "prod", "mean", "amax", "amin"}},
		{accel.Int64, []string{"sum", "mean", "amax"}},
		{accel.Float32, []string{"amax", "amin"}},
		{accel.Float64, []string{"amax", "amin"}},
	} {
		for _, red := range c.reduces {
			for _, self := range []string{"true", "false"} {
				in, _ := accel.NewTensor(c.dt, 50, 7)
				src, _ := accel.NewTensor(c.dt, 60, 7)
				idx, _ := accel.NewTensor(accel.Int64, 40, 7)
				fillSmall(rng, in)
				fillSmall(rng, src)
				for i := range idx.Int64s() {
					idx.Int64s()[i] = rng.Int63n(50)
				}
				cs = append(cs, selftestCase{op: "scatter_reduce",
					params: map[string]string{"dim": "0", "reduce": red, "include_self": self},
					inputs: map[string]*accel.Tensor{"input": in, "index": idx, "src": src}})
			}
		}
	}
	return cs
}

// hasParams reports whether op takes every named parameter.
func hasParams(op ops.OpSpec, names ...string) bool {
	have := map[string]bool{}
	for _, p := range op.Params {
		have[p.Name] = true
	}
	for _, n := range names {
		if !have[n] {
			return false
		}
	}
	return true
}

// fillSmall fills a tensor with small integers (exact in every dtype).
func fillSmall(rng *rand.Rand, t *accel.Tensor) {
	for i := int64(0); i < t.Len(); i++ {
		v := rng.Int63n(7) - 3
		switch t.DType() {
		case accel.Int32:
			t.Int32s()[i] = int32(v)
		case accel.Int64:
			t.Int64s()[i] = v
		case accel.Float32:
			t.Float32s()[i] = float32(v)
		case accel.Float64:
			t.Float64s()[i] = float64(v)
		}
	}
}

func cmdSelftest(args []string) int {
	fs := newFlagSet("selftest", `accel selftest [--backend B]... [--device SEL] [--quick=false]
What `+"`make run`"+` calls: lists the devices, runs every self-test case of every
op on each device and on the scalar reference and compares the outputs bit
for bit (a pass/fail table), then prints a short speed table. Without
--backend, opencl and vulkan are tried and a backend with no device is
skipped with a note. Exit status 1 if anything failed or no device was
tested.`)
	var backends multi
	fs.Var(&backends, "backend", "opencl or vulkan (repeatable; default both)")
	device := fs.String("device", "", "device selector: opencl:0, vulkan:llvmpipe, or an index/name for each --backend")
	quick := fs.Bool("quick", true, "quick speed table (--quick=false for the full bench cases)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return flagExit(err)
	}
	if len(pos) > 0 {
		fmt.Fprintf(os.Stderr, "accel selftest: unexpected argument %q\n", pos[0])
		return 2
	}
	for _, b := range backends {
		if b != host.OpenCL && b != host.Vulkan {
			fmt.Fprintf(os.Stderr, "accel selftest: --backend %q: must be opencl or vulkan\n", b)
			return 2
		}
	}
	chosen, explicit := chooseBackends(backends, *device)
	fmt.Println("== devices")
	cmdDevices(nil)
	fmt.Println("\n== every op (families tri, diag, scatter, prim, sparse, indice) on every device")
	cases := append(selftestCases(), selftestFuzzCases(60)...)
	// The reference outputs, computed once for every device.
	type refResult struct {
		out map[string]*accel.Tensor
		err error
	}
	refs := make([]refResult, len(cases))
	for i, c := range cases {
		refs[i].out, refs[i].err = ops.Run(nil, c.op, c.params, c.inputs)
	}
	type tally struct{ pass, fail int }
	results := map[string]map[string]*tally{}
	var order, tested []string
	names := map[string]string{}
	failed := 0
	for _, b := range chosen {
		dev, err := openFor(b, *device)
		if err != nil {
			if explicit {
				fmt.Printf("FAIL %s: no device: %v\n", b, err)
				failed++
			} else {
				fmt.Fprintf(os.Stderr, "note: %s skipped: %v\n", b, err)
			}
			continue
		}
		id := b + " " + dev.Info().ID()
		tested = append(tested, id)
		names[id] = dev.String()
		for i, c := range cases {
			if results[c.op] == nil {
				results[c.op] = map[string]*tally{}
				order = append(order, c.op)
			}
			if results[c.op][id] == nil {
				results[c.op][id] = &tally{}
			}
			got, gerr := ops.Run(dev, c.op, c.params, c.inputs)
			why := ""
			if c.fz == nil {
				why = sameResult(got, gerr, refs[i].out, refs[i].err)
			} else if gerr != nil || refs[i].err != nil {
				why = sameResult(nil, gerr, nil, refs[i].err) // both rejected, or why not
			} else if err := fuzzgen.Compare(*c.fz, refs[i].out, got); err != nil {
				why = err.Error()
			}
			if why == "" {
				results[c.op][id].pass++
			} else {
				results[c.op][id].fail++
				failed++
				fmt.Printf("FAIL %s on %s %v: %s\n", c.op, dev.Info().ID(), c.params, why)
			}
		}
		dev.Close()
	}
	sort.Strings(order)
	w := tabwriter.NewWriter(os.Stdout, 2, 4, 2, ' ', 0)
	head := "op\tcases"
	for _, id := range tested {
		_, d, _ := strings.Cut(id, " ")
		head += "\t" + d
	}
	fmt.Fprintln(w, head)
	for _, op := range order {
		line, n := op, 0
		for _, id := range tested {
			t := results[op][id]
			res := "-"
			if t != nil {
				n = max(n, t.pass+t.fail)
				res = "pass"
				if t.fail > 0 {
					res = fmt.Sprintf("FAIL %d", t.fail)
				}
			}
			line += "\t" + res
		}
		_, rest, _ := strings.Cut(line, op)
		fmt.Fprintf(w, "%s\t%d%s\n", op, n, rest)
	}
	w.Flush()
	fmt.Printf("%d ops checked (pass: every case's outputs equal the reference's: bit for bit,\n"+
		"or within the op's documented tolerance for float sums and means):\n", len(order))
	for _, id := range tested {
		fmt.Printf("  %s\n", names[id])
	}
	if len(tested) == 0 {
		fmt.Println("selftest: no device to test")
		return 1
	}
	fmt.Println("\n== speed (warm medians; the legend follows the table)")
	var benchBackends []string
	for _, id := range tested {
		b, _, _ := strings.Cut(id, " ")
		benchBackends = append(benchBackends, b)
	}
	rs, code := benchAll(benchBackends, *device, bench.Options{Quick: *quick, Reps: 3})
	printBenchTable(rs)
	if failed > 0 || code != 0 {
		fmt.Printf("\nselftest: %d failures\n", failed+code)
		return 1
	}
	fmt.Println("\nselftest: all passed")
	return 0
}

// sameResult compares a device's outcome with the reference's: both
// rejected, or the same outputs (names, dtypes, shapes and bytes). It
// returns "" when they agree, else why not.
func sameResult(got map[string]*accel.Tensor, gerr error, want map[string]*accel.Tensor, werr error) string {
	switch {
	case gerr != nil && werr != nil:
		return ""
	case gerr != nil:
		return fmt.Sprintf("device error %v, reference succeeded", gerr)
	case werr != nil:
		return fmt.Sprintf("device succeeded, reference error %v", werr)
	}
	if len(got) != len(want) {
		return fmt.Sprintf("%d outputs, reference %d", len(got), len(want))
	}
	for name, w := range want {
		g := got[name]
		switch {
		case g == nil:
			return "no output " + name
		case g.DType() != w.DType() || fmt.Sprint(g.Shape()) != fmt.Sprint(w.Shape()):
			return fmt.Sprintf("%s: %s %v, reference %s %v", name, g.DType(), g.Shape(), w.DType(), w.Shape())
		case !bytes.Equal(g.Bytes(), w.Bytes()):
			return name + ": values differ from the reference"
		}
	}
	return ""
}
