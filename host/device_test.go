package host_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelkern/accel/host"
	"github.com/accelkern/accel/host/kernels"
)

// The backend-neutral device suite: every test here runs on each backend's
// first usable device (PoCL and lavapipe in CI, Vulkan with validation).
// It is an external test package because the kernel declarations it
// launches (package host/kernels) import package host.

func openBackend(t *testing.T, backend string) host.Device {
	t.Helper()
	d, err := host.Open(backend, host.Options{Validation: true})
	if err != nil {
		if os.Getenv("CI") == "true" {
			require.NoError(t, err, "no %s device in CI", backend)
		}
		t.Skipf("no %s device: %v", backend, err)
	}
	return d
}

func forBackends(t *testing.T, f func(t *testing.T, d host.Device)) {
	for _, b := range []string{host.OpenCL, host.Vulkan} {
		t.Run(b, func(t *testing.T) {
			d := openBackend(t, b)
			defer func() { assert.NoError(t, d.Close(), "Close") }()
			f(t, d)
		})
	}
}

// firstDiff returns the first offset at which a and b differ (the shorter
// length when one is a prefix of the other), or -1 when they are equal: a
// comparison of megabytes that reports one number, not a dump.
func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

func int64s(b []byte) []int64 {
	v := make([]int64, len(b)/8)
	for i := range v {
		v[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return v
}

func TestDeviceMemory(t *testing.T) {
	forBackends(t, func(t *testing.T, d host.Device) {
		rng := rand.New(rand.NewSource(1))
		for _, size := range []int64{0, 1, 3, 8, 4096 + 5, 5<<20 + 7} {
			b, err := d.Alloc(size)
			require.NoError(t, err, "Alloc(%d)", size)
			src := make([]byte, size)
			rng.Read(src)
			require.NoError(t, d.Upload(b, 0, src))
			got := make([]byte, size)
			require.NoError(t, d.Download(b, 0, got))
			require.Equal(t, -1, firstDiff(got, src), "round trip of %d bytes: first differing byte", size)
			b.Release()
			b.Release() // idempotent
		}
		_, err := d.Alloc(d.Caps().MaxAllocBytes + 1)
		require.ErrorIs(t, err, host.ErrOutOfMemory, "Alloc beyond MaxAllocBytes")
	})
}

func TestDeviceFillCopy(t *testing.T) {
	forBackends(t, func(t *testing.T, d host.Device) {
		const size = 1 << 16
		a, err := d.Alloc(size)
		require.NoError(t, err)
		defer a.Release()
		c, err := d.Alloc(size)
		require.NoError(t, err)
		defer c.Release()
		for _, pat := range [][]byte{{7}, {1, 2}, {1, 2, 3, 4}, {1, 2, 3, 4, 5, 6, 7, 8}} {
			want := make([]byte, size)
			require.NoError(t, d.Upload(a, 0, want))
			off, n := int64(8*3), int64(8*1000)
			require.NoError(t, d.Fill(a, off, n, pat), "Fill %d-byte pattern", len(pat))
			for i := off; i < off+n; i++ {
				want[i] = pat[(i-off)%int64(len(pat))]
			}
			require.NoError(t, d.Copy(c, 0, a, 0, size))
			got := make([]byte, size)
			require.NoError(t, d.Download(c, 0, got)) // waits for the queued fill and copy
			require.Equal(t, -1, firstDiff(got, want), "fill with %d-byte pattern then copy: first wrong byte", len(pat))
		}
	})
}

// TestDeviceSub: transfers through views (Device.Sub), a view of a view
// included, land at the view's offset in its buffer; a released buffer's
// views and out-of-range or misaligned views are refused.
func TestDeviceSub(t *testing.T) {
	forBackends(t, func(t *testing.T, d host.Device) {
		al := d.Caps().SubAlign
		require.Positive(t, al)
		size := 4 * al
		a, err := d.Alloc(size)
		require.NoError(t, err)
		want := make([]byte, size)
		require.NoError(t, d.Upload(a, 0, want))
		v, err := d.Sub(a, al, 2*al)
		require.NoError(t, err)
		require.EqualValues(t, 2*al, v.Size())
		w, err := d.Sub(v, al, al) // bytes [2al, 3al) of a
		require.NoError(t, err)
		require.NoError(t, d.Fill(v, 4, 8, []byte{9, 8, 7, 6}))
		copy(want[al+4:], []byte{9, 8, 7, 6, 9, 8, 7, 6})
		src := []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
		require.NoError(t, d.Upload(w, 4, src))
		copy(want[2*al+4:], src)
		require.NoError(t, d.Copy(a, 3*al, w, 4, 12)) // from a view to its buffer
		copy(want[3*al:], src)
		got := make([]byte, size)
		require.NoError(t, d.Download(a, 0, got))
		require.Equal(t, -1, firstDiff(got, want), "first wrong byte")
		part := make([]byte, 12)
		require.NoError(t, d.Download(w, 4, part))
		require.Equal(t, src, part)

		_, err = d.Sub(a, al/2, 4)
		require.Error(t, err, "misaligned")
		_, err = d.Sub(v, 0, 2*al+1)
		require.Error(t, err, "past the view's end")
		_, err = d.Sub(a, 0, 0)
		require.Error(t, err, "empty")
		w.Release()
		w.Release() // twice is fine
		require.Error(t, d.Download(w, 0, part), "a released view")
		a.Release()
		require.Error(t, d.Download(v, 0, part), "a view of a released buffer")
		v.Release()
	})
}

// TestDeviceLargeBuffers: buffers of a few MiB, which CPU OpenCL devices
// map themselves in huge pages (hostAlloc): a copy queued from one that is
// released before the copy ran still reads it, and large buffers
// allocated, filled and released in turn keep working.
func TestDeviceLargeBuffers(t *testing.T) {
	forBackends(t, func(t *testing.T, d host.Device) {
		const size = 6<<20 + 12
		src := make([]byte, size)
		rand.New(rand.NewSource(3)).Read(src)
		a, err := d.Alloc(size)
		require.NoError(t, err)
		c, err := d.Alloc(size)
		require.NoError(t, err)
		defer c.Release()
		require.NoError(t, d.Upload(a, 0, src))
		require.NoError(t, d.Copy(c, 0, a, 0, size))
		a.Release() // the queued copy still reads a
		got := make([]byte, size)
		require.NoError(t, d.Download(c, 0, got))
		require.Equal(t, -1, firstDiff(got, src), "copy out of a released buffer: first wrong byte")
		for i := 0; i < 8; i++ {
			b, err := d.Alloc(16 << 20)
			require.NoError(t, err, "Alloc %d", i)
			require.NoError(t, d.Fill(b, 0, 16<<20, []byte{byte(i)}))
			b.Release()
		}
		require.NoError(t, d.Sync())
	})
}

// triSpec is the kernel of tril_indices/triu_indices for int64 indices.
var triSpec = kernels.TriIndicesRun{}.Spec(kernels.TriIndicesI64)

// triCall is the launch of tril_indices(4, 3, 0) (N = 9) into out.
func triCall(out host.Buffer) kernels.TriIndicesRun {
	return kernels.TriIndicesRun{Dst: out, Count: 9, K0: 0, C: 3, Lead: 0, N: 2, A: 1, T: 3, Upper: 0}
}

var triWant = []int64{0, 1, 1, 2, 2, 2, 3, 3, 3, 0, 0, 1, 0, 1, 2, 0, 1, 2}

// runTri runs tril_indices(4, 3, 0) with plan into a poisoned buffer, once
// through Kernel and Launch and once through Dispatch, and checks the rows
// and columns each time.
func runTri(t *testing.T, d host.Device, plan host.Plan) {
	t.Helper()
	k, err := d.Kernel(triSpec, plan)
	require.NoError(t, err)
	require.Equal(t, triSpec, k.Spec())
	out, err := d.Alloc(18 * 8)
	require.NoError(t, err)
	defer out.Release()
	poison := bytes.Repeat([]byte{0xAB}, 8)
	for _, via := range []string{"Launch", "Dispatch"} {
		require.NoError(t, d.Fill(out, 0, 18*8, poison))
		if via == "Launch" {
			require.NoError(t, d.Launch(k, plan, triCall(out).AppendArgs(nil)))
		} else {
			require.NoError(t, host.Dispatch(d, "i64", plan, triCall(out)))
		}
		got := make([]byte, 18*8)
		require.NoError(t, d.Download(out, 0, got))
		require.Equal(t, triWant, int64s(got), "plan %v, through %s", plan, via)
	}
}

func TestDeviceKernel(t *testing.T) {
	forBackends(t, func(t *testing.T, d host.Device) {
		plan := host.PlanElementwise("tri", d.Caps(), 9)
		runTri(t, d, plan)
		k1, err := d.Kernel(triSpec, plan)
		require.NoError(t, err)
		before := d.Stats()
		k2, err := d.Kernel(triSpec, plan)
		require.NoError(t, err)
		require.Same(t, k1, k2, "second Kernel() call built a new kernel: the cache missed")
		s := d.Stats().Sub(before)
		assert.Equal(t, int64(0), s.Compiles, "a cached kernel compiled again")
		assert.Equal(t, int64(1), s.CacheHits, "a cached kernel's lookup")

		odd := plan
		odd.LocalSize = 8
		odd.Knobs = []host.Knob{host.KnobItems.Set(1), host.KnobContig.Set(0)}
		odd.Groups = [3]int64{3, 2, 1}
		runTri(t, d, odd)

		// A launch takes exactly the entry's declared slots: no more
		// (MaxPushSlots+1 included, the old argument limit), no fewer, and
		// no buffer where it declares a scalar.
		out, err := d.Alloc(18 * 8)
		require.NoError(t, err)
		defer out.Release()
		args := triCall(out).AppendArgs(nil)
		require.Len(t, args, 9)
		require.ErrorContains(t, d.Launch(k1, plan, make([]host.Arg, host.MaxPushSlots+1)), "takes 9 arguments",
			"launch with too many args")
		require.ErrorContains(t, d.Launch(k1, plan, append(slices.Clone(args), host.I64(0))), "takes 9 arguments",
			"launch with an argument more than declared")
		require.ErrorContains(t, d.Launch(k1, plan, args[:8]), "takes 9 arguments",
			"launch with an argument fewer than declared")
		bufInScalar := slices.Clone(args)
		bufInScalar[1] = host.BufArg(out)
		require.ErrorContains(t, d.Launch(k1, plan, bufInScalar), "is a scalar, got a buffer",
			"launch with a buffer in a scalar slot")
		require.NoError(t, d.Sync())
	})
}

// TestDeviceProgramPerFile: where the driver compiles kernels at their
// first launch (Caps.LazyKernels, PoCL) and no binary is stored, the
// entry points of a file launched with one plan come from one program, so
// the second costs no build; elsewhere each entry point is built alone.
// Both kernels are launched to check they are the right entry points.
func TestDeviceProgramPerFile(t *testing.T) {
	forBackends(t, func(t *testing.T, d host.Device) {
		plan := host.PlanElementwise("diag", d.Caps(), 8)
		scatter := kernels.DiagScatter{}.Spec(kernels.DiagW32)
		zero := kernels.DiagZero{}.Spec(kernels.DiagW32)
		before := d.Stats()
		k1, err := d.Kernel(scatter, plan)
		require.NoError(t, err)
		mid := d.Stats()
		assert.Equal(t, int64(1), mid.Sub(before).Compiles, "the first entry point builds")
		k2, err := d.Kernel(zero, plan)
		require.NoError(t, err)
		require.NotSame(t, k1, k2, "two entry points, one kernel object")
		assert.Equal(t, zero, k2.Spec())
		s := d.Stats().Sub(mid)
		if c := d.Caps(); c.LazyKernels && os.Getenv("ACCEL_DISK_CACHE") != "1" {
			assert.Equal(t, int64(0), s.Compiles, "%s: the second entry point of the file built a program", c.Name)
		} else {
			assert.Equal(t, int64(1), s.Compiles, "%s: the second entry point is built alone", c.Name)
		}
		// a 2x4 float32 matrix of 1s: scatter 7, 8 onto its diagonal, then
		// zero the diagonal again
		buf, err := d.Alloc(8 * 4)
		require.NoError(t, err)
		defer buf.Release()
		src, err := d.Alloc(2 * 4)
		require.NoError(t, err)
		defer src.Release()
		require.NoError(t, d.Fill(buf, 0, 8*4, []byte{0, 0, 0x80, 0x3f}))
		require.NoError(t, d.Upload(src, 0, []byte{0, 0, 0xe0, 0x40, 0, 0, 0, 0x41}))
		diag := func(c host.Call) []float32 {
			require.NoError(t, host.Dispatch(d, string(kernels.DiagW32), plan, c))
			got := make([]byte, 8*4)
			require.NoError(t, d.Download(buf, 0, got))
			out := make([]float32, 8)
			for i := range out {
				out[i] = math.Float32frombits(binary.LittleEndian.Uint32(got[4*i:]))
			}
			return out
		}
		args := kernels.DiagScatter{Full: buf, Diag: src, Count: 2, L: 2, Base: 0, Dstride: 5, N1: 1, N2: 1}
		assert.Equal(t, []float32{7, 1, 1, 1, 1, 8, 1, 1}, diag(args))
		assert.Equal(t, []float32{0, 1, 1, 1, 1, 0, 1, 1}, diag(kernels.DiagZero{Full: buf, Count: 2, L: 2, Base: 0, Dstride: 5, N1: 1, N2: 1}))
	})
}

// TestCLDump: with ACCEL_CL_DUMP set, each OpenCL program built from
// source (the disk cache not read) leaves its driver's binary and a text
// of its device, options and build log in that folder, named by file,
// variant and entry point (what a GPU run brings back to read offline:
// NVIDIA's PTX and ptxas's registers a kernel).
func TestCLDump(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("ACCEL_CL_DUMP", dir)
	d := openBackend(t, host.OpenCL)
	defer func() { assert.NoError(t, d.Close(), "Close") }()
	runTri(t, d, host.PlanElementwise("tri", d.Caps(), 9))
	txts, err := filepath.Glob(filepath.Join(dir, triSpec.Entry.File.Name+".*.txt"))
	require.NoError(t, err)
	require.Len(t, txts, 1, "one program built, one dump")
	text, err := os.ReadFile(txts[0])
	require.NoError(t, err)
	assert.Contains(t, string(text), "device "+d.Caps().Name)
	assert.Contains(t, string(text), "-DLOCAL_SIZE=", "the build's options")
	st, err := os.Stat(strings.TrimSuffix(txts[0], ".txt") + ".bin")
	require.NoError(t, err, "the program's binary")
	assert.Positive(t, st.Size(), "the program's binary")
}

// TestVKDump: with ACCEL_VK_DUMP set, each Vulkan pipeline leaves a text
// of its specialization constants, the driver's statistics and its
// internal representations in that folder, named by file, variant, entry
// point and local size.
func TestVKDump(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("ACCEL_VK_DUMP", dir)
	d := openBackend(t, host.Vulkan)
	defer func() { assert.NoError(t, d.Close(), "Close") }()
	plan := host.PlanElementwise("tri", d.Caps(), 9)
	runTri(t, d, plan)
	txts, err := filepath.Glob(filepath.Join(dir, fmt.Sprintf("%s.*-l%d-*.txt", triSpec.Entry.File.Name, plan.LocalSize)))
	require.NoError(t, err)
	require.Len(t, txts, 1, "one pipeline built, one dump")
	text, err := os.ReadFile(txts[0])
	require.NoError(t, err)
	assert.Contains(t, string(text), "device "+d.Caps().Name)
	assert.Contains(t, string(text), fmt.Sprintf("constants 0=%d ", plan.LocalSize), "the local size, specialization constant 0")
	k, err := d.Kernel(triSpec, plan)
	require.NoError(t, err)
	t.Logf("%s: %d representations, %d bytes of dump", d.Caps().Name, len(host.PipelineIR(k)), len(text))
	for _, r := range host.PipelineIR(k) {
		assert.Contains(t, string(text), "== "+r.Name+"\n", "each representation the driver gives")
	}
}

func TestDeviceConcurrent(t *testing.T) {
	forBackends(t, func(t *testing.T, d host.Device) {
		plan := host.PlanElementwise("tri", d.Caps(), 9)
		var wg sync.WaitGroup
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				// assert, not require: this is not the test's goroutine
				for i := 0; i < 10; i++ {
					k, err := d.Kernel(triSpec, plan)
					if !assert.NoError(t, err, "goroutine %d, launch %d", g, i) {
						return
					}
					out, err := d.Alloc(18 * 8)
					if !assert.NoError(t, err, "goroutine %d, launch %d", g, i) {
						return
					}
					if !assert.NoError(t, d.Launch(k, plan, triCall(out).AppendArgs(nil)), "goroutine %d, launch %d", g, i) {
						return
					}
					got := make([]byte, 18*8)
					if !assert.NoError(t, d.Download(out, 0, got), "goroutine %d, launch %d", g, i) {
						return
					}
					out.Release()
					if !assert.Equal(t, triWant, int64s(got), "goroutine %d, launch %d: wrong result under concurrency", g, i) {
						return
					}
				}
			}(g)
		}
		wg.Wait()
	})
}

