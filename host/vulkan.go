package host

/*
#cgo LDFLAGS: -ldl -lpthread
#include <stdlib.h>
#include "vkshim.h"
*/
import "C"

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unsafe"

	vk "github.com/vulkan-go/vulkan"
)

// The Vulkan backend. vulkan-go loads the API (from libvulkan.so.1, which
// the shim opens: the binding's own loader wants the unversioned
// libvulkan.so that only the -dev package installs) and answers the
// enumeration and property queries; the shim in vkshim.c does what needs
// Vulkan 1.2 structs (see vkshim.h). Kernels get their buffers as device
// addresses in the push constants (or in a parameter block the push
// constants point to), so no binding is limited by maxStorageBufferRange
// and no descriptor sets exist.
//
// Commands are recorded into batches (a command buffer with its fence and
// timestamps) and submitted once per flush or wait; between two commands a
// barrier is recorded only where one writes a buffer the other touches
// (hazards are tracked per buffer and barrier epoch). Each buffer remembers
// the last batch that used it, so the host writes or reads it directly
// only once that batch has finished, and a released buffer is freed only
// then.

var (
	vkInitOnce sync.Once
	vkInitErr  error
	vkMu       sync.Mutex // serializes vulkan-go's global function table updates
)

func vkInit() error {
	vkInitOnce.Do(func() {
		if C.vks_load() != 0 {
			vkInitErr = fmt.Errorf("cannot load libvulkan.so.1 (install libvulkan1 and mesa-vulkan-drivers): %w", ErrNoDevice)
			return
		}
		vk.SetGetInstanceProcAddr(C.vks_get_instance_proc_addr())
		if err := vk.Init(); err != nil {
			vkInitErr = fmt.Errorf("vulkan init: %v: %w", err, ErrNoDevice)
		}
	})
	return vkInitErr
}

// vkInstance creates an instance (with the validation layer and a message
// sink if asked) and loads vulkan-go's instance functions for it. Release it
// with vkDropInstance.
func vkInstance(validation bool) (*C.vks_instance, error) {
	if err := vkInit(); err != nil {
		return nil, err
	}
	var vi *C.vks_instance
	var cerr [512]C.char
	v := C.int(0)
	if validation {
		v = 1
	}
	if r := C.vks_create_instance(v, &vi, &cerr[0], C.int(len(cerr))); r != 0 {
		return nil, fmt.Errorf("vulkan: %s: %w", C.GoString(&cerr[0]), ErrNoDevice)
	}
	vkMu.Lock()
	err := vk.InitInstance(vkHandle(vi))
	vkMu.Unlock()
	if err != nil {
		vkDropInstance(vi)
		return nil, fmt.Errorf("vulkan: loading instance functions: %v: %w", err, ErrDriver)
	}
	return vi, nil
}

// vkHandle is the VkInstance of vi as vulkan-go's type (the shim and
// vulkan-go are compiled against different headers, so handles cross as
// opaque pointers).
func vkHandle(vi *C.vks_instance) vk.Instance { return vk.Instance(C.vks_vk_instance(vi)) }

// vkDropInstance destroys the instance and frees its message sink,
// discarding any messages left in it.
func vkDropInstance(vi *C.vks_instance) {
	C.vks_destroy_instance(vi)
	C.vks_free_instance(vi)
}

func vkPhysicalDevices(vi *C.vks_instance) ([]vk.PhysicalDevice, error) {
	inst := vkHandle(vi)
	var n uint32
	if r := vk.EnumeratePhysicalDevices(inst, &n, nil); r != vk.Success {
		return nil, fmt.Errorf("vkEnumeratePhysicalDevices: VkResult %d: %w", r, ErrDriver)
	}
	pds := make([]vk.PhysicalDevice, n)
	if n > 0 {
		if r := vk.EnumeratePhysicalDevices(inst, &n, pds); r != vk.Success && r != vk.Incomplete {
			return nil, fmt.Errorf("vkEnumeratePhysicalDevices: VkResult %d: %w", r, ErrDriver)
		}
	}
	return pds[:n], nil
}

func vkVendor(id uint32) string {
	switch id {
	case 0x10DE:
		return "NVIDIA"
	case 0x1002:
		return "AMD"
	case 0x8086:
		return "Intel"
	case 0x10005:
		return "Mesa"
	case 0x13B5:
		return "ARM"
	case 0x5143:
		return "Qualcomm"
	case 0x106B:
		return "Apple"
	}
	return fmt.Sprintf("0x%X", id)
}

