// Command accel runs the library's ops from the command line: list devices,
// run one op or a batch of jobs on .npy files, benchmark, and self-test.
//
//	accel devices [--json]
//	accel run OP --backend opencl|vulkan|reference [--device SEL] [--param k=v]... [--in NAME=FILE.npy]... --out DIR
//	accel run --batch JOBS.jsonl --backend B [--device SEL]
//	accel bench [--op OP]... [--backend B]... [--device SEL] [--reps N] [--quick] [--json]
//	accel selftest [--backend B]... [--quick]
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/accelkern/accel/accel"
	"github.com/accelkern/accel/host"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func usage() {
	fmt.Fprint(os.Stderr, `usage:
  accel devices [--json] [--device SEL]
  accel run OP --backend opencl|vulkan|reference [--device SEL] [--param name=value]... [--in NAME=FILE.npy]... --out DIR
  accel run --batch JOBS.jsonl --backend B [--device SEL]
  accel bench [--op OP]... [--backend B]... [--device SEL] [--reps N] [--quick] [--json]
  accel selftest [--backend B]... [--quick]
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

// parseInterspersed parses flags that may come before or after positional
// arguments, and returns the positional ones.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
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
	switch backend {
	case "reference":
		return nil, nil
	case host.OpenCL, host.Vulkan:
		return accel.Open(selector(backend, device))
	}
	return nil, fmt.Errorf("--backend %q: must be opencl, vulkan or reference", backend)
}

func cmdDevices(args []string) int {
	fs := flag.NewFlagSet("devices", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print JSON")
	device := fs.String("device", "", "only the device this selector picks")
	if _, err := parseInterspersed(fs, args); err != nil {
		return 2
	}
	all, errs := accel.Devices()
	for _, err := range errs {
		fmt.Fprintln(os.Stderr, "note:", err)
	}
	if *device != "" {
		c, err := host.Select(all, *device)
		if err != nil {
			fmt.Fprintln(os.Stderr, "accel:", err)
			return 1
		}
		all = []host.Caps{c}
	}
	if *asJSON {
		return printJSON(all)
	}
	if len(all) == 0 {
		fmt.Println("no OpenCL or Vulkan device found (install pocl-opencl-icd and mesa-vulkan-drivers)")
		return 0
	}
	for _, c := range all {
		line := fmt.Sprintf("%-10s %-14s %s  (%s; %s)  CU=%d wg=%d fp64=%s", c.ID(), c.Type, c.Name, c.Platform, c.Driver,
			c.ComputeUnits, c.MaxWorkGroupSize, yesNo(c.FP64))
		if c.Unusable != "" {
			line += "  UNUSABLE: " + c.Unusable
		}
		fmt.Println(line)
	}
	return 0
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func opNames() string {
	var n []string
	for _, op := range accel.Ops() {
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
