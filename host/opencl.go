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
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"
)

// The OpenCL backend, on our own binding (clbind.go, clshim.c), with one
// in-order queue per device: commands are enqueued without waiting, and
// the host blocks only in Download, Sync and Close. Every object is
// released explicitly (events once their command has finished and been
// timed, the rest in Close).

type clPlatformDevice struct {
	platform unsafe.Pointer // cl_platform_id
	device   unsafe.Pointer // cl_device_id
}

// openclList enumerates (platform, device) pairs in a stable order; the
// index into this list is the device's OpenCL index.
func openclList() ([]clPlatformDevice, error) {
	plats, err := clPlatforms()
	if err != nil {
		return nil, fmt.Errorf("no OpenCL platform (is an ICD such as pocl-opencl-icd installed?): %v: %w", err, ErrNoDevice)
	}
	var out []clPlatformDevice
	for _, p := range plats {
		devs, err := clDevices(p)
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

// openclCaps queries a device's capabilities. A device whose queries fail
// is listed as unusable, with the reason.
func openclCaps(index int, p, d unsafe.Pointer) (c Caps) {
	var failed []string
	u := func(param uint, what string) uint64 {
		v, err := clDeviceUint(d, param)
		if err != nil {
			failed = append(failed, fmt.Sprintf("%s: %v", what, err))
		}
		return v
	}
	exts := strings.Fields(clDeviceString(d, clDeviceExtensions))
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
		Platform:          strings.TrimSpace(clPlatformString(p, clPlatformName) + " " + clPlatformString(p, clPlatformVersion)),
		Name:              strings.TrimSpace(clDeviceString(d, clDeviceName)),
		Vendor:            strings.TrimSpace(clDeviceString(d, clDeviceVendor)),
		Driver:            strings.TrimSpace(clDeviceString(d, clDriverVersion) + " (" + clDeviceString(d, clDeviceVersion) + ")"),
		ComputeUnits:      int(u(clDeviceComputeUnits, "compute units")),
		MaxWorkGroupSize:  int(u(clDeviceMaxWGSize, "max work-group size")),
		LocalMemBytes:     int64(u(clDeviceLocalMem, "local memory")),
		GlobalMemBytes:    int64(u(clDeviceGlobalMem, "global memory")),
		MaxAllocBytes:     int64(u(clDeviceMaxAlloc, "max allocation")),
		SubAlign:          max(int64(u(clDeviceBaseAlign, "base address alignment"))/8, 4),
		FP64:              has("cl_khr_fp64"),
		Int64:             true, // long is a required OpenCL C type
		Int64Atomics:      has("cl_khr_int64_base_atomics"),
		Float32Atomics:    has("cl_ext_float_atomics"),
		Float64Atomics:    has("cl_ext_float_atomics") && has("cl_khr_fp64"),
		FP32DivCorrect:    C.acl_single_fp_config(d)&C.ACL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT != 0,
		FloatPreserve32:   true, // OpenCL C is IEEE without -cl-fast-relaxed-math
		FloatPreserve64:   true,
		DenormPreserve32:  C.acl_single_fp_config(d)&C.ACL_FP_DENORM != 0,
		DenormPreserve64:  true, // CL_FP_DENORM is in the required double config
		Timestamps:        true, // profiling events are core OpenCL
		TimestampPeriodNs: float64(u(clDeviceTimerRes, "timer resolution")),
		Extensions:        exts,
	}
	if !c.FP64 {
		// a device may announce fp64 by its config alone (a device
		// without fp64 may fail the query: that is no failure here)
		v, err := clDeviceUint(d, clDeviceDoubleFPConfig)
		c.FP64 = err == nil && v != 0
	}
	c.FP32Div = fp32Div(c)
	c.LazyKernels = isPoCL(c)
	// OpenCL's NDRange is size_t per dimension: no per-dimension group limit
	// that matters; keep the product representable in 32 bits per dimension.
	c.MaxWorkGroupCount = [3]int64{1 << 31, 1 << 31, 1 << 31}
	t := u(clDeviceType, "type")
	switch {
	case t&clDeviceTypeGPU != 0:
		if u(clDeviceHostUnified, "host unified memory") != 0 {
			c.Type = TypeIntegratedGPU
		} else {
			c.Type = TypeDiscreteGPU
		}
	case t&clDeviceTypeCPU != 0:
		c.Type = TypeCPU
	default:
		c.Type = TypeOther
	}
	if c.Name == "" {
		c.Name = fmt.Sprintf("OpenCL device %d", index)
	}
	if nvidiaGPU(c) || nvTricksEmulated() {
		// PTX's float add (device_tricks.h, NV_TRICKS), where NVIDIA's
		// OpenCL offers no cl_ext_float_atomics; a build that refuses it
		// falls back to the compare-and-swap loop (build)
		c.Float32Atomics = true
		c.Float64Atomics = c.FP64
		// and its warp votes (NV_BALLOT and the rest): warps of 32
		// lanes, or of one where emulated
		c.SubgroupSize, c.SubgroupBallot = 32, true
		if nvTricksEmulated() {
			c.SubgroupSize = 1
		}
	}
	why := failed
	if u(clDeviceAvailable, "available") == 0 || u(clDeviceCompilerAvail, "compiler available") == 0 {
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
	ctx    unsafe.Pointer // cl_context
	dev    unsafe.Pointer // cl_device_id
	queue  unsafe.Pointer // cl_command_queue
	log    func(string)   // Options' logger (nil: none)
	trace  bool
	timing bool         // a profiling queue (Options.Timing)
	disk   *diskCache   // program binaries across processes (nil: off)
	store  bool         // write built programs' binaries to disk (storesBinaries)
	whole  bool         // a program per kernel file, not per entry point (Caps.LazyKernels)
	dump   string       // ACCEL_CL_DUMP: a folder for each source build's binary and log (dumpProgram)
	nvOff  atomic.Bool  // the driver refused NV_TRICKS: builds go without
	nvRegs atomic.Int32 // the form of nvRegForm in which the driver took a register cap (0 until it refused one)
	huge   bool         // hostAlloc applies: a CPU device, ACCEL_HUGEPAGES not 0

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
	ev    unsafe.Pointer // cl_event
	host  unsafe.Pointer
	label string
}

// clBuffer is a cl_mem: a buffer, or a view of one (root non-nil), an
// OpenCL sub-buffer of bytes [off, off+size) of root.
type clBuffer struct {
	d    *clDevice
	mem  unsafe.Pointer // cl_mem
	size int64
	root *clBuffer
	off  int64
}

// clProgram is a built program with the kernel objects made from it so
// far, one per entry point.
type clProgram struct {
	prog    unsafe.Pointer // cl_program
	mu      sync.Mutex     // guards kernels
	kernels map[string]*clKernel
}

type clKernel struct {
	spec KernelSpec
	k    unsafe.Pointer // cl_kernel
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
	C.acl_release_mem(b.mem)
	b.mem = nil
	delete(d.bufs, b)
}

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
	var st C.int
	ctx := C.acl_context(pd.device, &st)
	if ctx == nil {
		return nil, fmt.Errorf("opencl:%d: create context: %v: %w", index, clStatus(st), ErrDriver)
	}
	profiling := C.int(0)
	if opts.timing() {
		profiling = 1
	}
	q := C.acl_queue(ctx, pd.device, profiling, &st)
	if q == nil {
		C.acl_release_context(ctx)
		return nil, fmt.Errorf("opencl:%d: create queue: %v: %w", index, clStatus(st), ErrDriver)
	}
	disk, store := openDiskCache(OpenCL), storesBinaries(caps)
	return &clDevice{caps: caps, ctx: ctx, dev: pd.device, queue: q, log: opts.logger(), trace: opts.trace(), timing: opts.timing(),
		disk: disk, store: store, whole: caps.LazyKernels && (disk == nil || !store), dump: os.Getenv("ACCEL_CL_DUMP"), bufs: map[*clBuffer]struct{}{},
		huge: caps.Type == TypeCPU && os.Getenv("ACCEL_HUGEPAGES") != "0" && !opts.emulateDiscrete()}, nil
}

func (d *clDevice) Caps() Caps { return d.caps }

func clErr(what string, err error) error {
	var st clStatus
	if errors.As(err, &st) && st.outOfMemory() {
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
		var st C.int
		if mem = C.acl_buffer(d.ctx, C.size_t(n), nil, &st); mem == nil {
			return nil, clErr(fmt.Sprintf("alloc %d bytes", size), clStatus(st))
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
func (d *clDevice) hostAlloc(n int64) unsafe.Pointer {
	if !d.huge || n < hugeMin {
		return nil
	}
	span := (n + hugeMin - 1) &^ (hugeMin - 1)
	p := C.acl_huge_alloc(C.size_t(span))
	if p == nil {
		return nil
	}
	var st C.int
	mem := C.acl_buffer(d.ctx, C.size_t(n), p, &st)
	if mem == nil {
		C.acl_huge_free(p, C.size_t(span))
		return nil
	}
	if C.acl_huge_free_with(mem, p, C.size_t(span)) != 0 {
		C.acl_release_mem(mem)
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
// OpenCL sub-buffer of b's root buffer.
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
	raw := C.acl_sub_buffer(root.mem, C.size_t(off), C.size_t(size), &status)
	if raw == nil {
		return nil, clErr(fmt.Sprintf("view of %d bytes at %d", size, off), clStatus(status))
	}
	v := &clBuffer{d: d, mem: raw, size: size, root: root, off: off}
	d.bufs[v] = struct{}{}
	return v, nil
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
func (d *clDevice) enqueued(ev unsafe.Pointer, host unsafe.Pointer, label func() string) error {
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
	if r := C.acl_flush(d.queue); r != 0 {
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
	err := clCheck(C.acl_finish(d.queue))
	d.retireLocked()
	if err != nil {
		return clErr("finish", err)
	}
	return nil
}

// traceWait prints a wait (ACCEL_TRACE) with the counters so far.
// Callers hold d.mu.
func (d *clDevice) traceWait(commands int) {
	if d.trace && d.log != nil {
		d.log(fmt.Sprintf("accel: %s wait for %d command(s) (%d submits, %d waits so far)",
			d.caps.ID(), commands, d.stats.Submits, d.stats.Waits))
	}
}

// retireLocked times and releases the pending commands, which have all
// finished (an in-order queue after a blocking call). Callers hold d.mu.
func (d *clDevice) retireLocked() {
	for _, p := range d.pending {
		var start, end C.uint64_t
		if d.timing && C.acl_event_times(p.ev, &start, &end) == 0 && end >= start {
			d.stats.DeviceNs += int64(end - start)
			if p.label != "" && d.log != nil {
				d.log(fmt.Sprintf("accel: %s %s: %.3f ms", d.caps.ID(), p.label, float64(end-start)/1e6))
			}
		}
		C.acl_release_event(p.ev)
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
		var ev unsafe.Pointer
		err := clCheck(C.acl_write(d.queue, cb.mem, 1, C.size_t(off), C.size_t(len(src)), unsafe.Pointer(&src[0]), &ev))
		runtime.KeepAlive(src)
		if err != nil {
			return clErr("upload", err)
		}
		d.pending = append(d.pending, clPending{ev: ev})
		d.retireLocked()
		return nil
	}
	host := C.CBytes(src)
	var ev unsafe.Pointer
	if err := clCheck(C.acl_write(d.queue, cb.mem, 0, C.size_t(off), C.size_t(len(src)), host, &ev)); err != nil {
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
	var ev unsafe.Pointer
	err = clCheck(C.acl_read(d.queue, cb.mem, C.size_t(off), C.size_t(len(dst)), unsafe.Pointer(&dst[0]), &ev))
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
	var ev unsafe.Pointer
	if err := clCheck(C.acl_fill(d.queue, cb.mem, pat, C.size_t(len(pattern)), C.size_t(off), C.size_t(size), &ev)); err != nil {
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
	var ev unsafe.Pointer
	if err := clCheck(C.acl_copy(d.queue, sb.mem, db.mem, C.size_t(srcOff), C.size_t(dstOff), C.size_t(size), &ev)); err != nil {
		return clErr("copy", err)
	}
	return d.enqueued(ev, nil, func() string { return fmt.Sprintf("copy %d bytes", size) })
}

// Kernel returns the kernel of spec's entry from the program of its file's
// variant with the plan's local size and knobs, building the program on
// first use, outside the device's lock. A program holds the one entry
// point (-DACCEL_ONLY, the generated headers), so that a first call
// compiles only the kernels it launches, and storing a program's binary
// (which makes PoCL compile every kernel in it) costs no more than that;
// where the driver compiles each kernel at its first launch anyway and
// no binary is stored (Caps.LazyKernels), a program holds the whole file
// and serves every entry point launched with the same plan.
func (d *clDevice) Kernel(spec KernelSpec, plan Plan) (Kernel, error) {
	if err := checkKernel("opencl", spec, plan, d.caps); err != nil {
		return nil, err
	}
	f := spec.Entry.File
	only, key := spec.Entry, spec.Entry.Name
	if d.whole {
		only, key = nil, "*"
	}
	p, err := d.progs.get(kernelKey(f.Name, spec.Variant, key, plan), func() (*clProgram, error) {
		return d.build(f, spec.Variant, only, plan)
	})
	if err != nil {
		return nil, err
	}
	return d.kernel(p, spec, plan)
}

// build compiles a file's variant with a plan's knobs: only entry point
// only where it is not nil, else every entry point of the file.
func (d *clDevice) build(f *FileDecl, variant string, only *EntryDecl, plan Plan) (*clProgram, error) {
	d.life.RLock()
	defer d.life.RUnlock()
	if d.isClosed() {
		return nil, ErrClosed
	}
	opts, err := CLOptions(d.caps, f.Name, variant, plan)
	if err != nil {
		return nil, err
	}
	name := f.Name + "." + variant + ".all"
	if only != nil {
		opts += " -DACCEL_ONLY=" + only.CLName()
		name = f.Name + "." + variant + "." + only.Name
	}
	if d.dump != "" && slices.Contains(d.caps.Extensions, "cl_nv_compiler_options") {
		opts += " -cl-nv-verbose" // the build log gets ptxas's registers, spills and shared memory a kernel
	}
	if d.nvOff.Load() {
		opts, _ = withoutNVTricks(opts)
	}
	capped := opts
	form := d.nvRegs.Load()
	opts, hasCap := nvRegForm(capped, form)
	prog, err := d.program(f.Name, name, opts)
	for form++; err != nil && hasCap && form < nvRegForms; form++ {
		// a register cap (Plan.MaxRegs) the driver refused as spelled:
		// the next spelling, then none, and the one it takes from now on
		alt, _ := nvRegForm(capped, form)
		p2, err2 := d.program(f.Name, name, alt)
		if err2 != nil {
			continue
		}
		d.nvRegs.Store(form)
		if d.log != nil {
			d.log(fmt.Sprintf("accel: %s: %s.cl built %s, which the driver refused as %s=N: %v", d.caps.ID(), f.Name,
				nvRegFormNames[form], nvMaxRegOption, err))
		}
		prog, err, opts = p2, nil, alt
	}
	if bare, on := withoutNVTricks(opts); err != nil && on {
		// the driver refused NVIDIA's PTX tricks: build without them, the
		// same results by the portable way, from now on
		var err2 error
		if prog, err2 = d.program(f.Name, name, bare); err2 == nil {
			d.nvOff.Store(true)
			if d.log != nil {
				d.log(fmt.Sprintf("accel: %s: %s.cl built without NV_TRICKS, which the driver refused: %v", d.caps.ID(), f.Name, err))
			}
			err = nil
		}
	}
	if err != nil {
		return nil, err
	}
	return &clProgram{prog: prog, kernels: map[string]*clKernel{}}, nil
}

// kernel returns the kernel object of spec's entry point in p, making it
// on first use; a plan whose local size exceeds the kernel's own limit
// (registers, local memory: it can be below the device's) must not
// launch and gets an error.
func (d *clDevice) kernel(p *clProgram, spec KernelSpec, plan Plan) (*clKernel, error) {
	e := spec.Entry
	// every launch comes here: a made kernel costs one uncontended lock
	p.mu.Lock()
	k, ok := p.kernels[e.Name]
	p.mu.Unlock()
	if ok {
		return k, nil
	}
	d.life.RLock()
	defer d.life.RUnlock()
	if d.isClosed() {
		return nil, ErrClosed
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if k, ok := p.kernels[e.Name]; ok {
		return k, nil
	}
	name := C.CString(e.CLName())
	var st C.int
	ck := C.acl_kernel(p.prog, name, &st)
	C.free(unsafe.Pointer(name))
	if ck == nil {
		return nil, clErr("create kernel "+e.CLName(), clStatus(st))
	}
	var wgc C.size_t
	if C.acl_kernel_wg_size(ck, d.dev, &wgc) == 0 && wgc > 0 && plan.LocalSize > int(wgc) {
		C.acl_release_kernel(ck)
		return nil, fmt.Errorf("opencl: %s: local size %d exceeds the kernel's limit %d on %s: %w",
			e.CLName(), plan.LocalSize, int(wgc), d.caps.Name, ErrUnsupported)
	}
	if d.trace && d.log != nil {
		// what the driver's compiler made of it: a work-item's private
		// memory is its stack and spills, local memory on a GPU (the
		// offline check reads clang's PTX; this is the driver's own)
		var priv, local C.uint64_t
		if C.acl_kernel_mem(ck, d.dev, &priv, &local) == 0 {
			d.log(fmt.Sprintf("accel: %s kernel %s.%s:%s: private memory %d bytes a work-item, local memory %d bytes a group, at most %d work-items a group",
				d.caps.ID(), spec.Entry.File.Name, spec.Variant, e.Name, uint64(priv), uint64(local), uint64(wgc)))
		}
	}
	k = &clKernel{spec: KernelSpec{Entry: e, Variant: spec.Variant}, k: ck}
	p.kernels[e.Name] = k
	return k, nil
}

// isClosed says whether Close has begun.
func (d *clDevice) isClosed() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.closed
}

// program builds a file's source with opts, or loads the binary a build
// with the same source, options, device and driver left in the disk cache
// (stored after every source build); name (file.variant.entry) names the
// build in ACCEL_CL_DUMP's folder, where the cache is not read.
func (d *clDevice) program(file, name, opts string) (unsafe.Pointer, error) {
	srcDigest, err := clSourceDigest(file)
	if err != nil {
		return nil, err
	}
	c := d.caps
	key := Hash([]byte(srcDigest), []byte(opts), []byte(c.Platform), []byte(c.Name), []byte(c.Vendor), []byte(c.Driver))
	if bin, ok := d.disk.load(key); ok && d.dump == "" {
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
	csrc := C.CString(src)
	var st C.int
	prog := C.acl_program_from_source(d.ctx, csrc, &st)
	C.free(unsafe.Pointer(csrc))
	if prog == nil {
		return nil, clErr("create program "+file, clStatus(st))
	}
	copts := C.CString(opts)
	st = C.acl_build(prog, d.dev, copts)
	C.free(unsafe.Pointer(copts))
	buildLog := clBuildLog(prog, d.dev)
	if st != 0 {
		C.acl_release_program(prog)
		if buildLog != "" {
			return nil, fmt.Errorf("opencl: build %s.cl with %q: %v: build log:\n%s\n: %w", file, opts, clStatus(st), buildLog, ErrDriver)
		}
		return nil, fmt.Errorf("opencl: build %s.cl with %q: %v: %w", file, opts, clStatus(st), ErrDriver)
	}
	if buildLog != "" && d.log != nil {
		d.log(fmt.Sprintf("accel: %s: build log of %s.cl with %q:\n%s", d.caps.ID(), file, opts, buildLog))
	}
	if d.dump != "" {
		d.dumpProgram(name, key, opts, prog, buildLog)
	}
	if d.disk != nil && d.store {
		// Drivers may compile every kernel of the program to serialize it:
		// a program holds one entry point (build), so that is the kernel
		// the caller is about to launch anyway (with whole files, PoCL
		// compiled all nine scatter kernels here: 13-16 s, issue #30).
		// Storing in a background goroutine was measured slower still on
		// PoCL, whose launches wait for the serialization; PoCL does not
		// store at all (storesBinaries).
		d.storeBinary(key, prog)
	}
	return prog, nil
}

// storesBinaries says whether a device's built programs are written to
// the disk cache: yes unless the driver is PoCL (ACCEL_DISK_CACHE=1
// stores there too). To serialize a program PoCL builds a generic
// work-group function of its kernel, which no launch uses (a launch
// builds one specialized to its local size), and keeps its own cache of
// both under $XDG_CACHE_HOME/pocl. Measured on the 2-core VM (PoCL 3.1,
// a fresh process's first scatter_reduce sum of 1M float32, 3 programs):
// with empty caches 3.64 s storing and 2.75 s not; with the caches
// filled by a run before, 0.03 s loading our binaries and 0.19-0.25 s
// from PoCL's cache (about 60 ms a program).
func storesBinaries(c Caps) bool {
	switch os.Getenv("ACCEL_DISK_CACHE") {
	case "0":
		return false
	case "1":
		return true
	}
	return !isPoCL(c)
}

// isPoCL says whether the device is PoCL's.
func isPoCL(c Caps) bool { return strings.Contains(c.Platform, "Portable Computing Language") }

// storeBinary writes a built program's binary to the disk cache.
func (d *clDevice) storeBinary(key string, raw unsafe.Pointer) {
	if bin := programBinary(raw); bin != nil {
		d.disk.store(key, bin)
	}
}

// programBinary returns a built program's binary for its one device (PTX
// text on NVIDIA), or nil where the driver gives none.
func programBinary(raw unsafe.Pointer) []byte {
	n := C.acl_program_binary(raw, nil, 0)
	if n == 0 {
		return nil
	}
	bin := C.malloc(n)
	defer C.free(bin)
	if C.acl_program_binary(raw, (*C.uchar)(bin), n) != n {
		return nil
	}
	return C.GoBytes(bin, C.int(n))
}

// dumpProgram writes a program built from source to the ACCEL_CL_DUMP
// folder, to read what the driver's compiler made of it away from the
// device: NAME-KEY.bin, the driver's binary (PTX on NVIDIA, whose build
// log the option -cl-nv-verbose fills with ptxas's registers, stack,
// spills and shared memory a kernel), and NAME-KEY.txt, the device,
// driver, options and build log (KEY: the disk cache's, the first 12
// digits). A failed write is traced, never fatal: the build stands.
func (d *clDevice) dumpProgram(name, key, opts string, prog unsafe.Pointer, buildLog string) {
	base := filepath.Join(d.dump, name+"-"+key[:min(12, len(key))])
	text := fmt.Sprintf("program %s\ndevice %s (%s)\ndriver %s\noptions %s\nbuild log:\n%s\n", name, d.caps.Name, d.caps.Platform, d.caps.Driver, opts, buildLog)
	err := os.MkdirAll(d.dump, 0o755)
	if err == nil {
		err = os.WriteFile(base+".txt", []byte(text), 0o644)
	}
	if bin := programBinary(prog); err == nil && bin != nil {
		err = os.WriteFile(base+".bin", bin, 0o644)
	}
	if err != nil && d.log != nil {
		d.log(fmt.Sprintf("accel: %s: ACCEL_CL_DUMP: %v", d.caps.ID(), err))
	}
}

// programFromBinary creates and builds a program from a cached binary, or
// returns nil when the driver refuses it.
func (d *clDevice) programFromBinary(bin []byte, opts string) unsafe.Pointer {
	cbin := C.CBytes(bin)
	defer C.free(cbin)
	copts := C.CString(opts)
	defer C.free(unsafe.Pointer(copts))
	var status C.int
	return C.acl_program_from_binary(d.ctx, d.dev, (*C.uchar)(cbin), C.size_t(len(bin)), copts, &status)
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
			err = clCheck(C.acl_arg_buffer(k.k, C.uint(i), cb.mem))
		} else {
			err = clCheck(C.acl_arg_u64(k.k, C.uint(i), C.uint64_t(a.Val))) // a null buffer for buffer slots
		}
		if err != nil {
			return clErr(fmt.Sprintf("%s: set arg %d", k.spec.Entry.CLName(), i), err)
		}
	}
	local := int64(plan.LocalSize)
	dims := (*[6]C.size_t)(C.malloc(6 * C.size_t(unsafe.Sizeof(C.size_t(0)))))
	defer C.free(unsafe.Pointer(dims))
	*dims = [6]C.size_t{C.size_t(plan.Groups[0] * local), C.size_t(plan.Groups[1]), C.size_t(plan.Groups[2]), C.size_t(local), 1, 1}
	var ev unsafe.Pointer
	if err := clCheck(C.acl_ndrange(d.queue, k.k, &dims[0], &dims[3], &ev)); err != nil {
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
		C.acl_release_mem(b.mem)
		b.mem = nil
	}
	d.bufs = nil
	d.progs.each(func(p *clProgram) {
		for _, k := range p.kernels {
			C.acl_release_kernel(k.k)
		}
		C.acl_release_program(p.prog)
	})
	C.acl_release_queue(d.queue)
	C.acl_release_context(d.ctx)
	return err
}
