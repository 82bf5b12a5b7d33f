package main

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/accelkern/accel/accel"
)

// First-call latency: how long a fresh process takes to open a device and
// get the first result of an op, with the drivers' disk caches (PoCL's
// kernel cache, Mesa's shader cache, both under $XDG_CACHE_HOME) empty
// ("cold") and filled by a run before ("warm"). `accel bench --first-call`
// runs `accel firstcall` as a child process twice per backend, with
// XDG_CACHE_HOME set to a new empty directory.

// firstCall is what one child process measured.
type firstCall struct {
	Backend  string  `json:"backend"`
	Device   string  `json:"device"`
	Cache    string  `json:"cache"`     // "cold" or "warm" driver disk caches
	Op       string  `json:"op"`        // the op timed
	ProcessS float64 `json:"process_s"` // the child process's wall time, start to exit
	OpenS    float64 `json:"open_s"`    // accel.Open
	FirstS   float64 `json:"first_s"`   // the first call: upload, the op, ToHost (kernels compiled here)
	SecondS  float64 `json:"second_s"`  // the same call again (kernels cached)
	Compiles int64   `json:"compiles"`  // kernels built by the first call
	CompileS float64 `json:"compile_s"` // the time spent building them
}

// firstCallOp is the op the child times: scatter_reduce (sum) of 1M
// float32 values into 64K targets, the quick bench case.
const firstCallOp = "scatter_reduce rand1M_64K_sum"

// cmdFirstCall is the child: `accel firstcall --backend B [--device SEL]`
// prints one firstCall as JSON.
func cmdFirstCall(args []string) int {
	fs := newFlagSet("firstcall", `accel firstcall --backend opencl|vulkan [--device SEL]
(internal to bench --first-call) Opens the device, runs one op twice in this
fresh process and prints the timings as JSON.`)
	backend := fs.String("backend", "opencl", "opencl or vulkan")
	device := fs.String("device", "", "device selector")
	if _, err := parseInterspersed(fs, args); err != nil {
		return flagExit(err)
	}
	t0 := time.Now()
	dev, err := accel.Open(selector(*backend, *device))
	if err != nil {
		fmt.Fprintln(os.Stderr, "accel firstcall:", err)
		return 1
	}
	defer dev.Close()
	r := firstCall{Backend: dev.Info().Backend, Device: dev.Info().Name, Op: firstCallOp, OpenS: time.Since(t0).Seconds()}
	rng := rand.New(rand.NewSource(7))
	const n, targets = 1 << 20, 64 << 10
	in, _ := accel.NewTensor(accel.Float32, targets)
	src, _ := accel.NewTensor(accel.Float32, n)
	idx, _ := accel.NewTensor(accel.Int64, n)
	for i := range src.Float32s() {
		src.Float32s()[i] = rng.Float32()
		idx.Int64s()[i] = rng.Int63n(targets)
	}
	call := func() error {
		var ts [3]*accel.DeviceTensor
		for i, h := range []*accel.Tensor{in, idx, src} {
			if ts[i], err = dev.Upload(h); err != nil {
				return err
			}
			defer ts[i].Release()
		}
		out, err := dev.ScatterReduce(ts[0], 0, ts[1], ts[2], accel.Sum, true)
		if err != nil {
			return err
		}
		defer out.Release()
		_, err = out.ToHost()
		return err
	}
	s0 := dev.Stats()
	t1 := time.Now()
	if err := call(); err != nil {
		fmt.Fprintln(os.Stderr, "accel firstcall:", err)
		return 1
	}
	r.FirstS = time.Since(t1).Seconds()
	s := dev.Stats().Sub(s0)
	r.Compiles, r.CompileS = s.Compiles, float64(s.CompileNs)/1e9
	t2 := time.Now()
	if err := call(); err != nil {
		fmt.Fprintln(os.Stderr, "accel firstcall:", err)
		return 1
	}
	r.SecondS = time.Since(t2).Seconds()
	return printJSON(r)
}

// firstCalls runs the child twice per backend (cold, then warm driver
// caches in one new cache directory) and returns what they measured.
func firstCalls(backends []string, device string) ([]firstCall, int) {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "accel bench:", err)
		return nil, 1
	}
	if len(backends) == 0 {
		backends = []string{"opencl", "vulkan"}
	}
	var out []firstCall
	code := 0
	for _, b := range backends {
		dir, err := os.MkdirTemp("", "accel-firstcall-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "accel bench:", err)
			return out, 1
		}
		for _, cache := range []string{"cold", "warm"} {
			cmd := exec.Command(self, "firstcall", "--backend", b, "--device", device)
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
				fmt.Fprintf(os.Stderr, "accel bench: first call on %s (%s caches): %v\n", b, cache, err)
				code = 1
				break
			}
			r.Cache, r.ProcessS = cache, wall
			out = append(out, r)
		}
		os.RemoveAll(dir)
	}
	return out, code
}

func printFirstCalls(rs []firstCall) {
	w := tabwriter.NewWriter(os.Stdout, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "backend\tdevice\tdriver cache\tprocess ms\topen ms\tfirst call ms\tsecond call ms\tcompiles\tcompile ms\t")
	for _, r := range rs {
		fmt.Fprintf(w, "%s\t%.24s\t%s\t%.0f\t%.0f\t%.1f\t%.1f\t%d\t%.0f\t\n", r.Backend, r.Device, r.Cache,
			r.ProcessS*1e3, r.OpenS*1e3, r.FirstS*1e3, r.SecondS*1e3, r.Compiles, r.CompileS*1e3)
	}
	w.Flush()
}
