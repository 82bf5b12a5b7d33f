package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelkern/accel/accel"
	"github.com/accelkern/accel/cmd/accel/internal/bench"
	"github.com/accelkern/accel/cmd/accel/internal/ops"
)

// runCLI runs the built command with Vulkan validation on and returns its
// stdout, stderr and exit status.
func runCLI(t *testing.T, bin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "ACCEL_VK_VALIDATION=1")
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	code = exitCode(t, cmd.Run())
	return o.String(), e.String(), code
}

// TestBenchJSON runs `accel bench --json` on the quick cases of
// tril_indices, cumsum and sort on each device backend and checks every
// field of every row, the host round trips per call included.
func TestBenchJSON(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("linux only")
	}
	bin := buildAccel(t)
	const reps = 2
	wantCases := map[string]bool{
		"tril_indices/1000x1000_int64": true, "tril_indices/3000x3000_int64": true, "tril_indices/3000x3000_int32": true,
		"cumsum/int32_64M_quick": true, "sort/uint32_16M_perm_quick": true, "sort/int64_16M_below1M_quick": true,
	}
	fields := []string{"op", "case", "backend", "device", "median_s", "wall_s", "first_s", "cold_s", "syncs", "submits", "launches",
		"reps", "bytes", "gbps", "copy_gbps", "frac_copy", "ref_median_s", "speedup", "plan",
		"pool_hits", "pool_misses", "pool_frees", "pool_bytes_held", "pool_bytes_in_use", "pool_cap_bytes"}
	for _, backend := range []string{"opencl", "vulkan"} {
		t.Run(backend, func(t *testing.T) {
			requireDevice(t, backend)
			stdout, stderr, code := runCLI(t, bin, "bench", "--json", "--quick", "--reps", "2", "--backend", backend,
				"--op", "tril_indices", "--op", "cumsum", "--op", "sort")
			require.Equal(t, 0, code, "accel bench: exit status; stderr:\n%s", stderr)
			var raw []map[string]interface{}
			require.NoError(t, json.Unmarshal([]byte(stdout), &raw), "bench JSON:\n%s", stdout)
			var rs []bench.Result
			require.NoError(t, json.Unmarshal([]byte(stdout), &rs))
			require.Len(t, rs, len(wantCases), "one row per case:\n%s", stdout)
			seen := map[string]bool{}
			for i, r := range rs {
				what := r.Op + "/" + r.Case
				for _, f := range fields {
					assert.Contains(t, raw[i], f, "%s: JSON field", what)
				}
				require.True(t, wantCases[what], "unexpected row %s", what)
				assert.False(t, seen[what], "%s twice", what)
				seen[what] = true
				assert.Equal(t, backend, r.Backend, what)
				assert.NotEmpty(t, r.Device, what)
				assert.Equal(t, rs[0].Device, r.Device, "%s: one device per backend", what)
				assert.Equal(t, reps, r.Reps, what)
				assert.Greater(t, r.Bytes, int64(0), "%s: bytes", what)
				assert.Greater(t, r.MedianS, 0.0, "%s: median_s", what)
				assert.Greater(t, r.WallS, 0.0, "%s: wall_s", what)
				assert.Greater(t, r.ColdS, 0.0, "%s: cold_s", what)
				assert.Greater(t, r.FirstS, 0.0, "%s: first_s", what)
				// every call ends with a Sync; tril_indices never waits
				// before it, cumsum and sort at most once
				assert.GreaterOrEqual(t, r.Syncs, 1.0, "%s: syncs per call", what)
				switch r.Op {
				case "tril_indices":
					assert.Equal(t, 1.0, r.Syncs, "%s: syncs per call", what)
				case "cumsum", "sort":
					assert.LessOrEqual(t, r.Syncs, 2.0, "%s: syncs per call", what)
				}
				assert.GreaterOrEqual(t, r.Submits, 1.0, "%s: submits per call", what)
				assert.GreaterOrEqual(t, r.Launches, 1.0, "%s: launches per call", what)
				assert.Greater(t, r.GBps, 0.0, "%s: gbps", what)
				assert.InEpsilon(t, float64(r.Bytes)/r.MedianS/1e9, r.GBps, 1e-9, "%s: gbps", what)
				assert.Greater(t, r.CopyGBps, 0.0, "%s: copy_gbps", what)
				assert.Equal(t, rs[0].CopyGBps, r.CopyGBps, "%s: one copy measurement per device", what)
				assert.InEpsilon(t, r.GBps/r.CopyGBps, r.FracCopy, 1e-9, "%s: frac_copy", what)
				assert.GreaterOrEqual(t, r.CeilingGBps, r.CopyGBps, "%s: the ceiling is at least the device's copy", what)
				if r.HostCopyGBps > 0 {
					assert.GreaterOrEqual(t, r.CeilingGBps, r.HostCopyGBps, "%s: the ceiling is at least the host copy", what)
				}
				assert.InEpsilon(t, r.GBps/r.CeilingGBps, r.FracCeiling, 1e-9, "%s: frac_ceiling", what)
				assert.Greater(t, r.RefMedianS, 0.0, "%s: ref_median_s", what)
				assert.InEpsilon(t, r.RefMedianS/r.MedianS, r.Speedup, 1e-9, "%s: speedup", what)
				assert.NotEmpty(t, r.Plan, "%s: plan", what)
				assert.Greater(t, r.CapBytes, int64(0), "%s: pool_cap_bytes", what)
				if r.Op == "tril_indices" {
					assert.NotContains(t, raw[i], "mkeys_per_s", "%s: not rated per key", what)
					assert.NotContains(t, raw[i], "items", "%s: not rated per key", what)
				} else {
					assert.Greater(t, r.Items, int64(0), "%s: items", what)
					assert.InEpsilon(t, float64(r.Items)/r.MedianS/1e6, r.MItemsPerS, 1e-9, "%s: mkeys_per_s", what)
				}
			}
		})
	}
}

