package host

import (
	"errors"
	"testing"
)

// TestVulkanValidationCatches proves that a validation message turns into
// an error: an unaligned vkCmdFillBuffer offset breaks a valid-usage rule.
func TestVulkanValidationCatches(t *testing.T) {
	d := openBackend(t, Vulkan)
	defer d.Close()
	vd := d.(*vkDevice)
	b, err := d.Alloc(64)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Release()
	if err := vd.rawFill(b, 2, 8); !errors.Is(err, ErrValidation) {
		t.Fatalf("unaligned fill: %v, want ErrValidation", err)
	}
	if len(vd.ValidationMessages()) == 0 {
		t.Fatal("no validation message recorded")
	}
}

// TestVulkanBeyondStorageRange writes a buffer larger than
// maxStorageBufferRange (128 MiB on lavapipe) from a kernel: buffers reach
// kernels as device addresses, so no binding range limits them.
func TestVulkanBeyondStorageRange(t *testing.T) {
	d := openBackend(t, Vulkan)
	defer d.Close()
	c := d.Caps()
	if c.MaxStorageRange == 0 || 2*c.MaxStorageRange > c.MaxAllocBytes {
		t.Skipf("storage range %d, max alloc %d", c.MaxStorageRange, c.MaxAllocBytes)
	}
	// tril_indices(n, 1, 0) has n elements: rows 0..n-1, all columns 0.
	n := c.MaxStorageRange/8 + 4096 // rows array alone exceeds the range
	out, err := d.Alloc(2 * n * 8)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	plan := PlanElementwise("tri", c, n)
	k, err := d.Kernel(KernelSpec{File: "tri_indices", Variant: "i64", Entry: "tri_indices"}, plan)
	if err != nil {
		t.Fatal(err)
	}
	// lower: lead=0 empty rows, n trapezoid rows? no: C=1, so row 0 has length 1
	// (a trapezoid of 0 rows) and every row is full: lead 0, n 0, a 0, T 0.
	if _, err := d.Launch(k, plan, BufArg(out), I64(n), I64(0), I64(1), I64(0), I64(0), I64(0), I64(0), I64(0)); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 16)
	for _, i := range []int64{0, n / 2, n - 1} {
		if err := d.Download(out, i*8, got[:8]); err != nil {
			t.Fatal(err)
		}
		if err := d.Download(out, (n+i)*8, got[8:]); err != nil {
			t.Fatal(err)
		}
		r := int64(0)
		for j := 7; j >= 0; j-- {
			r = r<<8 | int64(got[j])
		}
		if r != i || string(got[8:]) != string(make([]byte, 8)) {
			t.Fatalf("element %d: row %d (want %d), col bytes %v", i, r, i, got[8:])
		}
	}
}
