package kernels_test

import (
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelkern/accel/host"
	"github.com/accelkern/accel/host/kernels"
)

// radvICD is Mesa's Vulkan driver for AMD GPUs (Debian's
// mesa-vulkan-drivers, which make deps installs for lavapipe).
const radvICD = "/usr/share/vulkan/icd.d/radeon_icd.json"

// radvFamilies are the AMD GPUs TestVulkanAMDBuilds compiles for: RDNA 3
// (Navi 31, the RX 7900: float atomic adds), RDNA 2 (Navi 21, the RX
// 6800: none) and GCN 5 (Vega 10: no subgroup size control), all running
// compute shaders in subgroups of 64.
var radvFamilies = []string{"navi31", "navi21", "vega10"}

// strictPasses are the environments in which a device with every float
// control (RADV's) loads each SPIR-V build of a float variant
// (host.StrictVariant): .strictd, .strict, .strictf (what NVIDIA's
// Vulkan loads) and the plain build.
var strictPasses = []map[string]string{
	{},
	{"ACCEL_VK_STRICT": "1", "ACCEL_DENORM_FIX": "0"},
	{"ACCEL_VK_STRICT": "1", "ACCEL_DENORM_FIX": "1"},
	{"ACCEL_VK_STRICT": "0"},
}

// TestVulkanAMDBuilds is how a GPU's own compiler sees the SPIR-V on every
// commit, without a GPU (TestOfflineCompile does it for OpenCL C): RADV,
// Mesa's Vulkan driver for AMD GPUs, opens a GPU of each of radvFamilies
// as null hardware (RADV_FORCE_FAMILY: no GPU, no memory, but its
// compiler, ACO) and builds every entry point of every SPIR-V build with
// the GPU plans' knobs (the offline compiles' profile), local size 256,
// subgroups of 64 where a build uses subgroup operations, as the Vulkan
// backend does (host.OpenBuildOnly). Any build that fails fails, and so
// does scratch memory (a work-item's stack or spills, memory on the GPU)
// outside the CPU plans' entries (stackAllowed). The driver's statistics
// of each (registers, occupancy, code size) are logged, -test.v shows
// them. It runs in a child process per family, since the Vulkan loader
// reads its driver list once per process.
func TestVulkanAMDBuilds(t *testing.T) {
	if fam := os.Getenv("ACCEL_TEST_RADV_FAMILY"); fam != "" {
		amdBuilds(t, fam)
		return
	}
	needRADV(t)
	outs := make([][]byte, len(radvFamilies))
	errs := make([]error, len(radvFamilies))
	var wg sync.WaitGroup
	for i, fam := range radvFamilies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^TestVulkanAMDBuilds$", "-test.count=1", "-test.v")
			cmd.Env = append(os.Environ(), "ACCEL_TEST_RADV_FAMILY="+fam, "RADV_FORCE_FAMILY="+fam,
				"VK_DRIVER_FILES="+radvICD, "VK_ICD_FILENAMES="+radvICD, "ACCEL_VK_STRICT=", "ACCEL_DENORM_FIX=")
			outs[i], errs[i] = cmd.CombinedOutput()
		}()
	}
	wg.Wait()
	for i, fam := range radvFamilies {
		require.NoError(t, errs[i], "%s:\n%s", fam, outs[i])
		for _, l := range strings.Split(string(outs[i]), "\n") {
			if strings.Contains(l, "pipelines built") {
				t.Logf("%s: %s", fam, strings.TrimSpace(l))
			}
		}
	}
}

// needRADV skips t where RADV is not installed (fails instead under CI,
// but for a GPU run's pack, which has no Mesa) or under -short.
func needRADV(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(radvICD); err != nil {
		if os.Getenv("CI") == "true" && os.Getenv("ACCEL_GPU_RUN") != "1" {
			require.NoError(t, err, "RADV not found in CI (make deps installs mesa-vulkan-drivers)")
		}
		t.Skipf("RADV not found (%v): AMD's compiler runs where make deps installed Mesa's drivers", err)
	}
	if testing.Short() {
		t.Skip("-short: the AMD builds take a minute")
	}
}

