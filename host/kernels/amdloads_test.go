package kernels_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelkern/accel/host"
	"github.com/accelkern/accel/host/kernels"
)

// amdLoadsFile records, for the GPU plans' pipelines, the round trips to
// memory that AMD's compiler leaves in them (TestVulkanAMDLoads).
const amdLoadsFile = "testdata/amd_loads.txt"

// amdLoadsFamily is the GPU whose compiler TestVulkanAMDLoads reads: RDNA 3
// (Navi 31), whose float atomic adds the GPU scatter plans use.
const amdLoadsFamily = "navi31"

// amdLoadsVariants are the SPIR-V builds the GPU plans run.
var amdLoadsVariants = []string{
	"copy.any", "diag.w32", "hash.k64", "indice.any", "move.w32", "radix.k32", "radix.k32s", "radix.k64",
	"radix.k64s", "scan.u32", "scan.u32s", "scan.u64s", "scatter.f32a", "scatter.f32", "scatter.i64", "segment.f32",
	"sparse.f32", "tri_indices.i64",
}

// amdLoadsProfile is how the GPU plans build a file's pipelines: the
// local size and knobs the planners chose for Navi 31 (RADV's caps: 64
// compute units, subgroups of 64, 64 KiB of local memory; session 16),
// and the run-time arguments the GPU plans fold in as knobs, a second
// build of each pipeline with them.
func amdLoadsProfile(variant string) (local int, set, folded map[string]int64) {
	file, v, _ := strings.Cut(variant, ".")
	set = map[string]int64{"ITEMS": 4, "CONTIG": 0} // the elementwise passes (planElementwise's GPU tiles)
	switch {
	case file == "radix":
		// planRadixTiled: tiles of 512 lanes ranked by 8 subgroups'
		// ballots, 8 32-bit keys a lane (7 of 64 bits), one-word entries
		kpt := int64(8)
		if strings.HasPrefix(v, "k64") {
			kpt = 7
		}
		return 512, map[string]int64{"RADIX_BITS": 8, "RADIX_KPT": kpt, "RADIX_SWEEP": 1, "RADIX_EW": 1, "RADIX_SGS": 8,
			"RADIX_SPIN": 16384}, nil
	case variant == "scan.u32":
		// planScanChainGPU (a GPU without the subgroup builds: NVIDIA's
		// OpenCL), 32 elements a lane; scanBuf folds the kind in
		return 256, map[string]int64{"CHAIN": 2, "ITEMS": 32, "SCAN_SG": 0, "FLAT": 0, "SPIN": 16384},
			map[string]int64{"SCAN_KIND": 0, "SCAN_EXCL": 0}
	case file == "scan":
		// planScan with subgroups: rows of consecutive units a subgroup
		return 256, map[string]int64{"ITEMS": 8, "SCAN_SG": 1, "FLAT": 0}, map[string]int64{"SCAN_KIND": 0, "SCAN_EXCL": 0}
	case file == "scatter":
		// the atomic and partition passes' tiles, planFewGroups' 16
		// targets in scratch columns; the partition's fold compiles its
		// reduction in (planPfold: a sum here)
		set["SC_FEW"] = 16
		set["SC_FEWG_SH"] = 1
		return 256, set, map[string]int64{"SC_RED": 1}
	}
	return 256, set, nil
}