// vkCaps fills Caps from vulkan-go's properties and the shim's 1.2 queries.
func vkCaps(vi *C.vks_instance, index int, pd vk.PhysicalDevice) Caps {
	var p vk.PhysicalDeviceProperties
	vk.GetPhysicalDeviceProperties(pd, &p)
	p.Deref()
	p.Limits.Deref()
	var mp vk.PhysicalDeviceMemoryProperties
	vk.GetPhysicalDeviceMemoryProperties(pd, &mp)
	mp.Deref()
	var q C.vks_caps
	C.vks_query(vi, unsafe.Pointer(pd), &q)
	var exts [16384]C.char
	C.vks_device_extensions(vi, unsafe.Pointer(pd), &exts[0], C.int(len(exts)))

	api := p.ApiVersion
	// Timestamps: timing needs them on the queue family kernels run on;
	// timestampComputeAndGraphics implies it for graphics+compute
	// families, a compute-only family reports it through its valid bits.
	c := Caps{
		Backend:           Vulkan,
		Index:             index,
		Platform:          fmt.Sprintf("Vulkan %d.%d.%d", api>>22, (api>>12)&0x3ff, api&0xfff),
		Name:              vk.ToString(p.DeviceName[:]),
		Vendor:            vkVendor(p.VendorID),
		MaxWorkGroupSize:  int(p.Limits.MaxComputeWorkGroupInvocations),
		LocalMemBytes:     int64(p.Limits.MaxComputeSharedMemorySize),
		SubgroupSize:      int(q.subgroup_size),
		MaxAllocBytes:     int64(q.max_alloc),
		MaxStorageRange:   int64(p.Limits.MaxStorageBufferRange),
		SubAlign:          max(int64(p.Limits.MinStorageBufferOffsetAlignment), vkSubAlign),
		FP64:              q.shader_float64 != 0,
		Int64:             q.shader_int64 != 0,
		Int64Atomics:      q.int64_atomics != 0,
		Float32Atomics:    q.float32_atomic_add != 0,
		Float64Atomics:    q.float64_atomic_add != 0,
		SubgroupArith:     q.subgroup_arith != 0,
		SubgroupArith64:   q.subgroup_ext_types != 0 && q.shader_int64 != 0,
		SubgroupFixed:     q.subgroup_fixed != 0,
		SubgroupBallot:    q.subgroup_ballot != 0,
		SubgroupControl:   q.subgroup_control != 0,
		FloatPreserve32:   q.preserve32 != 0,
		FloatPreserve64:   q.preserve64 != 0,
		DenormPreserve32:  q.denorm32 != 0,
		DenormPreserve64:  q.denorm64 != 0,
		Timestamps:        q.timestamp_valid_bits > 0,
		TimestampPeriodNs: float64(p.Limits.TimestampPeriod),
		Extensions:        strings.Fields(C.GoString(&exts[0])),
	}
	if x := int(p.Limits.MaxComputeWorkGroupSize[0]); x > 0 && x < c.MaxWorkGroupSize {
		c.MaxWorkGroupSize = x
	}
	for i := range c.MaxWorkGroupCount {
		c.MaxWorkGroupCount[i] = int64(p.Limits.MaxComputeWorkGroupCount[i])
	}
	c.Driver = strings.TrimSpace(C.GoString(&q.driver_name[0]) + " " + C.GoString(&q.driver_info[0]))
	if c.Driver == "" {
		c.Driver = fmt.Sprintf("driver version 0x%X", p.DriverVersion)
	}
	for i := uint32(0); i < mp.MemoryHeapCount && i < 16; i++ {
		h := mp.MemoryHeaps[i]
		h.Deref()
		if h.Flags&vk.MemoryHeapFlags(vk.MemoryHeapDeviceLocalBit) != 0 && int64(h.Size) > c.GlobalMemBytes {
			c.GlobalMemBytes = int64(h.Size)
		}
	}
	switch p.DeviceType {
	case vk.PhysicalDeviceTypeDiscreteGpu:
		c.Type = TypeDiscreteGPU
	case vk.PhysicalDeviceTypeIntegratedGpu:
		c.Type = TypeIntegratedGPU
	case vk.PhysicalDeviceTypeVirtualGpu:
		c.Type = TypeVirtualGPU
	case vk.PhysicalDeviceTypeCpu:
		c.Type = TypeCPU
	}
	// Vulkan has no portable compute-unit query: CPU drivers run one
	// work-group per core; GPUs report theirs through a vendor extension
	// (NVIDIA's SMs: 132 on the H200, where the guess below said 64;
	// AMD's compute units), else this is a heuristic, not a measurement:
	// assume 64, enough groups to fill any current GPU once the planner
	// multiplies by its groups per unit (the grid stride covers the rest).
	switch {
	case c.Type == TypeCPU:
		c.ComputeUnits = runtime.NumCPU()
	case q.compute_units > 0:
		c.ComputeUnits = int(q.compute_units)
	default:
		c.ComputeUnits = 64
	}
	// Driver workarounds and facts, all in this one place.
	if strings.Contains(strings.ToLower(c.Driver+" "+c.Name), "llvmpipe") {
		c.LoopLimit = 65535 // gallivm's LP_MAX_TGSI_LOOP_ITERATIONS
		c.FoldArgs = true   // gallivm runs both sides of every branch
		// gallivm's atomics loop over the lanes, a locked instruction
		// each; a compare-and-swap loop's first load is a gather
		c.SerialAtomics = true
		// LLVM's fdiv on the host CPU: IEEE division (the bit-exact
		// division tests pass on it with FDIV=0 and FDIV=2 alike), which
		// Vulkan cannot report; the integer division would cost its
		// sparse divide's emit pass 12-15%
		c.FP32DivCorrect = true
	}
	c.FP32Div = fp32Div(c)
	var why []string
	if api>>22 == 1 && (api>>12)&0x3ff < 2 {
		why = append(why, fmt.Sprintf("needs Vulkan 1.2, has %d.%d", api>>22, (api>>12)&0x3ff))
	}
	if q.buffer_device_address == 0 {
		why = append(why, "no bufferDeviceAddress")
	}
	if q.shader_int64 == 0 {
		why = append(why, "no shaderInt64")
	}
	if q.has_compute_queue == 0 {
		why = append(why, "no compute queue")
	}
	// sizes the planners divide by or allocate against: a driver that
	// reports none makes the device unusable, not a panic later
	for _, l := range []struct {
		what string
		v    int64
	}{{"max work-group size", int64(c.MaxWorkGroupSize)}, {"max work-group count x", c.MaxWorkGroupCount[0]},
		{"max work-group count y", c.MaxWorkGroupCount[1]}, {"max work-group count z", c.MaxWorkGroupCount[2]},
		{"device memory", c.GlobalMemBytes}, {"max allocation", c.MaxAllocBytes}} {
		if l.v <= 0 {
			why = append(why, fmt.Sprintf("reports %s %d", l.what, l.v))
		}
	}
	c.Unusable = strings.Join(why, ", ")
	return c
}

func vulkanEnumerate(opts Options) ([]Caps, error) {
	// Enumeration never needs the validation layer: it creates no objects
	// a device call could misuse, and the layer is slow to load.
	vi, err := vkInstance(false)
	if err != nil {
		return nil, err
	}
	defer vkDropInstance(vi)
	pds, err := vkPhysicalDevices(vi)
	if err != nil {
		return nil, err
	}
	if len(pds) == 0 {
		return nil, fmt.Errorf("the Vulkan loader found no physical device (VK_DRIVER_FILES=%q, VK_ICD_FILENAMES=%q): %w",
			os.Getenv("VK_DRIVER_FILES"), os.Getenv("VK_ICD_FILENAMES"), ErrNoDevice)
	}
	caps := make([]Caps, len(pds))
	for i, pd := range pds {
		caps[i] = vkCaps(vi, i, pd)
	}
	return caps, nil
}

// vkDevice is an open Vulkan device: one compute queue and the batches
// recorded for it.
type vkDevice struct {
	caps       Caps
	validation bool
	trace      bool
	buildOnly  bool         // OpenBuildOnly: kernels build, nothing runs
	dump       string       // ACCEL_VK_DUMP: a folder for each pipeline's statistics and internal representations
	log        func(string) // Options' logger (nil: none)
	timing     bool         // timestamps around each batch (Options.Timing)

	// life is held shared by pipeline builds, which run outside mu, and
	// exclusively by Close.
	life sync.RWMutex
	// waitMu lets one goroutine at a time wait on fences and retire
	// batches (in order); others wait for it, then look again.
	waitMu sync.Mutex

	mu       sync.Mutex
	closed   bool
	lost     error // a submit or wait failed: the device is unusable
	inst     *C.vks_instance
	d        *C.vks_device
	bufs     map[*vkBuffer]struct{}
	pipes    kernelCache[*vkKernel]
	messages []string
	stats    Stats

	cur      *vkBatch   // the batch being recorded, or nil
	inflight []*vkBatch // submitted, oldest first
	spare    []*vkBatch // finished batches for reuse
	seq      uint64     // the sequence number of the last batch begun
	doneSeq  uint64     // every batch up to this one has finished and retired
	epoch    uint64     // barrier epoch: commands of one epoch may overlap
	zombies  []vkZombie // released buffers that queued work still used
	arenas   []*vkArena // idle host-visible arenas
	// pinned are the arenas downloads hold while they wait; lostArenas
	// those of downloads whose wait failed (the device is lost). Close
	// frees both.
	pinned     map[*vkArena]struct{}
	lostArenas []*vkArena

	// noMap makes transfers ignore mappings of device buffers, so tests on
	// unified-memory drivers exercise the staging path too.
	noMap bool
	// stagingBytes is the largest transfer staged through an arena in one
	// piece (vkStagingBytes but in tests, which shrink it).
	stagingBytes int64
	// maxIdle is the most bytes of idle arenas kept for reuse
	// (maxIdleArenas but in tests, which shrink it).
	maxIdle int64
}

// vkBatch is a command buffer being recorded or run.
type vkBatch struct {
	c      *C.vks_batch
	seq    uint64
	cmds   int
	arenas []*vkArena
	labels []vkLabel
}

// vkLabel is a traced command: its label and the timestamps around it.
type vkLabel struct {
	label string
	a, z  C.int
}

// vkArena is a host-visible buffer handed out in pieces to one batch's
// staged uploads, fills, downloads and parameter blocks.
type vkArena struct {
	b    C.vks_buffer
	size int64
	used int64
}

type vkZombie struct {
	b   C.vks_buffer
	seq uint64
}

