package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/accelkern/accel/accel"
)

// The peer cases under testdata/peer-cases (computed by PyTorch and NumPy,
// see its README) pass through `accel run`, one process per case and once
// as a batch, on the reference and on each device backend.

type manifest struct {
	Op          string                 `json:"op"`
	Params      map[string]interface{} `json:"params"`
	Inputs      []string               `json:"inputs"`
	Outputs     []string               `json:"outputs"`
	ExpectError bool                   `json:"expect_error"`
	Tolerance   struct {
		Rtol, Atol float64
	} `json:"tolerance"`
}

// buildAccel builds the CLI into a temporary folder, or returns $ACCEL_BIN
// when set (a prebuilt binary, for machines without a Go toolchain).
func buildAccel(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("ACCEL_BIN"); bin != "" {
		return bin
	}
	bin := filepath.Join(t.TempDir(), "accel")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func peerCases(t *testing.T) map[string]manifest {
	t.Helper()
	root := "../../testdata/peer-cases"
	dirs, _ := filepath.Glob(filepath.Join(root, "*", "*", "manifest.json"))
	if len(dirs) == 0 {
		t.Fatal("no peer cases under testdata/peer-cases")
	}
	cases := map[string]manifest{}
	for _, m := range dirs {
		data, err := os.ReadFile(m)
		if err != nil {
			t.Fatal(err)
		}
		var mf manifest
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		if err := dec.Decode(&mf); err != nil {
			t.Fatalf("%s: %v", m, err)
		}
		cases[filepath.Dir(m)] = mf
	}
	return cases
}

func (m manifest) job(dir, out string) job {
	j := job{Op: m.Op, Params: m.Params, Inputs: map[string]string{}, Out: out}
	for _, in := range m.Inputs {
		j.Inputs[in] = filepath.Join(dir, "in_"+in+".npy")
	}
	return j
}

func (m manifest) args(dir, out, backend string) []string {
	a := []string{"run", m.Op, "--backend", backend, "--out", out}
	keys := make([]string, 0, len(m.Params))
	for k := range m.Params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		s, _ := paramString(m.Params[k])
		a = append(a, "--param", k+"="+s)
	}
	for _, in := range m.Inputs {
		a = append(a, "--in", in+"="+filepath.Join(dir, "in_"+in+".npy"))
	}
	return a
}

// checkCase compares out with the case's expectations.
func checkCase(dir string, m manifest, out string) error {
	arrays, _ := filepath.Glob(filepath.Join(out, "*.npy"))
	if m.ExpectError {
		if _, err := os.Stat(filepath.Join(out, "error.txt")); err != nil {
			return fmt.Errorf("want a rejection (error.txt), got none")
		}
		if len(arrays) > 0 {
			return fmt.Errorf("rejected case wrote arrays %v", arrays)
		}
		return nil
	}
	if msg, err := os.ReadFile(filepath.Join(out, "error.txt")); err == nil {
		return fmt.Errorf("unexpected error: %s", msg)
	}
	for _, name := range m.Outputs {
		want, err := readNpy(filepath.Join(dir, "want_"+name+".npy"))
		if err != nil {
			return err
		}
		got, err := readNpy(filepath.Join(out, name+".npy"))
		if err != nil {
			return err
		}
		if got.DType() != want.DType() || fmt.Sprint(got.Shape()) != fmt.Sprint(want.Shape()) {
			return fmt.Errorf("%s: got %s, want %s", name, got, want)
		}
		if !closeEnough(got, want, m.Tolerance.Rtol, m.Tolerance.Atol) {
			return fmt.Errorf("%s: values differ", name)
		}
	}
	return nil
}

func closeEnough(got, want *accel.Tensor, rtol, atol float64) bool {
	if bytes.Equal(got.Bytes(), want.Bytes()) {
		return true
	}
	var g, w []float64
	switch want.DType() {
	case accel.Float32:
		for i, v := range want.Float32s() {
			w = append(w, float64(v))
			g = append(g, float64(got.Float32s()[i]))
		}
	case accel.Float64:
		g, w = got.Float64s(), want.Float64s()
	default:
		return false // integers are exact
	}
	for i := range w {
		if math.IsNaN(w[i]) && math.IsNaN(g[i]) {
			continue
		}
		if math.Abs(g[i]-w[i]) > atol+rtol*math.Abs(w[i]) {
			return false
		}
	}
	return true
}

