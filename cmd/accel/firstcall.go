package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/accelkern/accel/accel"
	"github.com/accelkern/accel/cmd/accel/internal/bench"
)

// First-call latency: how long a fresh process takes to open a device and
// get the first result of an op, with the drivers' disk caches (PoCL's
// kernel cache, Mesa's shader cache, ours, all under $XDG_CACHE_HOME)
// empty ("cold") and filled by a run before ("warm"). `accel bench
// --first-call` runs `accel firstcall` as a child process, with
// XDG_CACHE_HOME set to a new empty directory and then again with the
// same one: for each op with bench cases alone (its first quick case),
// and for a whole program that calls every one of them in one process,
// with and without Device.Warm of its ops first.

// firstCall is what one child process measured.
type firstCall struct {
	Run      int     `json:"run"` // the round of --runs that measured it, from 0
	Backend  string  `json:"backend"`
	Device   string  `json:"device"`
	Cache    string  `json:"cache"` // "cold" or "warm" driver disk caches
	Mode     string  `json:"mode"`  // "op": one op in its own process; "program": every op in one process
	Warmed   bool    `json:"warmed"`
	Op       string  `json:"op"`        // mode op: the op and case timed
	ProcessS float64 `json:"process_s"` // the child process's wall time, start to exit
	OpenS    float64 `json:"open_s"`    // accel.Open
	// WarmS is Device.Warm of the ops timed (Warmed), after Open and
	// before any input is made; WarmCompiles the kernels it built.
	WarmS        float64 `json:"warm_s,omitempty"`
	WarmCompiles int64   `json:"warm_compiles,omitempty"`
	// FirstS is the first call (mode program: the first calls of every
	// op, added up): the op and a read back or Sync, its inputs already on
	// the device; the kernels it builds are built here.
	FirstS   float64 `json:"first_s"`
	SecondS  float64 `json:"second_s,omitempty"` // mode op: the same call again (kernels cached)
	Compiles int64   `json:"compiles"`           // kernels built by the first call(s)
	CompileS float64 `json:"compile_s"`          // the time spent building them (summed over concurrent builds)
	// ProgramS is the child's wall time from before Open to the end of
	// its last call, input set-up included.
	ProgramS float64   `json:"program_s"`
	Calls    []opFirst `json:"calls,omitempty"` // mode program: each op's first call
}

// opFirst is one op's first call in a whole program.
type opFirst struct {
	Op       string  `json:"op"`
	FirstS   float64 `json:"first_s"`
	Compiles int64   `json:"compiles"`
}

// cmdFirstCall is the child: `accel firstcall --backend B [--device SEL]
// [--op OP]... [--warm]` prints one firstCall as JSON.
func cmdFirstCall(args []string) int {
	fs := newFlagSet("firstcall", `accel firstcall --backend opencl|vulkan [--device SEL] [--op OP]... [--warm]
(internal to bench --first-call) Opens the device, runs the first quick bench
case of each --op (default scatter_reduce; "all": every op with bench cases)
in this fresh process, after Device.Warm of those ops with --warm, and
prints the timings as JSON. With one op it runs it twice.`)
	backend := fs.String("backend", "opencl", "opencl or vulkan")
	device := fs.String("device", "", "device selector")
	var opNames multi
	fs.Var(&opNames, "op", `op to time (repeatable; "all": every op with bench cases)`)
	warm := fs.Bool("warm", false, "Device.Warm the ops after Open")
	if _, err := parseInterspersed(fs, args); err != nil {
		return flagExit(err)
	}
	cases, err := firstCases(opNames)
	if err != nil {
		fmt.Fprintln(os.Stderr, "accel firstcall:", err)
		return 2
	}
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "accel firstcall:", err)
		return 1
	}
	t0 := time.Now()
	dev, err := accel.Open(selector(*backend, *device))
	if err != nil {
		return fail(err)
	}
	defer dev.Close()
	r := firstCall{Backend: dev.Info().Backend, Device: dev.Info().Name, Mode: "op", Warmed: *warm, OpenS: time.Since(t0).Seconds()}
	if len(cases) > 1 {
		r.Mode = "program"
	} else {
		r.Op = cases[0].Op + " " + cases[0].Case
	}
	if *warm {
		s0, tw := dev.Stats(), time.Now()
		if err := dev.Warm(warmNames(cases)...); err != nil {
			return fail(err)
		}
		r.WarmS, r.WarmCompiles = time.Since(tw).Seconds(), dev.Stats().Sub(s0).Compiles
	}
	for _, c := range cases {
		call, done, err := c.Setup(dev)
		if err != nil {
			return fail(fmt.Errorf("%s %s: %w", c.Op, c.Case, err))
		}
		s0, t1 := dev.Stats(), time.Now()
		if err := call(); err != nil {
			done()
			return fail(fmt.Errorf("%s %s: %w", c.Op, c.Case, err))
		}
		first := time.Since(t1).Seconds()
		s := dev.Stats().Sub(s0)
		r.FirstS += first
		r.Compiles += s.Compiles
		r.CompileS += float64(s.CompileNs) / 1e9
		if r.Mode == "program" {
			r.Calls = append(r.Calls, opFirst{Op: c.Op + " " + c.Case, FirstS: first, Compiles: s.Compiles})
		} else {
			t2 := time.Now()
			if err := call(); err != nil {
				done()
				return fail(fmt.Errorf("%s %s: %w", c.Op, c.Case, err))
			}
			r.SecondS = time.Since(t2).Seconds()
		}
		done()
	}
	r.ProgramS = time.Since(t0).Seconds()
	return printJSON(r)
}