// vkBuffer is a VkBuffer bound to its own memory, with its device address,
// or a view of bytes [off, off+size) of one (root non-nil): kernels see a
// view at its root's address plus off, and every command on a view is a
// command on its root (barriers and lifetimes included).
type vkBuffer struct {
	dev  *vkDevice
	b    C.vks_buffer // guarded by dev.mu; unused in a view
	size int64
	live bool // guarded by dev.mu
	root *vkBuffer
	off  int64
	// lastSeq is the last batch that used the buffer; rdEpoch and wrEpoch
	// the last barrier epochs in which a command read or wrote it (all
	// guarded by dev.mu).
	lastSeq          uint64
	rdEpoch, wrEpoch uint64
}

// vkKernel is a compute pipeline, owned by the device that built it.
type vkKernel struct {
	dev       *vkDevice
	spec      KernelSpec
	localSize int
	pipeline  C.uint64_t
	block     bool   // arguments in a parameter block
	stats     []Stat // the driver's statistics of the pipeline (PipelineStats)
}

// Spec returns the kernel's spec.
func (k *vkKernel) Spec() KernelSpec { return k.spec }

// Size returns the buffer's size in bytes.
func (b *vkBuffer) Size() int64 { return b.size }

// Release frees the buffer's VkBuffer and memory, at once when no queued
// work uses it, else once that work has finished. It is safe to call more
// than once, and after the device closed (Close freed it already).
func (b *vkBuffer) Release() {
	d := b.dev
	d.mu.Lock()
	defer d.mu.Unlock()
	if !b.live || d.closed || b.root != nil {
		b.live = false // a view owns nothing
		return
	}
	b.live = false
	delete(d.bufs, b)
	if b.lastSeq > d.doneSeq {
		d.zombies = append(d.zombies, vkZombie{b: b.b, seq: b.lastSeq})
		return
	}
	C.vks_free(d.d, &b.b)
}

func vulkanOpen(index int, opts Options) (Device, error) {
	return vulkanOpenMode(index, opts, false)
}

// vulkanOpenMode opens Vulkan device index, to build kernels only where
// buildOnly (OpenBuildOnly).
func vulkanOpenMode(index int, opts Options, buildOnly bool) (Device, error) {
	validation := opts.validation()
	vi, err := vkInstance(validation)
	if err != nil {
		return nil, err
	}
	pds, err := vkPhysicalDevices(vi)
	if err != nil {
		vkDropInstance(vi)
		return nil, err
	}
	if index < 0 || index >= len(pds) {
		vkDropInstance(vi)
		return nil, fmt.Errorf("vulkan device index %d outside [0, %d): %w", index, len(pds), ErrNoDevice)
	}
	caps := vkCaps(vi, index, pds[index])
	if caps.Unusable != "" && !(buildOnly && buildable(caps)) {
		vkDropInstance(vi)
		return nil, fmt.Errorf("vulkan:%d %s: %s: %w", index, caps.Name, caps.Unusable, ErrUnsupported)
	}
	hostVisible, noMap := C.int(0), C.int(0)
	if caps.Type == TypeCPU || caps.Type == TypeIntegratedGPU {
		hostVisible = 1 // unified memory: map device buffers, no staging
	}
	emulate := opts.emulateDiscrete()
	if emulate {
		hostVisible, noMap = 0, 1
	}
	var dev *C.vks_device
	var cerr [512]C.char
	// CPU drivers get their large buffers in huge pages we map and import
	// (vks_alloc), as the OpenCL backend does (hostAlloc);
	// ACCEL_HUGEPAGES=0 turns it off.
	importHost := C.int(0)
	if caps.Type == TypeCPU && slices.Contains(caps.Extensions, "VK_EXT_external_memory_host") && os.Getenv("ACCEL_HUGEPAGES") != "0" && !emulate {
		importHost = 1
	}
	// the driver's statistics of each pipeline, for the trace (and
	// PipelineStats)
	stats, cBuildOnly := C.int(0), C.int(0)
	dump := os.Getenv("ACCEL_VK_DUMP")
	if opts.trace() || buildOnly {
		stats = 1
	}
	if dump != "" {
		stats = 3 // and the internal representations (vks_pipeline_ir)
	}
	if buildOnly {
		cBuildOnly = 1
	}
	if r := C.vks_open(vi, unsafe.Pointer(pds[index]), hostVisible, importHost, noMap, stats, cBuildOnly, &dev, &cerr[0], C.int(len(cerr))); r != 0 {
		vkDropInstance(vi)
		return nil, fmt.Errorf("vulkan:%d: %s: %w", index, C.GoString(&cerr[0]), ErrDriver)
	}
	d := &vkDevice{caps: caps, inst: vi, d: dev, validation: validation, trace: opts.trace(), log: opts.logger(), timing: opts.timing(),
		bufs: map[*vkBuffer]struct{}{}, pinned: map[*vkArena]struct{}{}, stagingBytes: vkStagingBytes, maxIdle: maxIdleArenas,
		buildOnly: buildOnly, dump: dump}
	d.mu.Lock()
	err = d.check("open")
	d.mu.Unlock()
	if err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// Caps returns the device's capabilities.
func (d *vkDevice) Caps() Caps { return d.caps }

// check turns the validation messages pending in this device's instance
// into an error wrapping ErrValidation. Callers hold d.mu.
func (d *vkDevice) check(what string) error {
	if !d.validation || d.inst == nil {
		return nil
	}
	buf := make([]byte, 16384)
	n := C.vks_take_messages(d.inst, (*C.char)(unsafe.Pointer(&buf[0])), C.int(len(buf)))
	if n == 0 {
		return nil
	}
	msg := strings.TrimSpace(C.GoString((*C.char)(unsafe.Pointer(&buf[0]))))
	d.messages = append(d.messages, msg)
	return fmt.Errorf("vulkan: %s: %d validation message(s):\n%s\n%w", what, int(n), msg, ErrValidation)
}

// checked returns err, or else the pending validation messages as an
// error. Callers hold d.mu.
func (d *vkDevice) checked(what string, err error) error {
	if verr := d.check(what); verr != nil {
		if err != nil {
			return fmt.Errorf("%w; %w", err, verr)
		}
		return verr
	}
	return err
}

// ValidationMessages returns every validation message this device has
// reported so far, oldest first.
func (d *vkDevice) ValidationMessages() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.messages...)
}

func vkResult(what string, r C.int) error {
	if r == 0 {
		return nil
	}
	// VK_ERROR_OUT_OF_HOST_MEMORY = -1, VK_ERROR_OUT_OF_DEVICE_MEMORY = -2
	if r == -1 || r == -2 {
		return fmt.Errorf("vulkan: %s: VkResult %d: %w", what, int(r), ErrOutOfMemory)
	}
	return fmt.Errorf("vulkan: %s: VkResult %d: %w", what, int(r), ErrDriver)
}

func (d *vkDevice) allocLocked(size int64) (*vkBuffer, error) {
	b := &vkBuffer{dev: d, size: size, live: true}
	if r := C.vks_alloc(d.d, C.uint64_t((max(size, 4)+3)&^3), 0, &b.b); r != 0 {
		return nil, vkResult(fmt.Sprintf("alloc %d bytes (device memory %d bytes)", size, d.caps.GlobalMemBytes), r)
	}
	d.bufs[b] = struct{}{}
	return b, nil
}

// Alloc allocates a buffer of size bytes, device local where the device has
// such memory. Sizes above Caps.MaxAllocBytes fail with ErrOutOfMemory
// before the driver is asked.
func (d *vkDevice) Alloc(size int64) (Buffer, error) {
	if d.buildOnly {
		return nil, fmt.Errorf("vulkan: alloc on %s, opened to build kernels only: %w", d.caps.ID(), ErrUnsupported)
	}
	if err := checkAlloc("vulkan", size, d.caps); err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, ErrClosed
	}
	b, err := d.allocLocked(size)
	if err := d.checked("alloc", err); err != nil {
		if b != nil {
			C.vks_free(d.d, &b.b)
			delete(d.bufs, b)
		}
		return nil, err
	}
	return b, nil
}

