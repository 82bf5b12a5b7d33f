package host

/*
#cgo LDFLAGS: -lOpenCL
#include <stdlib.h>
#include "clshim.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"unsafe"

	cl "github.com/jgillich/go-opencl/cl"
)

// The OpenCL backend, on go-opencl, with one in-order queue per device:
// commands are enqueued without waiting, and the host blocks only in
// Download, Sync and Close. Binding traps handled here: its Flush calls
// clFinish, so the backend flushes with clFlush through the queue's raw
// handle (clshim.c); an empty non-nil wait list panics, so wait lists are
// always nil; the binding sets finalizers, but every object is released
// explicitly (events once their command has finished and been timed, the
// rest in Close).

type clPlatformDevice struct {
	platform *cl.Platform
	device   *cl.Device
}

// openclList enumerates (platform, device) pairs in a stable order; the
// index into this list is the device's OpenCL index.
func openclList() ([]clPlatformDevice, error) {
	plats, err := cl.GetPlatforms()
	if err != nil {
		return nil, fmt.Errorf("no OpenCL platform (is an ICD such as pocl-opencl-icd installed?): %v: %w", err, ErrNoDevice)
	}
	var out []clPlatformDevice
	for _, p := range plats {
		devs, err := p.GetDevices(cl.DeviceTypeAll)
		if err != nil {
			continue // a platform with no devices
		}
		for _, d := range devs {
			out = append(out, clPlatformDevice{p, d})
		}
	}
	return out, nil
}

func openclEnumerate() ([]Caps, error) {
	list, err := openclList()
	if err != nil {
		return nil, err
	}
	caps := make([]Caps, len(list))
	for i, pd := range list {
		caps[i] = openclCaps(i, pd.platform, pd.device)
	}
	return caps, nil
}

// openclCaps queries a device's capabilities. The binding panics where a
// query fails (Type, DoubleFPConfig, ...): such a device is listed as
// unusable, with the reason, instead.
func openclCaps(index int, p *cl.Platform, d *cl.Device) (c Caps) {
	defer func() {
		if r := recover(); r != nil {
			c = Caps{Backend: OpenCL, Index: index, Type: TypeOther,
				Unusable: fmt.Sprintf("a device query failed: %v", r)}
			c.Name = fmt.Sprintf("OpenCL device %d", index)
			c.FP32Div = fp32Div(c)
		}
	}()
	exts := strings.Fields(d.Extensions())
	has := func(e string) bool {
		for _, x := range exts {
			if x == e {
				return true
			}
		}
		return false
	}
	c = Caps{
		Backend:           OpenCL,
		Index:             index,
		Platform:          strings.TrimSpace(p.Name() + " " + p.Version()),
		Name:              strings.TrimSpace(d.Name()),
		Vendor:            strings.TrimSpace(d.Vendor()),
		Driver:            strings.TrimSpace(d.DriverVersion() + " (" + d.Version() + ")"),
		ComputeUnits:      d.MaxComputeUnits(),
		MaxWorkGroupSize:  d.MaxWorkGroupSize(),
		LocalMemBytes:     d.LocalMemSize(),
		GlobalMemBytes:    d.GlobalMemSize(),
		MaxAllocBytes:     d.MaxMemAllocSize(),
		SubAlign:          max(int64(d.MemBaseAddrAlign())/8, 4),
		FP64:              has("cl_khr_fp64"),
		Int64:             true, // long is a required OpenCL C type
		Int64Atomics:      has("cl_khr_int64_base_atomics"),
		Float32Atomics:    has("cl_ext_float_atomics"),
		Float64Atomics:    has("cl_ext_float_atomics") && has("cl_khr_fp64"),
		FP32DivCorrect:    C.acl_single_fp_config(rawHandle(d))&C.ACL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT != 0,
		FloatPreserve32:   true, // OpenCL C is IEEE without -cl-fast-relaxed-math
		FloatPreserve64:   true,
		Timestamps:        true, // profiling events are core OpenCL
		TimestampPeriodNs: float64(d.ProfilingTimerResolution()),
		Extensions:        exts,
	}
	if !c.FP64 {
		// a device may announce fp64 by its config alone; the binding
		// panics where the query fails (a device without fp64 may fail it)
		func() {
			defer func() { _ = recover() }()
			c.FP64 = d.DoubleFPConfig() != 0
		}()
	}
	c.FP32Div = fp32Div(c)
	// OpenCL's NDRange is size_t per dimension: no per-dimension group limit
	// that matters; keep the product representable in 32 bits per dimension.
	c.MaxWorkGroupCount = [3]int64{1 << 31, 1 << 31, 1 << 31}
	t := d.Type()
	switch {
	case t&cl.DeviceTypeGPU != 0:
		if d.HostUnifiedMemory() {
			c.Type = TypeIntegratedGPU
		} else {
			c.Type = TypeDiscreteGPU
		}
	case t&cl.DeviceTypeCPU != 0:
		c.Type = TypeCPU
	default:
		c.Type = TypeOther
	}
	var why []string
	if !d.Available() || !d.CompilerAvailable() {
		why = append(why, "device not available or has no compiler")
	}
	for what, v := range map[string]int64{"compute units": int64(c.ComputeUnits), "max work-group size": int64(c.MaxWorkGroupSize),
		"global memory": c.GlobalMemBytes, "max allocation": c.MaxAllocBytes} {
		if v <= 0 {
			why = append(why, fmt.Sprintf("reports %s %d", what, v))
		}
	}
	sort.Strings(why)
	c.Unusable = strings.Join(why, ", ")
	return c
}

type clDevice struct {
	caps   Caps
	ctx    *cl.Context
	dev    *cl.Device
	queue  *cl.CommandQueue
	rawQ   unsafe.Pointer // the queue's cl_command_queue, for clFlush
	trace  bool
	timing bool       // a profiling queue (Options.Timing)
	disk   *diskCache // program binaries across processes (nil: off)
	huge   bool       // hostAlloc applies: a CPU device, ACCEL_HUGEPAGES not 0

	// life is held shared by builds, which run outside mu, and
	// exclusively by Close.
	life sync.RWMutex

	mu        sync.Mutex // serializes the queue, the pending list and the buffer set
	closed    bool
	pending   []clPending // enqueued commands not yet known finished, oldest first
	unflushed int         // commands enqueued since the last flush
	stagedB   int64       // bytes of host copies held by pending uploads
	stats     Stats
	progs     kernelCache[*clProgram]
	bufs      map[*clBuffer]struct{}
}

// clPending is an enqueued command: its event (timed once it finishes),
// the host copy of an upload to free then, and its trace label.
type clPending struct {
	ev    *cl.Event
	host  unsafe.Pointer
	label string
}

// clBuffer is a cl_mem: a buffer, or a view of one (root non-nil), an
// OpenCL sub-buffer of bytes [off, off+size) of root.
type clBuffer struct {
	d    *clDevice
	mem  *cl.MemObject
	size int64
	root *clBuffer
	off  int64
}

// clProgram is a built program with a kernel object per entry point.
type clProgram struct {
	prog    *cl.Program
	kernels map[string]*clKernel
}

type clKernel struct {
	spec KernelSpec
	k    *cl.Kernel
}

func (k *clKernel) Spec() KernelSpec { return k.spec }

func (b *clBuffer) Size() int64 { return b.size }

// Release frees the buffer; the OpenCL runtime keeps its memory until the
// commands queued on it have finished.
func (b *clBuffer) Release() {
	d := b.d
	d.mu.Lock()
	defer d.mu.Unlock()
	if b.mem == nil {
		return
	}
	b.mem.Release()
	b.mem = nil
	delete(d.bufs, b)
}

// rawHandle is the C handle stored first in a go-opencl object (a
// CommandQueue's cl_command_queue, a Device's cl_device_id): the binding
// does not export them, and our shim needs the queue's for clFlush.
func rawHandle[T any](obj *T) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(obj)) }

func openclOpen(index int, opts Options) (Device, error) {
	list, err := openclList()
	if err != nil {
		return nil, err
	}
	if index < 0 || index >= len(list) {
		return nil, fmt.Errorf("opencl device index %d outside [0, %d): %w", index, len(list), ErrNoDevice)
	}
	pd := list[index]
	caps := openclCaps(index, pd.platform, pd.device)
	if caps.Unusable != "" {
		return nil, fmt.Errorf("opencl:%d %s: %s: %w", index, caps.Name, caps.Unusable, ErrUnsupported)
	}
	ctx, err := cl.CreateContext([]*cl.Device{pd.device})
	if err != nil {
		return nil, fmt.Errorf("opencl:%d: create context: %v: %w", index, err, ErrDriver)
	}
	var props cl.CommandQueueProperty
	if opts.timing() {
		props = cl.CommandQueueProfilingEnable
	}
	q, err := ctx.CreateCommandQueue(pd.device, props)
	if err != nil {
		ctx.Release()
		return nil, fmt.Errorf("opencl:%d: create queue: %v: %w", index, err, ErrDriver)
	}
	raw := rawHandle(q)
	if C.acl_queue_device(raw) != rawHandle(pd.device) {
		q.Release()
		ctx.Release()
		return nil, fmt.Errorf("opencl:%d: the binding's queue handle does not name its device (go-opencl's layout changed?): %w", index, ErrDriver)
	}
	return &clDevice{caps: caps, ctx: ctx, dev: pd.device, queue: q, rawQ: raw, trace: opts.trace(), timing: opts.timing(),
		disk: openDiskCache(OpenCL), bufs: map[*clBuffer]struct{}{},
		huge: caps.Type == TypeCPU && os.Getenv("ACCEL_HUGEPAGES") != "0" && !opts.emulateDiscrete()}, nil
}

func (d *clDevice) Caps() Caps { return d.caps }

func clErr(what string, err error) error {
	if errors.Is(err, cl.ErrMemObjectAllocationFailure) || errors.Is(err, cl.ErrOutOfResources) || errors.Is(err, cl.ErrOutOfHostMemory) {
		return fmt.Errorf("opencl: %s: %v: %w", what, err, ErrOutOfMemory)
	}
	return fmt.Errorf("opencl: %s: %v: %w", what, err, ErrDriver)
}

func (d *clDevice) Alloc(size int64) (Buffer, error) {
	if err := checkAlloc("opencl", size, d.caps); err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, ErrClosed
	}
	n := size
	if n == 0 {
		n = 8 // a valid cl_mem for an empty tensor
	}
	mem := d.hostAlloc(n)
	if mem == nil {
		var err error
		if mem, err = d.ctx.CreateEmptyBuffer(cl.MemReadWrite, int(n)); err != nil {
			return nil, clErr(fmt.Sprintf("alloc %d bytes", size), err)
		}
	}
	b := &clBuffer{d: d, mem: mem, size: size}
	d.bufs[b] = struct{}{}
	return b, nil
}

// hugeMin is the smallest buffer hostAlloc maps itself: one huge page.
const hugeMin = 2 << 20

// hostAlloc returns a buffer of n bytes over memory we map ourselves, on
// CPU devices for n >= hugeMin, or nil where it does not apply or fails
// (the caller then asks the driver). The memory is 2 MiB-aligned and
// advised MADV_HUGEPAGE (clshim.c, cgo), handed to the driver with
// CL_MEM_USE_HOST_PTR (PoCL works in it directly), and unmapped by a
// destructor callback once the driver has destroyed the buffer. Measured
// here (transparent huge pages in "madvise" mode): the first call of
// tril_indices 10000^2 int64 into a fresh 800 MB output took 1.4-3.4 s in
// 4 KiB pages (the driver's own allocation) and 0.04-0.6 s in huge pages.
// ACCEL_HUGEPAGES=0 (read when the device opens) turns it off.
func (d *clDevice) hostAlloc(n int64) *cl.MemObject {
	if !d.huge || n < hugeMin {
		return nil
	}
	span := (n + hugeMin - 1) &^ (hugeMin - 1)
	p := C.acl_huge_alloc(C.size_t(span))
	if p == nil {
		return nil
	}
	mem, err := d.ctx.CreateBufferUnsafe(cl.MemReadWrite|cl.MemUseHostPtr, int(n), p)
	if err != nil {
		C.acl_huge_free(p, C.size_t(span))
		return nil
	}
	if C.acl_huge_free_with(rawHandle(mem), p, C.size_t(span)) != 0 {
		mem.Release()
		C.acl_huge_free(p, C.size_t(span))
		return nil
	}
	return mem
}

// buf checks that b is a live buffer of this device and [off, off+n) lies
// inside it. Callers hold d.mu.
func (d *clDevice) buf(b Buffer, off, n int64) (*clBuffer, error) {
	if d.closed {
		return nil, ErrClosed
	}
	cb, ok := b.(*clBuffer)
	if !ok || cb == nil || cb.d != d {
		return nil, fmt.Errorf("opencl: buffer %T does not belong to this device (%s)", b, d.caps.ID())
	}
	if cb.mem == nil || (cb.root != nil && cb.root.mem == nil) {
		return nil, fmt.Errorf("opencl: buffer of %d bytes: %w", cb.size, ErrClosed)
	}
	return cb, checkRange("opencl", off, n, cb.size)
}

// Sub returns a view of bytes [off, off+size) of b (see Device.Sub): an
// OpenCL sub-buffer of b's root buffer, made through our shim (the
// binding lacks clCreateSubBuffer).
func (d *clDevice) Sub(b Buffer, off, size int64) (Buffer, error) {
	if err := checkSub("opencl", off, size, d.caps); err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	cb, err := d.buf(b, off, size)
	if err != nil {
		return nil, err
	}
	root := cb
	if cb.root != nil {
		root, off = cb.root, cb.off+off
	}
	var status C.int
	raw := C.acl_sub_buffer(rawHandle(root.mem), C.size_t(off), C.size_t(size), &status)
	if raw == nil {
		err := error(cl.ErrOther(status))
		switch status { // the statuses clErr tells apart
		case -4: // CL_MEM_OBJECT_ALLOCATION_FAILURE
			err = cl.ErrMemObjectAllocationFailure
		case -5: // CL_OUT_OF_RESOURCES
			err = cl.ErrOutOfResources
		case -6: // CL_OUT_OF_HOST_MEMORY
			err = cl.ErrOutOfHostMemory
		}
		return nil, clErr(fmt.Sprintf("view of %d bytes at %d", size, off), err)
	}
	v := &clBuffer{d: d, mem: memObject(raw, size), size: size, root: root, off: off}
	d.bufs[v] = struct{}{}
	return v, nil
}

// memObject wraps a cl_mem our shim created in the binding's MemObject: the
// binding has no constructor for one, and its layout is the handle, then
// the size (rawHandle relies on the handle coming first too). The wrapper
// has no finalizer: Release frees it, as for the binding's own.
func memObject(raw unsafe.Pointer, size int64) *cl.MemObject {
	type layout struct {
		mem  unsafe.Pointer
		size int
	}
	return (*cl.MemObject)(unsafe.Pointer(&layout{mem: raw, size: int(size)}))
}

// span returns the root buffer of cb and off as an offset into it.
func (cb *clBuffer) span(off int64) (*clBuffer, int64) {
	if cb.root != nil {
		return cb.root, cb.off + off
	}
	return cb, off
}

// maxPending bounds the commands (and maxStaged the bytes of upload
// copies) kept before the host waits for them, so that a loop that never
// reads back does not grow the pending list without end.
const (
	maxPending = 4096
	maxStaged  = 256 << 20
)

// enqueued records a command enqueued under d.mu. Callers hold d.mu.
func (d *clDevice) enqueued(ev *cl.Event, host unsafe.Pointer, label func() string) error {
	p := clPending{ev: ev, host: host}
	if d.trace && label != nil {
		p.label = label()
	}
	d.pending = append(d.pending, p)
	d.unflushed++
	if len(d.pending) >= maxPending || d.stagedB > maxStaged {
		return d.finishLocked()
	}
	return nil
}

// flushLocked hands the enqueued commands to the device. Callers hold d.mu.
func (d *clDevice) flushLocked() error {
	if d.unflushed == 0 {
		return nil
	}
	d.unflushed = 0
	d.stats.Submits++
	if r := C.acl_flush(d.rawQ); r != 0 {
		return fmt.Errorf("opencl: clFlush: status %d: %w", int(r), ErrDriver)
	}
	return nil
}

// finishLocked waits for every enqueued command and retires them.
// Callers hold d.mu.
func (d *clDevice) finishLocked() error {
	if len(d.pending) == 0 {
		return nil
	}
	if d.unflushed > 0 {
		d.stats.Submits++ // clFinish hands them over
	}
	d.unflushed = 0
	d.stats.Waits++
	d.traceWait(len(d.pending))
	err := d.queue.Finish()
	d.retireLocked()
	if err != nil {
		return clErr("finish", err)
	}
	return nil
}

// traceWait prints a wait (ACCEL_TRACE) with the counters so far.
// Callers hold d.mu.
func (d *clDevice) traceWait(commands int) {
	if d.trace {
		fmt.Fprintf(os.Stderr, "accel: %s wait for %d command(s) (%d submits, %d waits so far)\n",
			d.caps.ID(), commands, d.stats.Submits, d.stats.Waits)
	}
}

// retireLocked times and releases the pending commands, which have all
// finished (an in-order queue after a blocking call). Callers hold d.mu.
func (d *clDevice) retireLocked() {
	for _, p := range d.pending {
		var start, end int64
		var err1, err2 error = ErrUnsupported, nil
		if d.timing {
			start, err1 = p.ev.GetEventProfilingInfo(cl.ProfilingInfoCommandStart)
			end, err2 = p.ev.GetEventProfilingInfo(cl.ProfilingInfoCommandEnd)
		}
		if err1 == nil && err2 == nil && end >= start {
			d.stats.DeviceNs += end - start
			if p.label != "" {
				fmt.Fprintf(os.Stderr, "accel: %s %s: %.3f ms\n", d.caps.ID(), p.label, float64(end-start)/1e6)
			}
		}
		p.ev.Release()
		if p.host != nil {
			C.free(p.host)
		}
	}
	clear(d.pending)
	d.pending = d.pending[:0]
	d.stagedB = 0
}

// Upload writes src into dst: from src itself when nothing is queued (the
// call then blocks only for the copy), else from a host copy that a
// non-blocking write reads, freed once the write has finished.
func (d *clDevice) Upload(dst Buffer, off int64, src []byte) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	cb, err := d.buf(dst, off, int64(len(src)))
	if err != nil || len(src) == 0 {
		return err
	}
	d.stats.Transfers++
	if len(d.pending) == 0 {
		ev, err := d.queue.EnqueueWriteBuffer(cb.mem, true, int(off), len(src), unsafe.Pointer(&src[0]), nil)
		runtime.KeepAlive(src)
		if err != nil {
			return clErr("upload", err)
		}
		d.pending = append(d.pending, clPending{ev: ev})
		d.retireLocked()
		return nil
	}
	host := C.CBytes(src)
	ev, err := d.queue.EnqueueWriteBuffer(cb.mem, false, int(off), len(src), host, nil)
	if err != nil {
		C.free(host)
		return clErr("upload", err)
	}
	d.stagedB += int64(len(src))
	return d.enqueued(ev, host, func() string { return fmt.Sprintf("upload %d bytes", len(src)) })
}

// Download reads after the queued work: a blocking read, which on the
// in-order queue waits for every earlier command.
func (d *clDevice) Download(src Buffer, off int64, dst []byte) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	cb, err := d.buf(src, off, int64(len(dst)))
	if err != nil || len(dst) == 0 {
		return err
	}
	d.stats.Transfers++
	if d.unflushed > 0 {
		d.stats.Submits++ // the blocking read hands them over
	}
	if len(d.pending) > 0 {
		d.stats.Waits++
		d.traceWait(len(d.pending))
	}
	d.unflushed = 0
	ev, err := d.queue.EnqueueReadBuffer(cb.mem, true, int(off), len(dst), unsafe.Pointer(&dst[0]), nil)
	runtime.KeepAlive(dst)
	if err != nil {
		d.retireLocked()
		return clErr("download", err)
	}
	d.pending = append(d.pending, clPending{ev: ev})
	d.retireLocked()
	return nil
}

func (d *clDevice) Fill(dst Buffer, off, size int64, pattern []byte) error {
	if err := checkFill("opencl", off, size, pattern); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	cb, err := d.buf(dst, off, size)
	if err != nil || size == 0 {
		return err
	}
	d.stats.Transfers++
	// the runtime copies the pattern before the call returns
	pat := C.CBytes(pattern)
	defer C.free(pat)
	ev, err := d.queue.EnqueueFillBuffer(cb.mem, pat, len(pattern), int(off), int(size), nil)
	if err != nil {
		return clErr("fill", err)
	}
	return d.enqueued(ev, nil, func() string { return fmt.Sprintf("fill %d bytes", size) })
}

func (d *clDevice) Copy(dst Buffer, dstOff int64, src Buffer, srcOff int64, size int64) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	db, err := d.buf(dst, dstOff, size)
	if err != nil {
		return err
	}
	sb, err := d.buf(src, srcOff, size)
	if err != nil || size == 0 {
		return err
	}
	dr, da := db.span(dstOff)
	sr, sa := sb.span(srcOff)
	if dr == sr && da < sa+size && sa < da+size {
		return fmt.Errorf("opencl: copy of %d bytes from offset %d to overlapping offset %d of the same buffer", size, srcOff, dstOff)
	}
	d.stats.Transfers++
	ev, err := d.queue.EnqueueCopyBuffer(sb.mem, db.mem, int(srcOff), int(dstOff), int(size), nil)
	if err != nil {
		return clErr("copy", err)
	}
	return d.enqueued(ev, nil, func() string { return fmt.Sprintf("copy %d bytes", size) })
}

// Kernel returns the kernel of spec's entry from the program of its file's
// variant with the plan's local size and knobs, building the program (all
// its entries) on first use, outside the device's lock.
func (d *clDevice) Kernel(spec KernelSpec, plan Plan) (Kernel, error) {
	if err := checkKernel("opencl", spec, plan, d.caps); err != nil {
		return nil, err
	}
	file := spec.Entry.File.Name
	p, err := d.progs.get(kernelKey(file, spec.Variant, "", plan), func() (*clProgram, error) {
		return d.build(spec.Entry.File, spec.Variant, plan)
	})
	if err != nil {
		return nil, err
	}
	k, ok := p.kernels[spec.Entry.Name]
	if !ok {
		return nil, fmt.Errorf("opencl: program %s.%s has no kernel %s", file, spec.Variant, spec.Entry.CLName())
	}
	return k, nil
}

// build compiles a file's variant with a plan's knobs and makes a kernel
// object per entry point.
func (d *clDevice) build(f *FileDecl, variant string, plan Plan) (*clProgram, error) {
	file := f.Name
	d.life.RLock()
	defer d.life.RUnlock()
	d.mu.Lock()
	closed := d.closed
	d.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	opts, err := CLOptions(d.caps, file, variant, plan)
	if err != nil {
		return nil, err
	}
	prog, err := d.program(file, opts)
	if err != nil {
		return nil, err
	}
	p := &clProgram{prog: prog, kernels: map[string]*clKernel{}}
	fail := func(err error) (*clProgram, error) {
		for _, k := range p.kernels {
			k.k.Release()
		}
		prog.Release()
		return nil, err
	}
	for _, e := range f.Entries {
		k, err := prog.CreateKernel(e.CLName())
		if err != nil {
			return fail(clErr("create kernel "+e.CLName(), err))
		}
		p.kernels[e.Name] = &clKernel{spec: KernelSpec{Entry: e, Variant: variant}, k: k}
		// The kernel's own limit can be below the device's (registers,
		// local memory); a plan above it must not launch.
		if wg, err := k.WorkGroupSize(d.dev); err == nil && wg > 0 && plan.LocalSize > wg {
			return fail(fmt.Errorf("opencl: %s: local size %d exceeds the kernel's limit %d on %s: %w",
				e.CLName(), plan.LocalSize, wg, d.caps.Name, ErrUnsupported))
		}
	}
	return p, nil
}

// program builds a file's source with opts, or loads the binary a build
// with the same source, options, device and driver left in the disk cache
// (stored after every source build).
func (d *clDevice) program(file, opts string) (*cl.Program, error) {
	srcDigest, err := clSourceDigest(file)
	if err != nil {
		return nil, err
	}
	c := d.caps
	key := Hash([]byte(srcDigest), []byte(opts), []byte(c.Platform), []byte(c.Name), []byte(c.Vendor), []byte(c.Driver))
	if bin, ok := d.disk.load(key); ok {
		if prog := d.programFromBinary(bin, opts); prog != nil {
			d.progs.diskHits.Add(1)
			return prog, nil
		}
		d.disk.remove(key) // the driver refused it: rebuilt and stored again below
	}
	src, err := CLSource(file)
	if err != nil {
		return nil, err
	}
	prog, err := d.ctx.CreateProgramWithSource([]string{src})
	if err != nil {
		return nil, clErr("create program "+file, err)
	}
	if err := prog.BuildProgram([]*cl.Device{d.dev}, opts); err != nil {
		prog.Release()
		return nil, fmt.Errorf("opencl: build %s.cl with %q: %v: %w", file, opts, err, ErrDriver)
	}
	if d.disk != nil {
		// Drivers may compile every kernel of the program to serialize it
		// (PoCL: ~1.4 s for the scatter program's nine entries, once per
		// machine); storing it in a background goroutine was measured
		// slower still on PoCL, whose launches wait for the serialization.
		d.storeBinary(key, rawHandle(prog))
	}
	return prog, nil
}

// storeBinary writes a built program's binary to the disk cache.
func (d *clDevice) storeBinary(key string, raw unsafe.Pointer) {
	n := C.acl_program_binary(raw, nil, 0)
	if n == 0 {
		return
	}
	bin := C.malloc(n)
	defer C.free(bin)
	if C.acl_program_binary(raw, (*C.uchar)(bin), n) == n {
		d.disk.store(key, C.GoBytes(bin, C.int(n)))
	}
}

// programFromBinary creates and builds a program from a cached binary, or
// returns nil when the driver refuses it.
func (d *clDevice) programFromBinary(bin []byte, opts string) *cl.Program {
	cbin := C.CBytes(bin)
	defer C.free(cbin)
	copts := C.CString(opts)
	defer C.free(unsafe.Pointer(copts))
	var status C.int
	raw := C.acl_program_from_binary(rawHandle(d.ctx), rawHandle(d.dev), (*C.uchar)(cbin), C.size_t(len(bin)), copts, &status)
	if raw == nil {
		return nil
	}
	// A go-opencl Program whose first field is the handle (rawHandle's
	// layout, checked at open): CreateKernel and Release use only it.
	p := new(cl.Program)
	*(*unsafe.Pointer)(unsafe.Pointer(p)) = raw
	return p
}

func (d *clDevice) Launch(kern Kernel, plan Plan, args []Arg) error {
	k, ok := kern.(*clKernel)
	if !ok || k == nil {
		return fmt.Errorf("opencl: kernel %T is not an OpenCL kernel", kern)
	}
	e := k.spec.Entry
	if err := checkLaunch("opencl", e, plan, d.caps, args); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return ErrClosed
	}
	for i, a := range args {
		var err error
		if a.Buf != nil {
			cb, e := d.buf(a.Buf, 0, 0)
			if e != nil {
				return fmt.Errorf("opencl: %s arg %d: %w", k.spec.Entry.CLName(), i, e)
			}
			err = k.k.SetArgBuffer(i, cb.mem)
		} else {
			err = k.k.SetArgUint64(i, a.Val) // a null buffer for buffer slots
		}
		if err != nil {
			return clErr(fmt.Sprintf("%s: set arg %d", k.spec.Entry.CLName(), i), err)
		}
	}
	local := int64(plan.LocalSize)
	global := []int{int(plan.Groups[0] * local), int(plan.Groups[1]), int(plan.Groups[2])}
	ev, err := d.queue.EnqueueNDRangeKernel(k.k, nil, global, []int{int(local), 1, 1}, nil)
	if err != nil {
		return clErr("launch "+k.spec.Entry.CLName(), err)
	}
	d.stats.Launches++
	return d.enqueued(ev, nil, func() string { return k.spec.String() + " " + plan.String() })
}

func (d *clDevice) Flush() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return ErrClosed
	}
	return d.flushLocked()
}

func (d *clDevice) Sync() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return ErrClosed
	}
	return d.finishLocked()
}

func (d *clDevice) Stats() Stats {
	d.mu.Lock()
	s := d.stats
	d.mu.Unlock()
	d.progs.stats(&s)
	return s
}

func (d *clDevice) Close() error {
	d.life.Lock() // no build in flight
	defer d.life.Unlock()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	err := d.finishLocked()
	d.closed = true
	for b := range d.bufs {
		b.mem.Release()
		b.mem = nil
	}
	d.bufs = nil
	d.progs.each(func(p *clProgram) {
		for _, k := range p.kernels {
			k.k.Release()
		}
		p.prog.Release()
	})
	d.queue.Release()
	d.ctx.Release()
	return err
}
