package accel

import (
	"fmt"
	"os"

	"github.com/accelkern/accel/host"
)

// The public types describing devices, their counters and how they are
// opened. Each has the fields of the runtime's (package host) type of the
// same role, so a value converts both ways; TestPublicTypesMatch checks
// that they stay in step.

// DeviceType classifies a device for default selection and launch
// planning: TypeCPU, TypeIntegratedGPU, TypeDiscreteGPU and so on.
type DeviceType = host.DeviceType

// Device types, in the order the default selection prefers them (highest
// first).
const (
	TypeOther         = host.TypeOther
	TypeCPU           = host.TypeCPU
	TypeVirtualGPU    = host.TypeVirtualGPU
	TypeIntegratedGPU = host.TypeIntegratedGPU
	TypeDiscreteGPU   = host.TypeDiscreteGPU
)

// FP32DivMode says how kernels divide float32 on a device
// (DeviceInfo.FP32Div): always correctly rounded, by whichever means the
// device allows.
type FP32DivMode = host.FP32DivMode

// DeviceInfo describes a device: its backend, index, name and
// capabilities. It is plain data; cmd/devinfo prints it.
type DeviceInfo struct {
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
	// buffer (a tensor view): CL_DEVICE_MEM_BASE_ADDR_ALIGN in OpenCL; in
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

// ID returns "backend:index", the device's selector.
func (c DeviceInfo) ID() string { return host.Caps(c).ID() }

// Stats are a device's counters since it was opened: submits and waits
// (host round trips), launches, transfers, barriers, device time and
// kernel compiles.
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
func (s Stats) Sub(o Stats) Stats { return Stats(host.Stats(s).Sub(host.Stats(o))) }

// Add returns s + o, counter by counter.
func (s Stats) Add(o Stats) Stats { return Stats(host.Stats(s).Add(host.Stats(o))) }

// PoolStats are the counters of a device's buffer pool: hits, misses
// (driver allocations), frees, and the bytes held idle and in use.
type PoolStats struct {
	Hits       int64 `json:"pool_hits"`         // allocations served from the free lists
	Misses     int64 `json:"pool_misses"`       // allocations that went to the driver
	Frees      int64 `json:"pool_frees"`        // driver buffers freed (eviction, trim, close)
	BytesHeld  int64 `json:"pool_bytes_held"`   // idle bytes kept for reuse
	BytesInUse int64 `json:"pool_bytes_in_use"` // class bytes handed out and not yet returned
	// PeakBytes is the most requested bytes on loan at once (the sizes
	// asked for, not their classes) since the pool was made or ResetPeak.
	PeakBytes int64 `json:"pool_peak_bytes"`
	CapBytes  int64 `json:"pool_cap_bytes"`
}

// Options configure OpenWith.
type Options struct {
	// Validation enables VK_LAYER_KHRONOS_validation on Vulkan devices; any
	// message it reports makes the next device call fail with ErrValidation.
	// ACCEL_VK_VALIDATION=1 in the environment turns it on too.
	Validation bool
	// Trace prints every command with its plan and device time to stderr
	// as it finishes. ACCEL_TRACE=1 in the environment turns it on too.
	Trace bool
	// Log receives the library's diagnostics, one message a call: the
	// trace lines (with Trace) and the log of a kernel build that produced
	// one (a driver's warnings). The library writes nothing to stdout or
	// stderr itself: with Log nil, these messages go to stderr only where
	// Trace or ACCEL_TRACE is set, and are dropped otherwise. A failed
	// build's log is in the returned error as well. Log may be called from
	// several goroutines at once.
	Log func(msg string)
	// Timing measures the device time of the work (Stats.DeviceNs):
	// timestamps around each Vulkan batch, profiling events on the OpenCL
	// queue. It is off by default because it is not free: lavapipe's
	// timestamps cost ~0.2 ms a batch, which is most of a small op there.
	// ACCEL_TIMING=1 in the environment turns it on too, and so does Trace.
	Timing bool
	// GuardBytes, when > 0, gives every tensor a device allocates that many
	// poisoned bytes past its end (from the next multiple of 4 bytes), and
	// as many before its start, rounded up to DeviceInfo.SubAlign: the
	// tensor is a view into a buffer that holds both bands. Reading the
	// tensor back checks them: a kernel that wrote outside its output
	// fails the read (ErrGuardBand). A testing aid: the test suites, fuzz
	// targets and the soak run with it. ACCEL_GUARD_BYTES=N in the
	// environment sets it too.
	GuardBytes int64
	// EmulateDiscrete makes a device with unified memory (a CPU driver,
	// an integrated GPU) keep its memory as a discrete GPU does, so the
	// paths only discrete GPUs take run on the CPU drivers too: Vulkan
	// device buffers are never mapped, so every upload and download goes
	// through host-visible staging buffers, in pieces; OpenCL buffers are
	// the driver's own (no huge-page host memory handed to it). A testing
	// aid (the accel tests turn it on with ACCEL_TEST_PLANS=gpu);
	// ACCEL_EMULATE_DISCRETE=1 in the environment turns it on too.
	EmulateDiscrete bool
	// GPUPlans makes every planner plan as for a discrete GPU, whatever
	// the device is (atomics, tiled radix sorts with look-back, lanes
	// interleaved, the GPU splits and partitions), and keeps memory as
	// EmulateDiscrete does: the GPU paths, run and checked on a CPU
	// driver before a GPU is at hand. The device's own limits still hold
	// (its work-group sizes, local memory, subgroups, loop limit), and
	// Info reports the device as a discrete GPU. A testing aid, slower
	// than the device's own plans on a CPU; the accel tests turn it on
	// with ACCEL_TEST_PLANS=gpu, and ACCEL_GPU_PLANS=1 in the environment
	// turns it on too (accel run, accel bench).
	GPUPlans bool
	// Poison, when set, is written over every output tensor an op
	// allocates before its kernels run (its first Size bytes of the
	// dtype, repeated), so an element an op fails to write shows as the
	// pattern instead of as stale memory. A testing aid: the test suites
	// run with it.
	Poison []byte
}

// host returns the runtime's options.
func (o Options) host() host.Options {
	return host.Options{Validation: o.Validation, Trace: o.Trace, Log: o.Log, Timing: o.Timing, GuardBytes: o.GuardBytes,
		EmulateDiscrete: o.EmulateDiscrete || o.gpuPlans()}
}

// gpuPlans says whether the planners plan as for a discrete GPU
// (Options.GPUPlans, or ACCEL_GPU_PLANS=1).
func (o Options) gpuPlans() bool { return o.GPUPlans || os.Getenv("ACCEL_GPU_PLANS") == "1" }

// PlanReport is the plan one of an op's families ran with, as Device.OnPlan
// reports it: the op, the family and the plan printed with its reasons.
//
// An op's own plan (not the plans of the primitives it runs, a sort's
// scans say) carries the traffic model of the whole op: ModelBytes, the
// device-memory bytes its passes read and write as modelled from the plan,
// beside MinBytes, the op's least (each input read and each output
// written once), and its launches and host waits. An op without a model
// leaves them 0.
type PlanReport struct {
	Op         string `json:"op"`
	Family     string `json:"family"`
	Plan       string `json:"plan"`
	ModelBytes int64  `json:"model_bytes,omitempty"`
	MinBytes   int64  `json:"min_bytes,omitempty"`
	Launches   int    `json:"launches,omitempty"`
	// Transfers is how many of the Launches are the driver's fills and
	// copies rather than kernels.
	Transfers int `json:"transfers,omitempty"`
	Waits     int `json:"waits,omitempty"`
}

// String prints "op family: plan", and the model where there is one.
func (r PlanReport) String() string {
	s := fmt.Sprintf("%s %s: %s", r.Op, r.Family, r.Plan)
	if r.ModelBytes > 0 {
		s += fmt.Sprintf(" [model %d B = %.2fx the least %d B, %d launches, %d waits]", r.ModelBytes,
			float64(r.ModelBytes)/float64(max(r.MinBytes, 1)), r.MinBytes, r.Launches, r.Waits)
	}
	return s
}

// OnPlan makes d call f with the plan of every op family it runs from now
// on (a scatter's path, a sort's passes, a sparse union's strategy, an
// elementwise launch), on the goroutine of the op, before its work is
// queued. f must not call d. OnPlan(nil) stops it. A device opened with
// Options.Trace (or ACCEL_TRACE) writes every plan to its log as well.
func (d *Device) OnPlan(f func(PlanReport)) {
	if f == nil {
		d.onPlan.Store(nil)
		return
	}
	d.onPlan.Store(&f)
}

// reporting says whether anyone reads plans: an OnPlan hook or the
// trace. Ops that plan only to report (a model's plans) ask first.
func (d *Device) reporting() bool { return d.onPlan.Load() != nil || d.trace != nil }

// report hands a plan to the OnPlan hook and the trace, if any.
func (d *Device) report(op, family string, plan fmt.Stringer) {
	if !d.reporting() {
		return
	}
	f := d.onPlan.Load()
	d.deliver(f, PlanReport{Op: op, Family: family, Plan: plan.String()})
}

func (d *Device) deliver(f *func(PlanReport), r PlanReport) {
	if d.trace != nil {
		d.trace("accel: " + d.caps.ID() + " plan " + r.String())
	}
	if f != nil {
		(*f)(r)
	}
}

// reportModel hands an op's own plan to the OnPlan hook, with the op's
// traffic model t (computed only when someone listens) and its least
// bytes.
func (d *Device) reportModel(op, family string, plan fmt.Stringer, t func() traffic, minBytes int64) {
	if !d.reporting() {
		return
	}
	f := d.onPlan.Load()
	m := t()
	kernel := func(kind passKind, bytes int64) bool {
		ours := false
		if kind == passFill {
			_, ours = d.planner.fill(d.caps, bytes/4)
		} else {
			_, ours = d.planner.copy(d.caps, bytes/4)
		}
		return ours && bytes%4 == 0
	}
	d.deliver(f, PlanReport{Op: op, Family: family, Plan: plan.String(), ModelBytes: m.Bytes(), MinBytes: minBytes,
		Launches: m.Launches(), Transfers: m.transfers(kernel), Waits: m.Waits})
}

// planTrace is where a device opened with opts traces its plans: Log,
// else stderr, where Trace or ACCEL_TRACE asks for a trace; else nil.
func planTrace(opts Options) func(string) {
	if !opts.Trace && os.Getenv("ACCEL_TRACE") == "" {
		return nil
	}
	if opts.Log != nil {
		return opts.Log
	}
	return func(msg string) { fmt.Fprintln(os.Stderr, msg) }
}

// SelectDevice picks from all (Devices' list) the device a selector names,
// as Open would, without opening it: "" (a discrete GPU, then an
// integrated one, then the rest, OpenCL before Vulkan on ties, skipping
// unusable devices), "opencl" or "vulkan", "backend:index", or
// "backend:substring" matching the name, vendor or platform
// case-insensitively; a bare substring matches on either backend.
func SelectDevice(all []DeviceInfo, selector string) (DeviceInfo, error) {
	caps := make([]host.Caps, len(all))
	for i, c := range all {
		caps[i] = host.Caps(c)
	}
	c, err := host.Select(caps, selector)
	return DeviceInfo(c), err
}
