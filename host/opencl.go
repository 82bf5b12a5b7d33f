package host

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"
	"unsafe"

	cl "github.com/jgillich/go-opencl/cl"
)

// The OpenCL backend, on go-opencl. Binding traps handled here: Flush calls
// clFinish, so it is never used; an empty non-nil wait list panics, so wait
// lists are always nil; the binding sets finalizers, but every object is
// released explicitly (events right after use, the rest in Close).

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

func openclCaps(index int, p *cl.Platform, d *cl.Device) Caps {
	exts := strings.Fields(d.Extensions())
	has := func(e string) bool {
		for _, x := range exts {
			if x == e {
				return true
			}
		}
		return false
	}
	c := Caps{
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
		FP64:              has("cl_khr_fp64") || d.DoubleFPConfig() != 0,
		Int64:             true, // long is a required OpenCL C type
		Int64Atomics:      has("cl_khr_int64_base_atomics"),
		Float32Atomics:    has("cl_ext_float_atomics"),
		Float64Atomics:    has("cl_ext_float_atomics") && has("cl_khr_fp64"),
		Timestamps:        true, // profiling events are core OpenCL
		TimestampPeriodNs: float64(d.ProfilingTimerResolution()),
		Extensions:        exts,
	}
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
	if !d.Available() || !d.CompilerAvailable() {
		c.Unusable = "device not available or has no compiler"
	}
	return c
}

type clDevice struct {
	caps    Caps
	ctx     *cl.Context
	dev     *cl.Device
	queue   *cl.CommandQueue
	mu      sync.Mutex // serializes the queue and the caches
	closed  bool
	kernels map[string]*clKernel
	progs   []*cl.Program
	bufs    map[*clBuffer]struct{}
}

type clBuffer struct {
	d    *clDevice
	mem  *cl.MemObject
	size int64
}

type clKernel struct {
	spec KernelSpec
	k    *cl.Kernel
}

func (k *clKernel) Spec() KernelSpec { return k.spec }

func (b *clBuffer) Size() int64 { return b.size }

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

func openclOpen(index int) (Device, error) {
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
	q, err := ctx.CreateCommandQueue(pd.device, cl.CommandQueueProfilingEnable)
	if err != nil {
		ctx.Release()
		return nil, fmt.Errorf("opencl:%d: create queue: %v: %w", index, err, ErrDriver)
	}
	return &clDevice{caps: caps, ctx: ctx, dev: pd.device, queue: q,
		kernels: map[string]*clKernel{}, bufs: map[*clBuffer]struct{}{}}, nil
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
	mem, err := d.ctx.CreateEmptyBuffer(cl.MemReadWrite, int(n))
	if err != nil {
		return nil, clErr(fmt.Sprintf("alloc %d bytes", size), err)
	}
	b := &clBuffer{d: d, mem: mem, size: size}
	d.bufs[b] = struct{}{}
	return b, nil
}

func (d *clDevice) buf(b Buffer, off, n int64) (*clBuffer, error) {
	cb, ok := b.(*clBuffer)
	if !ok || cb.d != d {
		return nil, fmt.Errorf("opencl: buffer belongs to another device")
	}
	if cb.mem == nil {
		return nil, ErrClosed
	}
	return cb, checkRange("opencl", off, n, cb.size)
}

// wait waits for ev, releases it and returns its profiled duration.
func clWait(ev *cl.Event) (time.Duration, error) {
	defer ev.Release()
	if err := cl.WaitForEvents([]*cl.Event{ev}); err != nil {
		return 0, clErr("wait", err)
	}
	start, err1 := ev.GetEventProfilingInfo(cl.ProfilingInfoCommandStart)
	end, err2 := ev.GetEventProfilingInfo(cl.ProfilingInfoCommandEnd)
	if err1 != nil || err2 != nil {
		return 0, nil
	}
	return time.Duration(end - start), nil
}

func (d *clDevice) Upload(dst Buffer, off int64, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	cb, err := d.buf(dst, off, int64(len(src)))
	if err != nil {
		return err
	}
	ev, err := d.queue.EnqueueWriteBuffer(cb.mem, true, int(off), len(src), unsafe.Pointer(&src[0]), nil)
	runtime.KeepAlive(src)
	if err != nil {
		return clErr("upload", err)
	}
	ev.Release()
	return nil
}

