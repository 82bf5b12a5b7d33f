// Command accel runs the library's ops from the command line: list devices,
// run one op or a batch of jobs on .npy files, benchmark, and self-test.
//
//	accel devices [--json]
//	accel run OP [--backend opencl|vulkan|reference] [--device SEL] [--param k=v]... [--in NAME=FILE.npy]... [--out DIR] [--json]
//	accel run --batch JOBS.jsonl [--backend B] [--device SEL]
//	accel bench [--op OP]... [--case NAME]... [--backend B]... [--device SEL] [--reps N] [--quick] [--no-ref] [--json] [--first-call]
//	accel selftest [--backend B]... [--quick]
//	accel soak [--duration D] [--goroutines G] [--backend B]... [--json FILE]
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/accelkern/accel/accel"
	"github.com/accelkern/accel/cmd/accel/internal/ops"
	"github.com/accelkern/accel/host"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func usage() {
	fmt.Fprint(os.Stderr, `usage:
  accel devices [--json] [--device SEL]
  accel run OP [--backend opencl|vulkan|reference] [--device SEL] [--param name=value]... [--in NAME=FILE.npy]... [--out DIR] [--json]
  accel run --batch JOBS.jsonl [--backend B] [--device SEL]
  accel bench [--op OP]... [--case NAME]... [--backend B]... [--device SEL] [--reps N] [--quick] [--no-ref] [--json] [--first-call]
  accel selftest [--backend B]... [--quick]
  accel soak [--duration D] [--goroutines G] [--backend B]... [--check-every N] [--report D] [--json FILE]
Devices are chosen by --device or $ACCEL_DEVICE: opencl:0, vulkan:llvmpipe, opencl:NVIDIA, ...
`)
}

func run(args []string) int {
	if len(args) == 0 {
		usage()
		return 2
	}
	switch args[0] {
	case "devices":
		return cmdDevices(args[1:])
	case "run":
		return cmdRun(args[1:])
	case "bench":
		return cmdBench(args[1:])
	case "selftest":
		return cmdSelftest(args[1:])
	case "soak":
		return cmdSoak(args[1:])
	case "firstcall":
		return cmdFirstCall(args[1:])
	case "help", "-h", "--help":
		usage()
		return 0
	}
	fmt.Fprintf(os.Stderr, "accel: unknown command %q\n", args[0])
	usage()
	return 2
}

// multi is a repeatable string flag.
type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

// newFlagSet makes a subcommand's flag set whose -h/--help prints the
// synopsis and the flags.
func newFlagSet(name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: %s\n", strings.TrimSpace(synopsis))
		printFlags(fs, fs.Output())
	}
	return fs
}

// flagExit is the exit status for a flag parsing error: 0 for -h/--help
// (the usage was printed), 2 otherwise.
func flagExit(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	return 2
}

// parseInterspersed parses flags that may come before or after positional
// arguments, and returns the positional ones. Everything after "--" is
// positional.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// selector builds the device selector for a backend from --device and
// $ACCEL_DEVICE.
func selector(backend, device string) string {
	if device != "" {
		if strings.Contains(device, ":") {
			return device
		}
		return backend + ":" + device
	}
	if env := os.Getenv("ACCEL_DEVICE"); strings.HasPrefix(strings.ToLower(env), backend+":") {
		return env
	}
	return backend
}

// openBackend opens the device for a backend name; "reference" gives nil.
func openBackend(backend, device string) (*accel.Device, error) {
	return openBackendWith(backend, device, accel.Options{})
}

// openBackendWith is openBackend with options (the bench times the device).
func openBackendWith(backend, device string, opts accel.Options) (*accel.Device, error) {
	switch backend {
	case "reference":
		return nil, nil
	case host.OpenCL, host.Vulkan:
		return accel.OpenWith(selector(backend, device), opts)
	}
	return nil, fmt.Errorf("--backend %q: must be opencl, vulkan or reference", backend)
}

