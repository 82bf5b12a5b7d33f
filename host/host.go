// Package host is the device layer under package accel: backend-neutral
// device capabilities, buffers, kernel caches, launch planning and the two
// backends (OpenCL through go-opencl, Vulkan through vulkan-go), each behind
// the small Device interface below.
//
// Kernels are written once per language (clkernels/*.cl for OpenCL C,
// shaders/*.comp for GLSL) and share their index math through the portable
// headers in clkernels/common. Every kernel takes its arguments as a list of
// 64-bit slots: a buffer (a cl_mem in OpenCL, a buffer device address in
// Vulkan) or a 64-bit scalar. In Vulkan the slots form the push-constant
// block, so kernels need no descriptor sets and no binding is limited by
// maxStorageBufferRange.
package host

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Sentinel errors; backends wrap them with %w so callers can use errors.Is.
var (
	// ErrNoDevice reports that no device matched a request.
	ErrNoDevice = errors.New("no device")
	// ErrUnsupported reports that a device lacks a feature an operation needs.
	ErrUnsupported = errors.New("unsupported on this device")
	// ErrOutOfMemory reports that a device could not allocate a buffer.
	ErrOutOfMemory = errors.New("out of device memory")
	// ErrDriver reports an error returned by the driver.
	ErrDriver = errors.New("driver error")
	// ErrClosed reports use of a closed device or a released buffer.
	ErrClosed = errors.New("use of closed device or released buffer")
	// ErrValidation reports a message from the Vulkan validation layer.
	ErrValidation = errors.New("vulkan validation message")
)

// Backend names.
const (
	OpenCL = "opencl"
	Vulkan = "vulkan"
)

// DeviceType classifies a device for default selection and launch planning.
type DeviceType int

// Device types, in the order the default selection prefers them (highest first).
const (
	TypeOther DeviceType = iota
	TypeCPU
	TypeVirtualGPU
	TypeIntegratedGPU
	TypeDiscreteGPU
)

// String returns a short lower-case name such as "discrete-gpu".
func (t DeviceType) String() string {
	switch t {
	case TypeCPU:
		return "cpu"
	case TypeVirtualGPU:
		return "virtual-gpu"
	case TypeIntegratedGPU:
		return "integrated-gpu"
	case TypeDiscreteGPU:
		return "discrete-gpu"
	}
	return "other"
}

// MarshalText implements encoding.TextMarshaler.
func (t DeviceType) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// Caps describes one device. It is plain data: the launch planner takes it
// in, and devinfo prints it.
type Caps struct {
	Backend  string     `json:"backend"`  // "opencl" or "vulkan"
	Index    int        `json:"index"`    // position in the backend's own enumeration
	Platform string     `json:"platform"` // OpenCL platform name, or the Vulkan API version
	Name     string     `json:"name"`
	Vendor   string     `json:"vendor"`
	Driver   string     `json:"driver"` // driver name and version
	Type     DeviceType `json:"type"`

	ComputeUnits      int      `json:"compute_units"`
	MaxWorkGroupSize  int      `json:"max_work_group_size"`
	MaxWorkGroupCount [3]int64 `json:"max_work_group_count"` // per dispatch dimension
	LocalMemBytes     int64    `json:"local_mem_bytes"`
	SubgroupSize      int      `json:"subgroup_size"` // 0 when the device reports none
	GlobalMemBytes    int64    `json:"global_mem_bytes"`
	MaxAllocBytes     int64    `json:"max_alloc_bytes"`
	MaxStorageRange   int64    `json:"max_storage_buffer_range"` // Vulkan only; 0 = no limit
	FP64              bool     `json:"fp64"`
	Int64             bool     `json:"int64"`
	Int64Atomics      bool     `json:"int64_atomics"`
	Float32Atomics    bool     `json:"float32_atomics"`
	Float64Atomics    bool     `json:"float64_atomics"`
	// SubgroupArith: subgroup arithmetic (add, inclusive and exclusive
	// scans) in compute shaders on 32-bit types; SubgroupArith64 also on
	// 64-bit types (shaderSubgroupExtendedTypes, enabled when present).
	// Vulkan only: the OpenCL path uses no subgroup operations.
	SubgroupArith   bool `json:"subgroup_arith"`
	SubgroupArith64 bool `json:"subgroup_arith64"`
	// SubgroupFixed: every dispatch runs subgroups of exactly
	// SubgroupSize invocations (the device's smallest and largest
	// subgroup sizes agree), so a work-group of that size is one subgroup.
	SubgroupFixed     bool     `json:"subgroup_fixed"`
	Timestamps        bool     `json:"timestamps"`
	TimestampPeriodNs float64  `json:"timestamp_period_ns"`
	Extensions        []string `json:"-"`
	// LoopLimit is a driver workaround flag: the most loop iterations one
	// invocation may run before the driver cuts its loops short; 0 means no
	// limit. llvmpipe's counter (65535) is seen to span all the loops of an
	// invocation, nested ones included, not each loop alone, so the
	// planners keep an invocation's total iterations under half of it.
	LoopLimit int64 `json:"loop_limit,omitempty"`
	// FoldArgs is a driver workaround flag: the driver runs both sides of
	// every branch, even one on a value the same for every invocation
	// (llvmpipe masks SIMD lanes and never skips a branch), so kernels
	// take their mode-like arguments as knobs, folded at compile time,
	// instead of as run-time arguments (see Fold).
	FoldArgs bool   `json:"fold_args,omitempty"`
	Unusable string `json:"unusable,omitempty"` // why kernels cannot run here, if they cannot
}

