// Package host is the device layer under package accel: backend-neutral
// device capabilities, buffers, kernel caches, launch planning and the two
// backends (OpenCL through our own binding, clbind.go, Vulkan through vulkan-go), each behind
// the small Device interface below.
//
// Kernels are written once per language (clkernels/*.cl for OpenCL C,
// shaders/*.comp for GLSL) and share their index math through the portable
// headers in clkernels/common; their interfaces (entry points, arguments,
// knobs and shared codes) are declared once in package host/kernels (see
// FileDecl). Every kernel takes its arguments as a list of 64-bit slots: a
// buffer (a cl_mem in OpenCL, a buffer device address in Vulkan) or a
// 64-bit scalar. In Vulkan the slots form the push-constant block (or a
// parameter block it points to), so kernels need no descriptor sets and no
// binding is limited by maxStorageBufferRange.
package host

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// Sentinel errors; backends wrap them with %w so callers can use errors.Is.
var (
	// ErrNoDevice reports that no device matched a request.
	ErrNoDevice = errors.New("no device")
	// ErrUnsupported reports that a device lacks a feature an operation
	// needs, or that the operation does not take an input of that kind on
	// any device (the error's text says which).
	ErrUnsupported = errors.New("unsupported")
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

	// ComputeUnits: OpenCL's compute units; on Vulkan NVIDIA's SMs or AMD's
	// compute units where their extension reports them, the cores of a
	// CPU driver, else a guess of 64.
	ComputeUnits      int      `json:"compute_units"`
	MaxWorkGroupSize  int      `json:"max_work_group_size"`
	MaxWorkGroupCount [3]int64 `json:"max_work_group_count"` // per dispatch dimension
	LocalMemBytes     int64    `json:"local_mem_bytes"`
	SubgroupSize      int      `json:"subgroup_size"` // 0 when the device reports none
	GlobalMemBytes    int64    `json:"global_mem_bytes"`
	MaxAllocBytes     int64    `json:"max_alloc_bytes"`
	MaxStorageRange   int64    `json:"max_storage_buffer_range"` // Vulkan only; 0 = no limit
	// SubAlign is the alignment, in bytes, of a view's offset into its
	// buffer (Device.Sub): CL_DEVICE_MEM_BASE_ADDR_ALIGN in OpenCL; in
	// Vulkan minStorageBufferOffsetAlignment, and at least 256 so that a
	// view's address keeps the alignment kernels assume of a buffer's.
	SubAlign     int64 `json:"sub_align"`
	FP64         bool  `json:"fp64"`
	Int64        bool  `json:"int64"`
	Int64Atomics bool  `json:"int64_atomics"`
	// Float32Atomics and Float64Atomics: kernels can add floats
	// atomically in global memory (Vulkan's shaderBufferFloat32/64AtomicAdd;
	// OpenCL's cl_ext_float_atomics, or on NVIDIA's GPUs PTX's
	// red.global.add through NV_TRICKS, with a compare-and-swap loop
	// where a driver refuses that: the same results either way).
	Float32Atomics bool `json:"float32_atomics"`
	Float64Atomics bool `json:"float64_atomics"`
	// SubgroupArith: subgroup arithmetic (add, inclusive and exclusive
	// scans) in compute shaders on 32-bit types; SubgroupArith64 also on
	// 64-bit types (shaderSubgroupExtendedTypes, enabled when present).
	// Vulkan only: the OpenCL path uses no subgroup operations.
	SubgroupArith   bool `json:"subgroup_arith"`
	SubgroupArith64 bool `json:"subgroup_arith64"`
	// SubgroupFixed: every dispatch runs subgroups of exactly
	// SubgroupSize invocations (the device's smallest and largest
	// subgroup sizes agree), so a work-group of that size is one subgroup.
	SubgroupFixed bool `json:"subgroup_fixed"`
	// SubgroupBallot: subgroup ballots (subgroupBallot and its bit
	// counts) in compute shaders, which the radix sort's ranking by
	// subgroups takes: Vulkan's, and on NVIDIA's OpenCL the warp's
	// votes in PTX (NV_TRICKS; SubgroupSize is then 32, the warp).
	SubgroupBallot bool `json:"subgroup_ballot"`
	// SubgroupControl: a pipeline can require subgroups of SubgroupSize
	// lanes, each whole (Vulkan's subgroup size control, core in 1.3):
	// the builds that use subgroup operations (the SG variants) require
	// them, so their subgroups are the size the plans count with even
	// where the driver would pick another (Intel's and AMD's may).
	SubgroupControl bool `json:"subgroup_control"`
	// FP32DivCorrect: float32 division can be had correctly rounded by
	// asking (OpenCL: CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT in the device's
	// single-precision config; programs are then built with
	// -cl-fp32-correctly-rounded-divide-sqrt). Vulkan has no such query:
	// a driver fact there (lavapipe's), set with the driver workarounds.
	FP32DivCorrect bool `json:"fp32_div_correct"`
	// FloatPreserve32 and FloatPreserve64: shaders may declare that they
	// preserve signed zeros, infinities and NaNs of 32- and 64-bit floats
	// (Vulkan's float controls, shaderSignedZeroInfNanPreserveFloat32/64);
	// OpenCL C always does, without -cl-fast-relaxed-math.
	FloatPreserve32 bool `json:"float_preserve32"`
	FloatPreserve64 bool `json:"float_preserve64"`
	// DenormPreserve32 and DenormPreserve64: shaders may declare that they
	// keep subnormal 32- and 64-bit floats (Vulkan's float controls,
	// shaderDenormPreserveFloat32/64; without the declaration NVIDIA's
	// compiler flushes float32 subnormals to zero). OpenCL: the device
	// reports CL_FP_DENORM for float32 (float64 always has them).
	DenormPreserve32 bool `json:"denorm_preserve32"`
	DenormPreserve64 bool `json:"denorm_preserve64"`
	// FP32Div says how the kernels divide float32 here (FP32DivMode):
	// correctly rounded, by the device's division where it can be asked
	// for that, else through float64 or in integers.
	FP32Div           FP32DivMode `json:"fp32_div"`
	Timestamps        bool        `json:"timestamps"`
	TimestampPeriodNs float64     `json:"timestamp_period_ns"`
	Extensions        []string    `json:"-"`
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
	FoldArgs bool `json:"fold_args,omitempty"`
	// SerialAtomics is a driver workaround flag: the driver runs a SIMD
	// vector's atomics one lane at a time, each locked instruction waiting
	// for its own cache miss before the next lane's starts (llvmpipe), so
	// atomic folds that can take a compare-and-swap loop beginning with a
	// plain load of every lane's word (a vector gather, whose misses
	// overlap) take it instead of an atomic add: on llvmpipe 16M float32
	// positions into 1M targets summed in 252 ms that way against 693-944
	// with the native float add, and a mean's hit counts cost 270 ms
	// where the atomic increment took 640.
	SerialAtomics bool `json:"serial_atomics,omitempty"`
	// LazyKernels is a driver workaround flag: the driver compiles a
	// program's kernels one by one at their first launch, not when the
	// program is built (PoCL), so a program may hold a whole kernel file
	// at no cost for the entry points not launched, and the OpenCL backend
	// builds one per file, variant and plan instead of one per entry
	// point: a build's fixed cost (the OpenCL C header parsed, the
	// built-in library linked, 0.2-0.5 s on PoCL) is paid once for the
	// passes of an op that share a plan. It does not apply where the
	// backend stores programs' binaries, which makes PoCL compile every
	// kernel of the program (storesBinaries).
	LazyKernels bool   `json:"lazy_kernels,omitempty"`
	Unusable    string `json:"unusable,omitempty"` // why kernels cannot run here, if they cannot
}