// buf checks that b is a live buffer (or view) of this device and
// [off, off+n) lies inside it, and returns the VkBuffer that holds it with
// off as an offset into that buffer. Callers hold d.mu.
func (d *vkDevice) buf(b Buffer, off, n int64) (*vkBuffer, int64, error) {
	if d.closed {
		return nil, 0, ErrClosed
	}
	vb, ok := b.(*vkBuffer)
	if !ok || vb == nil || vb.dev != d {
		return nil, 0, fmt.Errorf("vulkan: buffer %T does not belong to this device (%s)", b, d.caps.ID())
	}
	if !vb.live || (vb.root != nil && !vb.root.live) {
		return nil, 0, fmt.Errorf("vulkan: buffer of %d bytes: %w", vb.size, ErrClosed)
	}
	if err := checkRange("vulkan", off, n, vb.size); err != nil {
		return nil, 0, err
	}
	if vb.root != nil {
		return vb.root, vb.off + off, nil
	}
	return vb, off, nil
}

// Sub returns a view of bytes [off, off+size) of b (see Device.Sub): no
// Vulkan object, just b's address plus off.
func (d *vkDevice) Sub(b Buffer, off, size int64) (Buffer, error) {
	if err := checkSub("vulkan", off, size, d.caps); err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	root, at, err := d.buf(b, off, size)
	if err != nil {
		return nil, err
	}
	return &vkBuffer{dev: d, size: size, live: true, root: root, off: at}, nil
}

// mapped is the host view of bytes [off, off+n) of a mapped buffer of
// size bytes: C memory, which Go may read and write but never keeps a
// pointer into. A buffer without a mapping, or a range outside it, is an
// error wrapping ErrDriver, never a slice past the mapping (nor a panic).
func mapped(b C.vks_buffer, size, off, n int64) ([]byte, error) {
	if b.mapped == nil || off < 0 || n < 0 || off > size || n > size-off || int64(int(n)) != n {
		return nil, fmt.Errorf("vulkan: host view of bytes [%d, %d) of a %d-byte buffer (mapped: %t): %w",
			off, off+n, size, b.mapped != nil, ErrDriver)
	}
	if n == 0 {
		return nil, nil
	}
	return unsafe.Slice((*byte)(unsafe.Add(b.mapped, off)), int(n)), nil
}

// copyMapped copies src into the mapping of b (size bytes) at off, or
// returns mapped's error.
func copyMapped(b C.vks_buffer, size, off int64, src []byte) error {
	m, err := mapped(b, size, off, int64(len(src)))
	if err == nil {
		copy(m, src)
	}
	return err
}

// vkStagingBytes is the largest transfer staged through an arena in one
// piece; larger ones go through in pieces of it, with a wait per piece.
const vkStagingBytes = 64 << 20

// vkSubAlign is the least alignment of a view's offset (Caps.SubAlign):
// kernels declare buffer references aligned to at most 16 bytes, and 256
// keeps a view on the same cache-line and vector boundaries as a buffer.
const vkSubAlign = 256

// Batch limits: a batch is submitted once it holds maxBatchCmds commands;
// it holds two timestamps when timing and two around every command when
// tracing.
const (
	maxBatchCmds    = 256
	batchQueries    = 2
	tracedQueries   = 2 + 2*maxBatchCmds
	maxIdleArenas   = 64 << 20 // bytes of idle arenas kept for reuse
	minArenaBytes   = 1 << 20
	paramBlockAlign = 16
)

// batchLocked returns the batch being recorded, beginning one if needed.
// Callers hold d.mu.
func (d *vkDevice) batchLocked() (*vkBatch, error) {
	if d.lost != nil {
		return nil, d.lost
	}
	if d.cur != nil {
		return d.cur, nil
	}
	var b *vkBatch
	if n := len(d.spare); n > 0 {
		b, d.spare = d.spare[n-1], d.spare[:n-1]
	} else {
		b = &vkBatch{}
		q := C.uint32_t(0)
		switch {
		case d.trace:
			q = tracedQueries
		case d.timing:
			q = batchQueries
		}
		if r := C.vks_batch_new(d.d, q, &b.c); r != 0 {
			return nil, vkResult("new batch", r)
		}
	}
	if r := C.vks_batch_begin(d.d, b.c); r != 0 {
		C.vks_batch_free(d.d, b.c)
		return nil, vkResult("begin batch", r)
	}
	d.seq++
	b.seq = d.seq
	b.cmds = 0
	d.epoch++ // the batch begins with a barrier
	d.cur = b
	return b, nil
}

// use records that the next command of the current batch reads the
// buffers rd and writes the buffers wr, recording a barrier first when one
// of them was written, or a written one read, since the last barrier.
// Callers hold d.mu.
func (d *vkDevice) use(b *vkBatch, rd, wr []*vkBuffer) {
	need := false
	for _, x := range rd {
		need = need || x.wrEpoch == d.epoch
	}
	for _, x := range wr {
		need = need || x.wrEpoch == d.epoch || x.rdEpoch == d.epoch
	}
	if need {
		C.vks_cmd_barrier(d.d, b.c)
		d.stats.Barriers++
		d.epoch++
	}
	for _, x := range rd {
		x.rdEpoch, x.lastSeq = d.epoch, b.seq
	}
	for _, x := range wr {
		x.wrEpoch, x.lastSeq = d.epoch, b.seq
	}
}

// traceStart writes the timestamp before a traced command. Callers hold d.mu.
func (d *vkDevice) traceStart(b *vkBatch) C.int {
	if !d.trace {
		return -1
	}
	return C.vks_cmd_timestamp(d.d, b.c)
}

// recorded finishes a command: its trace label, the counters, and a
// submit once the batch is full. Callers hold d.mu.
func (d *vkDevice) recorded(b *vkBatch, a C.int, label func() string) error {
	if a >= 0 {
		z := C.vks_cmd_timestamp(d.d, b.c)
		b.labels = append(b.labels, vkLabel{label: label(), a: a, z: z})
	}
	b.cmds++
	if b.cmds >= maxBatchCmds {
		return d.submitLocked()
	}
	return nil
}

// arenaLocked hands out n bytes (aligned to 16) of host-visible memory
// that lives until batch b has finished. Callers hold d.mu.
func (d *vkDevice) arenaLocked(b *vkBatch, n int64) (*vkArena, int64, error) {
	n = (n + paramBlockAlign - 1) &^ (paramBlockAlign - 1)
	if k := len(b.arenas); k > 0 {
		a := b.arenas[k-1]
		if a.used+n <= a.size {
			off := a.used
			a.used += n
			return a, off, nil
		}
	}
	a, err := d.takeArenaLocked(n)
	if err != nil {
		return nil, 0, err
	}
	a.used = n
	b.arenas = append(b.arenas, a)
	return a, 0, nil
}

// takeArenaLocked returns an idle arena of at least n bytes, or a new
// one, owned by the caller until it hands it to a batch or to
// dropArenaLocked. Callers hold d.mu.
func (d *vkDevice) takeArenaLocked(n int64) (*vkArena, error) {
	for i, x := range d.arenas {
		if x.size >= n {
			d.arenas = append(d.arenas[:i], d.arenas[i+1:]...)
			return x, nil
		}
	}
	size := int64(minArenaBytes)
	for size < n {
		size *= 2
	}
	a := &vkArena{size: size}
	if r := C.vks_alloc(d.d, C.uint64_t(size), 1, &a.b); r != 0 {
		return nil, vkResult(fmt.Sprintf("staging arena of %d bytes", size), r)
	}
	if a.b.mapped == nil {
		C.vks_free(d.d, &a.b)
		return nil, fmt.Errorf("vulkan: staging arena of %d bytes is not mapped: %w", size, ErrDriver)
	}
	return a, nil
}

