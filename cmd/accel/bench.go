package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"text/tabwriter"

	"github.com/accelkern/accel/accel"
	"github.com/accelkern/accel/host"
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
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	var ops, backends multi
	fs.Var(&ops, "op", "op to measure (repeatable; default all)")
	fs.Var(&backends, "backend", "opencl or vulkan (repeatable; default both)")
	device := fs.String("device", "", "device selector")
	reps := fs.Int("reps", 5, "warm runs per case")
	quick := fs.Bool("quick", false, "small cases only")
	asJSON := fs.Bool("json", false, "print a JSON array of results")
	if _, err := parseInterspersed(fs, args); err != nil {
		return 2
	}
	results, code := bench(backends, *device, accel.BenchOptions{Ops: ops, Reps: *reps, Quick: *quick})
	if *asJSON {
		if results == nil {
			results = []accel.BenchResult{}
		}
		if c := printJSON(results); c != 0 {
			return c
		}
		return code
	}
	printBenchTable(results)
	return code
}

func bench(backends []string, device string, opts accel.BenchOptions) ([]accel.BenchResult, int) {
	if len(backends) == 0 {
		backends = []string{host.OpenCL, host.Vulkan}
	}
	refCache := map[string]float64{}
	var all []accel.BenchResult
	code := 0
	for _, b := range backends {
		dev, err := openBackend(b, device)
		if err != nil {
			fmt.Fprintf(os.Stderr, "note: %s skipped: %v\n", b, err)
			continue
		}
		if dev == nil {
			continue
		}
		rs, err := accel.Bench(dev, opts, refCache)
		all = append(all, rs...)
		dev.Close()
		if err != nil {
			fmt.Fprintf(os.Stderr, "accel bench: %s: %v\n", b, err)
			code = 1
		}
	}
	return all, code
}

func printBenchTable(rs []accel.BenchResult) {
	w := tabwriter.NewWriter(os.Stdout, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "op\tcase\tbackend\tdevice\tmedian ms\tGB/s\tcopy GB/s\t% copy\tref ms\tspeed-up\tcold ms\t")
	for _, r := range rs {
		fmt.Fprintf(w, "%s\t%s\t%s\t%.24s\t%.2f\t%.1f\t%.1f\t%.0f%%\t%.2f\t%.1fx\t%.1f\t\n", r.Op, r.Case, r.Backend, r.Device,
			r.MedianS*1e3, r.GBps, r.CopyGBps, 100*r.FracCopy, r.RefMedianS*1e3, r.Speedup, r.ColdS*1e3)
	}
	w.Flush()
}

// selftestCase is one op invocation the self-test runs on every device and
// on the reference, comparing outputs bit for bit.
type selftestCase struct {
	op     string
	params map[string]string
	inputs map[string]*accel.Tensor
}

func selftestCases() []selftestCase {
	var cs []selftestCase
	for _, op := range []string{"tril_indices", "triu_indices"} {
		for _, s := range [][3]int64{{0, 0, 0}, {1, 1, 0}, {3, 3, 0}, {4, 3, -1}, {3, 4, 1}, {100, 57, -20}, {1000, 1000, 0}, {2000, 1500, 7}} {
			for _, dt := range []string{"int32", "int64"} {
				cs = append(cs, selftestCase{op: op, params: map[string]string{
					"row": fmt.Sprint(s[0]), "col": fmt.Sprint(s[1]), "offset": fmt.Sprint(s[2]), "dtype": dt}})
			}
		}
	}
	rng := rand.New(rand.NewSource(1))
	for _, c := range []struct {
		shape           []int64
		src             []int64
		off, dim1, dim2 int64
	}{
		{[]int64{4, 4}, []int64{4}, 0, 0, 1}, {[]int64{3, 5}, []int64{3}, 1, 0, 1}, {[]int64{2, 3, 4}, []int64{4, 2}, -1, 0, 1},
		{[]int64{64, 32, 32}, []int64{64, 32}, 0, -2, -1}, {[]int64{5, 3}, []int64{2}, 1, 1, 0},
	} {
		for _, dt := range []accel.DType{accel.Float32, accel.Float64, accel.Int32, accel.Int64} {
			in, _ := accel.NewTensor(dt, c.shape...)
			rng.Read(in.Bytes())
			src, _ := accel.NewTensor(dt, c.src...)
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
	fs := flag.NewFlagSet("selftest", flag.ContinueOnError)
	var backends multi
	fs.Var(&backends, "backend", "opencl or vulkan (repeatable; default both)")
	device := fs.String("device", "", "device selector")
	quick := fs.Bool("quick", true, "quick speed table")
	if _, err := parseInterspersed(fs, args); err != nil {
		return 2
	}
	if len(backends) == 0 {
		backends = []string{host.OpenCL, host.Vulkan}
	}
	fmt.Println("== devices")
	cmdDevices(nil)
	fmt.Println("\n== every op on every device against the scalar reference")
	cases := selftestCases()
	type tally struct{ pass, fail int }
	results := map[string]map[string]*tally{}
	var order []string
	failed := 0
	for _, b := range backends {
		dev, err := openBackend(b, *device)
		if err != nil {
			fmt.Printf("%s: no device (%v)\n", b, err)
			failed++
			continue
		}
		for _, c := range cases {
			if results[c.op] == nil {
				results[c.op] = map[string]*tally{}
				order = append(order, c.op)
			}
			if results[c.op][b] == nil {
				results[c.op][b] = &tally{}
			}
			want, werr := accel.RunOp(nil, c.op, c.params, c.inputs)
			got, gerr := accel.RunOp(dev, c.op, c.params, c.inputs)
			ok := (werr == nil) == (gerr == nil)
			if ok && werr == nil {
				for name, w := range want {
					g := got[name]
					ok = ok && g != nil && g.DType() == w.DType() && fmt.Sprint(g.Shape()) == fmt.Sprint(w.Shape()) && bytes.Equal(g.Bytes(), w.Bytes())
				}
			}
			if ok {
				results[c.op][b].pass++
			} else {
				results[c.op][b].fail++
				failed++
				fmt.Printf("FAIL %s %s %v: device err %v, reference err %v\n", c.op, b, c.params, gerr, werr)
			}
		}
		dev.Close()
	}
	w := tabwriter.NewWriter(os.Stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(w, "op\tbackend\tcases\tresult")
	for _, op := range order {
		for _, b := range backends {
			t := results[op][b]
			if t == nil {
				continue
			}
			res := "pass"
			if t.fail > 0 {
				res = fmt.Sprintf("FAIL (%d)", t.fail)
			}
			fmt.Fprintf(w, "%s\t%s\t%d\t%s\n", op, b, t.pass+t.fail, res)
		}
	}
	w.Flush()
	fmt.Println("\n== speed (kernel median, warm; the device's own copy bandwidth and the scalar reference in the same run)")
	rs, code := bench(backends, *device, accel.BenchOptions{Quick: *quick, Reps: 3})
	printBenchTable(rs)
	if failed > 0 || code != 0 {
		fmt.Printf("\nselftest: %d failures\n", failed)
		return 1
	}
	fmt.Println("\nselftest: all passed")
	return 0
}