// TestBenchTable checks the table `accel bench` prints: the header with
// the wall time and syncs columns, and one row per case.
func TestBenchTable(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("linux only")
	}
	bin := buildAccel(t)
	for _, backend := range []string{"opencl", "vulkan"} {
		t.Run(backend, func(t *testing.T) {
			requireDevice(t, backend)
			stdout, stderr, code := runCLI(t, bin, "bench", "--quick", "--reps", "1", "--backend", backend, "--op", "tril_indices")
			require.Equal(t, 0, code, "accel bench: exit status; stderr:\n%s", stderr)
			lines := strings.Split(strings.TrimRight(stdout, "\n"), "\n")
			require.Greater(t, len(lines), 4, "header, 3 rows and the legend:\n%s", stdout)
			for _, col := range []string{"ms", "GB/s", "% copy", "ref ms", "speed-up", "first ms"} {
				assert.Contains(t, lines[0], col, "header")
			}
			for _, l := range lines[1:4] {
				assert.Contains(t, l, "tril_indices", "row")
				assert.Contains(t, l, backend, "row")
			}
			assert.Contains(t, stdout, "% copy: that", "the legend")
			for _, l := range lines {
				assert.LessOrEqual(t, len(l), 100, "line wider than 100 columns: %q", l)
			}
		})
	}
}

