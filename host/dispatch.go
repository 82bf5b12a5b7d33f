package host

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Dispatch queues one launch of call's entry point on dev: the variant of
// the entry's kernel file, the plan's local size, groups and knobs, and
// the entry's foldable arguments folded into knobs where the driver wants
// them (FoldArgs), other entries' folded-argument knobs left out
// (EntryKnobs). It is the one way ops launch kernels.
func Dispatch(dev Device, variant string, plan Plan, call Call) error {
	e := call.Entry()
	var buf [24]Arg
	args := call.AppendArgs(buf[:0])
	plan = FoldArgs(dev.Caps(), EntryKnobs(plan, e), e, args)
	k, err := dev.Kernel(KernelSpec{Entry: e, Variant: variant}, plan)
	if err != nil {
		return err
	}
	return dev.Launch(k, plan, args)
}

// checkKernel checks a kernel request against the entry's file before any
// driver work: the variant exists, every knob is declared, and the local
// size is within the device's limit.
func checkKernel(backend string, spec KernelSpec, plan Plan, c Caps) error {
	if spec.Entry == nil || spec.Entry.File == nil {
		return fmt.Errorf("%s: kernel spec without an entry point", backend)
	}
	v, err := lookupVariant(spec.Entry.File.Name, spec.Variant)
	if err != nil {
		return err
	}
	// a SPIR-V build that adds floats atomically (FADD=1) on a device
	// without such atomics: a driver may abort the process compiling it
	// (RADV's compiler before RDNA 3, Mesa 25.0: TestVulkanAMDBuilds found
	// it); OpenCL C's builds fall back to compare-and-swap themselves
	if c.Backend == Vulkan && v.Define("FADD") == "1" {
		f64 := v.Define("DT") == "4"
		if f64 && !c.Float64Atomics || !f64 && !c.Float32Atomics {
			width := map[bool]string{false: "float32", true: "float64"}[f64]
			return fmt.Errorf("%s: kernel %s adds %s atomically, which %s lacks: %w", backend, spec, width, c.ID(), ErrUnsupported)
		}
	}
	for _, k := range plan.Knobs {
		if _, ok := spec.Entry.File.KnobID(k.Name); !ok {
			return fmt.Errorf("%s: kernel %s declares no knob %s (host/kernels)", backend, spec, k.Name)
		}
	}
	if plan.LocalSize < 1 || (c.MaxWorkGroupSize > 0 && plan.LocalSize > c.MaxWorkGroupSize) {
		return fmt.Errorf("%s: kernel %s: local size %d outside [1, %d]", backend, spec, plan.LocalSize, c.MaxWorkGroupSize)
	}
	return nil
}

// checkLaunch checks a launch's plan and arguments against the device and
// the entry's declaration.
func checkLaunch(backend string, e *EntryDecl, plan Plan, c Caps, args []Arg) error {
	if len(args) != len(e.Args) {
		return fmt.Errorf("%s: kernel %s takes %d arguments, got %d", backend, e.Func(), len(e.Args), len(args))
	}
	for i, a := range args {
		if a.Buf != nil && e.Args[i].Kind != ArgBuf {
			return fmt.Errorf("%s: kernel %s: argument %d (%s) is a scalar, got a buffer", backend, e.Func(), i, e.Args[i].Name)
		}
	}
	return plan.Validate(c)
}

// kernelKey is the cache key of a compiled kernel: the file, variant,
// local size, knobs (sorted by name) and register cap (Plan.MaxRegs),
// plus the entry where entries compile apart (Vulkan pipelines; entry ""
// for a whole OpenCL program).
// It is cheap to build, so every launch can look its kernel up without
// hashing sources.
func kernelKey(file, variant, entry string, plan Plan) string {
	var b strings.Builder
	b.Grow(64)
	b.WriteString(file)
	b.WriteByte('.')
	b.WriteString(variant)
	b.WriteByte(':')
	b.WriteString(entry)
	b.WriteByte('/')
	b.WriteString(strconv.Itoa(plan.LocalSize))
	knobs := plan.Knobs
	if !sort.SliceIsSorted(knobs, func(i, j int) bool { return knobs[i].Name < knobs[j].Name }) {
		knobs = append([]Knob(nil), knobs...)
		sort.Slice(knobs, func(i, j int) bool { return knobs[i].Name < knobs[j].Name })
	}
	for _, k := range knobs {
		b.WriteByte(' ')
		b.WriteString(k.Name)
		b.WriteByte('=')
		b.WriteString(strconv.FormatInt(k.Value, 10))
	}
	if plan.MaxRegs > 0 {
		b.WriteString(" MAXREG=")
		b.WriteString(strconv.Itoa(plan.MaxRegs))
	}
	return b.String()
}