// TestVulkanAMDLoads checks without a GPU that the GPU plans' pipelines
// keep their loads in flight together. A GPU hides a load's round trip to
// memory (hundreds of cycles) only where a lane has other loads in
// flight; sessions 13-15 rewrote the hot loops (the sort's passes, the
// scans, the scatter passes, the hash lookup) so that a lane issues a
// batch's loads before it waits for any (docs/gpu.md). AMD's compiler
// (RADV on null hardware, as in TestVulkanAMDBuilds) builds each pipeline
// of amdLoadsVariants as the planners shape it for Navi 31
// (amdLoadsProfile); its disassembly gives the pipeline's loads from
// device memory and its round trips one after another (countLoads: every
// path of the code read once, a loop's body once, so a pipeline's count
// is a sum over its paths, not a time). A pipeline with more round trips
// than amdLoadsFile records fails: a wait came back between loads that
// went out together (RADV_FORCE_FAMILY=navi31 with ACCEL_VK_DUMP=DIR
// shows the disassembly). Fewer are logged. The file holds the Mesa version it was taken with; with another
// (a newer Debian backport) the test logs the table and checks nothing.
// ACCEL_UPDATE_AMD_LOADS=1 writes the file anew.
func TestVulkanAMDLoads(t *testing.T) {
	if os.Getenv("ACCEL_TEST_RADV_LOADS") == "1" {
		amdLoads(t)
		return
	}
	needRADV(t)
	wd, err := os.Getwd()
	require.NoError(t, err)
	cmd := exec.Command(os.Args[0], "-test.run=^TestVulkanAMDLoads$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "ACCEL_TEST_RADV_LOADS=1", "RADV_FORCE_FAMILY="+amdLoadsFamily,
		"VK_DRIVER_FILES="+radvICD, "VK_ICD_FILENAMES="+radvICD, "ACCEL_VK_STRICT=", "ACCEL_DENORM_FIX=",
		"ACCEL_VK_DUMP="+t.TempDir(), "ACCEL_TEST_LOADS_FILE="+filepath.Join(wd, amdLoadsFile))
	out, err := cmd.CombinedOutput()
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "amd_loads:") {
			t.Log(strings.TrimSpace(l))
		}
	}
	require.NoError(t, err, "%s", out)
}

// amdLoads is TestVulkanAMDLoads' child, on RADV's null hardware with
// ACCEL_VK_DUMP set (so that pipelines keep their disassembly).
func amdLoads(t *testing.T) {
	all, _ := host.Enumerate(host.Options{})
	var c host.Caps
	for _, x := range all {
		if x.Backend == host.Vulkan && strings.Contains(x.Name, "RADV") {
			c = x
		}
	}
	require.Equal(t, host.Vulkan, c.Backend, "no RADV device among %v", all)
	dev, err := host.OpenBuildOnly(c, host.Options{Validation: true})
	require.NoError(t, err)
	defer func() { assert.NoError(t, dev.Close()) }()
	vs, err := host.Variants()
	require.NoError(t, err)
	got := map[string]loadCount{}
	var keys []string
	for _, name := range amdLoadsVariants {
		file, variant, _ := strings.Cut(name, ".")
		f := fileDecl(file)
		require.NotNil(t, f, "file %s", file)
		_, ok := vs[name]
		require.True(t, ok, "variant %s", name)
		local, set, folded := amdLoadsProfile(name)
		knobs := []map[string]int64{set}
		if folded != nil {
			both := map[string]int64{}
			for k, v := range set {
				both[k] = v
			}
			for k, v := range folded {
				both[k] = v
			}
			knobs = append(knobs, both)
		}
		for i, set := range knobs {
			plan := host.Plan{LocalSize: local, Groups: [3]int64{1, 1, 1}, Knobs: knobPlan(f.AllKnobs(), set)}
			for _, e := range f.Entries {
				if _, cpu := stackAllowed[e.Func()]; cpu {
					continue // a CPU plan's kernel
				}
				k, err := dev.Kernel(host.KernelSpec{Entry: e, Variant: variant}, plan)
				if !assert.NoError(t, err, "%s:%s", name, e.Name) {
					continue
				}
				asm := ""
				for _, r := range host.PipelineIR(k) {
					if strings.Contains(strings.ToLower(r.Name), "assembly") {
						asm = r.Text
					}
				}
				require.NotEmpty(t, asm, "%s:%s: RADV gave no disassembly (%d representations)", name, e.Name, len(host.PipelineIR(k)))
				key := name + ":" + e.Name
				if i > 0 {
					key += ":folded"
				}
				got[key] = countLoads(asm)
				keys = append(keys, key)
			}
		}
	}
	sort.Strings(keys)
	path := os.Getenv("ACCEL_TEST_LOADS_FILE")
	if os.Getenv("ACCEL_UPDATE_AMD_LOADS") == "1" {
		var b strings.Builder
		fmt.Fprintf(&b, "# TestVulkanAMDLoads (host/kernels/amdloads_test.go): a pipeline's loads from device memory and\n")
		fmt.Fprintf(&b, "# its round trips (waits that find loads in flight), on RADV's null %s with\n", amdLoadsFamily)
		fmt.Fprintf(&b, "driver %s\n", c.Driver)
		for _, k := range keys {
			fmt.Fprintf(&b, "%s loads=%d waits=%d\n", k, got[k].loads, got[k].waits)
		}
		require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
		t.Logf("amd_loads: wrote %s (%d pipelines)", path, len(keys))
		return
	}
	driver, want, err := readLoads(path)
	require.NoError(t, err, "%s (ACCEL_UPDATE_AMD_LOADS=1 writes it)", path)
	for _, k := range keys {
		t.Logf("amd_loads: %-48s loads %4d round trips %4d (recorded %d)", k, got[k].loads, got[k].waits, want[k].waits)
	}
	if driver != c.Driver {
		t.Logf("amd_loads: taken with RADV %q, this is %q: nothing checked (ACCEL_UPDATE_AMD_LOADS=1 takes it anew)", driver, c.Driver)
		return
	}
	for _, k := range keys {
		w, ok := want[k]
		if !assert.True(t, ok, "%s: not in %s (ACCEL_UPDATE_AMD_LOADS=1 adds it)", k, path) {
			continue
		}
		assert.LessOrEqual(t, got[k].waits, w.waits, "%s: %d round trips to memory where %s has %d: a wait came between loads that went out together (the disassembly: ACCEL_VK_DUMP=DIR)", k, got[k].waits, path, w.waits)
		if got[k].waits < w.waits {
			t.Logf("amd_loads: %s: %d round trips, fewer than the %d recorded (ACCEL_UPDATE_AMD_LOADS=1 records them)", k, got[k].waits, w.waits)
		}
	}
	for k := range want {
		assert.Contains(t, got, k, "%s in %s: no such pipeline built", k, path)
	}
}