func TestDeviceCloseReleasesAll(t *testing.T) {
	for _, backend := range []string{host.OpenCL, host.Vulkan} {
		t.Run(backend, func(t *testing.T) {
			d := openBackend(t, backend)
			b, err := d.Alloc(3 << 20) // CPU OpenCL: our own huge-page mapping
			require.NoError(t, err)
			plan := host.PlanElementwise("tri", d.Caps(), 9)
			runTri(t, d, plan)
			// work queued and never waited for: Close waits for it
			out, err := d.Alloc(18 * 8)
			require.NoError(t, err)
			require.NoError(t, d.Fill(out, 0, 18*8, []byte{0xAB}))
			require.NoError(t, host.Dispatch(d, "i64", plan, triCall(out)))
			require.NoError(t, d.Close())
			b.Release() // after Close: must not crash
			_, err = d.Alloc(8)
			require.ErrorIs(t, err, host.ErrClosed, "Alloc after Close")
			require.ErrorIs(t, d.Sync(), host.ErrClosed, "Sync after Close")
			require.NoError(t, d.Close(), "second Close")
		})
	}
}

// TestScatterVariantsBuild builds every scatter variant the device can run:
// the FADD=1 ones too, which on OpenCL compile the native float add only
// where the compiler announces it and the compare-and-swap loop elsewhere.
// Every entry point of each is built (one program per variant on OpenCL,
// one pipeline per entry on Vulkan).
func TestScatterVariantsBuild(t *testing.T) {
	forBackends(t, func(t *testing.T, d host.Device) {
		c := d.Caps()
		vs, err := host.Variants()
		require.NoError(t, err)
		plan := host.PlanElementwise("scatter", c, 1)
		built := 0
		for _, v := range vs {
			if v.File != "scatter" || v.Strict() {
				continue // the STRICT builds load in place of their plain variant where the device can run them
			}
			f64 := v.Name == "f64" || v.Name == "f64a"
			if (f64 && !c.FP64) || ((v.Name == "i64" || f64) && !c.Int64Atomics) {
				continue
			}
			if c.Backend == host.Vulkan && ((v.Name == "f32a" && !c.Float32Atomics) || (v.Name == "f64a" && !c.Float64Atomics)) {
				continue
			}
			for _, e := range kernels.Scatter.Entries {
				_, err := d.Kernel(host.KernelSpec{Entry: e, Variant: v.Name}, plan)
				assert.NoError(t, err, "%s:%s", v.Name, e.Name)
			}
			built++
		}
		require.Positive(t, built, "no scatter variant runs on %s", c.Name)
	})
}
