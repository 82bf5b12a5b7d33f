package host

/*
#cgo LDFLAGS: -ldl -lpthread
#include <stdlib.h>
#include "vkshim.h"
*/
import "C"

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"
	"unsafe"

	vk "github.com/vulkan-go/vulkan"
)

// The Vulkan backend. vulkan-go loads the API (from libvulkan.so.1, which
// the shim opens: the binding's own loader wants the unversioned
// libvulkan.so that only the -dev package installs) and answers the
// enumeration and property queries; the shim in vkshim.c does what needs
// Vulkan 1.2 structs (see vkshim.h). Kernels get their buffers as device
// addresses in the push constants, so no binding is limited by
// maxStorageBufferRange and no descriptor sets exist.

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
		FP64:              q.shader_float64 != 0,
		Int64:             q.shader_int64 != 0,
		Int64Atomics:      q.int64_atomics != 0,
		Float32Atomics:    q.float32_atomic_add != 0,
		Float64Atomics:    q.float64_atomic_add != 0,
		SubgroupArith:     q.subgroup_arith != 0,
		SubgroupArith64:   q.subgroup_ext_types != 0 && q.shader_int64 != 0,
		SubgroupFixed:     q.subgroup_fixed != 0,
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
	// work-group per core; for GPUs this is a heuristic, not a measurement:
	// assume 64, enough groups to fill any current GPU once the planner
	// multiplies by its groups per unit (the grid stride covers the rest).
	if c.Type == TypeCPU {
		c.ComputeUnits = runtime.NumCPU()
	} else {
		c.ComputeUnits = 64
	}
	// Driver workarounds, all in this one place.
	if strings.Contains(strings.ToLower(c.Driver+" "+c.Name), "llvmpipe") {
		c.LoopLimit = 65535 // gallivm's LP_MAX_TGSI_LOOP_ITERATIONS
		c.FoldArgs = true   // gallivm runs both sides of every branch
	}
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
	caps := make([]Caps, len(pds))
	for i, pd := range pds {
		caps[i] = vkCaps(vi, i, pd)
	}
	return caps, nil
}

// vkDevice is an open Vulkan device: one compute queue, and one command
// buffer, fence and timestamp query pool reused by every call under mu.
type vkDevice struct {
	caps       Caps
	validation bool

	mu       sync.Mutex
	closed   bool
	inst     *C.vks_instance
	d        *C.vks_device
	bufs     map[*vkBuffer]struct{}
	kernels  map[string]*vkKernel
	staging  *vkBuffer
	messages []string
	// noMap makes transfers and fills ignore mappings of device buffers,
	// so tests on unified-memory drivers exercise the staging path too.
	noMap bool
	// stagingBytes is the staging buffer's size, vkStagingBytes but in
	// tests, which shrink it to exercise chunking.
	stagingBytes int64
}

// vkBuffer is a VkBuffer bound to its own memory, with its device address.
type vkBuffer struct {
	dev  *vkDevice
	b    C.vks_buffer // guarded by dev.mu
	size int64
	live bool // guarded by dev.mu
}

// vkKernel is a compute pipeline, owned by the device that built it.
type vkKernel struct {
	dev       *vkDevice
	spec      KernelSpec
	localSize int
	pipeline  C.uint64_t
}

// Spec returns the kernel's spec.
func (k *vkKernel) Spec() KernelSpec { return k.spec }

// Size returns the buffer's size in bytes.
func (b *vkBuffer) Size() int64 { return b.size }

// Release frees the buffer's VkBuffer and memory. It is safe to call more
// than once, and after the device closed (Close freed it already).
func (b *vkBuffer) Release() {
	d := b.dev
	d.mu.Lock()
	defer d.mu.Unlock()
	if !b.live || d.closed {
		b.live = false
		return
	}
	C.vks_free(d.d, &b.b)
	b.live = false
	delete(d.bufs, b)
	if d.staging == b {
		d.staging = nil
	}
}