// fileDecl is the kernel file named name, or nil.
func fileDecl(name string) *host.FileDecl {
	for _, f := range kernels.Files {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// loadCount is a pipeline's loads from device memory and the waits for
// them.
type loadCount struct {
	loads, waits int
}

var (
	// vmLoadRE: the instructions that return data from device memory
	// through the vector memory counter (RDNA 3: global, buffer, flat and
	// scratch loads, and atomics that return the old value)
	vmLoadRE = regexp.MustCompile(`^\s*(global_load|buffer_load|flat_load|scratch_load|global_atomic\S*\s.*\b(glc|sc0)\b|buffer_atomic\S*\s.*\b(glc|sc0)\b)`)
	// vmWaitRE: a wait on the vector memory counter (vmcnt(N): until at
	// most N loads are in flight)
	vmWaitRE = regexp.MustCompile(`^\s*s_waitcnt\b.*\bvmcnt\((\d+)\)`)
)

// countLoads reads a disassembly straight through (a loop's body once,
// both sides of a branch) as a lane would run it if every load took one
// round trip to memory and nothing else took time: a load leaves at the
// lane's time so far, loads come back in the order they left (the vector
// memory counter counts them so), and a wait (vmcnt(N): until at most N
// are in flight) moves the lane's time to one round trip after the
// newest load it waits for left. The lane's time at the end is the
// round trips one after another; loads that left together cost one.
func countLoads(asm string) loadCount {
	var c loadCount
	var inflight []int // the time each load in flight left, oldest first
	now := 0
	sc := bufio.NewScanner(strings.NewReader(asm))
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if vmLoadRE.MatchString(line) {
			c.loads++
			inflight = append(inflight, now)
			continue
		}
		if m := vmWaitRE.FindStringSubmatch(line); m != nil {
			n, _ := strconv.Atoi(m[1])
			for len(inflight) > n {
				now = max(now, inflight[0]+1)
				inflight = inflight[1:]
			}
		}
	}
	c.waits = now
	return c
}

// readLoads reads amdLoadsFile: the driver it was taken with and each
// pipeline's counts.
func readLoads(path string) (string, map[string]loadCount, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", nil, err
	}
	driver := ""
	out := map[string]loadCount{}
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "#") || strings.TrimSpace(l) == "" {
			continue
		}
		if d, ok := strings.CutPrefix(l, "driver "); ok {
			driver = d
			continue
		}
		var key string
		var c loadCount
		if _, err := fmt.Sscanf(l, "%s loads=%d waits=%d", &key, &c.loads, &c.waits); err != nil {
			return "", nil, fmt.Errorf("%s: %q: %w", path, l, err)
		}
		out[key] = c
	}
	return driver, out, nil
}
