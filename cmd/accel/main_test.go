package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/accelkern/accel/accel"
)

var npyTestDTypes = []accel.DType{accel.Int32, accel.Int64, accel.Uint32, accel.Uint64,
	accel.Float16, accel.Float32, accel.Float64, accel.Bool}

var npyTestShapes = [][]int64{{}, {0}, {2, 0}, {3, 4}, {2, 1, 3}}

// npyTestTensor is a tensor of the dtype and shape with varied bytes.
func npyTestTensor(t *testing.T, dt accel.DType, shape []int64) *accel.Tensor {
	t.Helper()
	x, err := accel.NewTensor(dt, shape...)
	if err != nil {
		t.Fatal(err)
	}
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
			if err := writeNpy(p, x); err != nil {
				t.Fatal(err)
			}
			y, err := readNpy(p)
			if err != nil {
				t.Fatalf("%s%v: %v", dt, shape, err)
			}
			if y.DType() != dt || !reflect.DeepEqual(y.Shape(), x.Shape()) || !bytes.Equal(y.Bytes(), x.Bytes()) {
				t.Fatalf("%s%v round trip gave %s %v", dt, shape, y.DType(), y.Shape())
			}
			data, _ := os.ReadFile(p)
			if hdr := 10 + int(data[8]) + int(data[9])<<8; hdr%64 != 0 || data[hdr-1] != '\n' {
				t.Fatalf("%s%v: header of %d bytes, want a multiple of 64 ending in newline", dt, shape, hdr)
			}
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
			if err := writeNpy(filepath.Join(dir, name), x); err != nil {
				t.Fatal(err)
			}
			descr, _ := npyDescr(dt)
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
	if err != nil {
		t.Fatalf("numpy: %v\n%s", err, out)
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		name, rest, _ := strings.Cut(line, "|")
		got[name] = rest
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: numpy read %q, want %q", name, got[name], w)
		}
	}
}

// patchHeader rewrites one same-length piece of an .npy header.
func patchHeader(t *testing.T, path, old, new string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(old)) || len(old) != len(new) {
		t.Fatalf("%s: cannot patch %q", path, old)
	}
	if err := os.WriteFile(path, bytes.Replace(data, []byte(old), []byte(new), 1), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestNpyRejects(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ name, old, new, want string }{
		{"bigendian", "'<i4'", "'>i4'", "big-endian"},
		{"fortran", "False, 'shape': (2, 3), }", "True, 'shape': (2, 3), } ", "Fortran"},
		{"int16", "'<i4'", "'<i2'", "not supported"},
	} {
		p := filepath.Join(dir, c.name+".npy")
		if err := writeNpy(p, npyTestTensor(t, accel.Int32, []int64{2, 3})); err != nil {
			t.Fatal(err)
		}
		patchHeader(t, p, c.old, c.new)
		_, err := readNpy(p)
		if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, errNpyFormat) {
			t.Errorf("%s: got error %v, want one saying %q", c.name, err, c.want)
		}
	}
	// A truncated payload and a missing file are failures, not format
	// rejections.
	p := filepath.Join(dir, "short.npy")
	if err := writeNpy(p, npyTestTensor(t, accel.Int64, []int64{10})); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(p)
	os.WriteFile(p, data[:len(data)-5], 0o644)
	if _, err := readNpy(p); err == nil || errors.Is(err, errNpyFormat) {
		t.Errorf("truncated file: got %v", err)
	}
	if _, err := readNpy(filepath.Join(dir, "absent.npy")); err == nil || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: got %v", err)
	}
}

func TestInterspersedFlags(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	b := fs.String("backend", "", "")
	var ps multi
	fs.Var(&ps, "param", "")
	pos, err := parseInterspersed(fs, []string{"--backend", "vulkan", "tril_indices", "--backend", "opencl", "--param", "row=3", "--param=col=4", "--", "-x"})
	if err != nil || !reflect.DeepEqual(pos, []string{"tril_indices", "-x"}) || *b != "opencl" || !reflect.DeepEqual([]string(ps), []string{"row=3", "col=4"}) {
		t.Fatalf("pos %q backend %q params %v err %v", pos, *b, ps, err)
	}
	fs = flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(new(bytes.Buffer))
	if _, err := parseInterspersed(fs, []string{"op", "--nope"}); err == nil {
		t.Fatal("unknown flag accepted")
	}
}

func TestSingleJob(t *testing.T) {
	j, err := singleJob([]string{"tril_indices"}, "o", []string{"row=3", "offset=-1", "dtype=int32"}, []string{"x=a=b.npy"})
	if err != nil || j.Op != "tril_indices" || j.Params["offset"] != "-1" || j.Inputs["x"] != "a=b.npy" || j.Out != "o" {
		t.Fatalf("%+v %v", j, err)
	}
	for _, bad := range []struct {
		pos      []string
		out      string
		params   []string
		inputs   []string
		mentions string
	}{
		{nil, "o", nil, nil, "want one OP"},
		{[]string{"a", "b"}, "o", nil, nil, "want one OP"},
		{[]string{"a"}, "", nil, nil, "--out"},
		{[]string{"a"}, "o", []string{"row"}, nil, "name=value"},
		{[]string{"a"}, "o", []string{"row=1", "row=2"}, nil, "twice"},
		{[]string{"a"}, "o", nil, []string{"x.npy"}, "NAME=FILE"},
	} {
		if _, err := singleJob(bad.pos, bad.out, bad.params, bad.inputs); err == nil || !strings.Contains(err.Error(), bad.mentions) {
			t.Errorf("%+v: got %v, want an error mentioning %q", bad, err, bad.mentions)
		}
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
		if got := selector(c.backend, c.device); got != c.want {
			t.Errorf("selector(%q, %q) = %q, want %q", c.backend, c.device, got, c.want)
		}
	}
	if bs, explicit := chooseBackends(nil, "vulkan:0"); !reflect.DeepEqual(bs, []string{"vulkan"}) || !explicit {
		t.Errorf("chooseBackends(nil, vulkan:0) = %v %v", bs, explicit)
	}
	if bs, explicit := chooseBackends(nil, ""); len(bs) != 2 || explicit {
		t.Errorf("chooseBackends(nil, \"\") = %v %v", bs, explicit)
	}
}