// FP32DivMode says how kernels divide float32 on a device (Caps.FP32Div).
type FP32DivMode string

// The ways kernels divide float32. Every op whose doc promises the
// reference's bits (sparse divide and its gradients, the float means of
// scatter_reduce and its gradients) keeps that promise in every mode but
// FP32DivDevice, which only ACCEL_FP32_DIV=device asks for.
const (
	// FP32DivNative: the device's own division, correctly rounded
	// (OpenCL devices reporting CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT,
	// built with -cl-fp32-correctly-rounded-divide-sqrt; lavapipe, whose
	// division is LLVM's on the host CPU): FDIV=0.
	FP32DivNative FP32DivMode = "correctly rounded"
	// FP32DivInteger: the quotient computed from the values' bits in
	// integer arithmetic (clkernels/common/arith.h's fdiv32_bits), which
	// no float rule of the device can change: Vulkan GPUs (Vulkan allows
	// 2.5 ulp and asks for no more), and OpenCL devices without the
	// capability, FDIV=2. A float64 quotient rounded to float32 is no way:
	// LLVM (every driver's compiler) folds fptrunc(fdiv(fpext a, fpext b))
	// into the float32 division, which these devices do not round
	// correctly; it was 1 ulp off on lavapipe and on an NVIDIA H200's
	// OpenCL.
	FP32DivInteger FP32DivMode = "correctly rounded (integer)"
	// FP32DivDevice: the device's own quotient, which OpenCL and Vulkan
	// allow to be 2.5 ulp off: float32 results of division may differ
	// from the reference's in their last bits. Only ACCEL_FP32_DIV=device
	// picks it, to compare.
	FP32DivDevice FP32DivMode = "within 2.5 ulp"
)

