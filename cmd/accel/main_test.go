package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelkern/accel/accel"
	"github.com/accelkern/accel/host"
)

var npyTestDTypes = []accel.DType{accel.Int32, accel.Int64, accel.Uint32, accel.Uint64,
	accel.Float16, accel.Float32, accel.Float64, accel.Bool}

var npyTestShapes = [][]int64{{}, {0}, {2, 0}, {3, 4}, {2, 1, 3}}

// npyTestTensor is a tensor of the dtype and shape with varied bytes.
func npyTestTensor(t *testing.T, dt accel.DType, shape []int64) *accel.Tensor {
	t.Helper()
	x, err := accel.NewTensor(dt, shape...)
	require.NoError(t, err)
	for i := range x.Bytes() {
		x.Bytes()[i] = byte(i*7 + 1)
		if dt == accel.Bool {
			x.Bytes()[i] = byte(i % 2)
		}
	}
	return x
}

func npyName(dt accel.DType, shape []int64) string {
	return fmt.Sprintf("%s_%s.npy", dt, strings.Trim(strings.ReplaceAll(fmt.Sprint(shape), " ", "x"), "[]"))
}

func TestNpyRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for _, dt := range npyTestDTypes {
		for _, shape := range npyTestShapes {
			x := npyTestTensor(t, dt, shape)
			p := filepath.Join(dir, npyName(dt, shape))
			require.NoError(t, writeNpy(p, x), "%s%v", dt, shape)
			y, err := readNpy(p)
			require.NoError(t, err, "%s%v", dt, shape)
			require.Equal(t, dt, y.DType(), "%s%v round trip: dtype", dt, shape)
			require.Equal(t, x.Shape(), y.Shape(), "%s%v round trip: shape", dt, shape)
			require.Equal(t, x.Bytes(), y.Bytes(), "%s%v round trip: bytes", dt, shape)
			data, err := os.ReadFile(p)
			require.NoError(t, err)
			require.Greater(t, len(data), 10, "%s%v: file too short for a header", dt, shape)
			hdr := 10 + int(data[8]) + int(data[9])<<8
			require.Zero(t, hdr%64, "%s%v: header of %d bytes, want a multiple of 64", dt, shape, hdr)
			require.LessOrEqual(t, hdr, len(data), "%s%v: header of %d bytes in a file of %d", dt, shape, hdr, len(data))
			require.Equal(t, byte('\n'), data[hdr-1], "%s%v: header of %d bytes, want it to end in newline", dt, shape, hdr)
		}
	}
}

// TestNpyNumPyReadsOurs has NumPy load what writeNpy wrote (skipped
// without numpy).
func TestNpyNumPyReadsOurs(t *testing.T) {
	py := pythonWithNumPy()
	if py == "" {
		t.Skip("python3 with numpy not found")
	}
	dir := t.TempDir()
	want := map[string]string{}
	for _, dt := range npyTestDTypes {
		for _, shape := range npyTestShapes {
			x := npyTestTensor(t, dt, shape)
			name := npyName(dt, shape)
			require.NoError(t, writeNpy(filepath.Join(dir, name), x), name)
			descr, err := npyDescr(dt)
			require.NoError(t, err, name)
			js, _ := json.Marshal(append([]int64{}, x.Shape()...))
			want[name] = fmt.Sprintf("%s|%s|%x", descr, js, x.Bytes())
		}
	}
	script := `import json, os, sys, numpy as np
d = sys.argv[1]
for f in sorted(os.listdir(d)):
    a = np.load(os.path.join(d, f))
    assert a.flags.c_contiguous
    print(f + "|" + a.dtype.str + "|" + json.dumps(list(a.shape), separators=(",", ":")) + "|" + a.tobytes().hex())`
	out, err := exec.Command(py, "-c", script, dir).CombinedOutput()
	require.NoError(t, err, "numpy:\n%s", out)
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		name, rest, _ := strings.Cut(line, "|")
		got[name] = rest
	}
	for name, w := range want {
		assert.Equal(t, w, got[name], "%s: what numpy read", name)
	}
}

// patchHeader rewrites one same-length piece of an .npy header.
func patchHeader(t *testing.T, path, old, new string) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Len(t, new, len(old), "%s: a patch must keep the header's length", path)
	require.Contains(t, string(data), old, "%s: cannot patch %q", path, old)
	require.NoError(t, os.WriteFile(path, bytes.Replace(data, []byte(old), []byte(new), 1), 0o644))
}

