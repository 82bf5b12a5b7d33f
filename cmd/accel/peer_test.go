package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelkern/accel/accel"
	"github.com/accelkern/accel/cmd/accel/internal/ops"
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
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "go build:\n%s", out)
	return bin
}

func peerCases(t *testing.T) map[string]manifest {
	t.Helper()
	root := "../../testdata/peer-cases"
	dirs, err := filepath.Glob(filepath.Join(root, "*", "*", "manifest.json"))
	require.NoError(t, err)
	require.NotEmpty(t, dirs, "no peer cases under testdata/peer-cases")
	cases := map[string]manifest{}
	for _, m := range dirs {
		data, err := os.ReadFile(m)
		require.NoError(t, err)
		var mf manifest
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		require.NoError(t, dec.Decode(&mf), m)
		require.NotEmpty(t, mf.Op, "%s: no op", m)
		require.True(t, mf.ExpectError || len(mf.Outputs) > 0, "%s: neither outputs nor expect_error", m)
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

// checkCase checks the outputs a run left in out against the case's
// expectations: for a rejection, a non-empty error.txt and no arrays;
// otherwise no error.txt and each output as compareArrays (or the op's own
// comparison in peerComparers) checks it: the wanted dtype, shape and
// values (within the case's tolerance for floats, exact otherwise). It
// uses assert only, so it may run on any goroutine; what names the run in
// the messages.
func checkCase(t *testing.T, what, dir string, m manifest, out string) {
	t.Helper()
	arrays, err := filepath.Glob(filepath.Join(out, "*.npy"))
	if !assert.NoError(t, err, what) {
		return
	}
	msg, err := os.ReadFile(filepath.Join(out, "error.txt"))
	if m.ExpectError {
		if assert.NoError(t, err, "%s: want a rejection (error.txt), got none", what) {
			assert.NotEmpty(t, bytes.TrimSpace(msg), "%s: empty error.txt", what)
		}
		assert.Empty(t, arrays, "%s: rejected case wrote arrays", what)
		return
	}
	if !assert.ErrorIs(t, err, fs.ErrNotExist, "%s: unexpected error: %s", what, msg) {
		return
	}
	if compare, ok := peerComparers[m.Op]; ok {
		compare(t, what, dir, m, out)
	} else {
		compareArrays(t, what, dir, m, out)
	}
	// exactly the op's outputs, one array each
	var written, declared []string
	for _, a := range arrays {
		written = append(written, strings.TrimSuffix(filepath.Base(a), ".npy"))
	}
	for _, op := range ops.Ops() {
		if op.Name == m.Op {
			args := map[string]string{}
			for k, v := range m.Params {
				args[k], _ = paramString(v)
			}
			_, declared = op.IOFor(args)
		}
	}
	assert.ElementsMatch(t, declared, written, "%s: arrays written", what)
}

// peerComparers holds, per op, the comparison of a run's outputs with a
// case's expectations for ops whose peers leave an order undefined (each
// set by its op family's own _test.go file, as its manifests describe);
// the other ops' outputs are compared array by array (compareArrays).
var peerComparers = map[string]func(t *testing.T, what, dir string, m manifest, out string){}

// compareArrays checks each of the case's outputs for the wanted dtype,
// shape and values (within the case's tolerance for floats, exact
// otherwise).
func compareArrays(t *testing.T, what, dir string, m manifest, out string) {
	t.Helper()
	for _, name := range m.Outputs {
		want, err := readNpy(filepath.Join(dir, "want_"+name+".npy"))
		if !assert.NoError(t, err, "%s: %s: the case's expectation", what, name) {
			continue
		}
		got, err := readNpy(filepath.Join(out, name+".npy"))
		if !assert.NoError(t, err, "%s: %s", what, name) {
			continue
		}
		if !assert.Equal(t, want.DType(), got.DType(), "%s: %s: dtype", what, name) ||
			!assert.Equal(t, want.Shape(), got.Shape(), "%s: %s: shape", what, name) {
			continue
		}
		assert.Empty(t, mismatch(got, want, m.Tolerance.Rtol, m.Tolerance.Atol), "%s: %s: values differ", what, name)
	}
}

// mismatch compares got with want (same dtype and shape): "" when they
// have the same bytes, or, for floats, every element is within
// atol+rtol*|want| (NaN matching NaN); otherwise the first element that
// differs. Integers and bools are exact.
func mismatch(got, want *accel.Tensor, rtol, atol float64) string {
	if bytes.Equal(got.Bytes(), want.Bytes()) {
		return ""
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
		return fmt.Sprintf("%s values differ (integers are exact)", want.DType())
	}
	for i := range w {
		if (math.IsNaN(w[i]) && math.IsNaN(g[i])) || g[i] == w[i] { // NaN matches NaN, inf the same inf
			continue
		}
		if !(math.Abs(g[i]-w[i]) <= atol+rtol*math.Abs(w[i])) {
			return fmt.Sprintf("element %d: got %v, want %v (rtol %g, atol %g)", i, g[i], w[i], rtol, atol)
		}
	}
	return ""
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
			require.NoError(t, err, "no %s device in CI", backend)
		}
		t.Skipf("no %s device: %v", backend, err)
	}
	require.NoError(t, d.Close())
}