// dropArenaLocked keeps an arena no batch uses any more among the idle
// ones, or frees it where they hold maxIdleArenas already. Callers hold
// d.mu.
func (d *vkDevice) dropArenaLocked(a *vkArena) {
	idle := int64(0)
	for _, x := range d.arenas {
		idle += x.size
	}
	if idle+a.size <= d.maxIdle {
		d.arenas = append(d.arenas, a)
		return
	}
	C.vks_free(d.d, &a.b)
}

// submitLocked ends and submits the batch being recorded, if any.
// Callers hold d.mu.
func (d *vkDevice) submitLocked() error {
	b := d.cur
	if b == nil {
		return nil
	}
	d.cur = nil
	if r := C.vks_batch_submit(d.d, b.c); r != 0 {
		// the batch never runs and its fence never signals: the device
		// is not usable any more (Close still frees it)
		d.lost = vkResult("submit", r)
		return d.lost
	}
	d.stats.Submits++
	d.inflight = append(d.inflight, b)
	return nil
}

// waitLocked waits until every batch up to seq has finished and retires
// them. Callers hold d.mu, which is released while waiting.
func (d *vkDevice) waitLocked(seq uint64) error {
	if d.lost != nil {
		return d.lost
	}
	if d.cur != nil && d.cur.seq <= seq {
		if err := d.submitLocked(); err != nil {
			return err
		}
	}
	if d.doneSeq >= seq {
		return nil
	}
	d.stats.Waits++
	if d.trace && d.log != nil {
		d.log(fmt.Sprintf("accel: %s wait for batch %d (%d submits, %d waits so far)",
			d.caps.ID(), seq, d.stats.Submits, d.stats.Waits))
	}
	d.mu.Unlock()
	d.waitMu.Lock()
	d.mu.Lock()
	defer d.waitMu.Unlock()
	for d.doneSeq < seq && len(d.inflight) > 0 {
		b := d.inflight[0]
		d.mu.Unlock()
		r := C.vks_batch_wait(d.d, b.c)
		d.mu.Lock()
		if r != 0 {
			d.lost = vkResult("wait", r)
			return d.lost
		}
		d.retireLocked(b)
	}
	return nil
}

// retireLocked retires the oldest in-flight batch b, which has finished:
// its time, its trace, its arenas, the buffers released meanwhile.
// Callers hold d.mu.
func (d *vkDevice) retireLocked(b *vkBatch) {
	d.inflight = d.inflight[1:]
	d.doneSeq = b.seq
	d.stats.DeviceNs += int64(C.vks_batch_elapsed(d.d, b.c, 0, C.vks_batch_queries(b.c)-1))
	for _, l := range b.labels {
		ns := C.vks_batch_elapsed(d.d, b.c, l.a, l.z)
		if d.log != nil {
			d.log(fmt.Sprintf("accel: %s %s: %.3f ms", d.caps.ID(), l.label, float64(ns)/1e6))
		}
	}
	b.labels = b.labels[:0]
	for _, a := range b.arenas {
		d.dropArenaLocked(a)
	}
	b.arenas = b.arenas[:0]
	keep := d.zombies[:0]
	for _, z := range d.zombies {
		if z.seq <= d.doneSeq {
			C.vks_free(d.d, &z.b)
		} else {
			keep = append(keep, z)
		}
	}
	d.zombies = keep
	d.spare = append(d.spare, b)
}

// idle reports whether no recorded or running batch uses vb, so the host
// may touch its memory directly. Callers hold d.mu.
func (d *vkDevice) idle(vb *vkBuffer) bool { return vb.lastSeq <= d.doneSeq }

// Upload copies src into dst at byte offset off: directly into the
// mapping when dst is mapped and idle, else as a recorded command (an
// update for small aligned data, a copy from a staged piece otherwise).
func (d *vkDevice) Upload(dst Buffer, off int64, src []byte) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	vb, off, err := d.buf(dst, off, int64(len(src)))
	if err != nil || len(src) == 0 {
		return err
	}
	d.stats.Transfers++
	return d.checked("upload", d.uploadLocked(vb, off, src))
}

func (d *vkDevice) uploadLocked(vb *vkBuffer, off int64, src []byte) error {
	n := int64(len(src))
	if vb.b.mapped != nil && !d.noMap && d.idle(vb) {
		return copyMapped(vb.b, vb.size, off, src)
	}
	if n <= 65536 && off%4 == 0 && n%4 == 0 {
		b, err := d.batchLocked()
		if err != nil {
			return err
		}
		a := d.traceStart(b)
		d.use(b, nil, []*vkBuffer{vb})
		C.vks_cmd_update(d.d, b.c, vb.b.buffer, C.uint64_t(off), C.uint64_t(n), unsafe.Pointer(&src[0]))
		return d.recorded(b, a, func() string { return fmt.Sprintf("upload %d bytes", n) })
	}
	return d.stagedLocked(vb, off, src, true)
}

