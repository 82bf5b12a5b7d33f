package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/accelkern/accel/accel"
)

func TestNpyRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for _, dt := range []accel.DType{accel.Int32, accel.Int64, accel.Uint32, accel.Uint64, accel.Float32, accel.Float64, accel.Bool} {
		for _, shape := range [][]int64{{}, {0}, {2, 0}, {3, 4}, {2, 1, 3}} {
			x, err := accel.NewTensor(dt, shape...)
			if err != nil {
				t.Fatal(err)
			}
			for i := range x.Bytes() {
				x.Bytes()[i] = byte(i * 7)
				if dt == accel.Bool {
					x.Bytes()[i] = byte(i % 2)
				}
			}
			p := filepath.Join(dir, fmt.Sprintf("%s_%d.npy", dt, len(shape)))
			if err := writeNpy(p, x); err != nil {
				t.Fatal(err)
			}
			y, err := readNpy(p)
			if err != nil {
				t.Fatalf("%s%v: %v", dt, shape, err)
			}
			if y.DType() != dt || fmt.Sprint(y.Shape()) != fmt.Sprint(x.Shape()) || !bytes.Equal(y.Bytes(), x.Bytes()) {
				t.Fatalf("%s%v round trip gave %s", dt, shape, y)
			}
		}
	}
}

func TestInterspersedFlags(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	b := fs.String("backend", "", "")
	var ps multi
	fs.Var(&ps, "param", "")
	pos, err := parseInterspersed(fs, []string{"tril_indices", "--backend", "opencl", "--param", "row=3", "--param", "col=4"})
	if err != nil || len(pos) != 1 || pos[0] != "tril_indices" || *b != "opencl" || len(ps) != 2 {
		t.Fatalf("pos %v backend %q params %v err %v", pos, *b, ps, err)
	}
}

func TestBatchRejection(t *testing.T) {
	dir := t.TempDir()
	jobs := fmt.Sprintf(`{"op": "tril_indices", "params": {"row": 3, "col": 3}, "out": %q}
{"op": "tril_indices", "params": {"row": -1, "col": 3}, "out": %q}
{"op": "triu_indices", "params": {"row": 9007199254740993, "col": 0, "offset": true}, "out": %q}
`, filepath.Join(dir, "ok"), filepath.Join(dir, "bad"), filepath.Join(dir, "bad2"))
	p := filepath.Join(dir, "jobs.jsonl")
	os.WriteFile(p, []byte(jobs), 0o644)
	if code := runBatch(nil, p); code != 0 {
		t.Fatalf("batch exit %d, want 0 (every job ended in outputs or a rejection)", code)
	}
	if _, err := os.Stat(filepath.Join(dir, "ok", "out.npy")); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"bad", "bad2"} {
		msg, err := os.ReadFile(filepath.Join(dir, bad, "error.txt"))
		if err != nil || len(msg) == 0 {
			t.Fatalf("%s: no error.txt: %v", bad, err)
		}
		if m, _ := filepath.Glob(filepath.Join(dir, bad, "*.npy")); len(m) > 0 {
			t.Fatalf("%s: rejected job wrote %v", bad, m)
		}
	}
	// a malformed line fails the batch
	os.WriteFile(p, []byte("{not json\n"), 0o644)
	if code := runBatch(nil, p); code == 0 {
		t.Fatal("malformed job line: exit 0")
	}
}