// exitCode is a finished command's exit status (0 for a nil error); an
// error that is not an exit status fails the test.
func exitCode(t assert.TestingT, err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	assert.Fail(t, "command did not run", "%v", err)
	return -1
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
	env := append(slices.DeleteFunc(os.Environ(), func(e string) bool { return strings.HasPrefix(e, "ACCEL_GPU_PLANS=") }),
		"ACCEL_VK_VALIDATION=1")
	for _, backend := range []string{"reference", "opencl", "vulkan"} {
		t.Run(backend, func(t *testing.T) {
			requireDevice(t, backend)
			outRoot := t.TempDir()
			// One process per case, a few at a time: each pays the
			// driver's start-up, which dominates on the CPU drivers. The
			// goroutines report with assert only.
			sem := make(chan struct{}, 4)
			var wg sync.WaitGroup
			for _, dir := range dirs {
				m, name := cases[dir], peerCaseName(dir)
				wg.Add(1)
				sem <- struct{}{}
				go func() {
					defer func() { <-sem; wg.Done() }()
					out := filepath.Join(outRoot, "single", name)
					cmd := exec.Command(bin, m.args(dir, out, backend)...)
					cmd.Env = env
					output, err := cmd.CombinedOutput()
					// 0 with the outputs, 1 for a rejected input
					want := 0
					if m.ExpectError {
						want = 1
					}
					if !assert.Equal(t, want, exitCode(t, err), "%s: exit status (expect_error %v)\n%s", name, m.ExpectError, output) {
						return
					}
					checkCase(t, name+" (single run)", dir, m, out)
				}()
			}
			wg.Wait()
			peerBatch(t, bin, backend, env, outRoot, cases, dirs, py)
		})
	}
	// The same cases with every op planned as for a discrete GPU
	// (ACCEL_GPU_PLANS=1), as a batch: the GPU paths (atomics, tiled sorts
	// with look-back, the GPU splits and partitions) against the peers on
	// the CPU drivers.
	for _, backend := range []string{"opencl", "vulkan"} {
		t.Run(backend+"/gpu-plans", func(t *testing.T) {
			requireDevice(t, backend)
			peerBatch(t, bin, backend, append(env, "ACCEL_GPU_PLANS=1"), t.TempDir(), cases, dirs, py)
		})
	}
}

// peerBatch runs the peer cases in dirs as one `accel run --batch` on
// backend, with env, into outRoot/batch, and checks each case's outputs
// and the peers' own checker (where py, a python3 with NumPy, is set).
func peerBatch(t *testing.T, bin, backend string, env []string, outRoot string, cases map[string]manifest, dirs []string, py string) {
	t.Helper()
	rejections := 0
	for _, dir := range dirs {
		if cases[dir].ExpectError {
			rejections++
		}
	}
	var jobs []string
	for _, dir := range dirs {
		line, err := json.Marshal(cases[dir].job(dir, filepath.Join(outRoot, "batch", peerCaseName(dir))))
		require.NoError(t, err)
		jobs = append(jobs, string(line))
	}
	batch := filepath.Join(outRoot, "jobs.jsonl")
	require.NoError(t, os.WriteFile(batch, []byte(strings.Join(jobs, "\n")+"\n"), 0o644))
	cmd := exec.Command(bin, "run", "--batch", batch, "--backend", backend)
	cmd.Env = env
	output, err := cmd.CombinedOutput()
	require.NoError(t, err, "batch:\n%s", output)
	summary := fmt.Sprintf("%d jobs: %d ok, %d rejected, 0 failed", len(dirs), len(dirs)-rejections, rejections)
	assert.Contains(t, string(output), summary, "batch summary")
	for _, dir := range dirs {
		checkCase(t, peerCaseName(dir)+" (batch)", dir, cases[dir], filepath.Join(outRoot, "batch", peerCaseName(dir)))
	}
	// The peers' own checker, where NumPy is installed.
	if py != "" {
		impl := filepath.Join(outRoot, "batch")
		out, err := exec.Command(py, "../../testdata/peer-cases/check.py", "--all", "../../testdata/peer-cases", impl).CombinedOutput()
		want := fmt.Sprintf("%d passed, 0 failed", len(dirs))
		assert.NoError(t, err, "check.py:\n%s", out)
		assert.Contains(t, string(out), want, "check.py")
	}
}

// peerCaseName is a case's op/case name from its folder.
func peerCaseName(dir string) string {
	return filepath.Base(filepath.Dir(dir)) + "/" + filepath.Base(dir)
}
