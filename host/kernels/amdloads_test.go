package kernels_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
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
		// loaded after the ranking
		kpt := int64(8)
		if strings.HasPrefix(v, "k64") {
			kpt = 7
		}
		return 512, map[string]int64{"RADIX_BITS": 8, "RADIX_KPT": kpt, "RADIX_SWEEP": 1, "RADIX_EW": 1, "RADIX_SGS": 8,
			"RADIX_SPIN": 16384, "RADIX_LATE": 1, "RADIX_SKIP": 1}, nil
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
		fmt.Fprintf(&b, "# its round trips (waits that find loads in flight) read straight through and on its longest\n")
		fmt.Fprintf(&b, "# path (countLoads), on RADV's null %s with\n", amdLoadsFamily)
		fmt.Fprintf(&b, "driver %s\n", c.Driver)
		for _, k := range keys {
			fmt.Fprintf(&b, "%s loads=%d waits=%d path=%d\n", k, got[k].loads, got[k].waits, got[k].path)
		}
		require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
		t.Logf("amd_loads: wrote %s (%d pipelines)", path, len(keys))
		return
	}
	driver, want, err := readLoads(path)
	require.NoError(t, err, "%s (ACCEL_UPDATE_AMD_LOADS=1 writes it)", path)
	for _, k := range keys {
		t.Logf("amd_loads: %-48s loads %4d round trips %4d (recorded %d), on the longest path %4d (recorded %d)",
			k, got[k].loads, got[k].waits, want[k].waits, got[k].path, want[k].path)
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
		assert.LessOrEqual(t, got[k].path, w.path, "%s: %d round trips on the longest path where %s has %d (the disassembly: ACCEL_VK_DUMP=DIR)", k, got[k].path, path, w.path)
		if got[k].waits < w.waits || got[k].path < w.path {
			t.Logf("amd_loads: %s: %d round trips (%d on the longest path), fewer than the %d (%d) recorded (ACCEL_UPDATE_AMD_LOADS=1 records them)",
				k, got[k].waits, got[k].path, w.waits, w.path)
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
// them: read straight through (waits) and along the longest path of its
// control flow (path).
type loadCount struct {
	loads, waits, path int
}

var (
	// vmLoadRE: the instructions that return data from device memory
	// through the vector memory counter (RDNA 3: global, buffer, flat and
	// scratch loads, and atomics that return the old value)
	vmLoadRE = regexp.MustCompile(`^\s*(global_load|buffer_load|flat_load|scratch_load|global_atomic\S*\s.*\b(glc|sc0)\b|buffer_atomic\S*\s.*\b(glc|sc0)\b)`)
	// vmWaitRE: a wait on the vector memory counter (vmcnt(N): until at
	// most N loads are in flight)
	vmWaitRE = regexp.MustCompile(`^\s*s_waitcnt\b.*\bvmcnt\((\d+)\)`)
	// blockRE: a basic block's label; branchRE: a jump (s_branch) or a
	// conditional one (s_cbranch_*) to a block; endRE: the program's end
	blockRE  = regexp.MustCompile(`^(BB\d+):`)
	branchRE = regexp.MustCompile(`^\s*(s_branch|s_cbranch_\w+)\s+(BB\d+)\b`)
	endRE    = regexp.MustCompile(`^\s*s_endpgm\b`)
)

// laneTime is a lane's time in round trips and the times its loads in
// flight left, oldest first (countLoads).
type laneTime struct {
	now      int
	inflight []int
}

// A line's event for countLoads: a load (loadEvent), a wait until at most
// N loads are in flight (N >= 0), or nothing (noEvent).
const (
	loadEvent = -1
	noEvent   = -2
)

// lineEvent reads one line of a disassembly.
func lineEvent(line string) int {
	if vmLoadRE.MatchString(line) {
		return loadEvent
	}
	if m := vmWaitRE.FindStringSubmatch(line); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return noEvent
}

// step runs one event on t: a load leaves at the lane's time; a wait
// (vmcnt(N)) moves the time to one round trip after the newest load it
// waits for left.
func (t *laneTime) step(e int) {
	switch {
	case e == loadEvent:
		t.inflight = append(t.inflight, t.now)
	case e >= 0:
		for len(t.inflight) > e {
			t.now = max(t.now, t.inflight[0]+1)
			t.inflight = t.inflight[1:]
		}
	}
}

// countLoads reads a disassembly as a lane would run it if every load
// took one round trip to memory and nothing else took time: a load leaves
// at the lane's time so far, loads come back in the order they left (the
// vector memory counter counts them so), and a wait (vmcnt(N): until at
// most N are in flight) moves the lane's time to one round trip after the
// newest load it waits for left; loads that left together cost one.
//
// waits reads the code straight through (a loop's body once, both sides
// of every branch): a sum over its paths, which catches a wait that
// comes back anywhere. path is the lane's time at the end of the longest
// path through its blocks (every branch's sides alternatives, a loop's
// body once: a jump back goes on to the block after it), the round trips
// a lane that takes the slowest way waits: the figure to read as a
// latency.
func countLoads(asm string) loadCount {
	var c loadCount
	var all laneTime
	type block struct {
		label  bool
		events []int    // its loads and waits (lineEvent), in order
		succ   []string // labels jumped to
		jump   bool     // ends in an unconditional jump
		end    bool     // ends the program
	}
	var blocks []*block
	index := map[string]int{}
	cur := &block{}
	blocks = append(blocks, cur)
	sc := bufio.NewScanner(strings.NewReader(asm))
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := blockRE.FindStringSubmatch(line); m != nil {
			if cur.label || len(cur.events) > 0 || len(cur.succ) > 0 || cur.end {
				cur = &block{}
				blocks = append(blocks, cur)
			}
			cur.label = true
			index[m[1]] = len(blocks) - 1
			continue
		}
		if cur.jump || cur.end { // code after a block's end before a label: its own block, reached by none
			cur = &block{}
			blocks = append(blocks, cur)
		}
		if e := lineEvent(line); e != noEvent {
			cur.events = append(cur.events, e)
			all.step(e)
			if e == loadEvent {
				c.loads++
			}
		} else if m := branchRE.FindStringSubmatch(line); m != nil {
			cur.succ = append(cur.succ, m[2])
			cur.jump = m[1] == "s_branch"
		} else if endRE.MatchString(line) {
			cur.end = true
		}
	}
	c.waits = all.now
	// The longest path: the blocks in their order, each with the lane
	// times that reach it (the slowest few, duplicates merged).
	const keep = 32
	in := make([][]laneTime, len(blocks))
	in[0] = []laneTime{{}}
	add := func(j int, t laneTime) {
		for _, u := range in[j] {
			if u.now == t.now && slices.Equal(u.inflight, t.inflight) {
				return
			}
		}
		in[j] = append(in[j], t)
		if len(in[j]) > keep {
			sort.SliceStable(in[j], func(a, b int) bool { return in[j][a].now > in[j][b].now })
			in[j] = in[j][:keep]
		}
	}
	for i, b := range blocks {
		for _, t := range in[i] {
			t.inflight = slices.Clone(t.inflight)
			for _, e := range b.events {
				t.step(e)
			}
			c.path = max(c.path, t.now)
			if b.end {
				continue
			}
			var next []int
			for _, s := range b.succ {
				if j, ok := index[s]; ok && j > i {
					next = append(next, j)
				} else {
					next = append(next, i+1) // a jump back: the loop's body once, then on
				}
			}
			if !b.jump {
				next = append(next, i+1)
			}
			slices.Sort(next)
			for _, j := range slices.Compact(next) {
				if j < len(blocks) {
					add(j, t)
				}
			}
		}
	}
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
		if _, err := fmt.Sscanf(l, "%s loads=%d waits=%d path=%d", &key, &c.loads, &c.waits, &c.path); err != nil {
			return "", nil, fmt.Errorf("%s: %q: %w", path, l, err)
		}
		out[key] = c
	}
	return driver, out, nil
}

// TestCountLoads reads a small disassembly: a branch's two sides are
// alternatives on the longest path and both on the straight reading, and
// a loop's body counts once.
func TestCountLoads(t *testing.T) {
	const asm = `BB0:
	global_load_b32 v1, v0, s[0:1]
	global_load_b32 v4, v0, s[0:1]
	s_waitcnt vmcnt(0)
	s_cbranch_scc1 BB2
BB1:
	global_load_b32 v2, v0, s[0:1]
	s_waitcnt vmcnt(0)
	global_atomic_add_u32 v2, v0, v1, s[0:1] glc
	s_waitcnt vmcnt(0)
	s_branch BB3
BB2:
	global_load_b32 v2, v0, s[0:1]
	s_waitcnt vmcnt(0)
BB3:
	global_load_b32 v3, v0, s[0:1]
	global_atomic_add_u32 v0, v1, s[0:1]
	s_waitcnt vmcnt(0)
	s_cbranch_scc0 BB3
BB4:
	s_endpgm
`
	assert.Equal(t, loadCount{loads: 6, waits: 5, path: 4}, countLoads(asm))
}