func vulkanOpen(index int, opts Options) (Device, error) {
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
	if caps.Unusable != "" {
		vkDropInstance(vi)
		return nil, fmt.Errorf("vulkan:%d %s: %s: %w", index, caps.Name, caps.Unusable, ErrUnsupported)
	}
	hostVisible := C.int(0)
	if caps.Type == TypeCPU || caps.Type == TypeIntegratedGPU {
		hostVisible = 1 // unified memory: map device buffers, no staging
	}
	var dev *C.vks_device
	var cerr [512]C.char
	if r := C.vks_open(vi, unsafe.Pointer(pds[index]), hostVisible, &dev, &cerr[0], C.int(len(cerr))); r != 0 {
		vkDropInstance(vi)
		return nil, fmt.Errorf("vulkan:%d: %s: %w", index, C.GoString(&cerr[0]), ErrDriver)
	}
	d := &vkDevice{caps: caps, inst: vi, d: dev, validation: validation,
		bufs: map[*vkBuffer]struct{}{}, kernels: map[string]*vkKernel{}, stagingBytes: vkStagingBytes}
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

func (d *vkDevice) allocLocked(size int64, hostVisible bool) (*vkBuffer, error) {
	n := size
	if n < 4 {
		n = 4 // a valid buffer for an empty tensor
	}
	hv := C.int(0)
	if hostVisible {
		hv = 1
	}
	b := &vkBuffer{dev: d, size: size, live: true}
	if r := C.vks_alloc(d.d, C.uint64_t((n+3)&^3), hv, &b.b); r != 0 {
		return nil, vkResult(fmt.Sprintf("alloc %d bytes (device memory %d bytes)", size, d.caps.GlobalMemBytes), r)
	}
	d.bufs[b] = struct{}{}
	return b, nil
}

// Alloc allocates a buffer of size bytes, device local where the device has
// such memory. Sizes above Caps.MaxAllocBytes fail with ErrOutOfMemory
// before the driver is asked.
func (d *vkDevice) Alloc(size int64) (Buffer, error) {
	if err := checkAlloc("vulkan", size, d.caps); err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, ErrClosed
	}
	b, err := d.allocLocked(size, false)
	if err := d.checked("alloc", err); err != nil {
		if b != nil {
			C.vks_free(d.d, &b.b)
			delete(d.bufs, b)
		}
		return nil, err
	}
	return b, nil
}

// buf checks that b is a live buffer of this device and [off, off+n) lies
// inside it. Callers hold d.mu.
func (d *vkDevice) buf(b Buffer, off, n int64) (*vkBuffer, error) {
	if d.closed {
		return nil, ErrClosed
	}
	vb, ok := b.(*vkBuffer)
	if !ok || vb == nil || vb.dev != d {
		return nil, fmt.Errorf("vulkan: buffer %T does not belong to this device (%s)", b, d.caps.ID())
	}
	if !vb.live {
		return nil, fmt.Errorf("vulkan: buffer of %d bytes: %w", vb.size, ErrClosed)
	}
	return vb, checkRange("vulkan", off, n, vb.size)
}

// mapped is the host view of bytes [off, off+n) of a mapped buffer: C
// memory, which Go may read and write but never keeps a pointer into.
func mapped(b *vkBuffer, off, n int64) []byte {
	return unsafe.Slice((*byte)(unsafe.Add(b.b.mapped, off)), n)
}

// vkStagingBytes is the size of the host-visible staging buffer through
// which Upload, Download and Fill reach memory the host cannot map.
const vkStagingBytes = 64 << 20

func (d *vkDevice) stagingLocked() (*vkBuffer, error) {
	if d.staging == nil {
		s, err := d.allocLocked(d.stagingBytes, true)
		if err != nil {
			return nil, fmt.Errorf("vulkan: staging buffer: %w", err)
		}
		d.staging = s
	}
	return d.staging, nil
}