// fp32Div is the FP32DivMode of a device with these capabilities.
// ACCEL_FP32_DIV=native, integer or device overrides the choice (native
// only where the division is correctly rounded), to compare the ways on
// one device; the tests run each.
func fp32Div(c Caps) FP32DivMode {
	switch force := os.Getenv("ACCEL_FP32_DIV"); {
	case force == "device":
		return FP32DivDevice
	case force == "integer":
		return FP32DivInteger
	case force == "native" && c.FP32DivCorrect:
		return FP32DivNative
	}
	if c.FP32DivCorrect {
		return FP32DivNative
	}
	return FP32DivInteger
}

// ID returns "backend:index", the canonical selector for the device.
func (c Caps) ID() string { return fmt.Sprintf("%s:%d", c.Backend, c.Index) }

// Buffer is device memory owned by one Device.
type Buffer interface {
	// Size returns the buffer's size in bytes.
	Size() int64
	// Release frees the buffer. It is safe to call more than once, and
	// while queued work still uses the buffer: the memory is freed, or
	// reused, only once that work has finished.
	Release()
}

// Arg is one 64-bit kernel argument slot: a buffer (nil passes a null
// pointer) or a 64-bit scalar.
type Arg struct {
	Buf Buffer
	Val uint64
}

// BufArg passes a buffer; a nil buffer passes a null pointer.
func BufArg(b Buffer) Arg { return Arg{Buf: b} }

// I64 passes a signed 64-bit scalar (long in OpenCL C, int64_t in GLSL).
func I64(v int64) Arg { return Arg{Val: uint64(v)} }

// U64 passes an unsigned 64-bit scalar.
func U64(v uint64) Arg { return Arg{Val: v} }

// Knob is a compile-time tuning parameter: a -D define in OpenCL C and a
// specialization constant in GLSL, whose constant id the kernel file's
// declaration assigns (FileDecl.KnobID).
type Knob struct {
	Name  string `json:"name"`
	Value int64  `json:"value"`
}

// KnobKey names a knob that some kernel file declares: the generated
// variables Knob* (knobs_gen.go, one per knob name in host/kernels) are
// its only values, so a misspelt knob does not compile. The launch still
// checks that the kernel's own file declares it.
type KnobKey struct{ name string }

// Name returns the knob's name, e.g. "ITEMS".
func (k KnobKey) Name() string { return k.name }

// Set returns the knob set to v, for a Plan's Knobs.
func (k KnobKey) Set(v int64) Knob { return Knob{Name: k.name, Value: v} }

// Of returns the knob's value in p, or 0 when p does not set it.
func (k KnobKey) Of(p Plan) int64 { return p.Knob(k.name) }

// KernelSpec names a compiled kernel: an entry point of a kernel file and a
// variant the file declares (FileDecl.Variants; e.g. "f32").
type KernelSpec struct {
	Entry   *EntryDecl
	Variant string
}

// String returns "file.variant:entry".
func (s KernelSpec) String() string {
	return s.Entry.File.Name + "." + s.Variant + ":" + s.Entry.Name
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
	// MaxRegs caps the registers a work-item may use where the driver
	// takes such a cap (NVIDIA's OpenCL: -cl-nv-maxrregcount, CLOptions),
	// so that more work-groups fit a multiprocessor; 0 leaves the
	// compiler's choice. Other devices build as with 0. Set by
	// ACCEL_KNOBS's MAXREG (accel), to try on a GPU without a rebuild.
	MaxRegs int    `json:"max_regs,omitempty"`
	Reason  string `json:"reason"`
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
	if p.MaxRegs > 0 {
		fmt.Fprintf(&b, " MAXREG=%d", p.MaxRegs)
	}
	if p.Reason != "" {
		fmt.Fprintf(&b, " (%s)", p.Reason)
	}
	return b.String()
}

// Kernel is a compiled kernel (an OpenCL kernel object or a Vulkan
// pipeline), owned and cached by its Device.
type Kernel interface {
	Spec() KernelSpec
}