func (d *clDevice) Download(src Buffer, off int64, dst []byte) error {
	if len(dst) == 0 {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	cb, err := d.buf(src, off, int64(len(dst)))
	if err != nil {
		return err
	}
	ev, err := d.queue.EnqueueReadBuffer(cb.mem, true, int(off), len(dst), unsafe.Pointer(&dst[0]), nil)
	runtime.KeepAlive(dst)
	if err != nil {
		return clErr("download", err)
	}
	ev.Release()
	return nil
}

func (d *clDevice) Fill(dst Buffer, off, size int64, pattern []byte) error {
	if err := checkFill("opencl", off, size, pattern); err != nil {
		return err
	}
	if size == 0 {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	cb, err := d.buf(dst, off, size)
	if err != nil {
		return err
	}
	pat := make([]byte, len(pattern))
	copy(pat, pattern)
	ev, err := d.queue.EnqueueFillBuffer(cb.mem, unsafe.Pointer(&pat[0]), len(pat), int(off), int(size), nil)
	if err != nil {
		return clErr("fill", err)
	}
	_, err = clWait(ev)
	return err
}

func (d *clDevice) Copy(dst Buffer, dstOff int64, src Buffer, srcOff int64, size int64) (time.Duration, error) {
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
	ev, err := d.queue.EnqueueCopyBuffer(sb.mem, db.mem, int(srcOff), int(dstOff), int(size), nil)
	if err != nil {
		return 0, clErr("copy", err)
	}
	return clWait(ev)
}

func (d *clDevice) Kernel(spec KernelSpec, plan Plan) (Kernel, error) {
	src, err := CLSource(spec.File)
	if err != nil {
		return nil, err
	}
	opts, err := CLOptions(spec, plan)
	if err != nil {
		return nil, err
	}
	key := Hash([]byte(src), []byte(opts), []byte(spec.Entry))
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, ErrClosed
	}
	if k, ok := d.kernels[key]; ok {
		return k, nil
	}
	prog, err := d.ctx.CreateProgramWithSource([]string{src})
	if err != nil {
		return nil, clErr("create program "+spec.File, err)
	}
	if err := prog.BuildProgram([]*cl.Device{d.dev}, opts); err != nil {
		prog.Release()
		return nil, fmt.Errorf("opencl: build %s.cl with %q: %v: %w", spec.File, opts, err, ErrDriver)
	}
	k, err := prog.CreateKernel(spec.Entry)
	if err != nil {
		prog.Release()
		return nil, clErr("create kernel "+spec.Entry, err)
	}
	// The kernel's own limit can be below the device's (registers, local
	// memory); a plan above it must not launch.
	if wg, err := k.WorkGroupSize(d.dev); err == nil && wg > 0 && plan.LocalSize > wg {
		k.Release()
		prog.Release()
		return nil, fmt.Errorf("opencl: %s: local size %d exceeds the kernel's limit %d on %s: %w",
			spec.Entry, plan.LocalSize, wg, d.caps.Name, ErrUnsupported)
	}
	d.progs = append(d.progs, prog)
	ck := &clKernel{spec: spec, k: k}
	d.kernels[key] = ck
	return ck, nil
}

func (d *clDevice) Launch(kern Kernel, plan Plan, args ...Arg) (time.Duration, error) {
	k, ok := kern.(*clKernel)
	if !ok {
		return 0, fmt.Errorf("opencl: kernel from another backend")
	}
	if err := checkLaunch("opencl", plan, d.caps, len(args)); err != nil {
		return 0, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return 0, ErrClosed
	}
	for i, a := range args {
		var err error
		if a.Buf != nil {
			cb, e := d.buf(a.Buf, 0, 0)
			if e != nil {
				return 0, fmt.Errorf("opencl: %s arg %d: %w", k.spec.Entry, i, e)
			}
			err = k.k.SetArgBuffer(i, cb.mem)
		} else {
			err = k.k.SetArgUint64(i, a.Val)
		}
		if err != nil {
			return 0, clErr(fmt.Sprintf("%s: set arg %d", k.spec.Entry, i), err)
		}
	}
	local := int64(plan.LocalSize)
	global := []int{int(plan.Groups[0] * local), int(plan.Groups[1]), int(plan.Groups[2])}
	ev, err := d.queue.EnqueueNDRangeKernel(k.k, nil, global, []int{int(local), 1, 1}, nil)
	if err != nil {
		return 0, clErr("launch "+k.spec.Entry, err)
	}
	return clWait(ev)
}

func (d *clDevice) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	err := d.queue.Finish()
	for b := range d.bufs {
		b.mem.Release()
		b.mem = nil
	}
	d.bufs = nil
	for _, k := range d.kernels {
		k.k.Release()
	}
	d.kernels = nil
	for _, p := range d.progs {
		p.Release()
	}
	d.progs = nil
	d.queue.Release()
	d.ctx.Release()
	if err != nil {
		return clErr("finish", err)
	}
	return nil
}