func TestNpyRejects(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ name, old, new, want string }{
		{"bigendian", "'<i4'", "'>i4'", "big-endian"},
		{"int16", "'<i4'", "'<i2'", "not supported"},
	} {
		p := filepath.Join(dir, c.name+".npy")
		require.NoError(t, writeNpy(p, npyTestTensor(t, accel.Int32, []int64{2, 3})))
		patchHeader(t, p, c.old, c.new)
		x, err := readNpy(p)
		assert.ErrorIs(t, err, errNpyFormat, c.name)
		assert.ErrorContains(t, err, c.want, c.name)
		assert.Nil(t, x, c.name)
	}
	// A truncated payload and a missing file are failures, not format
	// rejections.
	p := filepath.Join(dir, "short.npy")
	require.NoError(t, writeNpy(p, npyTestTensor(t, accel.Int64, []int64{10})))
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(p, data[:len(data)-5], 0o644))
	_, err = readNpy(p)
	if assert.Error(t, err, "truncated file") {
		assert.NotErrorIs(t, err, errNpyFormat, "truncated file")
	}
	_, err = readNpy(filepath.Join(dir, "absent.npy"))
	assert.ErrorIs(t, err, fs.ErrNotExist, "missing file")
}

// TestNpyFortranOrder: a payload in column-major order (fortran_order
// True, as np.save writes an F-contiguous array such as a.T) is read into
// row-major order.
func TestNpyFortranOrder(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		shape  []int64
		header string
	}{
		{[]int64{2, 3}, "(2, 3), }"},
		{[]int64{2, 3, 4}, "(2, 3, 4), }"},
		{[]int64{5}, "(5,), }"},
		{[]int64{0, 3}, "(0, 3), }"},
	} {
		p := filepath.Join(dir, npyName(accel.Int32, c.shape))
		n := int64(1)
		for _, s := range c.shape {
			n *= s
		}
		vals := make([]int32, n)
		for i := range vals {
			vals[i] = int32(i)
		}
		x, err := accel.FromInt32s(c.shape, vals)
		require.NoError(t, err)
		require.NoError(t, writeNpy(p, x))
		patchHeader(t, p, "False, 'shape': "+c.header, "True, 'shape': "+c.header+" ")
		got, err := readNpy(p)
		require.NoError(t, err, "%v", c.shape)
		require.Equal(t, c.shape, got.Shape(), "%v", c.shape)
		// element at C index (i0, .., ik) is payload[i0 + s0*(i1 + s1*(...))]
		want := make([]int32, n)
		idx := make([]int64, len(c.shape))
		for ci := range want {
			f, st := int64(0), int64(1)
			for d := range c.shape {
				f += idx[d] * st
				st *= c.shape[d]
			}
			want[ci] = int32(f)
			for d := len(c.shape) - 1; d >= 0; d-- {
				if idx[d]++; idx[d] < c.shape[d] {
					break
				}
				idx[d] = 0
			}
		}
		require.Equal(t, want, got.Int32s(), "%v", c.shape)
	}
}

func TestInterspersedFlags(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	b := fs.String("backend", "", "")
	var ps multi
	fs.Var(&ps, "param", "")
	pos, err := parseInterspersed(fs, []string{"--backend", "vulkan", "tril_indices", "--backend", "opencl", "--param", "row=3", "--param=col=4", "--", "-x"})
	require.NoError(t, err)
	require.Equal(t, []string{"tril_indices", "-x"}, pos, "positional arguments")
	require.Equal(t, "opencl", *b, "the last --backend wins")
	require.Equal(t, []string{"row=3", "col=4"}, []string(ps), "--param values")
	fs = flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(new(bytes.Buffer))
	_, err = parseInterspersed(fs, []string{"op", "--nope"})
	require.Error(t, err, "unknown flag accepted")
}