// TestSelftestThroughCLI runs `accel selftest` on each device backend:
// every case passes against the reference, then the quick speed table.
func TestSelftestThroughCLI(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("linux only")
	}
	if testing.Short() {
		t.Skip("-short: selftest runs every op's cases and the quick bench")
	}
	bin := buildAccel(t)
	for _, backend := range []string{"opencl", "vulkan"} {
		t.Run(backend, func(t *testing.T) {
			requireDevice(t, backend)
			stdout, stderr, code := runCLI(t, bin, "selftest", "--backend", backend)
			require.Equal(t, 0, code, "accel selftest: exit status\n%s\nstderr:\n%s", stdout, stderr)
			assert.Contains(t, stdout, "selftest: all passed")
			assert.NotContains(t, stdout, "FAIL")
			for _, section := range []string{"== devices", "== every op (families", "== speed"} {
				assert.Contains(t, stdout, section)
			}
			// the pass table: one line per op of the CLI (every family),
			// with a pass column for the device
			for _, op := range ops.Ops() {
				found := false
				for _, l := range strings.Split(stdout, "\n") {
					f := strings.Fields(l)
					if len(f) == 3 && f[0] == op.Name {
						found = true
						assert.Equal(t, "pass", f[2], "selftest row %q", l)
					}
				}
				assert.True(t, found, "no selftest row for %s on %s:\n%s", op.Name, backend, stdout)
			}
			assert.Contains(t, stdout, "% copy", "speed table header")
			// every line fits 100 columns
			for _, l := range strings.Split(stdout, "\n") {
				assert.LessOrEqual(t, len(l), 100, "line wider than 100 columns: %q", l)
			}
		})
	}
}

// TestSelftestCases checks the self-test's case list against the
// reference: every case runs there (none is a rejection in disguise) and
// the reference agrees with itself bit for bit.
func TestSelftestCases(t *testing.T) {
	cases := selftestCases()
	count := map[string]int{}
	for _, c := range cases {
		count[c.op]++
	}
	// 8 shapes x 2 dtypes per tri op, 6 diagonal_scatter shapes x 4 dtypes,
	// 12 reductions x 2 include_self for scatter_reduce
	assert.Equal(t, map[string]int{"tril_indices": 16, "triu_indices": 16, "diagonal_scatter": 24, "scatter_reduce": 24}, count)
	for _, c := range cases {
		a, aerr := runRef(c)
		assert.NoError(t, aerr, "%s %v", c.op, c.params)
		b, berr := runRef(c)
		assert.Empty(t, sameResult(a, aerr, b, berr), "%s %v", c.op, c.params)
	}
}

func runRef(c selftestCase) (map[string]*accel.Tensor, error) {
	return ops.Run(nil, c.op, c.params, c.inputs)
}

// TestSameResult checks the self-test's comparison.
func TestSameResult(t *testing.T) {
	mk := func(dt accel.DType, shape []int64, b ...byte) *accel.Tensor {
		x, err := accel.NewTensor(dt, shape...)
		require.NoError(t, err)
		copy(x.Bytes(), b)
		return x
	}
	a := map[string]*accel.Tensor{"out": mk(accel.Int32, []int64{2}, 1, 0, 0, 0, 2)}
	same := map[string]*accel.Tensor{"out": mk(accel.Int32, []int64{2}, 1, 0, 0, 0, 2)}
	errA := accel.ErrInvalidArgument
	assert.Empty(t, sameResult(a, nil, same, nil), "same outputs")
	assert.Empty(t, sameResult(nil, errA, nil, errA), "both rejected")
	assert.Contains(t, sameResult(nil, errA, a, nil), "device error")
	assert.Contains(t, sameResult(a, nil, nil, errA), "reference error")
	assert.Contains(t, sameResult(a, nil, map[string]*accel.Tensor{"out": a["out"], "x": a["out"]}, nil), "1 outputs, reference 2")
	assert.Contains(t, sameResult(a, nil, map[string]*accel.Tensor{"other": a["out"]}, nil), "no output other")
	assert.Contains(t, sameResult(a, nil, map[string]*accel.Tensor{"out": mk(accel.Uint32, []int64{2}, 1, 0, 0, 0, 2)}, nil), "out: int32 [2], reference uint32 [2]")
	assert.Contains(t, sameResult(a, nil, map[string]*accel.Tensor{"out": mk(accel.Int32, []int64{1, 2}, 1, 0, 0, 0, 2)}, nil), "out: int32 [2], reference int32 [1 2]")
	assert.Contains(t, sameResult(a, nil, map[string]*accel.Tensor{"out": mk(accel.Int32, []int64{2}, 1, 0, 0, 0, 3)}, nil), "out: values differ")
}
