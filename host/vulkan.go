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

// vkInstance creates an instance (with the validation layer if asked) and
// loads vulkan-go's instance functions for it.
func vkInstance(validation bool) (unsafe.Pointer, error) {
	if err := vkInit(); err != nil {
		return nil, err
	}
	var inst unsafe.Pointer
	var cerr [512]C.char
	v := C.int(0)
	if validation {
		v = 1
	}
	if r := C.vks_create_instance(v, &inst, &cerr[0], C.int(len(cerr))); r != 0 {
		return nil, fmt.Errorf("vulkan: %s: %w", C.GoString(&cerr[0]), ErrNoDevice)
	}
	vkMu.Lock()
	err := vk.InitInstance(vk.Instance(inst))
	vkMu.Unlock()
	if err != nil {
		C.vks_destroy_instance(inst)
		return nil, fmt.Errorf("vulkan: %v: %w", err, ErrDriver)
	}
	return inst, nil
}

func vkPhysicalDevices(inst unsafe.Pointer) ([]vk.PhysicalDevice, error) {
	var n uint32
	if r := vk.EnumeratePhysicalDevices(vk.Instance(inst), &n, nil); r != vk.Success {
		return nil, fmt.Errorf("vkEnumeratePhysicalDevices: %d: %w", r, ErrDriver)
	}
	pds := make([]vk.PhysicalDevice, n)
	if n > 0 {
		if r := vk.EnumeratePhysicalDevices(vk.Instance(inst), &n, pds); r != vk.Success {
			return nil, fmt.Errorf("vkEnumeratePhysicalDevices: %d: %w", r, ErrDriver)
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
func vkCaps(inst unsafe.Pointer, index int, pd vk.PhysicalDevice) Caps {
	var p vk.PhysicalDeviceProperties
	vk.GetPhysicalDeviceProperties(pd, &p)
	p.Deref()
	p.Limits.Deref()
	var mp vk.PhysicalDeviceMemoryProperties
	vk.GetPhysicalDeviceMemoryProperties(pd, &mp)
	mp.Deref()
	var q C.vks_caps
	C.vks_query(inst, unsafe.Pointer(pd), &q)

	api := p.ApiVersion
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
		Timestamps:        q.timestamp_valid_bits > 0,
		TimestampPeriodNs: float64(p.Limits.TimestampPeriod),
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
	// work-group per core; for GPUs assume 64, enough groups to fill any
	// current GPU once the planner multiplies by its groups per unit.
	if c.Type == TypeCPU {
		c.ComputeUnits = runtime.NumCPU()
	} else {
		c.ComputeUnits = 64
	}
	// Driver workarounds, all in this one place.
	if strings.Contains(strings.ToLower(c.Driver+" "+c.Name), "llvmpipe") {
		c.LoopLimit = 65535 // gallivm's LP_MAX_TGSI_LOOP_ITERATIONS
	}
	var why []string
	if api>>22 == 1 && (api>>12)&0x3ff < 2 {
		why = append(why, "needs Vulkan 1.2")
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
	inst, err := vkInstance(false)
	if err != nil {
		return nil, err
	}
	defer C.vks_destroy_instance(inst)
	pds, err := vkPhysicalDevices(inst)
	if err != nil {
		return nil, err
	}
	caps := make([]Caps, len(pds))
	for i, pd := range pds {
		caps[i] = vkCaps(inst, i, pd)
	}
	return caps, nil
}

type vkDevice struct {
	caps       Caps
	inst       unsafe.Pointer
	d          *C.vks_device
	validation bool

	mu       sync.Mutex
	closed   bool
	bufs     map[*vkBuffer]struct{}
	kernels  map[string]*vkKernel
	staging  *vkBuffer
	messages []string
}

type vkBuffer struct {
	dev  *vkDevice
	b    C.vks_buffer
	size int64
	live bool
}

type vkKernel struct {
	spec     KernelSpec
	pipeline C.uint64_t
}

func (k *vkKernel) Spec() KernelSpec { return k.spec }

func (b *vkBuffer) Size() int64 { return b.size }

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
}

func vulkanOpen(index int, opts Options) (Device, error) {
	validation := opts.validation()
	inst, err := vkInstance(validation)
	if err != nil {
		return nil, err
	}
	pds, err := vkPhysicalDevices(inst)
	if err != nil {
		C.vks_destroy_instance(inst)
		return nil, err
	}
	if index < 0 || index >= len(pds) {
		C.vks_destroy_instance(inst)
		return nil, fmt.Errorf("vulkan device index %d outside [0, %d): %w", index, len(pds), ErrNoDevice)
	}
	caps := vkCaps(inst, index, pds[index])
	if caps.Unusable != "" {
		C.vks_destroy_instance(inst)
		return nil, fmt.Errorf("vulkan:%d %s: %s: %w", index, caps.Name, caps.Unusable, ErrUnsupported)
	}
	hostVisible := C.int(0)
	if caps.Type == TypeCPU || caps.Type == TypeIntegratedGPU {
		hostVisible = 1 // unified memory: map device buffers, no staging
	}
	var dev *C.vks_device
	var cerr [512]C.char
	if r := C.vks_open(inst, unsafe.Pointer(pds[index]), hostVisible, &dev, &cerr[0], C.int(len(cerr))); r != 0 {
		C.vks_destroy_instance(inst)
		return nil, fmt.Errorf("vulkan:%d: %s: %w", index, C.GoString(&cerr[0]), ErrDriver)
	}
	d := &vkDevice{caps: caps, inst: inst, d: dev, validation: validation,
		bufs: map[*vkBuffer]struct{}{}, kernels: map[string]*vkKernel{}}
	if err := d.check("open"); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

func (d *vkDevice) Caps() Caps { return d.caps }

// check turns pending validation messages into an error (ErrValidation).
func (d *vkDevice) check(what string) error {
	if !d.validation {
		return nil
	}
	buf := make([]byte, 16384)
	n := C.vks_take_messages((*C.char)(unsafe.Pointer(&buf[0])), C.int(len(buf)))
	if n == 0 {
		return nil
	}
	msg := strings.TrimSpace(C.GoString((*C.char)(unsafe.Pointer(&buf[0]))))
	d.messages = append(d.messages, msg)
	return fmt.Errorf("vulkan: %s: %d validation message(s):\n%s\n%w", what, int(n), msg, ErrValidation)
}

// ValidationMessages returns every validation message seen so far.
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
		return nil, vkResult(fmt.Sprintf("alloc %d bytes", size), r)
	}
	d.bufs[b] = struct{}{}
	return b, nil
}

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
	if err != nil {
		return nil, err
	}
	return b, d.check("alloc")
}

func (d *vkDevice) buf(b Buffer, off, n int64) (*vkBuffer, error) {
	vb, ok := b.(*vkBuffer)
	if !ok || vb.dev != d {
		return nil, fmt.Errorf("vulkan: buffer belongs to another device")
	}
	if !vb.live || d.closed {
		return nil, ErrClosed
	}
	return vb, checkRange("vulkan", off, n, vb.size)
}

func mapped(b *vkBuffer, off, n int64) []byte {
	return unsafe.Slice((*byte)(unsafe.Add(b.b.mapped, off)), n)
}

const vkStagingBytes = 64 << 20

func (d *vkDevice) stagingLocked() (*vkBuffer, error) {
	if d.staging == nil {
		s, err := d.allocLocked(vkStagingBytes, true)
		if err != nil {
			return nil, err
		}
		d.staging = s
	}
	return d.staging, nil
}

// transfer moves bytes between host memory and a device buffer, mapping
// when the buffer is host visible and staging through a host-visible
// buffer otherwise.
func (d *vkDevice) transfer(b Buffer, off int64, host []byte, upload bool) error {
	if len(host) == 0 {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	vb, err := d.buf(b, off, int64(len(host)))
	if err != nil {
		return err
	}
	if vb.b.mapped != nil {
		if upload {
			copy(mapped(vb, off, int64(len(host))), host)
		} else {
			copy(host, mapped(vb, off, int64(len(host))))
		}
		return d.check("transfer")
	}
	st, err := d.stagingLocked()
	if err != nil {
		return err
	}
	for done := int64(0); done < int64(len(host)); done += vkStagingBytes {
		n := min(int64(len(host))-done, vkStagingBytes)
		if upload {
			copy(mapped(st, 0, n), host[done:done+n])
			if err := vkResult("upload", C.vks_copy(d.d, st.b.buffer, 0, vb.b.buffer, C.uint64_t(off+done), C.uint64_t(n), nil)); err != nil {
				return err
			}
		} else {
			if err := vkResult("download", C.vks_copy(d.d, vb.b.buffer, C.uint64_t(off+done), st.b.buffer, 0, C.uint64_t(n), nil)); err != nil {
				return err
			}
			copy(host[done:done+n], mapped(st, 0, n))
		}
	}
	return d.check("transfer")
}

func (d *vkDevice) Upload(dst Buffer, off int64, src []byte) error {
	return d.transfer(dst, off, src, true)
}

func (d *vkDevice) Download(src Buffer, off int64, dst []byte) error {
	return d.transfer(src, off, dst, false)
}

func (d *vkDevice) Fill(dst Buffer, off, size int64, pattern []byte) error {
	if err := checkFill("vulkan", off, size, pattern); err != nil {
		return err
	}
	if size == 0 {
		return nil
	}
	// Reduce the pattern to 4 bytes where it repeats, for vkCmdFillBuffer.
	p := pattern
	for len(p) < 4 {
		p = append(append([]byte(nil), p...), p...)
	}
	if len(p) == 8 && string(p[:4]) == string(p[4:]) {
		p = p[:4]
	}
	if len(p) == 4 && off%4 == 0 && size%4 == 0 {
		d.mu.Lock()
		defer d.mu.Unlock()
		vb, err := d.buf(dst, off, size)
		if err != nil {
			return err
		}
		word := uint32(p[0]) | uint32(p[1])<<8 | uint32(p[2])<<16 | uint32(p[3])<<24
		if err := vkResult("fill", C.vks_fill(d.d, vb.b.buffer, C.uint64_t(off), C.uint64_t(size), C.uint32_t(word))); err != nil {
			return err
		}
		return d.check("fill")
	}
	// Otherwise upload the pattern in chunks.
	chunk := make([]byte, min(size, 1<<20))
	for i := range chunk {
		chunk[i] = pattern[i%len(pattern)]
	}
	for done := int64(0); done < size; done += int64(len(chunk)) {
		n := min(size-done, int64(len(chunk)))
		if err := d.Upload(dst, off+done, chunk[:n]); err != nil {
			return err
		}
	}
	return nil
}

func (d *vkDevice) Copy(dst Buffer, dstOff int64, src Buffer, srcOff int64, size int64) (time.Duration, error) {
	if size == 0 {
		return 0, nil
	}
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
	var ns C.uint64_t
	if err := vkResult("copy", C.vks_copy(d.d, sb.b.buffer, C.uint64_t(srcOff), db.b.buffer, C.uint64_t(dstOff), C.uint64_t(size), &ns)); err != nil {
		return 0, err
	}
	return time.Duration(ns), d.check("copy")
}

func (d *vkDevice) Kernel(spec KernelSpec, plan Plan) (Kernel, error) {
	code, err := SPIRV(spec)
	if err != nil {
		return nil, err
	}
	if len(code)%4 != 0 {
		return nil, fmt.Errorf("vulkan: %s.%s.spv: %d bytes is not a whole number of words", spec.File, spec.Variant, len(code))
	}
	spc := []uint32{0, uint32(plan.LocalSize)}
	for _, k := range plan.Knobs {
		spc = append(spc, uint32(k.ID), uint32(int32(k.Value)))
	}
	specBytes := unsafe.Slice((*byte)(unsafe.Pointer(&spc[0])), len(spc)*4)
	key := Hash(code, specBytes)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, ErrClosed
	}
	if k, ok := d.kernels[key]; ok {
		return k, nil
	}
	// Copy the code and constants into C memory: nothing Go-owned is
	// handed to the driver.
	ccode := C.CBytes(code)
	defer C.free(ccode)
	cspec := C.CBytes(specBytes)
	defer C.free(cspec)
	var p C.uint64_t
	var cerr [512]C.char
	if r := C.vks_pipeline(d.d, (*C.uint32_t)(ccode), C.size_t(len(code)), (*C.uint32_t)(cspec), C.int(len(spc)/2),
		&p, &cerr[0], C.int(len(cerr))); r != 0 {
		return nil, fmt.Errorf("vulkan: pipeline %s.%s: %s: %w", spec.File, spec.Variant, C.GoString(&cerr[0]), ErrDriver)
	}
	k := &vkKernel{spec: spec, pipeline: p}
	d.kernels[key] = k
	return k, d.check("pipeline " + spec.File)
}

func (d *vkDevice) Launch(kern Kernel, plan Plan, args ...Arg) (time.Duration, error) {
	k, ok := kern.(*vkKernel)
	if !ok {
		return 0, fmt.Errorf("vulkan: kernel from another backend")
	}
	if err := checkLaunch("vulkan", plan, d.caps, len(args)); err != nil {
		return 0, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return 0, ErrClosed
	}
	push := make([]uint64, MaxArgs)
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
	var ns C.uint64_t
	r := C.vks_dispatch(d.d, k.pipeline, unsafe.Pointer(&push[0]), C.uint32_t(8*MaxArgs),
		C.uint32_t(plan.Groups[0]), C.uint32_t(plan.Groups[1]), C.uint32_t(plan.Groups[2]), &ns)
	runtime.KeepAlive(push)
	if err := vkResult("dispatch "+k.spec.File, r); err != nil {
		return 0, err
	}
	return time.Duration(ns), d.check("dispatch " + k.spec.File)
}

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
	for _, k := range d.kernels {
		C.vks_destroy_pipeline(d.d, k.pipeline)
	}
	d.kernels = nil
	C.vks_close(d.d)
	C.vks_destroy_instance(d.inst)
	// Leaks the validation layer finds at destroy time surface here.
	if err := d.check("close"); err != nil {
		return err
	}
	return nil
}

// rawFill issues vkCmdFillBuffer without the checks of Fill; tests use it to
// provoke a validation error and prove the message sink works.
func (d *vkDevice) rawFill(b Buffer, off, size int64) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	vb := b.(*vkBuffer)
	if err := vkResult("fill", C.vks_fill(d.d, vb.b.buffer, C.uint64_t(off), C.uint64_t(size), 0)); err != nil {
		return err
	}
	return d.check("fill")
}