func TestSingleJob(t *testing.T) {
	j, err := singleJob([]string{"tril_indices"}, "o", []string{"row=3", "offset=-1", "dtype=int32"}, []string{"x=a=b.npy"})
	require.NoError(t, err)
	require.Equal(t, job{
		Op:     "tril_indices",
		Params: map[string]interface{}{"row": "3", "offset": "-1", "dtype": "int32"},
		Inputs: map[string]string{"x": "a=b.npy"},
		Out:    "o",
	}, j)
	for _, bad := range []struct {
		pos      []string
		out      string
		params   []string
		inputs   []string
		mentions string
	}{
		{nil, "o", nil, nil, "want one OP"},
		{[]string{"a", "b"}, "o", nil, nil, "want one OP"},
		{[]string{"a"}, "o", []string{"row"}, nil, "name=value"},
		{[]string{"a"}, "o", []string{"row=1", "row=2"}, nil, "twice"},
		{[]string{"a"}, "o", nil, []string{"x.npy"}, "NAME=FILE"},
	} {
		_, err := singleJob(bad.pos, bad.out, bad.params, bad.inputs)
		assert.ErrorContains(t, err, bad.mentions, "%+v", bad)
	}
}

func TestSelector(t *testing.T) {
	t.Setenv("ACCEL_DEVICE", "vulkan:llvmpipe")
	for _, c := range []struct{ backend, device, want string }{
		{"opencl", "", "opencl"},
		{"vulkan", "", "vulkan:llvmpipe"},
		{"opencl", "1", "opencl:1"},
		{"opencl", "pthread", "opencl:pthread"},
		{"vulkan", "vulkan:0", "vulkan:0"},
	} {
		assert.Equal(t, c.want, selector(c.backend, c.device), "selector(%q, %q)", c.backend, c.device)
	}
	bs, explicit := chooseBackends(nil, "vulkan:0")
	assert.Equal(t, []string{"vulkan"}, bs, "chooseBackends(nil, vulkan:0)")
	assert.True(t, explicit, "chooseBackends(nil, vulkan:0): explicit")
	bs, explicit = chooseBackends(nil, "")
	assert.Equal(t, []string{"opencl", "vulkan"}, bs, "chooseBackends(nil, \"\")")
	assert.False(t, explicit, "chooseBackends(nil, \"\"): explicit")
}

func TestParamString(t *testing.T) {
	dec := json.NewDecoder(strings.NewReader(`{"a": 9007199254740993, "b": -9223372036854775808, "c": true, "d": "x", "e": null, "f": 1.5}`))
	dec.UseNumber()
	var m map[string]interface{}
	require.NoError(t, dec.Decode(&m))
	want := map[string]string{"a": "9007199254740993", "b": "-9223372036854775808", "c": "true", "d": "x", "e": "none", "f": "1.5"}
	for k, w := range want {
		got, err := paramString(m[k])
		if assert.NoError(t, err, k) {
			assert.Equal(t, w, got, k)
		}
	}
	_, err := paramString([]interface{}{1})
	assert.Error(t, err, "a JSON array was accepted as a parameter")
}

// captureOutput runs f with os.Stdout and os.Stderr sent to files, and
// returns what it wrote to each.
func captureOutput(t *testing.T, f func()) (stdout, stderr string) {
	t.Helper()
	dir := t.TempDir()
	outF, err := os.Create(filepath.Join(dir, "stdout"))
	require.NoError(t, err)
	errF, err := os.Create(filepath.Join(dir, "stderr"))
	require.NoError(t, err)
	oldOut, oldErr := os.Stdout, os.Stderr
	os.Stdout, os.Stderr = outF, errF
	defer func() {
		os.Stdout, os.Stderr = oldOut, oldErr
		outF.Close()
		errF.Close()
	}()
	f()
	o, err := os.ReadFile(outF.Name())
	require.NoError(t, err)
	e, err := os.ReadFile(errF.Name())
	require.NoError(t, err)
	return string(o), string(e)
}

func TestHelpExitsZero(t *testing.T) {
	for _, cmd := range []string{"devices", "run", "bench", "selftest", "soak"} {
		var code int
		_, stderr := captureOutput(t, func() { code = run([]string{cmd, "--help"}) })
		assert.Equal(t, 0, code, "accel %s --help: exit status", cmd)
		assert.Contains(t, stderr, "usage: accel "+cmd, "accel %s --help", cmd)
	}
	// help and usage agree: flags spelled --name, as the usage lines do
	for _, cmd := range []string{"devices", "run", "bench", "selftest", "soak"} {
		_, stderr := captureOutput(t, func() { run([]string{cmd, "--help"}) })
		assert.NotRegexp(t, `(?m)^  -[a-z]`, stderr, "accel %s --help: a flag spelled -name", cmd)
	}
	_, stderr := captureOutput(t, func() { run([]string{"run", "--help"}) })
	assert.Contains(t, stderr, "  --backend string", "accel run --help")
}