func TestParamString(t *testing.T) {
	dec := json.NewDecoder(strings.NewReader(`{"a": 9007199254740993, "b": -9223372036854775808, "c": true, "d": "x", "e": null, "f": 1.5}`))
	dec.UseNumber()
	var m map[string]interface{}
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a": "9007199254740993", "b": "-9223372036854775808", "c": "true", "d": "x", "e": "none", "f": "1.5"}
	for k, w := range want {
		if got, err := paramString(m[k]); err != nil || got != w {
			t.Errorf("%s: got %q %v, want %q", k, got, err, w)
		}
	}
	if _, err := paramString([]interface{}{1}); err == nil {
		t.Error("a JSON array was accepted as a parameter")
	}
}

func TestHelpExitsZero(t *testing.T) {
	for _, cmd := range []string{"devices", "run", "bench", "selftest"} {
		stderr := os.Stderr
		null, _ := os.Open(os.DevNull)
		os.Stderr = null
		code := run([]string{cmd, "--help"})
		os.Stderr = stderr
		null.Close()
		if code != 0 {
			t.Errorf("accel %s --help: exit %d", cmd, code)
		}
	}
	if code := run([]string{"run", "tril_indices", "--out", t.TempDir()}); code != 2 {
		t.Errorf("run without --backend: exit %d, want 2", code)
	}
}

func TestBatchRejection(t *testing.T) {
	dir := t.TempDir()
	// Relative paths in jobs are relative to the current directory.
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	if err := writeNpy("in.npy", npyTestTensor(t, accel.Float32, []int64{4, 4})); err != nil {
		t.Fatal(err)
	}
	be := "be.npy"
	if err := writeNpy(be, npyTestTensor(t, accel.Int32, []int64{3})); err != nil {
		t.Fatal(err)
	}
	patchHeader(t, be, "'<i4'", "'>i4'")
	jobs := `{"op": "tril_indices", "params": {"row": 3, "col": 3}, "out": "ok"}

{"op": "tril_indices", "params": {"row": -1, "col": 3}, "out": "bad"}
{"op": "triu_indices", "params": {"row": 9007199254740993, "col": 0, "offset": true}, "out": "bad2"}
{"op": "no_such_op", "params": {}, "out": "bad3"}
{"op": "take_along_axis", "params": {"axis": 0}, "inputs": {"arr": "be.npy", "indices": "be.npy"}, "out": "bad4"}
`
	if err := os.WriteFile("jobs.jsonl", []byte(jobs), 0o644); err != nil {
		t.Fatal(err)
	}
	// A leftover array from an earlier run must go when the job is rejected.
	os.MkdirAll("bad", 0o755)
	os.WriteFile(filepath.Join("bad", "out.npy"), []byte("stale"), 0o644)
	if code := runBatch(nil, "jobs.jsonl"); code != 0 {
		t.Fatalf("batch exit %d, want 0 (every job ended in outputs or a rejection)", code)
	}
	out, err := readNpy(filepath.Join("ok", "out.npy"))
	if err != nil || !reflect.DeepEqual(out.Shape(), []int64{2, 6}) {
		t.Fatalf("ok/out.npy: %v %v", out, err)
	}
	for _, bad := range []string{"bad", "bad2", "bad3", "bad4"} {
		msg, err := os.ReadFile(filepath.Join(bad, "error.txt"))
		if err != nil || len(bytes.TrimSpace(msg)) == 0 {
			t.Fatalf("%s: no error.txt: %v", bad, err)
		}
		if m, _ := filepath.Glob(filepath.Join(bad, "*.npy")); len(m) > 0 {
			t.Fatalf("%s: rejected job left arrays %v", bad, m)
		}
	}
	// A malformed line or an unreadable input fails the batch, and the
	// other jobs still run.
	for _, c := range []string{"{not json\n", `{"op": "take_along_axis", "params": {"axis": 0}, "inputs": {"arr": "absent.npy", "indices": "in.npy"}, "out": "bad5"}` + "\n"} {
		os.RemoveAll("ok")
		os.WriteFile("jobs.jsonl", []byte(c+`{"op": "tril_indices", "params": {"row": 3, "col": 3}, "out": "ok"}`+"\n"), 0o644)
		if code := runBatch(nil, "jobs.jsonl"); code == 0 {
			t.Fatalf("batch %q: exit 0", c)
		}
		if _, err := os.Stat(filepath.Join("ok", "out.npy")); err != nil {
			t.Fatalf("batch %q stopped early: %v", c, err)
		}
	}
	if code := runBatch(nil, "absent.jsonl"); code == 0 {
		t.Fatal("missing batch file: exit 0")
	}
}