// stagedLocked moves bytes between host memory and vb at off through
// pieces of at most d.stagingBytes of host-visible arenas, each a
// recorded copy. An upload fills a piece of an arena that belongs to the
// batch and records its copy into vb, waiting for it before staging the
// next, so the staged bytes stay bounded (the last piece stays queued).
// A download records the copy out of vb, after the work queued on it,
// into an arena it keeps to itself (d.pinned: the batch's retirement may
// free or hand out the batch's arenas, and another goroutine may take an
// idle one while this one waits), waits, reads the piece and gives the
// arena back. The H100 run found the download reading an arena its
// batch's retirement had just freed (a panic in unsafe.Slice). Callers
// hold d.mu, which waitLocked releases while it waits: after each wait
// the device may have closed.
func (d *vkDevice) stagedLocked(vb *vkBuffer, off int64, host []byte, upload bool) error {
	n := int64(len(host))
	for done := int64(0); done < n; done += d.stagingBytes {
		c := min(n-done, d.stagingBytes)
		b, err := d.batchLocked()
		if err != nil {
			return err
		}
		if upload {
			ar, aoff, err := d.arenaLocked(b, c)
			if err != nil {
				return err
			}
			a := d.traceStart(b)
			if err := copyMapped(ar.b, ar.size, aoff, host[done:done+c]); err != nil {
				return err
			}
			d.use(b, nil, []*vkBuffer{vb})
			C.vks_cmd_copy(d.d, b.c, ar.b.buffer, C.uint64_t(aoff), vb.b.buffer, C.uint64_t(off+done), C.uint64_t(c))
			if err := d.recorded(b, a, func() string { return fmt.Sprintf("upload %d bytes", c) }); err != nil {
				return err
			}
			if done+c == n {
				return nil // the last piece stays queued
			}
			if err := d.waitLocked(b.seq); err != nil {
				return err
			}
			if d.closed {
				return fmt.Errorf("vulkan: upload: the device closed meanwhile: %w", ErrClosed)
			}
			continue
		}
		ar, err := d.takeArenaLocked(c)
		if err != nil {
			return err
		}
		d.pinned[ar] = struct{}{}
		// A copy with no work queued before it is the transfer alone, as
		// OpenCL's blocking read of idle memory, not a wait for the
		// device's work (Stats.Waits): ToHost of a finished result
		// counts none on either backend.
		alone := b.cmds == 0 && len(d.inflight) == 0
		a := d.traceStart(b)
		d.use(b, []*vkBuffer{vb}, nil)
		C.vks_cmd_copy(d.d, b.c, vb.b.buffer, C.uint64_t(off+done), ar.b.buffer, 0, C.uint64_t(c))
		err = d.recorded(b, a, func() string { return fmt.Sprintf("download %d bytes", c) })
		if err == nil {
			waits := d.stats.Waits
			err = d.waitLocked(b.seq)
			if alone {
				d.stats.Waits = waits
			}
		}
		if d.closed {
			// Close freed the pinned arena with everything else
			return fmt.Errorf("vulkan: download: the device closed meanwhile: %w", ErrClosed)
		}
		delete(d.pinned, ar)
		if err == nil {
			var m []byte
			if m, err = mapped(ar.b, ar.size, 0, c); err == nil {
				copy(host[done:done+c], m)
			}
		}
		if d.lost == nil {
			d.dropArenaLocked(ar)
		} else {
			// the copy may still run on a lost device: never reuse it
			d.lostArenas = append(d.lostArenas, ar)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Download copies len(dst) bytes from src at byte offset off once the
// work queued on src has finished: from the mapping when src is mapped,
// else through a staged piece copied at the end of the queue.
func (d *vkDevice) Download(src Buffer, off int64, dst []byte) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	vb, off, err := d.buf(src, off, int64(len(dst)))
	if err != nil || len(dst) == 0 {
		return err
	}
	d.stats.Transfers++
	n := int64(len(dst))
	if vb.b.mapped != nil && !d.noMap {
		if err := d.waitLocked(vb.lastSeq); err != nil {
			return d.checked("download", err)
		}
		if !vb.live {
			return fmt.Errorf("vulkan: download: the buffer was released meanwhile: %w", ErrClosed)
		}
		m, err := mapped(vb.b, vb.size, off, n)
		if err == nil {
			copy(dst, m)
		}
		return d.checked("download", err)
	}
	return d.checked("download", d.stagedLocked(vb, off, dst, false))
}

// Fill writes pattern repeatedly over [off, off+size) of dst as recorded
// commands: patterns that repeat every 4 bytes with vkCmdFillBuffer on the
// 4-byte-aligned middle (its offset and size must be multiples of 4) and a
// staged copy of the unaligned head and tail; true 8-byte patterns by
// repeated copies of one staged piece.
func (d *vkDevice) Fill(dst Buffer, off, size int64, pattern []byte) error {
	if err := checkFill("vulkan", off, size, pattern); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	vb, off, err := d.buf(dst, off, size)
	if err != nil || size == 0 {
		return err
	}
	d.stats.Transfers++
	return d.checked("fill", d.fillLocked(vb, off, size, pattern))
}

func (d *vkDevice) fillLocked(vb *vkBuffer, off, size int64, pattern []byte) error {
	// Reduce the pattern to a 4-byte word where it repeats every 4 bytes.
	// checkFill made off a multiple of len(pattern), so the pattern's phase
	// at every 4-byte-aligned position is 0.
	p := pattern
	for len(p) < 4 {
		p = append(append([]byte(nil), p...), p...)
	}
	if len(p) == 8 && string(p[:4]) == string(p[4:]) {
		p = p[:4]
	}
	b, err := d.batchLocked()
	if err != nil {
		return err
	}
	a := d.traceStart(b)
	d.use(b, nil, []*vkBuffer{vb})
	if len(p) == 4 {
		head := min((4-off%4)%4, size)
		mid := (size - head) &^ 3
		tail := size - head - mid
		if mid > 0 {
			word := uint32(p[0]) | uint32(p[1])<<8 | uint32(p[2])<<16 | uint32(p[3])<<24
			C.vks_cmd_fill(d.d, b.c, vb.b.buffer, C.uint64_t(off+head), C.uint64_t(mid), C.uint32_t(word))
		}
		for _, part := range [][2]int64{{off, head}, {off + head + mid, tail}} {
			if part[1] == 0 {
				continue
			}
			ar, aoff, err := d.arenaLocked(b, 4)
			if err != nil {
				return err
			}
			if err := copyMapped(ar.b, ar.size, aoff, p[:4]); err != nil {
				return err
			}
			C.vks_cmd_copy(d.d, b.c, ar.b.buffer, C.uint64_t(aoff), vb.b.buffer, C.uint64_t(part[0]), C.uint64_t(part[1]))
		}
	} else {
		// An 8-byte pattern: stage a piece of it, then copy the piece
		// over the range as often as it takes.
		chunk := min(size, 1<<20)
		ar, aoff, err := d.arenaLocked(b, chunk)
		if err != nil {
			return err
		}
		m, err := mapped(ar.b, ar.size, aoff, chunk)
		if err != nil {
			return err
		}
		k := copy(m, p)
		for k < len(m) {
			k += copy(m[k:], m[:k])
		}
		if err := vkResult("fill", C.vks_cmd_copy_repeat(d.d, b.c, ar.b.buffer, C.uint64_t(aoff), C.uint64_t(chunk),
			vb.b.buffer, C.uint64_t(off), C.uint64_t(size))); err != nil {
			return err
		}
	}
	return d.recorded(b, a, func() string { return fmt.Sprintf("fill %d bytes", size) })
}

// Copy records a vkCmdCopyBuffer of size bytes from src at srcOff to dst
// at dstOff. Overlapping ranges of one buffer are refused, as
// vkCmdCopyBuffer (and OpenCL) forbid them.
func (d *vkDevice) Copy(dst Buffer, dstOff int64, src Buffer, srcOff int64, size int64) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	db, dstOff, err := d.buf(dst, dstOff, size)
	if err != nil {
		return err
	}
	sb, srcOff, err := d.buf(src, srcOff, size)
	if err != nil || size == 0 {
		return err
	}
	if db == sb && dstOff < srcOff+size && srcOff < dstOff+size {
		return fmt.Errorf("vulkan: copy of %d bytes from offset %d to overlapping offset %d of the same buffer", size, srcOff, dstOff)
	}
	d.stats.Transfers++
	b, err := d.batchLocked()
	if err != nil {
		return err
	}
	a := d.traceStart(b)
	d.use(b, []*vkBuffer{sb}, []*vkBuffer{db})
	C.vks_cmd_copy(d.d, b.c, sb.b.buffer, C.uint64_t(srcOff), db.b.buffer, C.uint64_t(dstOff), C.uint64_t(size))
	return d.checked("copy", d.recorded(b, a, func() string { return fmt.Sprintf("copy %d bytes", size) }))
}

// Kernel returns the compute pipeline for spec with the plan's local size
// (specialization constant 0), the entry (constant 1) and knobs (the ids
// the file's declaration assigns, 32-bit), building it on first use,
// outside the device's lock. Pipelines share the device's one pipeline
// layout (a 128-byte push-constant range, no descriptor sets).
func (d *vkDevice) Kernel(spec KernelSpec, plan Plan) (Kernel, error) {
	if err := checkKernel("vulkan", spec, plan, d.caps); err != nil {
		return nil, err
	}
	f := spec.Entry.File
	return d.pipes.get(kernelKey(f.Name, spec.Variant, spec.Entry.Name, plan), func() (*vkKernel, error) {
		return d.build(spec, plan)
	})
}

func (d *vkDevice) build(spec KernelSpec, plan Plan) (*vkKernel, error) {
	d.life.RLock()
	defer d.life.RUnlock()
	f := spec.Entry.File
	code, err := SPIRV(f.Name, StrictVariant(d.caps, f.Name, spec.Variant), spec.Entry.Index())
	if err != nil {
		return nil, err
	}
	v, err := lookupVariant(f.Name, spec.Variant)
	if err != nil {
		return nil, err
	}
	spc := []uint32{SpecLocalSize, uint32(plan.LocalSize), SpecEntry, uint32(spec.Entry.Index())}
	for _, k := range WithDeviceKnobs(d.caps, v, plan.Knobs) {
		id, ok := f.KnobID(k.Name) // checkKernel made sure the plan's exist
		if !ok {
			continue // a device knob this file does not declare
		}
		if k.Value < -1<<31 || k.Value > 1<<31-1 {
			return nil, fmt.Errorf("vulkan: kernel %s: knob %s = %d outside the 32-bit range of a specialization constant", spec, k.Name, k.Value)
		}
		spc = append(spc, uint32(id), uint32(int32(k.Value)))
	}
	const maxConsts = 32 // the shim's limit on specialization constants
	if len(spc)/2 > maxConsts {
		return nil, fmt.Errorf("vulkan: kernel %s: %d specialization constants exceed %d", spec, len(spc)/2, maxConsts)
	}
	// The code and constants go to the driver in C memory: nothing
	// Go-owned is handed over.
	ccode := C.CBytes(code)
	defer C.free(ccode)
	cspec := C.malloc(C.size_t(4 * len(spc)))
	defer C.free(cspec)
	copy(unsafe.Slice((*uint32)(cspec), len(spc)), spc)
	d.mu.Lock()
	closed := d.closed
	d.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	// the builds with subgroup operations run the subgroups the plans
	// count with (SubgroupSize lanes), whole where the group is whole
	// subgroups, where the device lets a pipeline require them
	require, full := C.int(0), C.int(0)
	if v.Define("SG") == "1" && d.caps.SubgroupControl && d.caps.SubgroupSize > 0 {
		require = 1
		if plan.LocalSize%d.caps.SubgroupSize == 0 {
			full = 1
		}
	}
	var p C.uint64_t
	var cerr [512]C.char
	r := C.vks_pipeline(d.d, (*C.uint32_t)(ccode), C.size_t(len(code)), (*C.uint32_t)(cspec), C.int(len(spc)/2),
		require, full, &p, &cerr[0], C.int(len(cerr)))
	d.mu.Lock()
	defer d.mu.Unlock()
	if r != 0 {
		err := fmt.Errorf("vulkan: pipeline %s: %s: %w", spec, C.GoString(&cerr[0]), ErrDriver)
		return nil, d.checked("pipeline "+spec.String(), err)
	}
	k := &vkKernel{dev: d, spec: spec, localSize: plan.LocalSize, pipeline: p, block: f.ParamBlock()}
	var cstats [2048]C.char
	if C.vks_pipeline_stats(d.d, p, &cstats[0], C.int(len(cstats))) == 0 {
		k.stats = parseStats(C.GoString(&cstats[0]))
	}
	if err := d.check("pipeline " + spec.String()); err != nil {
		C.vks_destroy_pipeline(d.d, p)
		return nil, err
	}
	if d.dump != "" {
		d.dumpPipeline(k, plan, spc)
	}
	if d.trace && d.log != nil && len(k.stats) > 0 {
		// what the driver's compiler made of it (registers, spills,
		// occupancy, as the driver names them): the OpenCL backend's
		// private-memory line for Vulkan
		parts := make([]string, len(k.stats))
		for i, s := range k.stats {
			parts[i] = s.Name + "=" + s.Value
		}
		d.log(fmt.Sprintf("accel: %s pipeline %s.%s:%s local=%d: driver statistics: %s",
			d.caps.ID(), f.Name, spec.Variant, spec.Entry.Name, plan.LocalSize, strings.Join(parts, ", ")))
	}
	return k, nil
}

// Launch records the push constants (one 8-byte slot per argument: a
// buffer's device address, or 0 for a nil buffer, or a scalar; or, for
// files with more slots than the push constants hold, the address of a
// parameter block holding them) and the dispatch of plan.Groups, after a
// barrier where the entry's buffers depend on earlier commands.
func (d *vkDevice) Launch(kern Kernel, plan Plan, args []Arg) error {
	k, ok := kern.(*vkKernel)
	if !ok || k == nil {
		return fmt.Errorf("vulkan: kernel %T is not a Vulkan kernel", kern)
	}
	if k.dev != d {
		return fmt.Errorf("vulkan: kernel %s was built by another device", k.spec)
	}
	e := k.spec.Entry
	if err := checkLaunch("vulkan", e, plan, d.caps, args); err != nil {
		return err
	}
	if d.buildOnly {
		return fmt.Errorf("vulkan: launch of %s on %s, opened to build kernels only: %w", k.spec, d.caps.ID(), ErrUnsupported)
	}
	if plan.LocalSize != k.localSize {
		return fmt.Errorf("vulkan: kernel %s was built for local size %d, plan has %d", k.spec, k.localSize, plan.LocalSize)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return ErrClosed
	}
	var slots [MaxPushSlots]uint64
	var block []uint64
	if k.block {
		block = make([]uint64, len(args))
	}
	var rd, wr []*vkBuffer
	for i, a := range args {
		var v uint64
		if a.Buf != nil {
			vb, at, err := d.buf(a.Buf, 0, 0)
			if err != nil {
				return fmt.Errorf("vulkan: %s arg %d (%s): %w", k.spec, i, e.Args[i].Name, err)
			}
			v = uint64(vb.b.address) + uint64(at)
			if e.Args[i].Access == In {
				rd = append(rd, vb)
			} else {
				wr = append(wr, vb)
			}
		} else {
			v = a.Val
		}
		if k.block {
			block[i] = v
		} else {
			slots[i] = v
		}
	}
	b, err := d.batchLocked()
	if err != nil {
		return err
	}
	pushBytes := C.uint32_t(8 * len(args))
	if k.block {
		ar, aoff, err := d.arenaLocked(b, int64(8*len(block)))
		if err != nil {
			return err
		}
		m, err := mapped(ar.b, ar.size, aoff, int64(8*len(block)))
		if err != nil {
			return err
		}
		for i, v := range block {
			binary.LittleEndian.PutUint64(m[8*i:], v)
		}
		slots[0], pushBytes = uint64(ar.b.address)+uint64(aoff), 8
	}
	a := d.traceStart(b)
	d.use(b, rd, wr)
	// slots is only read during the call (vkCmdPushConstants copies it).
	C.vks_cmd_dispatch(d.d, b.c, k.pipeline, unsafe.Pointer(&slots[0]), max(pushBytes, 8),
		C.uint32_t(plan.Groups[0]), C.uint32_t(plan.Groups[1]), C.uint32_t(plan.Groups[2]))
	d.stats.Launches++
	err = d.recorded(b, a, func() string { return k.spec.String() + " " + plan.String() })
	return d.checked("dispatch "+k.spec.String(), err)
}

// Flush submits the batch being recorded.
func (d *vkDevice) Flush() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return ErrClosed
	}
	return d.checked("flush", d.submitLocked())
}