// Stats are a device's counters since it was opened.
type Stats struct {
	Submits   int64 `json:"submits"`   // batches handed to the driver (vkQueueSubmit, clFlush)
	Waits     int64 `json:"waits"`     // times the host blocked until queued device work finished
	Launches  int64 `json:"launches"`  // kernel launches recorded
	Transfers int64 `json:"transfers"` // copies, fills, uploads and downloads recorded
	Barriers  int64 `json:"barriers"`  // Vulkan: pipeline barriers between dependent commands
	// DeviceNs is the device time of the completed work, in nanoseconds,
	// where the device was opened with Options.Timing: per batch from its
	// first command's start to its last command's end (Vulkan
	// timestamps), or the sum of the commands' profiled times (OpenCL).
	// Commands of one batch that overlap count once.
	DeviceNs  int64 `json:"device_ns"`
	Compiles  int64 `json:"compiles"`   // programs or pipelines built
	CompileNs int64 `json:"compile_ns"` // wall time spent building them
	CacheHits int64 `json:"cache_hits"` // kernel lookups served from the cache
	DiskHits  int64 `json:"disk_hits"`  // kernels loaded from our disk cache instead of built
}

// Sub returns s - o, counter by counter.
func (s Stats) Sub(o Stats) Stats { return s.Add(o.scale(-1)) }

// Add returns s + o, counter by counter.
func (s Stats) Add(o Stats) Stats {
	return Stats{Submits: s.Submits + o.Submits, Waits: s.Waits + o.Waits, Launches: s.Launches + o.Launches,
		Transfers: s.Transfers + o.Transfers, Barriers: s.Barriers + o.Barriers, DeviceNs: s.DeviceNs + o.DeviceNs,
		Compiles: s.Compiles + o.Compiles, CompileNs: s.CompileNs + o.CompileNs, CacheHits: s.CacheHits + o.CacheHits,
		DiskHits: s.DiskHits + o.DiskHits}
}

func (s Stats) scale(k int64) Stats {
	return Stats{Submits: k * s.Submits, Waits: k * s.Waits, Launches: k * s.Launches, Transfers: k * s.Transfers,
		Barriers: k * s.Barriers, DeviceNs: k * s.DeviceNs, Compiles: k * s.Compiles, CompileNs: k * s.CompileNs,
		CacheHits: k * s.CacheHits, DiskHits: k * s.DiskHits}
}

// Device is one OpenCL device or Vulkan physical device. All methods are
// safe for concurrent use.
//
// Work is queued, not waited on: Upload, Fill, Copy and Launch record
// commands that run in call order (one in-order stream per device, with
// the barriers their buffers' dependencies need) and return at once;
// Flush hands what was recorded to the device; the host waits only in
// Download (for the work queued before it), Sync and Close. Upload takes
// its own copy of the data, so the caller may reuse it at once. An error
// of queued work (a device lost, say) surfaces at the next Flush, Sync or
// Download.
type Device interface {
	// Caps returns the device's capabilities.
	Caps() Caps
	// Alloc allocates size bytes of device memory (contents undefined).
	Alloc(size int64) (Buffer, error)
	// Upload queues a copy of src into dst at byte offset off.
	Upload(dst Buffer, off int64, src []byte) error
	// Download copies len(dst) bytes from src at byte offset off, after
	// the work queued so far has finished.
	Download(src Buffer, off int64, dst []byte) error
	// Fill queues a fill of size bytes at off with pattern (1, 2, 4 or 8
	// bytes) repeated.
	Fill(dst Buffer, off, size int64, pattern []byte) error
	// Copy queues a copy of size bytes between buffers.
	Copy(dst Buffer, dstOff int64, src Buffer, srcOff int64, size int64) error
	// Sub returns a view of bytes [off, off+size) of b: a Buffer that
	// kernels and transfers see as one of size bytes starting there (an
	// OpenCL sub-buffer; in Vulkan, b's address plus off). off must be a
	// multiple of Caps.SubAlign and size at least 1. Releasing the view
	// frees nothing of b; b must stay unreleased while the view is used.
	// A write through the view past its bounds lands in b, which is what
	// guard bands before a tensor's start rely on.
	Sub(b Buffer, off, size int64) (Buffer, error)
	// Kernel returns the compiled kernel for spec with the plan's local
	// size and knobs, building it on first use: once per key even under
	// concurrent first calls, outside the device's lock.
	Kernel(spec KernelSpec, plan Plan) (Kernel, error)
	// Launch queues k over plan's groups with args (the entry's declared
	// slots, in order).
	Launch(k Kernel, plan Plan, args []Arg) error
	// Flush hands the recorded work to the device without waiting.
	Flush() error
	// Sync waits until all work queued so far has finished.
	Sync() error
	// Stats returns the device's counters.
	Stats() Stats
	// Close waits for the device, then frees every driver object it owns.
	Close() error
}