func cmdDevices(args []string) int {
	fs := newFlagSet("devices", `accel devices [--json] [--device SEL]
One line per OpenCL device and Vulkan physical device (cmd/devinfo prints
every capability). Backends that fail to load are noted on stderr.`)
	asJSON := fs.Bool("json", false, "print a JSON array of the devices' capabilities")
	device := fs.String("device", "", "only the device this selector picks (opencl:0, vulkan:llvmpipe, ...)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return flagExit(err)
	}
	if len(pos) > 0 {
		fmt.Fprintf(os.Stderr, "accel devices: unexpected argument %q\n", pos[0])
		return 2
	}
	all, errs := accel.Devices()
	for _, err := range errs {
		fmt.Fprintln(os.Stderr, "note:", err)
	}
	if *device != "" {
		c, err := accel.SelectDevice(all, *device)
		if err != nil {
			fmt.Fprintln(os.Stderr, "accel:", err)
			return 1
		}
		all = []accel.DeviceInfo{c}
	}
	if *asJSON {
		if all == nil {
			all = []accel.DeviceInfo{}
		}
		return printJSON(all)
	}
	if len(all) == 0 {
		fmt.Println(noDeviceMessage(errs))
		return 0
	}
	for _, c := range all {
		line := deviceLine(c)
		if c.Unusable != "" {
			line += "  UNUSABLE: " + c.Unusable
		}
		fmt.Println(line)
	}
	return 0
}

// noDeviceMessage says that no device was found, and why.
func noDeviceMessage(errs []error) string {
	why := "no backend reported an error"
	if len(errs) > 0 {
		var msgs []string
		for _, err := range errs {
			msgs = append(msgs, err.Error())
		}
		why = strings.Join(msgs, "; ")
	}
	return "no OpenCL or Vulkan device found: " + why + "; install pocl-opencl-icd / mesa-vulkan-drivers (CPU drivers) or a GPU driver"
}

// lineWidth is the widest line the CLI's tables print (a terminal's 100
// columns).
const lineWidth = 100

// deviceLine is a device's line in the device list: its id, type, name,
// platform and limits, the name shortened in its middle (fitName) where
// the line would pass lineWidth (PoCL names a CPU by its LLVM target and
// its brand string: "pthread-skylake-avx512-Intel(R) Xeon(R) Processor").
func deviceLine(c accel.DeviceInfo) string {
	f := func(name string) string {
		return fmt.Sprintf("%-8s  %s  %s (%s)  CU=%d wg=%d fp64=%s", c.ID(), c.Type, name, platformName(c),
			c.ComputeUnits, c.MaxWorkGroupSize, yesNo(c.FP64))
	}
	line := f(c.Name)
	if over := len(line) - lineWidth; over > 0 {
		line = f(fitName(c.Name, len(c.Name)-over))
	}
	return line
}

// fitName is name in at most width bytes: its start and end with "..."
// between them where it is longer (at least its first and last 4 bytes),
// cut between whole UTF-8 characters.
func fitName(name string, width int) string {
	if len(name) <= width {
		return name
	}
	keep := max(width-3, 8)
	if keep >= len(name) {
		return name
	}
	head, tail := (keep+1)/2, len(name)-keep/2
	for head > 0 && !utf8.RuneStart(name[head]) {
		head-- // whole characters only
	}
	for tail < len(name) && !utf8.RuneStart(name[tail]) {
		tail++
	}
	return name[:head] + "..." + name[tail:]
}

// platformName is the short platform name: PoCL's platform string carries
// its whole build configuration after the name.
func platformName(c accel.DeviceInfo) string {
	p := c.Platform
	if i := strings.Index(p, " OpenCL "); i > 0 {
		p = p[:i]
	}
	return p
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func opNames() string {
	var n []string
	for _, op := range ops.Ops() {
		n = append(n, op.Name)
	}
	sort.Strings(n)
	return strings.Join(n, ", ")
}

// rejected reports whether err is a clear rejection of the job's input (as
// opposed to a device or I/O failure).
func rejected(err error) bool {
	return errors.Is(err, accel.ErrInvalidArgument) || errors.Is(err, accel.ErrTooLarge) || errors.Is(err, accel.ErrUnsupported)
}
