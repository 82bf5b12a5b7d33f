package host

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"sync"
	"testing"
)

// The backend-neutral device suite: every test here runs on each backend's
// first usable device (PoCL and lavapipe in CI, Vulkan with validation).

func openBackend(t *testing.T, backend string) Device {
	t.Helper()
	d, err := Open(backend, Options{Validation: true})
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no %s device in CI: %v", backend, err)
		}
		t.Skipf("no %s device: %v", backend, err)
	}
	return d
}

func forBackends(t *testing.T, f func(t *testing.T, d Device)) {
	for _, b := range []string{OpenCL, Vulkan} {
		t.Run(b, func(t *testing.T) {
			d := openBackend(t, b)
			defer func() {
				if err := d.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			}()
			f(t, d)
		})
	}
}

func TestDeviceMemory(t *testing.T) {
	forBackends(t, func(t *testing.T, d Device) {
		rng := rand.New(rand.NewSource(1))
		for _, size := range []int64{0, 1, 3, 8, 4096 + 5, 5<<20 + 7} {
			b, err := d.Alloc(size)
			if err != nil {
				t.Fatalf("Alloc(%d): %v", size, err)
			}
			src := make([]byte, size)
			rng.Read(src)
			if err := d.Upload(b, 0, src); err != nil {
				t.Fatal(err)
			}
			got := make([]byte, size)
			if err := d.Download(b, 0, got); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, src) {
				t.Fatalf("round trip of %d bytes differs", size)
			}
			b.Release()
			b.Release() // idempotent
		}
		if _, err := d.Alloc(d.Caps().MaxAllocBytes + 1); !errors.Is(err, ErrOutOfMemory) {
			t.Fatalf("Alloc beyond MaxAllocBytes: %v, want ErrOutOfMemory", err)
		}
	})
}

func TestDeviceFillCopy(t *testing.T) {
	forBackends(t, func(t *testing.T, d Device) {
		const size = 1 << 16
		a, err := d.Alloc(size)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Release()
		c, err := d.Alloc(size)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Release()
		for _, pat := range [][]byte{{7}, {1, 2}, {1, 2, 3, 4}, {1, 2, 3, 4, 5, 6, 7, 8}} {
			want := make([]byte, size)
			if err := d.Upload(a, 0, want); err != nil {
				t.Fatal(err)
			}
			off, n := int64(8*3), int64(8*1000)
			if err := d.Fill(a, off, n, pat); err != nil {
				t.Fatalf("Fill %d-byte pattern: %v", len(pat), err)
			}
			for i := off; i < off+n; i++ {
				want[i] = pat[(i-off)%int64(len(pat))]
			}
			if _, err := d.Copy(c, 0, a, 0, size); err != nil {
				t.Fatal(err)
			}
			got := make([]byte, size)
			if err := d.Download(c, 0, got); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("fill with %d-byte pattern then copy: wrong bytes", len(pat))
			}
		}
	})
}

// triArgs are the kernel arguments of tril_indices(4, 3, 0): N = 9.
func triArgs(out Buffer) []Arg {
	return []Arg{BufArg(out), I64(9), I64(0), I64(3), I64(0), I64(2), I64(1), I64(3), I64(0)}
}

var triWant = []int64{0, 1, 1, 2, 2, 2, 3, 3, 3, 0, 0, 1, 0, 1, 2, 0, 1, 2}

func runTri(t *testing.T, d Device, plan Plan) {
	t.Helper()
	spec := KernelSpec{File: "tri_indices", Variant: "i64", Entry: "tri_indices"}
	k, err := d.Kernel(spec, plan)
	if err != nil {
		t.Fatal(err)
	}
	out, err := d.Alloc(18 * 8)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	if err := d.Fill(out, 0, 18*8, []byte{0xAB, 0xAB, 0xAB, 0xAB, 0xAB, 0xAB, 0xAB, 0xAB}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Launch(k, plan, triArgs(out)...); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 18*8)
	if err := d.Download(out, 0, got); err != nil {
		t.Fatal(err)
	}
	for i, w := range triWant {
		var v int64
		for j := 7; j >= 0; j-- {
			v = v<<8 | int64(got[8*i+j])
		}
		if v != w {
			t.Fatalf("plan %v: element %d = %d, want %d", plan, i, v, w)
		}
	}
}

