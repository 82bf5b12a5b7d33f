// Command devinfo probes every OpenCL platform/device and every Vulkan
// physical device and prints their capabilities: human-readable by
// default, a JSON array with --json. With no device at all it says so and
// exits 0.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/accelkern/accel/accel"
)

func main() {
	flag.Usage = func() {
		fmt.Fprint(flag.CommandLine.Output(), `usage: devinfo [--json] [--device SEL]
Probes every OpenCL platform/device and every Vulkan physical device and
prints all their capabilities. Backends that cannot be loaded are noted on
stderr. SEL is a selector as for accel.Open: opencl, vulkan:1, opencl:pthread, ...
`)
		// the flags as the usage spells them (--name; flag takes both)
		flag.VisitAll(func(f *flag.Flag) {
			name, usage := flag.UnquoteUsage(f)
			fmt.Fprintf(flag.CommandLine.Output(), "  %s\n    \t%s\n", strings.TrimSpace("--"+f.Name+" "+name), usage)
		})
	}
	asJSON := flag.Bool("json", false, "print a JSON array of device capabilities")
	device := flag.String("device", "", "only the device this selector picks (opencl:0, vulkan:llvmpipe, ...)")
	flag.Parse()
	if flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	all, errs := accel.Devices()
	for _, err := range errs {
		fmt.Fprintln(os.Stderr, "note:", err)
	}
	if len(all) == 0 && !*asJSON {
		why := "no backend reported an error"
		if len(errs) > 0 {
			var msgs []string
			for _, err := range errs {
				msgs = append(msgs, err.Error())
			}
			why = strings.Join(msgs, "; ")
		}
		fmt.Printf("no OpenCL or Vulkan device found: %s; install pocl-opencl-icd / mesa-vulkan-drivers (CPU drivers) or a GPU driver\n", why)
		return
	}
	if *device != "" {
		c, err := accel.SelectDevice(all, *device)
		if err != nil {
			fmt.Fprintln(os.Stderr, "devinfo:", err)
			os.Exit(1)
		}
		all = []accel.DeviceInfo{c}
	}
	if *asJSON {
		if all == nil {
			all = []accel.DeviceInfo{}
		}
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(all); err != nil {
			fmt.Fprintln(os.Stderr, "devinfo:", err)
			os.Exit(1)
		}
		return
	}
	for i, c := range all {
		if i > 0 {
			fmt.Println()
		}
		printCaps(c)
	}
}

func yn(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func mib(b int64) string { return fmt.Sprintf("%d MiB", b>>20) }

func printCaps(c accel.DeviceInfo) {
	rows := [][2]string{
		{"device", c.ID() + "  " + c.Name},
		{"vendor", c.Vendor},
		{"platform / API", c.Platform},
		{"driver", c.Driver},
		{"type", c.Type.String()},
		{"compute units", fmt.Sprint(c.ComputeUnits)},
		{"max work-group size", fmt.Sprint(c.MaxWorkGroupSize)},
		{"max work-group count", fmt.Sprintf("%d x %d x %d", c.MaxWorkGroupCount[0], c.MaxWorkGroupCount[1], c.MaxWorkGroupCount[2])},
		{"local/shared memory", fmt.Sprintf("%d KiB", c.LocalMemBytes>>10)},
		{"subgroup size", map[bool]string{true: fmt.Sprint(c.SubgroupSize), false: "not reported"}[c.SubgroupSize > 0]},
		{"subgroup arithmetic", fmt.Sprintf("%s (64-bit: %s; size fixed: %s)", yn(c.SubgroupArith), yn(c.SubgroupArith64), yn(c.SubgroupFixed))},
		{"subgroup ballot", yn(c.SubgroupBallot)},
		{"subgroup size control", yn(c.SubgroupControl)},
		{"global memory", mib(c.GlobalMemBytes)},
		{"max allocation", mib(c.MaxAllocBytes)},
		{"max storage-buffer range", map[bool]string{true: mib(c.MaxStorageRange), false: "n/a"}[c.MaxStorageRange > 0]},
		{"fp64", yn(c.FP64)},
		{"float32 division", string(c.FP32Div)},
		{"int64", yn(c.Int64)},
		{"int64 atomics", yn(c.Int64Atomics)},
		{"float32 / float64 atomic add", yn(c.Float32Atomics) + " / " + yn(c.Float64Atomics)},
		{"timestamps", fmt.Sprintf("%s (period %g ns)", yn(c.Timestamps), c.TimestampPeriodNs)},
	}
	if c.LoopLimit > 0 {
		rows = append(rows, [2]string{"driver loop limit", fmt.Sprint(c.LoopLimit)})
	}
	if c.FoldArgs {
		rows = append(rows, [2]string{"driver workaround", "mode-like arguments folded into specialization constants"})
	}
	if c.SerialAtomics {
		rows = append(rows, [2]string{"driver workaround", "atomic folds by compare-and-swap loops from a plain load (a vector's atomics run one lane at a time)"})
	}
	if c.LazyKernels {
		rows = append(rows, [2]string{"driver workaround", "kernels compiled at their first launch: a program per kernel file"})
	}
	if c.Unusable != "" {
		rows = append(rows, [2]string{"UNUSABLE", c.Unusable})
	}
	for _, r := range rows {
		fmt.Printf("  %-30s %s\n", r[0]+":", strings.TrimSpace(r[1]))
	}
}