// amdBuilds is TestVulkanAMDBuilds' child: every build on RADV's null
// hardware of family fam.
func amdBuilds(t *testing.T, fam string) {
	all, _ := host.Enumerate(host.Options{})
	var c host.Caps
	for _, x := range all {
		if x.Backend == host.Vulkan && strings.Contains(x.Name, "RADV") {
			c = x
		}
	}
	require.Equal(t, host.Vulkan, c.Backend, "RADV_FORCE_FAMILY=%s: no RADV device among %v", fam, all)
	vs, err := host.Variants()
	require.NoError(t, err)
	gpuSet := map[string]int64{"CONTIG": 0, "ITEMS": 4, "RADIX_BITS": 8, "RADIX_KPT": 8, "RADIX_SWEEP": 1, "RADIX_EW": 1,
		"RADIX_SGS": 4, "RADIX_LATE": 1, "RADIX_SKIP": 1, "CHAIN": 2, "SC_FEW": 16}
	builds, bad := 0, 0
	var table []string
	seen := map[string]bool{} // the SPIR-V builds loaded so far
	for _, env := range strictPasses {
		passBuilds := 0
		for k, v := range env {
			t.Setenv(k, v)
		}
		var mu sync.Mutex
		traced := 0 // the trace's lines of driver statistics, one a build
		dev, err := host.OpenBuildOnly(c, host.Options{Validation: true, Trace: true, Log: func(msg string) {
			if strings.Contains(msg, "driver statistics: ") && strings.Contains(msg, "Scratch size=") {
				mu.Lock()
				traced++
				mu.Unlock()
			}
		}})
		require.NoError(t, err)
		for _, f := range kernels.Files {
			var names []string
			for _, v := range vs {
				if v.File == f.Name && !v.Strict() {
					names = append(names, v.Name)
				}
			}
			sort.Strings(names)
			plan := host.Plan{LocalSize: 256, Groups: [3]int64{1, 1, 1}, Knobs: knobPlan(f.AllKnobs(), gpuSet)}
			for _, name := range names {
				loaded := host.StrictVariant(c, f.Name, name)
				if seen[f.Name+"."+loaded] {
					continue // built in an earlier pass
				}
				seen[f.Name+"."+loaded] = true
				v := vs[f.Name+"."+name]
				// the atomic float adds, which the planners take only
				// where the device has them: the backend refuses them
				// elsewhere (RADV's compiler before RDNA 3 aborts the
				// process on them)
				fadd := v.Define("FADD") == "1"
				if fadd && (v.Define("DT") == "4" && !c.Float64Atomics || v.Define("DT") != "4" && !c.Float32Atomics) {
					_, err := dev.Kernel(host.KernelSpec{Entry: f.Entries[0], Variant: name}, plan)
					assert.ErrorIs(t, err, host.ErrUnsupported, "%s.%s on %s", f.Name, name, c.Name)
					continue
				}
				for _, e := range f.Entries {
					what := fmt.Sprintf("%s.%s:%s", f.Name, loaded, e.Name)
					k, err := dev.Kernel(host.KernelSpec{Entry: e, Variant: name}, plan)
					if !assert.NoError(t, err, "%s on %s", what, c.Name) {
						bad++
						continue
					}
					builds++
					passBuilds++
					st := map[string]string{}
					var parts []string
					for _, s := range host.PipelineStats(k) {
						st[s.Name] = s.Value
						parts = append(parts, s.Name+"="+s.Value)
					}
					require.Contains(t, st, "Scratch size", "%s: RADV's statistics: %v", what, parts)
					scratch, _ := strconv.Atoi(st["Scratch size"])
					spills, _ := strconv.Atoi(st["Spilled VGPRs"])
					if _, ok := stackAllowed[e.Func()]; !ok {
						assert.Zero(t, scratch, "%s on %s: scratch memory (a stack or spills) in a GPU plan's kernel", what, c.Name)
						assert.Zero(t, spills, "%s on %s: spilled registers", what, c.Name)
					}
					table = append(table, fmt.Sprintf("%s VGPRs=%s SGPRs=%s scratch=%s subgroups/SIMD=%s LDS=%s code=%s", what,
						st["VGPRs"], st["SGPRs"], st["Scratch size"], st["Subgroups per SIMD"], st["LDS size"], st["Code size"]))
				}
			}
		}
		require.NoError(t, dev.Close())
		assert.Equal(t, passBuilds, traced, "the trace's lines of driver statistics")
	}
	for _, l := range table {
		t.Log(l)
	}
	require.Greater(t, builds, 400, "too few builds: variants or entries not found")
	t.Logf("%d pipelines built on %s (%s), %d failed", builds, c.Name, c.Driver, bad)
}