// pythonWithNumPy returns a python3 that can import numpy, or "".
func pythonWithNumPy() string {
	for _, py := range []string{"python3", "/usr/bin/python3"} {
		if exec.Command(py, "-c", "import numpy").Run() == nil {
			return py
		}
	}
	return ""
}

// requireDevice skips (or, under CI=true, fails) when backend has no
// device; the reference always runs.
func requireDevice(t *testing.T, backend string) {
	t.Helper()
	if backend == "reference" {
		return
	}
	d, err := accel.Open(backend)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no %s device in CI: %v", backend, err)
		}
		t.Skipf("no %s device: %v", backend, err)
	}
	d.Close()
}

func TestPeerCasesThroughCLI(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("linux only")
	}
	bin := buildAccel(t)
	cases := peerCases(t)
	dirs := make([]string, 0, len(cases))
	for dir := range cases {
		dirs = append(dirs, dir)
	}
	sort.Strings(dirs)
	py := pythonWithNumPy()
	if py == "" {
		t.Log("python3 with numpy not found: check.py is not run (apt-get install python3-numpy)")
	}
	caseName := func(dir string) string { return filepath.Base(filepath.Dir(dir)) + "/" + filepath.Base(dir) }
	env := append(os.Environ(), "ACCEL_VK_VALIDATION=1")
	for _, backend := range []string{"reference", "opencl", "vulkan"} {
		t.Run(backend, func(t *testing.T) {
			requireDevice(t, backend)
			outRoot := t.TempDir()
			// One process per case, a few at a time: each pays the
			// driver's start-up, which dominates on the CPU drivers.
			sem := make(chan struct{}, 4)
			var wg sync.WaitGroup
			for _, dir := range dirs {
				m, name := cases[dir], caseName(dir)
				wg.Add(1)
				sem <- struct{}{}
				go func() {
					defer func() { <-sem; wg.Done() }()
					out := filepath.Join(outRoot, "single", name)
					cmd := exec.Command(bin, m.args(dir, out, backend)...)
					cmd.Env = env
					output, err := cmd.CombinedOutput()
					if (err != nil) != m.ExpectError {
						t.Errorf("%s: exit %v, expect_error %v\n%s", name, err, m.ExpectError, output)
						return
					}
					if err := checkCase(dir, m, out); err != nil {
						t.Errorf("%s (single run): %v", name, err)
					}
				}()
			}
			wg.Wait()
			var jobs []string
			for _, dir := range dirs {
				line, err := json.Marshal(cases[dir].job(dir, filepath.Join(outRoot, "batch", caseName(dir))))
				if err != nil {
					t.Fatal(err)
				}
				jobs = append(jobs, string(line))
			}
			batch := filepath.Join(outRoot, "jobs.jsonl")
			if err := os.WriteFile(batch, []byte(strings.Join(jobs, "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(bin, "run", "--batch", batch, "--backend", backend)
			cmd.Env = env
			output, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("batch: %v\n%s", err, output)
			}
			summary := fmt.Sprintf("%d jobs: ", len(dirs))
			if !strings.Contains(string(output), summary) || !strings.Contains(string(output), " 0 failed") {
				t.Errorf("batch summary: want %q... 0 failed, got\n%s", summary, output)
			}
			for _, dir := range dirs {
				if err := checkCase(dir, cases[dir], filepath.Join(outRoot, "batch", caseName(dir))); err != nil {
					t.Errorf("%s (batch): %v", caseName(dir), err)
				}
			}
			// The peers' own checker, where NumPy is installed.
			if py != "" {
				impl := filepath.Join(outRoot, "batch")
				out, err := exec.Command(py, "../../testdata/peer-cases/check.py", "--all", "../../testdata/peer-cases", impl).CombinedOutput()
				want := fmt.Sprintf("%d passed, 0 failed", len(dirs))
				if err != nil || !strings.Contains(string(out), want) {
					t.Errorf("check.py: want %q, got %v\n%s", want, err, out)
				}
			}
		})
	}
}