func TestDeviceKernel(t *testing.T) {
	forBackends(t, func(t *testing.T, d Device) {
		plan := PlanElementwise("tri", d.Caps(), 9)
		runTri(t, d, plan)
		spec := KernelSpec{File: "tri_indices", Variant: "i64", Entry: "tri_indices"}
		k1, _ := d.Kernel(spec, plan)
		k2, _ := d.Kernel(spec, plan)
		if k1 != k2 {
			t.Fatal("second Kernel() call built a new kernel: the cache missed")
		}
		odd := plan
		odd.LocalSize = 8
		odd.Knobs = []Knob{{Name: "ITEMS", ID: 1, Value: 1}, {Name: "CONTIG", ID: 2, Value: 0}}
		odd.Groups = [3]int64{3, 2, 1}
		runTri(t, d, odd)
		if _, err := d.Launch(k1, plan, make([]Arg, MaxArgs+1)...); err == nil {
			t.Fatal("launch with too many args: no error")
		}
	})
}

func TestDeviceConcurrent(t *testing.T) {
	forBackends(t, func(t *testing.T, d Device) {
		plan := PlanElementwise("tri", d.Caps(), 9)
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 10; i++ {
					spec := KernelSpec{File: "tri_indices", Variant: "i64", Entry: "tri_indices"}
					k, err := d.Kernel(spec, plan)
					if err != nil {
						errs <- err
						return
					}
					out, err := d.Alloc(18 * 8)
					if err != nil {
						errs <- err
						return
					}
					if _, err := d.Launch(k, plan, triArgs(out)...); err != nil {
						errs <- err
						return
					}
					got := make([]byte, 18*8)
					if err := d.Download(out, 0, got); err != nil {
						errs <- err
						return
					}
					out.Release()
					if got[8*17] != 2 || got[8*8] != 3 {
						errs <- fmt.Errorf("wrong result under concurrency")
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
	})
}

func TestDeviceCloseReleasesAll(t *testing.T) {
	for _, backend := range []string{OpenCL, Vulkan} {
		t.Run(backend, func(t *testing.T) {
			d := openBackend(t, backend)
			b, err := d.Alloc(1 << 20)
			if err != nil {
				t.Fatal(err)
			}
			runTri(t, d, PlanElementwise("tri", d.Caps(), 9))
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
			b.Release() // after Close: must not crash
			if _, err := d.Alloc(8); !errors.Is(err, ErrClosed) {
				t.Fatalf("Alloc after Close: %v, want ErrClosed", err)
			}
			if err := d.Close(); err != nil {
				t.Fatalf("second Close: %v", err)
			}
		})
	}
}

// TestScatterVariantsBuild builds every scatter variant the device can run:
// the FADD=1 ones too, which on OpenCL compile the native float add only
// where the compiler announces it and the compare-and-swap loop elsewhere.
func TestScatterVariantsBuild(t *testing.T) {
	forBackends(t, func(t *testing.T, d Device) {
		c := d.Caps()
		vs, err := Variants()
		if err != nil {
			t.Fatal(err)
		}
		plan := PlanElementwise("scatter", c, 1)
		for _, v := range vs {
			if v.File != "scatter" {
				continue
			}
			f64 := v.Name == "f64" || v.Name == "f64a"
			if (f64 && !c.FP64) || ((v.Name == "i64" || f64) && !c.Int64Atomics) {
				continue
			}
			if c.Backend == Vulkan && ((v.Name == "f32a" && !c.Float32Atomics) || (v.Name == "f64a" && !c.Float64Atomics)) {
				continue
			}
			if _, err := d.Kernel(KernelSpec{File: "scatter", Variant: v.Name, Entry: "scatter"}, plan); err != nil {
				t.Errorf("%s: %v", v.Name, err)
			}
		}
	})
}
