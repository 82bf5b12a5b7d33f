package host

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"strings"
	"sync"
	"testing"
)

// Tests of the Vulkan backend on a real driver (lavapipe in CI) with the
// validation layer on: every message it reports fails the call that
// provoked it. They are self-contained (no helpers shared with the
// backend-neutral suite in device_test.go) so that `go test -run Vulkan`
// covers the whole backend.

var vktTriSpec = KernelSpec{File: "tri_indices", Variant: "i64", Entry: "tri_indices"}

// vktOpen opens the first usable Vulkan device with validation on. Without
// one it skips, or fails when $CI is "true".
func vktOpen(t *testing.T) *vkDevice {
	t.Helper()
	caps, err := vulkanEnumerate(Options{Validation: true})
	var c Caps
	if err == nil {
		c, err = Select(caps, Vulkan)
	}
	var d Device
	if err == nil {
		d, err = vulkanOpen(c.Index, Options{Validation: true})
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no usable Vulkan device in CI: %v", err)
		}
		t.Skipf("no usable Vulkan device: %v", err)
	}
	return d.(*vkDevice)
}

// vktClose closes d and fails the test on any error, leak reports included.
func vktClose(t *testing.T, d *vkDevice) {
	t.Helper()
	if err := d.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

func vktInt64s(b []byte) []int64 {
	v := make([]int64, len(b)/8)
	for i := range v {
		v[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return v
}

// vktTril runs tril_indices(4, 3, 0) (N = 9) with plan into a poisoned
// buffer and checks the rows and columns.
func vktTril(d *vkDevice, plan Plan) error {
	k, err := d.Kernel(vktTriSpec, plan)
	if err != nil {
		return err
	}
	const n = 9
	out, err := d.Alloc(2 * n * 8)
	if err != nil {
		return err
	}
	defer out.Release()
	if err := d.Fill(out, 0, 2*n*8, bytes.Repeat([]byte{0xAB}, 8)); err != nil {
		return err
	}
	// output, N, C, lead (empty rows), n (trapezoid rows), a, T, upper
	args := []Arg{BufArg(out), I64(n), I64(0), I64(3), I64(0), I64(2), I64(1), I64(3), I64(0)}
	if _, err := d.Launch(k, plan, args...); err != nil {
		return err
	}
	got := make([]byte, 2*n*8)
	if err := d.Download(out, 0, got); err != nil {
		return err
	}
	want := []int64{0, 1, 1, 2, 2, 2, 3, 3, 3, 0, 0, 1, 0, 1, 2, 0, 1, 2}
	if g := vktInt64s(got); fmt.Sprint(g) != fmt.Sprint(want) {
		return fmt.Errorf("plan %v: tril_indices(4, 3, 0) = %v, want %v", plan, g, want)
	}
	return nil
}

func TestVulkanEnumerate(t *testing.T) {
	caps, err := vulkanEnumerate(Options{})
	if err != nil || len(caps) == 0 {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no Vulkan device in CI: %v", err)
		}
		t.Skipf("no Vulkan device: %v", err)
	}
	usable := 0
	for i, c := range caps {
		t.Logf("%s %q vendor=%s driver=%q platform=%q type=%s cu=%d wg=%d groups=%v local=%d subgroup=%d global=%d maxalloc=%d storage=%d fp64=%v int64=%v i64atomics=%v f32atomics=%v f64atomics=%v ts=%v period=%gns loop=%d exts=%d unusable=%q",
			c.ID(), c.Name, c.Vendor, c.Driver, c.Platform, c.Type, c.ComputeUnits, c.MaxWorkGroupSize, c.MaxWorkGroupCount,
			c.LocalMemBytes, c.SubgroupSize, c.GlobalMemBytes, c.MaxAllocBytes, c.MaxStorageRange, c.FP64, c.Int64,
			c.Int64Atomics, c.Float32Atomics, c.Float64Atomics, c.Timestamps, c.TimestampPeriodNs, c.LoopLimit,
			len(c.Extensions), c.Unusable)
		if c.Backend != Vulkan || c.Index != i || c.Name == "" || c.Vendor == "" || c.Driver == "" {
			t.Errorf("device %d: incomplete identity: %+v", i, c)
		}
		if !strings.HasPrefix(c.Platform, "Vulkan 1.") {
			t.Errorf("device %d: platform %q, want the API version", i, c.Platform)
		}
		if c.Unusable != "" {
			continue
		}
		usable++
		if c.MaxWorkGroupSize < 1 || c.MaxWorkGroupCount[0] < 1 || c.ComputeUnits < 1 || c.LocalMemBytes < 1 ||
			c.GlobalMemBytes < 1 || c.MaxAllocBytes < 1 || c.MaxStorageRange < 1 || !c.Int64 {
			t.Errorf("device %d: implausible limits: %+v", i, c)
		}
		if c.Timestamps && c.TimestampPeriodNs <= 0 {
			t.Errorf("device %d: timestamps with period %g ns", i, c.TimestampPeriodNs)
		}
		if c.Float32Atomics && !vktHas(c.Extensions, "VK_EXT_shader_atomic_float") {
			t.Errorf("device %d: float atomics without VK_EXT_shader_atomic_float", i)
		}
		if c.Type == TypeCPU && strings.Contains(strings.ToLower(c.Name), "llvmpipe") && c.LoopLimit == 0 {
			t.Errorf("device %d: llvmpipe without its loop limit", i)
		}
	}
	if usable == 0 && os.Getenv("CI") == "true" {
		t.Fatal("no usable Vulkan device in CI")
	}
}

func vktHas(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestVulkanMemory(t *testing.T) {
	vktBothPaths(t, vktMemory)
}

func TestVulkanFillCopy(t *testing.T) {
	vktBothPaths(t, vktFillCopy)
}

// vktBothPaths runs f on a device that maps its buffers where it can, and
// on one that always stages through vkCmdCopyBuffer (the discrete-GPU path).
func vktBothPaths(t *testing.T, f func(t *testing.T, d *vkDevice)) {
	for _, staged := range []bool{false, true} {
		t.Run(fmt.Sprintf("staged=%v", staged), func(t *testing.T) {
			d := vktOpen(t)
			defer vktClose(t, d)
			d.noMap = staged
			f(t, d)
		})
	}
}

func vktMemory(t *testing.T, d *vkDevice) {
	rng := rand.New(rand.NewSource(1))
	for _, size := range []int64{0, 1, 3, 4, 4096 + 5, 5<<20 + 7} {
		b, err := d.Alloc(size)
		if err != nil {
			t.Fatalf("Alloc(%d): %v", size, err)
		}
		if b.Size() != size {
			t.Fatalf("Alloc(%d).Size() = %d", size, b.Size())
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
		if size > 2 {
			// A partial download at an odd offset.
			part := make([]byte, size-2)
			if err := d.Download(b, 1, part[:size-2]); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(part, src[1:size-1]) {
				t.Fatalf("download of [1, %d) differs", size-1)
			}
		}
		if err := d.Upload(b, size, []byte{1}); err == nil {
			t.Fatalf("upload past the end of %d bytes: no error", size)
		}
		b.Release()
		b.Release() // idempotent
		if err := d.Download(b, 0, got[:0]); !errors.Is(err, ErrClosed) {
			t.Fatalf("download from a released buffer: %v, want ErrClosed", err)
		}
	}
	max := d.Caps().MaxAllocBytes
	_, err := d.Alloc(max + 1)
	if !errors.Is(err, ErrOutOfMemory) || !strings.Contains(err.Error(), fmt.Sprint(max+1)) {
		t.Fatalf("Alloc(MaxAllocBytes+1): %v, want ErrOutOfMemory naming the size", err)
	}
	if _, err := d.Alloc(-1); err == nil {
		t.Fatal("Alloc(-1): no error")
	}
}

func vktFillCopy(t *testing.T, d *vkDevice) {
	const size = 1<<16 + 13
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
	cases := []struct {
		pat       []byte
		off, size int64
	}{
		{[]byte{7}, 0, size},    // whole buffer, unaligned tail
		{[]byte{7}, 3, 1001},    // unaligned head and tail
		{[]byte{9}, 5, 2},       // head only
		{[]byte{1, 2}, 2, 10},   // 2-byte pattern, unaligned head
		{[]byte{1, 2}, 6, 4098}, // head and tail
		{[]byte{1, 2, 3, 4}, 4, 8000},
		{[]byte{5, 6, 7, 8, 5, 6, 7, 8}, 8, 800}, // 8-byte pattern that repeats every 4
		{[]byte{1, 2, 3, 4, 5, 6, 7, 8}, 24, 8000},
		{[]byte{1, 2, 3, 4, 5, 6, 7, 8}, 8, 8},
		{[]byte{0xAB}, 17, 0},
	}
	for _, tc := range cases {
		want := make([]byte, size)
		rand.New(rand.NewSource(tc.off)).Read(want)
		if err := d.Upload(a, 0, want); err != nil {
			t.Fatal(err)
		}
		if err := d.Fill(a, tc.off, tc.size, tc.pat); err != nil {
			t.Fatalf("Fill(%d, %d, % x): %v", tc.off, tc.size, tc.pat, err)
		}
		for i := tc.off; i < tc.off+tc.size; i++ {
			want[i] = tc.pat[(i-tc.off)%int64(len(tc.pat))]
		}
		got := make([]byte, size)
		if err := d.Download(a, 0, got); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("Fill(%d, %d, % x): wrong bytes", tc.off, tc.size, tc.pat)
		}
		// Copy all but the first and last bytes, at shifted offsets.
		if err := d.Fill(c, 0, size, []byte{0}); err != nil {
			t.Fatal(err)
		}
		dur, err := d.Copy(c, 1, a, 3, size-4)
		if err != nil {
			t.Fatal(err)
		}
		if dur < 0 {
			t.Fatalf("Copy took %v", dur)
		}
		if err := d.Download(c, 0, got); err != nil {
			t.Fatal(err)
		}
		wantC := make([]byte, size)
		copy(wantC[1:], want[3:size-1])
		if !bytes.Equal(got, wantC) {
			t.Fatalf("Copy after Fill(%d, %d, % x): wrong bytes", tc.off, tc.size, tc.pat)
		}
	}
	for _, bad := range []struct {
		pat       []byte
		off, size int64
	}{{[]byte{1, 2, 3}, 0, 3}, {[]byte{1, 2}, 1, 2}, {[]byte{1, 2, 3, 4}, 0, 6}, {[]byte{1}, size - 1, 2}} {
		if err := d.Fill(a, bad.off, bad.size, bad.pat); err == nil {
			t.Fatalf("Fill(%d, %d, % x): no error", bad.off, bad.size, bad.pat)
		}
	}
	if _, err := d.Copy(a, 8, a, 0, 16); err == nil {
		t.Fatal("overlapping Copy within one buffer: no error")
	}
	if _, err := d.Copy(a, 0, c, 1, size); err == nil {
		t.Fatal("Copy past the end: no error")
	}
	if _, err := d.Copy(a, 16, a, 0, 16); err != nil {
		t.Fatalf("adjacent Copy within one buffer: %v", err)
	}
}

func TestVulkanKernel(t *testing.T) {
	d := vktOpen(t)
	defer vktClose(t, d)
	c := d.Caps()
	plan := PlanElementwise("tri_indices", c, 9)
	if err := vktTril(d, plan); err != nil {
		t.Fatal(err)
	}
	k1, err := d.Kernel(vktTriSpec, plan)
	if err != nil {
		t.Fatal(err)
	}
	k2, err := d.Kernel(vktTriSpec, plan)
	if err != nil {
		t.Fatal(err)
	}
	if k1 != k2 || len(d.kernels) != 1 {
		t.Fatalf("second Kernel() call built a new pipeline (%d cached)", len(d.kernels))
	}
	// A tiny tile over a 3-D grid: 6 groups of 8 invocations, one element
	// each, so the grid stride crosses all three dimensions.
	odd := plan
	odd.LocalSize = 8
	odd.Knobs = []Knob{{Name: "ITEMS", ID: 1, Value: 1}, {Name: "CONTIG", ID: 2, Value: 0}}
	odd.Groups = [3]int64{3, 2, 1}
	if err := vktTril(d, odd); err != nil {
		t.Fatal(err)
	}
	if k3, _ := d.Kernel(vktTriSpec, odd); k3 == k1 {
		t.Fatal("a different local size and knobs hit the same pipeline")
	}
	// Fewer groups than tiles, contiguous runs: the stride loops.
	one := odd
	one.Groups = [3]int64{1, 1, 1}
	one.Knobs = []Knob{{Name: "ITEMS", ID: 1, Value: 1}, {Name: "CONTIG", ID: 2, Value: 1}}
	if err := vktTril(d, one); err != nil {
		t.Fatal(err)
	}

	if _, err := d.Launch(k1, plan, make([]Arg, MaxArgs+1)...); err == nil {
		t.Fatal("launch with too many args: no error")
	}
	bad := plan
	bad.Groups = [3]int64{0, 1, 1}
	if _, err := d.Launch(k1, bad, I64(0)); err == nil {
		t.Fatal("launch with zero groups: no error")
	}
	bad = plan
	bad.LocalSize = c.MaxWorkGroupSize + 1
	if _, err := d.Kernel(vktTriSpec, bad); err == nil {
		t.Fatal("kernel with a local size above the device limit: no error")
	}
	bad = plan
	bad.LocalSize = plan.LocalSize / 2
	if _, err := d.Launch(k1, bad, I64(0)); err == nil {
		t.Fatal("launch with another local size than the kernel's: no error")
	}
	bad = plan
	bad.Knobs = []Knob{{Name: "X", ID: 0, Value: 1}}
	if _, err := d.Kernel(vktTriSpec, bad); err == nil {
		t.Fatal("knob with constant id 0: no error")
	}
	bad.Knobs = []Knob{{Name: "X", ID: 1, Value: 1 << 40}}
	if _, err := d.Kernel(vktTriSpec, bad); err == nil {
		t.Fatal("knob beyond 32 bits: no error")
	}
	if _, err := d.Kernel(KernelSpec{File: "no_such_kernel", Variant: "i64"}, plan); err == nil {
		t.Fatal("unknown kernel: no error")
	}

	// A kernel or buffer of another device is refused, not dereferenced.
	other := vktOpen(t)
	defer vktClose(t, other)
	ko, err := other.Kernel(vktTriSpec, plan)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Launch(ko, plan, I64(0)); err == nil {
		t.Fatal("launch of another device's kernel: no error")
	}
	bo, err := other.Alloc(16)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Launch(k1, plan, BufArg(bo)); err == nil {
		t.Fatal("launch with another device's buffer: no error")
	}
}

// TestVulkanBeyondStorageRange writes a buffer larger than
// maxStorageBufferRange (128 MiB on lavapipe) from a kernel: buffers reach
// kernels as device addresses, so no binding range limits them.
func TestVulkanBeyondStorageRange(t *testing.T) {
	d := vktOpen(t)
	defer vktClose(t, d)
	c := d.Caps()
	if c.MaxStorageRange == 0 || 2*c.MaxStorageRange > c.MaxAllocBytes {
		t.Skipf("storage range %d, max alloc %d", c.MaxStorageRange, c.MaxAllocBytes)
	}
	// tril_indices(n, 1, 0) has n elements: rows 0..n-1, all columns 0.
	n := c.MaxStorageRange/8 + 4096 // the rows array alone exceeds the range
	out, err := d.Alloc(2 * n * 8)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	if err := d.Fill(out, 0, 2*n*8, []byte{0xAB}); err != nil {
		t.Fatal(err)
	}
	plan := PlanElementwise("tri_indices", c, n)
	k, err := d.Kernel(vktTriSpec, plan)
	if err != nil {
		t.Fatal(err)
	}
	// C = 1: every row holds one element; no trapezoid (lead 0, n 0, a 0, T 0).
	if _, err := d.Launch(k, plan, BufArg(out), I64(n), I64(0), I64(1), I64(0), I64(0), I64(0), I64(0), I64(0)); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 16)
	for _, i := range []int64{0, 1, n / 2, n - 2, n - 1} {
		if err := d.Download(out, i*8, got[:8]); err != nil {
			t.Fatal(err)
		}
		if err := d.Download(out, (n+i)*8, got[8:]); err != nil {
			t.Fatal(err)
		}
		if v := vktInt64s(got); v[0] != i || v[1] != 0 {
			t.Fatalf("element %d: (row, col) = %v, want (%d, 0)", i, v, i)
		}
	}
}

func TestVulkanConcurrent(t *testing.T) {
	d := vktOpen(t)
	defer vktClose(t, d)
	plan := PlanElementwise("tri_indices", d.Caps(), 9)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 8; i++ {
				if err := vktTril(d, plan); err != nil {
					errs <- fmt.Errorf("goroutine %d, launch %d: %w", g, i, err)
					return
				}
				b, err := d.Alloc(64)
				if err != nil {
					errs <- err
					return
				}
				if err := d.Fill(b, 0, 64, []byte{byte(g)}); err != nil {
					errs <- err
					return
				}
				if _, err := d.Copy(b, 0, b, 32, 32); err != nil {
					errs <- err
					return
				}
				got := make([]byte, 64)
				if err := d.Download(b, 0, got); err != nil {
					errs <- err
					return
				}
				b.Release()
				if !bytes.Equal(got, bytes.Repeat([]byte{byte(g)}, 64)) {
					errs <- fmt.Errorf("goroutine %d: fill/copy/download mixed up: % x", g, got)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestVulkanValidationCatches proves that a validation message turns into
// an error: an unaligned vkCmdFillBuffer offset breaks a valid-usage rule.
// The message reaches only the device that caused it.
func TestVulkanValidationCatches(t *testing.T) {
	d := vktOpen(t)
	defer vktClose(t, d)
	bystander := vktOpen(t)
	defer vktClose(t, bystander)
	b, err := d.Alloc(64)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Release()
	if err := d.rawFill(b, 2, 8); !errors.Is(err, ErrValidation) {
		t.Fatalf("unaligned fill: %v, want ErrValidation", err)
	}
	if len(d.ValidationMessages()) == 0 {
		t.Fatal("no validation message recorded")
	}
	// The sink was drained: the next call is clean.
	if err := d.Fill(b, 0, 64, []byte{1}); err != nil {
		t.Fatalf("fill after the reported message: %v", err)
	}
	if _, err := bystander.Alloc(8); err != nil {
		t.Fatalf("another device saw the message: %v", err)
	}
	if m := bystander.ValidationMessages(); len(m) != 0 {
		t.Fatalf("another device recorded %q", m)
	}
}

func TestVulkanCloseReleasesAll(t *testing.T) {
	d := vktOpen(t)
	b, err := d.Alloc(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Alloc(3); err != nil {
		t.Fatal(err)
	}
	if err := vktTril(d, PlanElementwise("tri_indices", d.Caps(), 9)); err != nil {
		t.Fatal(err)
	}
	k, err := d.Kernel(vktTriSpec, PlanElementwise("tri_indices", d.Caps(), 9))
	if err != nil {
		t.Fatal(err)
	}
	d.mu.Lock()
	_, err = d.stagingLocked()
	d.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatalf("Close with live buffers, pipelines and staging: %v", err)
	}
	b.Release() // after Close: must not crash
	if _, err := d.Alloc(8); !errors.Is(err, ErrClosed) {
		t.Fatalf("Alloc after Close: %v, want ErrClosed", err)
	}
	if err := d.Upload(b, 0, []byte{1}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Upload after Close: %v, want ErrClosed", err)
	}
	if _, err := d.Launch(k, PlanElementwise("tri_indices", d.Caps(), 9)); !errors.Is(err, ErrClosed) {
		t.Fatalf("Launch after Close: %v, want ErrClosed", err)
	}
	if _, err := d.Kernel(vktTriSpec, PlanElementwise("tri_indices", d.Caps(), 9)); !errors.Is(err, ErrClosed) {
		t.Fatalf("Kernel after Close: %v, want ErrClosed", err)
	}
	if err := d.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// TestVulkanCloseReportsLeaks proves the leak check behind
// TestVulkanCloseReleasesAll is live: an object the device does not track
// makes the validation layer complain at vkDestroyDevice, and Close fail.
func TestVulkanCloseReportsLeaks(t *testing.T) {
	d := vktOpen(t)
	if err := d.leakBufferForTest(); err != nil {
		t.Fatal(err)
	}
	err := d.Close()
	if !errors.Is(err, ErrValidation) {
		t.Fatalf("Close with a leaked VkBuffer: %v, want ErrValidation", err)
	}
	t.Logf("reported: %.200s", err)
}

// TestVulkanStagedChunks moves more than one staging buffer's worth of data
// through the staging path: uploads, downloads and 8-byte fills that take
// several vkCmdCopyBuffer chunks.
func TestVulkanStagedChunks(t *testing.T) {
	d := vktOpen(t)
	defer vktClose(t, d)
	d.noMap = true
	d.stagingBytes = 1 << 16
	size := int64(2*d.stagingBytes + 24)
	b, err := d.Alloc(size)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Release()
	src := make([]byte, size)
	rand.New(rand.NewSource(2)).Read(src)
	if err := d.Upload(b, 0, src); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, size)
	if err := d.Download(b, 0, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, src) {
		t.Fatalf("staged round trip of %d bytes differs", size)
	}
	pat := []byte{1, 2, 3, 4, 5, 6, 7, 8}
	if err := d.Fill(b, 8, size-16, pat); err != nil {
		t.Fatal(err)
	}
	if err := d.Download(b, 0, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got[:8], src[:8]) || !bytes.Equal(got[size-8:], src[size-8:]) {
		t.Fatal("8-byte fill wrote outside its range")
	}
	if !bytes.Equal(got[8:size-8], bytes.Repeat(pat, int(size-16)/8)) {
		t.Fatal("staged 8-byte fill: wrong bytes")
	}
}