// warmNames returns the ops of cases that Device.Warm takes (the hash
// table is no op of Warm's).
func warmNames(cases []bench.FirstCase) []string {
	var names []string
	for _, c := range cases {
		if slices.Contains(accel.WarmOps(), c.Op) {
			names = append(names, c.Op)
		}
	}
	return names
}

// firstCases returns the bench cases of the named ops (default
// scatter_reduce; "all": every one).
func firstCases(names []string) ([]bench.FirstCase, error) {
	all := bench.FirstCases()
	if len(names) == 0 {
		names = []string{"scatter_reduce"}
	}
	var out []bench.FirstCase
	for _, n := range names {
		found := false
		for _, c := range all {
			if n == "all" || c.Op == n {
				out, found = append(out, c), true
			}
		}
		if !found {
			return nil, fmt.Errorf("no bench case for op %q", n)
		}
	}
	return out, nil
}

// firstCalls runs the children, runs rounds over every backend: for each
// op (ops, default every op with bench cases) one child with cold driver
// caches and one warm, in a new cache directory per op; then the whole
// program the same way, without and with Warm.
func firstCalls(backends []string, device string, ops []string, runs int) ([]firstCall, int) {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "accel bench:", err)
		return nil, 1
	}
	if len(backends) == 0 {
		backends = []string{"opencl", "vulkan"}
	}
	cases, err := firstCases(append([]string(nil), ops...))
	if len(ops) == 0 {
		cases, err = firstCases([]string{"all"})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "accel bench:", err)
		return nil, 2
	}
	var out []firstCall
	code := 0
	// pair runs a child cold and then warm in a new cache directory.
	pair := func(run int, b string, args ...string) bool {
		dir, err := os.MkdirTemp("", "accel-firstcall-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "accel bench:", err)
			return false
		}
		defer os.RemoveAll(dir)
		for _, cache := range []string{"cold", "warm"} {
			cmd := exec.Command(self, append([]string{"firstcall", "--backend", b, "--device", device}, args...)...)
			cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+filepath.Join(dir, "cache"))
			cmd.Stderr = os.Stderr
			t0 := time.Now()
			stdout, err := cmd.Output()
			wall := time.Since(t0).Seconds()
			var r firstCall
			if err == nil {
				err = json.Unmarshal(stdout, &r)
			}
			if err != nil {
				fmt.Fprintf(os.Stderr, "accel bench: first call on %s %v (%s caches): %v\n", b, args, cache, err)
				return false
			}
			r.Run, r.Cache, r.ProcessS = run, cache, wall
			out = append(out, r)
		}
		return true
	}
	for run := 0; run < max(runs, 1); run++ {
		for _, b := range backends {
			ok := true
			for _, c := range cases {
				ok = ok && pair(run, b, "--op", c.Op)
			}
			if len(cases) > 1 {
				ok = ok && pair(run, b, "--op", "all") && pair(run, b, "--op", "all", "--warm")
			}
			if !ok {
				code = 1
			}
		}
	}
	return out, code
}

func printFirstCalls(rs []firstCall) {
	w := tabwriter.NewWriter(os.Stdout, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "run\tbackend\tdriver cache\twhat\tprocess ms\topen ms\twarm ms\tfirst call(s) ms\tsecond call ms\tcompiles\tcompile ms\t")
	for _, r := range rs {
		what := r.Op
		if r.Mode == "program" {
			what = fmt.Sprintf("program of %d ops", len(r.Calls))
			if r.Warmed {
				what += ", Warm first"
			}
		}
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%.0f\t%.0f\t%.0f\t%.1f\t%.1f\t%d\t%.0f\t\n", r.Run, r.Backend, r.Cache, what,
			r.ProcessS*1e3, r.OpenS*1e3, r.WarmS*1e3, r.FirstS*1e3, r.SecondS*1e3, r.Compiles, r.CompileS*1e3)
	}
	w.Flush()
}
