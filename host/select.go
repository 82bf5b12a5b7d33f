package host

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
)

// Options configure how devices are opened.
type Options struct {
	// Validation enables VK_LAYER_KHRONOS_validation on Vulkan devices; any
	// message it reports makes the next device call fail with ErrValidation.
	// ACCEL_VK_VALIDATION=1 in the environment turns it on too.
	Validation bool
	// Trace logs every command with its plan and device time as it
	// finishes (through Log). ACCEL_TRACE=1 in the environment turns it on
	// too.
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
	// as many before its start, rounded up to Caps.SubAlign: the tensor is
	// a view (Device.Sub) into a buffer that holds both bands. Reading the
	// tensor back checks them: a kernel that wrote outside its output fails
	// the read (accel.ErrGuardBand). A testing aid: the test suites, fuzz
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
}

// GuardBand returns the guard band in bytes (Options.GuardBytes, else
// $ACCEL_GUARD_BYTES), a multiple of 4.
func (o Options) GuardBand() int64 {
	g := o.GuardBytes
	if g <= 0 {
		g, _ = strconv.ParseInt(os.Getenv("ACCEL_GUARD_BYTES"), 10, 64)
	}
	if g <= 0 {
		return 0
	}
	return (g + 3) &^ 3
}

func (o Options) emulateDiscrete() bool {
	return o.EmulateDiscrete || os.Getenv("ACCEL_EMULATE_DISCRETE") == "1"
}

func (o Options) validation() bool {
	return o.Validation || os.Getenv("ACCEL_VK_VALIDATION") == "1"
}

func (o Options) trace() bool {
	return o.Trace || os.Getenv("ACCEL_TRACE") != ""
}

// logger returns where the library's messages go: Log, else stderr when
// tracing, else nil (dropped).
func (o Options) logger() func(string) {
	if o.Log != nil {
		return o.Log
	}
	if o.trace() {
		return func(msg string) { fmt.Fprintln(os.Stderr, msg) }
	}
	return nil
}

func (o Options) timing() bool {
	return o.Timing || os.Getenv("ACCEL_TIMING") == "1" || o.trace()
}

// Enumerate lists every OpenCL device on every platform, then every Vulkan
// physical device. A backend that cannot be loaded contributes an error
// (wrapped ErrNoDevice) instead of devices; the other still lists.
func Enumerate(opts Options) ([]Caps, []error) {
	var all []Caps
	var errs []error
	if cl, err := openclEnumerate(); err != nil {
		errs = append(errs, fmt.Errorf("opencl: %w", err))
	} else {
		all = append(all, cl...)
	}
	if vk, err := vulkanEnumerate(opts); err != nil {
		errs = append(errs, fmt.Errorf("vulkan: %w", err))
	} else {
		all = append(all, vk...)
	}
	return all, errs
}

// Select picks a device by selector: "" (the default: a discrete GPU, then an
// integrated one, then the rest, OpenCL before Vulkan on ties, skipping
// unusable devices), "backend" ("opencl", "vulkan"), "backend:index", or
// "backend:substring" matching the name, vendor or platform,
// case-insensitively. A bare "substring" matches on either backend.
func Select(all []Caps, selector string) (Caps, error) {
	backend, rest := "", selector
	if i := strings.IndexByte(selector, ':'); i >= 0 {
		backend, rest = strings.ToLower(selector[:i]), selector[i+1:]
	} else if s := strings.ToLower(selector); s == OpenCL || s == Vulkan {
		backend, rest = s, ""
	}
	if backend != "" && backend != OpenCL && backend != Vulkan {
		return Caps{}, fmt.Errorf("device selector %q: backend %q is not opencl or vulkan: %w", selector, backend, ErrNoDevice)
	}
	var cands []Caps
	for _, c := range all {
		if backend != "" && c.Backend != backend {
			continue
		}
		if rest != "" {
			if idx, err := strconv.Atoi(rest); err == nil {
				if c.Index != idx {
					continue
				}
			} else {
				hay := strings.ToLower(c.Name + " " + c.Vendor + " " + c.Platform + " " + c.Driver)
				if !strings.Contains(hay, strings.ToLower(rest)) {
					continue
				}
			}
		}
		cands = append(cands, c)
	}
	usable := cands[:0:0]
	for _, c := range cands {
		if c.Unusable == "" {
			usable = append(usable, c)
		}
	}
	if len(usable) == 0 {
		if len(cands) > 0 {
			return Caps{}, fmt.Errorf("device selector %q: %s %q cannot run kernels: %s: %w",
				selector, cands[0].ID(), cands[0].Name, cands[0].Unusable, ErrUnsupported)
		}
		names := make([]string, 0, len(all))
		for _, c := range all {
			names = append(names, c.ID()+" "+c.Name)
		}
		return Caps{}, fmt.Errorf("device selector %q matches none of [%s]: %w", selector, strings.Join(names, "; "), ErrNoDevice)
	}
	sort.SliceStable(usable, func(i, j int) bool {
		if usable[i].Type != usable[j].Type {
			return usable[i].Type > usable[j].Type
		}
		return usable[i].Backend == OpenCL && usable[j].Backend != OpenCL
	})
	return usable[0], nil
}

// Open enumerates the devices, selects one by selector (see Select; an empty
// selector falls back to $ACCEL_DEVICE) and opens it.
func Open(selector string, opts Options) (Device, error) {
	if selector == "" {
		selector = os.Getenv("ACCEL_DEVICE")
	}
	all, errs := Enumerate(opts)
	c, err := Select(all, selector)
	if err != nil && len(errs) > 0 {
		// say why a backend listed nothing (a selector naming a backend
		// that failed to load, say)
		return nil, fmt.Errorf("%w (%v)", err, errors.Join(errs...))
	}
	if err != nil {
		return nil, err
	}
	return OpenCaps(c, opts)
}

// OpenCaps opens the device that caps (from Enumerate) describes.
func OpenCaps(c Caps, opts Options) (Device, error) {
	switch c.Backend {
	case OpenCL:
		return openclOpen(c.Index, opts)
	case Vulkan:
		return vulkanOpen(c.Index, opts)
	}
	return nil, fmt.Errorf("backend %q: %w", c.Backend, ErrNoDevice)
}