// Sync waits for every batch recorded so far.
func (d *vkDevice) Sync() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return ErrClosed
	}
	return d.checked("sync", d.waitLocked(d.seq))
}

// Stats returns the device's counters.
func (d *vkDevice) Stats() Stats {
	d.mu.Lock()
	s := d.stats
	d.mu.Unlock()
	d.pipes.stats(&s)
	return s
}

// Close waits for the device, then destroys every buffer, batch, arena,
// pipeline, the pipeline layout, command pool, device, messenger and
// instance. With validation on, anything the layer reports meanwhile
// (leaked objects included) makes Close fail with ErrValidation.
func (d *vkDevice) Close() error {
	d.life.Lock() // no pipeline build in flight
	defer d.life.Unlock()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	werr := d.waitLocked(d.seq)
	d.closed = true
	C.vks_wait_idle(d.d)
	for b := range d.bufs {
		C.vks_free(d.d, &b.b)
		b.live = false
	}
	d.bufs = nil
	for _, z := range d.zombies {
		C.vks_free(d.d, &z.b)
	}
	d.zombies = nil
	for _, b := range append(append(d.spare, d.inflight...), d.cur) {
		if b == nil {
			continue
		}
		for _, a := range b.arenas {
			C.vks_free(d.d, &a.b)
		}
		C.vks_batch_free(d.d, b.c)
	}
	d.spare, d.inflight, d.cur = nil, nil, nil
	for _, a := range d.arenas {
		C.vks_free(d.d, &a.b)
	}
	for a := range d.pinned {
		C.vks_free(d.d, &a.b)
	}
	for _, a := range d.lostArenas {
		C.vks_free(d.d, &a.b)
	}
	d.arenas, d.pinned, d.lostArenas = nil, nil, nil
	d.pipes.each(func(k *vkKernel) { C.vks_destroy_pipeline(d.d, k.pipeline) })
	C.vks_close(d.d)
	d.d = nil
	C.vks_destroy_instance(d.inst)
	// Leaks the validation layer finds at destroy time surface here.
	err := d.check("close")
	C.vks_free_instance(d.inst)
	d.inst = nil
	if err == nil {
		err = werr
	}
	return err
}