// transferLocked moves bytes between host memory and a device buffer,
// mapping when the buffer is host visible and coherent and staging through
// a host-visible buffer in vkStagingBytes chunks otherwise.
func (d *vkDevice) transferLocked(vb *vkBuffer, off int64, host []byte, upload bool) error {
	if len(host) == 0 {
		return nil
	}
	if vb.b.mapped != nil && !d.noMap {
		if upload {
			copy(mapped(vb, off, int64(len(host))), host)
		} else {
			copy(host, mapped(vb, off, int64(len(host))))
		}
		return nil
	}
	st, err := d.stagingLocked()
	if err != nil {
		return err
	}
	for done := int64(0); done < int64(len(host)); done += st.size {
		n := min(int64(len(host))-done, st.size)
		if upload {
			copy(mapped(st, 0, n), host[done:done+n])
			if err := vkResult(fmt.Sprintf("upload %d bytes at %d", n, off+done),
				C.vks_copy(d.d, st.b.buffer, 0, vb.b.buffer, C.uint64_t(off+done), C.uint64_t(n), nil)); err != nil {
				return err
			}
		} else {
			if err := vkResult(fmt.Sprintf("download %d bytes at %d", n, off+done),
				C.vks_copy(d.d, vb.b.buffer, C.uint64_t(off+done), st.b.buffer, 0, C.uint64_t(n), nil)); err != nil {
				return err
			}
			copy(host[done:done+n], mapped(st, 0, n))
		}
	}
	return nil
}

func (d *vkDevice) transfer(b Buffer, off int64, host []byte, upload bool, what string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	vb, err := d.buf(b, off, int64(len(host)))
	if err != nil {
		return err
	}
	return d.checked(what, d.transferLocked(vb, off, host, upload))
}

// Upload copies src into dst at byte offset off.
func (d *vkDevice) Upload(dst Buffer, off int64, src []byte) error {
	return d.transfer(dst, off, src, true, "upload")
}

// Download copies len(dst) bytes from src at byte offset off.
func (d *vkDevice) Download(src Buffer, off int64, dst []byte) error {
	return d.transfer(src, off, dst, false, "download")
}

// Fill writes pattern repeatedly over [off, off+size) of dst. Patterns that
// repeat every 4 bytes use vkCmdFillBuffer on the 4-byte-aligned middle
// (its offset and size must be multiples of 4) and write the unaligned
// head and tail from the host; true 8-byte patterns are written through the
// mapping, or copied from a pattern-filled staging chunk.
func (d *vkDevice) Fill(dst Buffer, off, size int64, pattern []byte) error {
	if err := checkFill("vulkan", off, size, pattern); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	vb, err := d.buf(dst, off, size)
	if err != nil {
		return err
	}
	if size == 0 {
		return nil
	}
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
	if len(p) == 4 {
		head := min((4-off%4)%4, size)
		mid := (size - head) &^ 3
		tail := size - head - mid
		if head > 0 {
			if err := d.transferLocked(vb, off, p[:head], true); err != nil {
				return err
			}
		}
		if mid > 0 {
			word := uint32(p[0]) | uint32(p[1])<<8 | uint32(p[2])<<16 | uint32(p[3])<<24
			if err := vkResult(fmt.Sprintf("fill %d bytes at %d", mid, off+head),
				C.vks_fill(d.d, vb.b.buffer, C.uint64_t(off+head), C.uint64_t(mid), C.uint32_t(word))); err != nil {
				return err
			}
		}
		if tail > 0 {
			if err := d.transferLocked(vb, off+head+mid, p[:tail], true); err != nil {
				return err
			}
		}
		return nil
	}
	// An 8-byte pattern: write it once, then double the written run.
	if vb.b.mapped != nil && !d.noMap {
		m := mapped(vb, off, size)
		n := copy(m, p)
		for n < len(m) {
			n += copy(m[n:], m[:n])
		}
		return nil
	}
	st, err := d.stagingLocked()
	if err != nil {
		return err
	}
	chunk := min(size, st.size&^7) // whole patterns per chunk
	m := mapped(st, 0, chunk)
	n := copy(m, p)
	for n < len(m) {
		n += copy(m[n:], m[:n])
	}
	for done := int64(0); done < size; done += chunk {
		c := min(size-done, chunk)
		if err := vkResult(fmt.Sprintf("fill %d bytes at %d", c, off+done),
			C.vks_copy(d.d, st.b.buffer, 0, vb.b.buffer, C.uint64_t(off+done), C.uint64_t(c), nil)); err != nil {
			return err
		}
	}
	return nil
}