// TestRunSummary: a single run prints one line per output (dtype, shape,
// first values, digest) with or without --out, or one JSON object with
// --json; the backend follows --device or $ACCEL_DEVICE.
func TestRunSummary(t *testing.T) {
	args := []string{"run", "tril_indices", "--param", "row=3", "--param", "col=3", "--param", "dtype=int32"}
	const line = "  out: int32[2 6] [0 1 1 2 2 2 ...] sha256:"
	var code int
	stdout, stderr := captureOutput(t, func() { code = run(append(args, "--device", "reference")) })
	require.Equal(t, 0, code, "stderr:\n%s", stderr)
	assert.Equal(t, "tril_indices on reference\n", stdout[:strings.Index(stdout, "\n")+1])
	assert.Contains(t, stdout, line)
	assert.NotContains(t, stdout, "->", "no file without --out")

	t.Setenv("ACCEL_DEVICE", "reference")
	dir := t.TempDir()
	stdout, stderr = captureOutput(t, func() { code = run(append(args, "--out", dir)) })
	require.Equal(t, 0, code, "stderr:\n%s", stderr)
	assert.Contains(t, stdout, line)
	assert.Contains(t, stdout, "-> "+filepath.Join(dir, "out.npy"))
	require.FileExists(t, filepath.Join(dir, "out.npy"))

	stdout, stderr = captureOutput(t, func() { code = run(append(args, "--json")) })
	require.Equal(t, 0, code, "stderr:\n%s", stderr)
	var r struct {
		Op      string          `json:"op"`
		Device  string          `json:"device"`
		Outputs []outputSummary `json:"outputs"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &r), stdout)
	require.Len(t, r.Outputs, 1)
	o := r.Outputs[0]
	assert.Equal(t, "tril_indices", r.Op)
	assert.Equal(t, "reference", r.Device)
	assert.Equal(t, "out", o.Name)
	assert.Equal(t, "int32", o.DType)
	assert.Equal(t, []int64{2, 6}, o.Shape)
	assert.Len(t, o.First, summaryValues)
	assert.Len(t, o.SHA256, 64)

	stdout, _ = captureOutput(t, func() { code = run([]string{"run", "tril_indices", "--param", "row=-1", "--param", "col=3", "--json"}) })
	assert.Equal(t, 1, code, "a rejected run")
	assert.Contains(t, stdout, `"rejected": true`)
}

// TestExitCodes checks the exit status of usage errors (2) and of single
// runs on the reference: 0 with the outputs written, 1 with error.txt
// for a rejected input.
func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want int
	}{
		{nil, 2},
		{[]string{"help"}, 0},
		{[]string{"frobnicate"}, 2},
		{[]string{"devices", "extra"}, 2},
		{[]string{"devices", "--nope"}, 2},
		{[]string{"run", "tril_indices", "--backend", "cuda", "--out", dir}, 2},
		{[]string{"run", "--backend", "reference", "--out", dir}, 2},
		{[]string{"run", "tril_indices", "--backend", "reference", "--param", "row=2", "--param", "col=2"}, 0},
		{[]string{"run", "tril_indices", "--backend", "reference", "--param", "row", "--out", dir}, 2},
		{[]string{"run", "--batch", "jobs.jsonl", "--backend", "reference", "--out", dir}, 2},
		{[]string{"run", "--batch", filepath.Join(dir, "absent.jsonl"), "--backend", "reference"}, 1},
		{[]string{"run", "tril_indices", "--backend", "opencl", "--device", "vulkan:0", "--param", "row=1", "--param", "col=1", "--out", dir}, 1},
		{[]string{"bench", "--backend", "cuda"}, 2},
		{[]string{"bench", "tril_indices"}, 2},
		{[]string{"selftest", "--backend", "reference"}, 2},
		{[]string{"selftest", "extra"}, 2},
	} {
		var code int
		captureOutput(t, func() { code = run(c.args) })
		assert.Equal(t, c.want, code, "accel %q: exit status", c.args)
	}

	ok := filepath.Join(dir, "ok")
	var code int
	_, stderr := captureOutput(t, func() {
		code = run([]string{"run", "tril_indices", "--backend", "reference", "--param", "row=3", "--param", "col=3", "--param", "dtype=int32", "--out", ok})
	})
	require.Equal(t, 0, code, "single run: exit status; stderr:\n%s", stderr)
	out, err := readNpy(filepath.Join(ok, "out.npy"))
	require.NoError(t, err)
	require.Equal(t, accel.Int32, out.DType())
	require.Equal(t, []int64{2, 6}, out.Shape())
	require.Equal(t, []int32{0, 1, 1, 2, 2, 2, 0, 0, 1, 0, 1, 2}, out.Int32s())
	require.NoFileExists(t, filepath.Join(ok, "error.txt"))

	// A rejection in the same directory: exit 1, error.txt with the
	// message (also on stderr), and the earlier arrays gone.
	_, stderr = captureOutput(t, func() {
		code = run([]string{"run", "tril_indices", "--backend", "reference", "--param", "row=-1", "--param", "col=3", "--out", ok})
	})
	require.Equal(t, 1, code, "rejected single run: exit status")
	msg, err := os.ReadFile(filepath.Join(ok, "error.txt"))
	require.NoError(t, err, "rejected single run: no error.txt")
	require.NotEmpty(t, bytes.TrimSpace(msg), "rejected single run: empty error.txt")
	assert.Contains(t, stderr, strings.TrimSpace(string(msg)), "the message on stderr")
	arrays, err := filepath.Glob(filepath.Join(ok, "*.npy"))
	require.NoError(t, err)
	require.Empty(t, arrays, "rejected single run left arrays")

	// Success again removes the stale error.txt.
	captureOutput(t, func() {
		code = run([]string{"run", "tril_indices", "--backend", "reference", "--param", "row=3", "--param", "col=3", "--out", ok})
	})
	require.Equal(t, 0, code, "single run after a rejection: exit status")
	require.FileExists(t, filepath.Join(ok, "out.npy"))
	require.NoFileExists(t, filepath.Join(ok, "error.txt"), "stale error.txt after a successful run")
}

func TestBatchRejection(t *testing.T) {
	dir := t.TempDir()
	// Relative paths in jobs are relative to the current directory.
	wd, err := os.Getwd()
	require.NoError(t, err)
	require.NoError(t, os.Chdir(dir))
	t.Cleanup(func() { require.NoError(t, os.Chdir(wd)) })
	require.NoError(t, writeNpy("in.npy", npyTestTensor(t, accel.Float32, []int64{4, 4})))
	be := "be.npy"
	require.NoError(t, writeNpy(be, npyTestTensor(t, accel.Int32, []int64{3})))
	patchHeader(t, be, "'<i4'", "'>i4'")
	jobs := `{"op": "tril_indices", "params": {"row": 3, "col": 3}, "out": "ok"}

{"op": "tril_indices", "params": {"row": -1, "col": 3}, "out": "bad"}
{"op": "triu_indices", "params": {"row": 9007199254740993, "col": 0, "offset": true}, "out": "bad2"}
{"op": "no_such_op", "params": {}, "out": "bad3"}
{"op": "take_along_axis", "params": {"axis": 0}, "inputs": {"arr": "be.npy", "indices": "be.npy"}, "out": "bad4"}
`
	require.NoError(t, os.WriteFile("jobs.jsonl", []byte(jobs), 0o644))
	// A leftover array from an earlier run must go when the job is rejected.
	require.NoError(t, os.MkdirAll("bad", 0o755))
	require.NoError(t, os.WriteFile(filepath.Join("bad", "out.npy"), []byte("stale"), 0o644))
	var code int
	stdout, stderr := captureOutput(t, func() { code = runBatch(nil, "jobs.jsonl") })
	require.Equal(t, 0, code, "batch exit status: want 0 (every job ended in outputs or a rejection); stderr:\n%s", stderr)
	assert.Contains(t, stdout, "5 jobs: 1 ok, 4 rejected, 0 failed", "batch summary")
	for _, line := range []int{3, 4, 5, 6} {
		assert.Contains(t, stderr, fmt.Sprintf("jobs.jsonl:%d: rejected: ", line), "stderr names each rejected line")
	}
	out, err := readNpy(filepath.Join("ok", "out.npy"))
	require.NoError(t, err, "ok/out.npy")
	require.Equal(t, accel.Int64, out.DType(), "ok/out.npy: dtype")
	require.Equal(t, []int64{2, 6}, out.Shape(), "ok/out.npy: shape")
	require.Equal(t, []int64{0, 1, 1, 2, 2, 2, 0, 0, 1, 0, 1, 2}, out.Int64s(), "ok/out.npy: tril_indices(3, 3)")
	require.NoFileExists(t, filepath.Join("ok", "error.txt"))
	for _, bad := range []string{"bad", "bad2", "bad3", "bad4"} {
		msg, err := os.ReadFile(filepath.Join(bad, "error.txt"))
		require.NoError(t, err, "%s: no error.txt", bad)
		require.NotEmpty(t, bytes.TrimSpace(msg), "%s: empty error.txt", bad)
		m, err := filepath.Glob(filepath.Join(bad, "*.npy"))
		require.NoError(t, err)
		require.Empty(t, m, "%s: rejected job left arrays", bad)
	}
	// A malformed line or an unreadable input fails the batch, and the
	// other jobs still run.
	for _, c := range []string{"{not json\n", `{"op": "take_along_axis", "params": {"axis": 0}, "inputs": {"arr": "absent.npy", "indices": "in.npy"}, "out": "bad5"}` + "\n"} {
		require.NoError(t, os.RemoveAll("ok"))
		require.NoError(t, os.WriteFile("jobs.jsonl", []byte(c+`{"op": "tril_indices", "params": {"row": 3, "col": 3}, "out": "ok"}`+"\n"), 0o644))
		stdout, _ := captureOutput(t, func() { code = runBatch(nil, "jobs.jsonl") })
		require.NotEqual(t, 0, code, "batch %q: exit status", c)
		assert.Contains(t, stdout, "2 jobs: 1 ok, 0 rejected, 1 failed", "batch %q: summary", c)
		_, err := os.Stat(filepath.Join("ok", "out.npy"))
		require.NoError(t, err, "batch %q stopped early", c)
	}
	// The unreadable input's job still leaves its error.txt.
	msg, err := os.ReadFile(filepath.Join("bad5", "error.txt"))
	require.NoError(t, err, "bad5: no error.txt")
	require.NotEmpty(t, bytes.TrimSpace(msg), "bad5: empty error.txt")
	captureOutput(t, func() { code = runBatch(nil, "absent.jsonl") })
	require.NotEqual(t, 0, code, "missing batch file: exit status")
}

// TestParamStringLists checks that a batch job's JSON array parameter
// becomes the command line's comma-separated form, and that nested lists
// and objects are refused.
func TestParamStringLists(t *testing.T) {
	for _, c := range []struct {
		json string
		want string
	}{
		{`[3, 3, 3]`, "3,3,3"}, {`[]`, ""}, {`[-1]`, "-1"}, {`["a", true]`, "a,true"}, {`[12345678901234567]`, "12345678901234567"},
	} {
		dec := json.NewDecoder(strings.NewReader(c.json))
		dec.UseNumber()
		var v interface{}
		require.NoError(t, dec.Decode(&v))
		got, err := paramString(v)
		require.NoError(t, err, c.json)
		assert.Equal(t, c.want, got, c.json)
	}
	for _, bad := range []interface{}{[]interface{}{[]interface{}{json.Number("1")}}, map[string]interface{}{}} {
		_, err := paramString(bad)
		assert.Error(t, err, "%v", bad)
	}
}

// TestDeviceLineFits: a device line stays within lineWidth columns
// whatever the driver calls its device (PoCL's CPU names pass 40
// characters), its name cut in the middle, between whole characters.
func TestDeviceLineFits(t *testing.T) {
	long := "pthread-skylake-avx512-Intel(R) Xeon(R) Processor with a much longer brand string than that"
	c := accel.DeviceInfo{Backend: "opencl", Type: host.TypeCPU, Name: long, Platform: "Portable Computing Language", ComputeUnits: 2,
		MaxWorkGroupSize: 4096, FP64: true}
	line := deviceLine(c)
	require.LessOrEqual(t, len(line), lineWidth, line)
	require.Contains(t, line, "pthread-skylake")
	require.Contains(t, line, "...")
	require.Contains(t, line, "CU=2 wg=4096 fp64=yes")
	short := c
	short.Name = "llvmpipe (LLVM 19.1.7, 256 bits)"
	require.Contains(t, deviceLine(short), short.Name, "a name that fits is kept whole")
	for _, w := range []int{8, 11, 20} {
		got := fitName("ÄÖÜäöüßéèêëïîôœ-Gerät-Ünicode", w)
		require.True(t, utf8.ValidString(got), got)
	}
	require.Equal(t, "abc", fitName("abc", 2), "names of 8 bytes or fewer stay")
}