// rawFill records vkCmdFillBuffer without the checks of Fill and waits;
// tests use it to provoke a validation error and prove the message sink
// works.
func (d *vkDevice) rawFill(buf Buffer, off, size int64) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	vb, at, err := d.buf(buf, 0, 0)
	if err != nil {
		return err
	}
	off += at
	b, err := d.batchLocked()
	if err != nil {
		return err
	}
	d.use(b, nil, []*vkBuffer{vb})
	C.vks_cmd_fill(d.d, b.c, vb.b.buffer, C.uint64_t(off), C.uint64_t(size), 0)
	b.cmds++
	return d.checked("fill", d.waitLocked(b.seq))
}

// leakBufferForTest creates a VkBuffer the device does not track, so that
// tests can prove Close reports leaked objects.
func (d *vkDevice) leakBufferForTest() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return ErrClosed
	}
	return d.checked("leak", vkResult("create buffer", C.vks_leak_buffer_for_test(d.d)))
}

// OpenBuildOnly opens the Vulkan device that c describes (from Enumerate)
// to build kernels only: Kernel works, and each kernel keeps the driver's
// statistics of its pipeline where the driver offers them
// (PipelineStats); Alloc and Launch fail with ErrUnsupported. A device
// that Enumerate marks unusable only for reporting no memory opens too:
// RADV's null hardware (RADV_FORCE_FAMILY with no AMD GPU present), which
// compiles the SPIR-V for AMD GPUs with their compiler, on a machine
// without one.
func OpenBuildOnly(c Caps, opts Options) (Device, error) {
	if c.Backend != Vulkan {
		return nil, fmt.Errorf("build-only device %s: only Vulkan devices open so: %w", c.ID(), ErrUnsupported)
	}
	return vulkanOpenMode(c.Index, opts, true)
}

// buildable says whether a device whose caps say it is unusable can still
// build kernels: it lacks only memory (RADV's null hardware reports
// none), not a feature the SPIR-V needs.
func buildable(c Caps) bool {
	for _, why := range strings.Split(c.Unusable, ", ") {
		if !strings.HasPrefix(why, "reports device memory") && !strings.HasPrefix(why, "reports max allocation") {
			return false
		}
	}
	return true
}

// Stat is one of the statistics a driver keeps of a compiled kernel, named
// as the driver names it (RADV: "VGPRs", "Scratch size", "Subgroups per
// SIMD", ...), its value as text.
type Stat struct {
	Name  string
	Value string
}

// PipelineStats returns the statistics the Vulkan driver keeps of k's
// pipeline (VK_KHR_pipeline_executable_properties), where the device was
// opened to keep them (Options.Trace or OpenBuildOnly) and the driver
// offers them; else nil.
func PipelineStats(k Kernel) []Stat {
	if vk, ok := k.(*vkKernel); ok {
		return slices.Clone(vk.stats)
	}
	return nil
}

// Representation is one of the driver's internal representations of a
// pipeline (VK_KHR_pipeline_executable_properties): RADV gives its NIR,
// ACO's IR and the disassembly.
type Representation struct {
	Name string
	Text string
}

// PipelineIR returns the driver's internal representations of k's
// pipeline, where the device was opened with ACCEL_VK_DUMP set (so that
// its pipelines capture them) and the driver offers them; else nil.
func PipelineIR(k Kernel) []Representation {
	vk, ok := k.(*vkKernel)
	if !ok {
		return nil
	}
	d := vk.dev
	d.life.RLock() // Close waits: the pipeline stays while it is read
	defer d.life.RUnlock()
	d.mu.Lock()
	closed := d.closed
	d.mu.Unlock()
	if closed {
		return nil
	}
	return vk.ir()
}

// ir reads the pipeline's internal representations (PipelineIR), under
// the device's life lock, which its caller holds.
func (vk *vkKernel) ir() []Representation {
	var st C.int
	text := C.vks_pipeline_ir(vk.dev.d, vk.pipeline, &st)
	if text == nil {
		return nil
	}
	defer C.free(unsafe.Pointer(text))
	var out []Representation
	for _, rec := range strings.Split(C.GoString(text), "\x1e") {
		if name, body, ok := strings.Cut(rec, "\x1f"); ok {
			out = append(out, Representation{Name: name, Text: body})
		}
	}
	return out
}

// dumpPipeline writes a built pipeline to the ACCEL_VK_DUMP folder, to read
// what the driver's compiler made of it away from the device:
// FILE.VARIANT.ENTRY-l<local size>-<digest of its constants>.txt, with its
// specialization constants (id=value), the driver's statistics and its
// internal representations (RADV: the disassembly; scripts/gpu-next.sh
// section P). A failed write is traced, never fatal: the pipeline stands.
func (d *vkDevice) dumpPipeline(k *vkKernel, plan Plan, spc []uint32) {
	var b strings.Builder
	fmt.Fprintf(&b, "pipeline %s.%s:%s\ndevice %s (%s)\nconstants", k.spec.Entry.File.Name, k.spec.Variant, k.spec.Entry.Name, d.caps.Name, d.caps.Driver)
	for i := 0; i+1 < len(spc); i += 2 {
		fmt.Fprintf(&b, " %d=%d", spc[i], int32(spc[i+1]))
	}
	b.WriteString("\nstatistics:")
	for _, st := range k.stats {
		fmt.Fprintf(&b, " %s=%s;", st.Name, st.Value)
	}
	b.WriteString("\n")
	for _, r := range k.ir() { // build holds the life lock
		fmt.Fprintf(&b, "== %s\n%s\n", r.Name, r.Text)
	}
	digest := Hash([]byte(fmt.Sprint(spc)))
	name := fmt.Sprintf("%s.%s.%s-l%d-%s.txt", k.spec.Entry.File.Name, k.spec.Variant, k.spec.Entry.Name, plan.LocalSize, digest[:min(12, len(digest))])
	err := os.MkdirAll(d.dump, 0o755)
	if err == nil {
		err = os.WriteFile(filepath.Join(d.dump, name), []byte(b.String()), 0o644)
	}
	if err != nil && d.log != nil {
		d.log(fmt.Sprintf("accel: %s: ACCEL_VK_DUMP: %v", d.caps.ID(), err))
	}
}

// parseStats reads vks_pipeline_stats' "name=value;name=value".
func parseStats(s string) []Stat {
	var out []Stat
	for _, kv := range strings.Split(s, ";") {
		if name, v, ok := strings.Cut(kv, "="); ok {
			out = append(out, Stat{Name: name, Value: v})
		}
	}
	return out
}