// Copy copies size bytes from src at srcOff to dst at dstOff with
// vkCmdCopyBuffer and returns the device time between the timestamps
// around it (0 when the queue has no timestamps). Overlapping ranges of one
// buffer are refused, as vkCmdCopyBuffer (and OpenCL) forbid them.
func (d *vkDevice) Copy(dst Buffer, dstOff int64, src Buffer, srcOff int64, size int64) (time.Duration, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	db, err := d.buf(dst, dstOff, size)
	if err != nil {
		return 0, err
	}
	sb, err := d.buf(src, srcOff, size)
	if err != nil {
		return 0, err
	}
	if size == 0 {
		return 0, nil
	}
	if db == sb && dstOff < srcOff+size && srcOff < dstOff+size {
		return 0, fmt.Errorf("vulkan: copy of %d bytes from offset %d to overlapping offset %d of the same buffer", size, srcOff, dstOff)
	}
	var ns C.uint64_t
	err = vkResult(fmt.Sprintf("copy %d bytes", size),
		C.vks_copy(d.d, sb.b.buffer, C.uint64_t(srcOff), db.b.buffer, C.uint64_t(dstOff), C.uint64_t(size), &ns))
	if err := d.checked("copy", err); err != nil {
		return 0, err
	}
	return time.Duration(ns), nil
}

// Kernel returns the compute pipeline for spec with the plan's local size
// (specialization constant 0) and knobs (constant_id = Knob.ID, 32-bit),
// building it on first use. Pipelines are cached by the hash of the SPIR-V
// and the specialization constants, and share the device's one pipeline
// layout (a 128-byte push-constant range, no descriptor sets).
func (d *vkDevice) Kernel(spec KernelSpec, plan Plan) (Kernel, error) {
	code, err := SPIRV(spec)
	if err != nil {
		return nil, err
	}
	if len(code) == 0 || len(code)%4 != 0 {
		return nil, fmt.Errorf("vulkan: %s.%s.spv: %d bytes is not a whole, non-zero number of words", spec.File, spec.Variant, len(code))
	}
	if plan.LocalSize < 1 || (d.caps.MaxWorkGroupSize > 0 && plan.LocalSize > d.caps.MaxWorkGroupSize) {
		return nil, fmt.Errorf("vulkan: kernel %s: local size %d outside [1, %d]", spec.File, plan.LocalSize, d.caps.MaxWorkGroupSize)
	}
	const maxConsts = 32 // the shim's limit on specialization constants
	if len(plan.Knobs)+1 > maxConsts {
		return nil, fmt.Errorf("vulkan: kernel %s: %d knobs exceed %d", spec.File, len(plan.Knobs), maxConsts-1)
	}
	spc := []uint32{0, uint32(plan.LocalSize)}
	seen := map[int]bool{0: true}
	for _, k := range plan.Knobs {
		if k.ID < 1 || seen[k.ID] {
			return nil, fmt.Errorf("vulkan: kernel %s: knob %s has constant id %d (0 is the local size; ids must be distinct)", spec.File, k.Name, k.ID)
		}
		if k.Value < -1<<31 || k.Value > 1<<31-1 {
			return nil, fmt.Errorf("vulkan: kernel %s: knob %s = %d outside the 32-bit range of a specialization constant", spec.File, k.Name, k.Value)
		}
		seen[k.ID] = true
		spc = append(spc, uint32(k.ID), uint32(int32(k.Value)))
	}
	specBytes := make([]byte, 4*len(spc))
	for i, v := range spc {
		specBytes[4*i], specBytes[4*i+1], specBytes[4*i+2], specBytes[4*i+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
	}
	key := Hash(code, specBytes)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, ErrClosed
	}
	if k, ok := d.kernels[key]; ok {
		return k, nil
	}
	// The code and constants go to the driver in C memory: nothing
	// Go-owned is handed over.
	ccode := C.CBytes(code)
	defer C.free(ccode)
	cspec := C.CBytes(specBytes)
	defer C.free(cspec)
	var p C.uint64_t
	var cerr [512]C.char
	if r := C.vks_pipeline(d.d, (*C.uint32_t)(ccode), C.size_t(len(code)), (*C.uint32_t)(cspec), C.int(len(spc)/2),
		&p, &cerr[0], C.int(len(cerr))); r != 0 {
		err := fmt.Errorf("vulkan: pipeline %s.%s: %s: %w", spec.File, spec.Variant, C.GoString(&cerr[0]), ErrDriver)
		return nil, d.checked("pipeline "+spec.File, err)
	}
	k := &vkKernel{dev: d, spec: spec, localSize: plan.LocalSize, pipeline: p}
	d.kernels[key] = k
	if err := d.check("pipeline " + spec.File); err != nil {
		return nil, err
	}
	return k, nil
}