// ID returns "backend:index", the canonical selector for the device.
func (c Caps) ID() string { return fmt.Sprintf("%s:%d", c.Backend, c.Index) }

// Buffer is device memory owned by one Device.
type Buffer interface {
	// Size returns the buffer's size in bytes.
	Size() int64
	// Release frees the buffer. It is safe to call more than once.
	Release()
}

// Arg is one 64-bit kernel argument slot: a buffer or a scalar.
type Arg struct {
	Buf Buffer
	Val uint64
}

// BufArg passes a buffer.
func BufArg(b Buffer) Arg { return Arg{Buf: b} }

// I64 passes a signed 64-bit scalar (long in OpenCL C, int64_t in GLSL).
func I64(v int64) Arg { return Arg{Val: uint64(v)} }

// U64 passes an unsigned 64-bit scalar.
func U64(v uint64) Arg { return Arg{Val: v} }

// MaxArgs is the most argument slots a kernel may take: 16 slots of 8 bytes
// fill the 128-byte push-constant block every Vulkan device guarantees.
const MaxArgs = 16

// Knob is a compile-time tuning parameter: a -D define in OpenCL C and a
// specialization constant (layout(constant_id = ID)) in GLSL.
type Knob struct {
	Name  string
	ID    int // specialization constant id; 0 is reserved for the local size
	Value int64
}

// KernelSpec names a kernel: a source file base name (clkernels/NAME.cl and
// shaders/NAME.VARIANT.spv), a variant from shaders/variants.txt, and the
// entry point (OpenCL kernel function; GLSL shaders always use "main").
type KernelSpec struct {
	File    string
	Variant string
	Entry   string
}

// Plan is a launch plan: plain data, computed from Caps by a planner, and
// printable. Kernels loop over their tiles with a grid stride of
// TotalGroups, so any Groups shape covers any amount of work.
type Plan struct {
	Kernel    string   `json:"kernel"`
	LocalSize int      `json:"local_size"`
	Groups    [3]int64 `json:"groups"`
	Knobs     []Knob   `json:"knobs"`
	Tiles     int64    `json:"tiles"`      // units of work the kernel loops over
	TileElems int64    `json:"tile_elems"` // elements per tile
	Reason    string   `json:"reason"`
}

// Knob returns the value of the knob named name, or 0 when the plan has
// none.
func (p Plan) Knob(name string) int64 {
	for _, k := range p.Knobs {
		if k.Name == name {
			return k.Value
		}
	}
	return 0
}

// TotalGroups returns the product of Groups.
func (p Plan) TotalGroups() int64 { return p.Groups[0] * p.Groups[1] * p.Groups[2] }

// String prints the plan on one line.
func (p Plan) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: local=%d groups=%dx%dx%d tiles=%d tile_elems=%d",
		p.Kernel, p.LocalSize, p.Groups[0], p.Groups[1], p.Groups[2], p.Tiles, p.TileElems)
	for _, k := range p.Knobs {
		fmt.Fprintf(&b, " %s=%d", k.Name, k.Value)
	}
	if p.Reason != "" {
		fmt.Fprintf(&b, " (%s)", p.Reason)
	}
	return b.String()
}

// Kernel is a compiled kernel (an OpenCL program or a Vulkan pipeline),
// owned and cached by its Device.
type Kernel interface {
	Spec() KernelSpec
}

// Device is one OpenCL device or Vulkan physical device. All methods are
// safe for concurrent use. Every call is synchronous: when it returns, the
// device work it started has finished.
type Device interface {
	// Caps returns the device's capabilities.
	Caps() Caps
	// Alloc allocates size bytes of device memory (contents undefined).
	Alloc(size int64) (Buffer, error)
	// Upload copies src into dst at byte offset off.
	Upload(dst Buffer, off int64, src []byte) error
	// Download copies len(dst) bytes from src at byte offset off.
	Download(src Buffer, off int64, dst []byte) error
	// Fill writes pattern (1, 2, 4 or 8 bytes) repeatedly over size bytes at off.
	Fill(dst Buffer, off, size int64, pattern []byte) error
	// Copy copies size bytes between buffers and returns the device time taken.
	Copy(dst Buffer, dstOff int64, src Buffer, srcOff int64, size int64) (time.Duration, error)
	// Kernel returns the compiled kernel for spec with the plan's local size
	// and knobs, building it on first use (cached by content).
	Kernel(spec KernelSpec, plan Plan) (Kernel, error)
	// Launch runs k with plan and args and returns the device time taken.
	Launch(k Kernel, plan Plan, args ...Arg) (time.Duration, error)
	// Close waits for the device, then frees every driver object it owns.
	Close() error
}