// Launch records push constants (one 8-byte slot per argument: a buffer's
// device address or a scalar), the dispatch of plan.Groups and a barrier,
// between two timestamps; submits; waits; and returns the device time.
func (d *vkDevice) Launch(kern Kernel, plan Plan, args ...Arg) (time.Duration, error) {
	k, ok := kern.(*vkKernel)
	if !ok || k == nil {
		return 0, fmt.Errorf("vulkan: kernel %T is not a Vulkan kernel", kern)
	}
	if k.dev != d {
		return 0, fmt.Errorf("vulkan: kernel %s was built by another device", k.spec.File)
	}
	if err := checkLaunch("vulkan", plan, d.caps, len(args)); err != nil {
		return 0, err
	}
	if plan.LocalSize != k.localSize {
		return 0, fmt.Errorf("vulkan: kernel %s was built for local size %d, plan has %d", k.spec.File, k.localSize, plan.LocalSize)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return 0, ErrClosed
	}
	var push [MaxArgs]uint64
	for i, a := range args {
		if a.Buf != nil {
			vb, err := d.buf(a.Buf, 0, 0)
			if err != nil {
				return 0, fmt.Errorf("vulkan: %s arg %d: %w", k.spec.File, i, err)
			}
			push[i] = uint64(vb.b.address)
		} else {
			push[i] = a.Val
		}
	}
	// push is only read during the call (vkCmdPushConstants copies it).
	var ns C.uint64_t
	r := C.vks_dispatch(d.d, k.pipeline, unsafe.Pointer(&push[0]), C.uint32_t(8*MaxArgs),
		C.uint32_t(plan.Groups[0]), C.uint32_t(plan.Groups[1]), C.uint32_t(plan.Groups[2]), &ns)
	if err := d.checked("dispatch "+k.spec.File, vkResult("dispatch "+k.spec.File, r)); err != nil {
		return 0, err
	}
	return time.Duration(ns), nil
}

// Close waits for the device, then destroys every buffer, pipeline, the
// pipeline layout, command pool, fence, query pool, device, messenger and
// instance. With validation on, anything the layer reports meanwhile
// (leaked objects included) makes Close fail with ErrValidation.
func (d *vkDevice) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	C.vks_wait_idle(d.d)
	for b := range d.bufs {
		C.vks_free(d.d, &b.b)
		b.live = false
	}
	d.bufs = nil
	d.staging = nil
	for _, k := range d.kernels {
		C.vks_destroy_pipeline(d.d, k.pipeline)
	}
	d.kernels = nil
	C.vks_close(d.d)
	d.d = nil
	C.vks_destroy_instance(d.inst)
	// Leaks the validation layer finds at destroy time surface here.
	err := d.check("close")
	C.vks_free_instance(d.inst)
	d.inst = nil
	return err
}

// rawFill issues vkCmdFillBuffer without the checks of Fill; tests use it to
// provoke a validation error and prove the message sink works.
func (d *vkDevice) rawFill(b Buffer, off, size int64) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	vb, err := d.buf(b, 0, 0)
	if err != nil {
		return err
	}
	return d.checked("fill", vkResult("fill", C.vks_fill(d.d, vb.b.buffer, C.uint64_t(off), C.uint64_t(size), 0)))
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
