package kernels_test

import (
	"crypto/sha256"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelkern/accel/host"
	"github.com/accelkern/accel/host/kernels"
	"github.com/accelkern/accel/shaders"
)

// TestOfflineCompile is how the GPU compilers see the kernels on every
// commit, without a GPU: every OpenCL kernel variant is compiled by clang
// (Debian's clang-16) for NVIDIA (nvptx64-nvidia-nvcl, linked with
// libclc's builtins) and AMD (amdgcn-amd-amdhsa, gfx90a and gfx1100, with
// -nogpulib, linked with libclc's builtins) at -cl-std=CL1.2, with the
// options a GPU's OpenCL build gets (host.CLOptions: CPU_TRICKS=0, and
// float32 division through float64). Each variant is compiled to assembly
// at -O2 with the knobs of the GPU plans (AMD's with the chained scan
// its OpenCL plans take) and with those of the CPU plans
// (which tests force onto GPUs too), float32 variants also with their
// division in integers and the device's own (FDIV=2, 0), and, for
// NVIDIA, to LLVM IR at -O0
// once more for each value of each knob that selects code in the
// preprocessor (a knob only passed on as a value compiles the same code
// whatever it is; the front end's checks are OpenCL C's on both). Any
// error fails; so does any warning but the one justified below; an
// unresolved builtin (a PTX .extern function) fails too, and so does a
// work-item stack in NVIDIA's build of its plans (stackFunctions: local
// memory on the GPU) outside the CPU plans' functions, and in AMD's
// builds of its plans scratch memory or a call in a kernel outside the
// CPU plans' entries (amdKernelProblems). NVIDIA's own
// compiler refused what clang accepts once (__builtin_prefetch of a
// __global pointer in scatter.cl): TestNoBuiltinsOutsideTricks in
// clkernels keeps such tricks out of what GPUs compile.
func TestOfflineCompile(t *testing.T) {
	clang, err := exec.LookPath("clang-16")
	clc := "/usr/lib/clc"
	if err == nil {
		_, err = os.Stat(filepath.Join(clc, "nvptx64--nvidiacl.bc"))
	}
	if err != nil {
		if os.Getenv("CI") == "true" && os.Getenv("ACCEL_GPU_RUN") != "1" {
			require.NoError(t, err, "clang-16 and libclc-16 not found in CI (make deps installs them)")
		}
		t.Skipf("clang-16 and libclc-16 not found (%v): the offline GPU compiles run where make deps installed them", err)
	}
	type target struct {
		name, clc string
		nvidia    bool // built as for NVIDIA's OpenCL (NV_TRICKS=1: inline PTX)
	}
	targets := []target{
		{"nvptx64-nvidia-nvcl", "nvptx64--nvidiacl.bc", true},
		{"amdgcn-amd-amdhsa -mcpu=gfx90a -nogpulib", "amdgcn--amdhsa.bc", false},
		{"amdgcn-amd-amdhsa -mcpu=gfx1100 -nogpulib", "amdgcn--amdhsa.bc", false},
	}
	// A discrete GPU as CLOptions sees it: no CPU tricks, float32 division
	// correctly rounded by the device (what NVIDIA's OpenCL gets).
	gpu := host.Caps{Backend: host.OpenCL, Type: host.TypeDiscreteGPU, FP64: true, Int64: true, Int64Atomics: true,
		FP32Div: host.FP32DivNative}
	// NVIDIA's, whose builds get its PTX tricks (NV_TRICKS=1)
	nvidia := gpu
	nvidia.Vendor, nvidia.Platform = "NVIDIA Corporation", "NVIDIA CUDA OpenCL 3.0 CUDA 13.0.97"
	require.Contains(t, host.DeviceKnobs(nvidia, host.Variant{}), host.Knob{Name: "NV_TRICKS", Value: 1})
	dir := t.TempDir()

	// a job's salt is what its output is checked for besides errors and
	// warnings: checkNoStack, no function but stackAllowed's keeps a
	// work-item stack (PTX's __local_depot) and no kernel calls one of
	// ours; checkAMDKernels, no kernel but amdScratchAllowed's keeps
	// scratch or calls a function
	var jobs []offlineJob
	add := func(what string, args []string, check string) {
		jobs = append(jobs, offlineJob{what: what, args: args, salt: check})
	}
	srcs := writeCLSources(t, dir)
	for _, c := range srcs {
		f, src, path := c.file, c.src, c.path
		knobs := f.AllKnobs()
		for _, v := range c.variants {
			// NVIDIA's OpenCL plans (the chained scan on its tiles, the
			// few-targets count compiled in, 16 keys a lane), whose PTX
			// must keep every work-item's values in registers
			// (checkNoStack), and AMD's in place of the GPU plans (the
			// same, but the chained scan on its tiles), whose every
			// kernel must too, and call no function (checkAMDKernels)
			nv := maps.Clone(offlineGPUKnobs)
			maps.Copy(nv, map[string]int64{"CHAIN": 2, "SC_FEW": 16, "RADIX_KPT": 16})
			amd := maps.Clone(offlineGPUKnobs)
			amd["CHAIN"] = 2
			if f.Name == "scan" {
				nv["ITEMS"], amd["ITEMS"] = chainItems(v), chainItems(v)
			}
			profiles := []offlineProfile{
				{name: "gpu plans", div: host.FP32DivNative, local: 256, set: offlineGPUKnobs, vendor: vendorNVIDIA},
				{name: "AMD's plans", div: host.FP32DivNative, local: 256, set: amd, vendor: vendorAMD, check: checkAMDKernels},
				{name: "cpu plans", div: host.FP32DivNative, local: 1, set: map[string]int64{"CONTIG": 1, "ITEMS": 16, "STREAM": 1, "FLAT": 1, "CHAIN": 1,
					"RADIX_BITS": 11, "SC_FEW": 8, "SC_COUNTED": 0, "SC_RED": 1}},
				{name: "NVIDIA's plans", div: host.FP32DivNative, local: 256, set: nv, vendor: vendorNVIDIA, check: checkNoStack},
			}
			if v.Define("DT") == "3" { // float32 divides: the other way too
				profiles = append(profiles, offlineProfile{name: "gpu plans, integer division", div: host.FP32DivInteger, local: 256, set: offlineGPUKnobs})
			}
			for _, prof := range profiles {
				plan := host.Plan{LocalSize: prof.local, Groups: [3]int64{1, 1, 1}, Knobs: knobPlan(knobs, prof.set)}
				for _, tg := range targets {
					if prof.vendor != vendorAny && (prof.vendor == vendorNVIDIA) != tg.nvidia {
						continue
					}
					caps := gpu
					if tg.nvidia {
						caps = nvidia
					}
					caps.FP32Div = prof.div
					opts, err := host.CLOptions(caps, f.Name, v.Name, plan)
					require.NoError(t, err)
					add(fmt.Sprintf("%s.%s (%s) for %s", f.Name, v.Name, prof.name, tg.name),
						clangArgs(tg.name, filepath.Join(clc, tg.clc), opts, path, "-S", "-O2"), prof.check)
				}
			}
			// every value of every knob that selects code
			for _, k := range knobs {
				for _, val := range knobValues(src, k) {
					plan := host.Plan{LocalSize: 64, Groups: [3]int64{1, 1, 1}, Knobs: knobPlan(knobs, map[string]int64{k.Name: val})}
					opts, err := host.CLOptions(nvidia, f.Name, v.Name, plan)
					require.NoError(t, err)
					tg := targets[0] // the front end's checks are the targets' (both OpenCL C)
					add(fmt.Sprintf("%s.%s %s=%d for %s", f.Name, v.Name, k.Name, val, tg.name),
						clangArgs(tg.name, filepath.Join(clc, tg.clc), opts, path, "-S", "-emit-llvm", "-O0"), "")
				}
			}
		}
	}
	require.Greater(t, len(jobs), 400, "too few compiles: variants or knobs not found")

	version, err := exec.Command(clang, "--version").Output()
	require.NoError(t, err)
	cached, _ := runOffline(t, clang, version, dir, srcs, jobs, true, func(out string) []string { return []string{"-o", out} },
		func(i int, out string, log []byte) string {
			if len(log) > 0 {
				return "warnings"
			}
			asm, err := os.ReadFile(out)
			switch {
			case err == nil && strings.Contains(string(asm), ".extern .func"):
				return "an unresolved function (.extern .func) in the PTX"
			case err == nil && jobs[i].salt == checkNoStack:
				if fns := stackFunctions(string(asm)); len(fns) > 0 {
					return fmt.Sprintf("a work-item stack (local memory on a GPU: a private array indexed at a run-time slot, or spilled) in %v", fns)
				}
				if calls := ptxCalls(string(asm)); len(calls) > 0 {
					return fmt.Sprintf("calls of the kernels' own functions, which the compiler did not inline (mark them INLINE): %v", calls)
				}
			case err == nil && jobs[i].salt == checkAMDKernels:
				return amdKernelProblems(string(asm))
			}
			return ""
		})
	t.Logf("%d offline compiles for %d targets (%d passed before with the same source and arguments)", len(jobs), len(targets), cached)
}

// TestOfflineCompileIntel is how Intel's GPU compiler sees the kernels on
// every commit, without an Intel GPU: ocloc (Debian 12's intel-opencl-icd,
// whose runtime and compiler, IGC, Intel GPUs run the kernels with)
// compiles every OpenCL kernel file's every variant, all its entry points
// together, with the GPU plans' knobs and the options an Intel GPU's build
// gets (host.CLOptions; float32 variants also with their division in
// integers), for Arc (dg2, Xe-HPG) and Xe-LP (tgllp, the integrated
// GPUs), which have no float64, and the float64 variants for the Data
// Center GPU Max (pvc, Xe-HPC), which has it. Any error fails, and so does
// any message in the build log, and a kernel with scratch space or
// private memory (IGC's spills, or a private array indexed at a run-time
// slot) outside intelMemoryAllowed; a file that fails is
// compiled again an entry point at a time (-DACCEL_ONLY, as the host
// builds them), so the failure names the entry points that fail. IGC
// crashed compiling scatter_bfold (a CPU drivers' pass) until its first
// slot stopped being chosen by a test.
func TestOfflineCompileIntel(t *testing.T) {
	ocloc, err := exec.LookPath("ocloc")
	if err != nil {
		if os.Getenv("CI") == "true" && os.Getenv("ACCEL_GPU_RUN") != "1" {
			require.NoError(t, err, "ocloc not found in CI (make deps installs intel-opencl-icd)")
		}
		t.Skipf("ocloc not found (%v): Intel's offline GPU compiles run where make deps installed intel-opencl-icd", err)
	}
	// the compiler's version: the packages' where dpkg knows them, else
	// the tool's bytes
	version, err := exec.Command("dpkg-query", "-W", "intel-opencl-icd", "libigc1").Output()
	if err != nil {
		b, rerr := os.ReadFile(ocloc)
		require.NoError(t, rerr)
		sum := sha256.Sum256(b)
		version = sum[:]
	}
	type target struct {
		device string
		caps   host.Caps
		mem    bool // scratch and private memory checked (intelMemoryAllowed)
	}
	intel := host.Caps{Backend: host.OpenCL, Vendor: "Intel(R) Corporation", Platform: "Intel(R) OpenCL Graphics",
		Int64: true, Int64Atomics: true, FP32Div: host.FP32DivNative}
	arc, xelp, max := intel, intel, intel
	arc.Type, xelp.Type, max.Type = host.TypeDiscreteGPU, host.TypeIntegratedGPU, host.TypeDiscreteGPU
	max.FP64 = true
	// PVC's builds are not checked for scratch: at its default 128
	// registers a thread, IGC 1.0.12504 spills in several GPU kernels
	// (docs/gpu.md, session 23), and at 256 (-cl-intel-256-GRF-per-thread)
	// in none, a trade against its threads that only a PVC can measure
	targets := []target{{"dg2", arc, true}, {"tgllp", xelp, true}, {"pvc", max, false}}
	dir := t.TempDir()
	type build struct {
		file   *host.FileDecl
		path   string
		device string
		opts   string
		mem    bool
	}
	var builds []build
	var jobs []offlineJob
	var allowed []string
	for name := range intelMemoryAllowed {
		allowed = append(allowed, name)
	}
	sort.Strings(allowed)
	salt := fmt.Sprintf("scratch and private memory only in %v", allowed)
	srcs := writeCLSources(t, dir)
	for _, c := range srcs {
		f, path := c.file, c.path
		plan := host.Plan{LocalSize: 256, Groups: [3]int64{1, 1, 1}, Knobs: knobPlan(f.AllKnobs(), offlineGPUKnobs)}
		for _, v := range c.variants {
			divs := []host.FP32DivMode{host.FP32DivNative}
			if v.Define("DT") == "3" {
				divs = append(divs, host.FP32DivInteger)
			}
			for _, tg := range targets {
				if (v.Define("DT") == "4") != tg.caps.FP64 {
					continue // float64 where the GPU has it, the rest where it has not
				}
				for _, div := range divs {
					caps := tg.caps
					caps.FP32Div = div
					opts, err := host.CLOptions(caps, f.Name, v.Name, plan)
					require.NoError(t, err)
					builds = append(builds, build{f, path, tg.device, opts, tg.mem})
					jobs = append(jobs, offlineJob{what: fmt.Sprintf("%s.%s (float32 division %s) for %s", f.Name, v.Name,
						map[host.FP32DivMode]string{host.FP32DivNative: "the device's", host.FP32DivInteger: "in integers"}[div], tg.device),
						args: []string{"compile", "-q", "-file", path, "-device", tg.device, "-options", opts}, salt: map[bool]string{true: salt}[tg.mem]})
				}
			}
		}
	}
	require.Greater(t, len(jobs), 50, "too few compiles: variants not found")
	outArgs := func(out string) []string { return []string{"-out_dir", out} }
	// a build's check: nothing in its log, and where mem says so no
	// scratch or private memory outside intelMemoryAllowed
	check := func(mem func(i int) bool) func(i int, out string, log []byte) string {
		return func(i int, out string, log []byte) string {
			defer os.RemoveAll(out) // ocloc makes it again
			if len(log) > 0 {
				return "messages in the build log"
			}
			if !mem(i) {
				return ""
			}
			return intelMemoryProblems(out)
		}
	}
	cached, failed := runOffline(t, ocloc, version, dir, srcs, jobs, true, outArgs, check(func(i int) bool { return builds[i].mem }))
	t.Logf("%d offline compiles for %d Intel targets (%d passed before with the same source and arguments)", len(jobs), len(targets), cached)
	if len(failed) == 0 {
		return
	}
	// the first failing build's entry points one at a time, to name them
	b := builds[failed[0]]
	var one []offlineJob
	for _, e := range b.file.Entries {
		one = append(one, offlineJob{what: fmt.Sprintf("%s: entry point %s", jobs[failed[0]].what, e.CLName()),
			args: []string{"compile", "-q", "-file", b.path, "-device", b.device, "-options", b.opts + " -DACCEL_ONLY=" + e.CLName()},
			salt: map[bool]string{true: salt}[b.mem]})
	}
	runOffline(t, ocloc, version, dir, srcs, one, false, outArgs, check(func(int) bool { return b.mem }))
}

// intelMemoryProblems reads the one binary ocloc wrote into out and
// names its kernels that keep scratch space or private memory outside
// intelMemoryAllowed ("" for none).
func intelMemoryProblems(out string) string {
	bins, _ := filepath.Glob(filepath.Join(out, "*.bin"))
	if len(bins) != 1 {
		return fmt.Sprintf("ocloc wrote %d binaries, not one", len(bins))
	}
	ks, err := intelKernels(bins[0])
	if err != nil {
		return err.Error()
	}
	if len(ks) == 0 {
		return "no kernels in the binary"
	}
	var bad []string
	for _, k := range ks {
		if _, ok := intelMemoryAllowed[strings.TrimSuffix(k.name, "_k")]; (k.scratch > 0 || k.private > 0) && !ok {
			bad = append(bad, fmt.Sprintf("%s keeps %d bytes of scratch a thread and %d of private memory a work-item (spills, or a private array indexed at a run-time slot)",
				k.name, k.scratch, k.private))
		}
	}
	if len(bad) > 0 {
		return strings.Join(bad, "; ")
	}
	return ""
}

// intelMemoryAllowed are the entry points whose Intel builds may keep
// scratch space or private memory, each for its reason;
// TestOfflineCompileIntel fails any other. IGC puts a private array
// indexed at a run-time slot in private memory (Arc) or in scratch
// (Xe-LP), and spills to scratch; it reports both a kernel, so an entry
// point whose GPU plans keep their values in registers but which holds a
// CPU plan's function too is listed as a whole: the functions are those
// stackAllowed lets NVIDIA's builds keep a stack for.
var intelMemoryAllowed = map[string]string{
	"radix_count":   "the CPU plans' pass: each work-item's 2^bits counters",
	"radix_scatter": "the CPU plans' pass: each work-item's 2^bits counters",
	"scan_chain":    "scan_chain_cpu, the CPU plans' chained scan, in the same entry as the GPUs' (CHAIN, a run-time test)",
	"scan_fixup":    "scan_fixup_cpu, the same",
	"scatter_few":   "the CPU plans' few-targets pass (vector accumulators per target)",
	"scatter_bfold": "the CPU drivers' bucketed fold",
	"indice_search": "the rows layout (CPU drivers): a cursor per kernel plane",
	"indice_count":  "the rows layout (CPU drivers): a count per offset",
	"indice_crows":  "the rows layout (CPU drivers): a cursor per offset and the kernel's valid indices",
	"indice_expand": "the sorted sites' cursors per offset (the GPUs' fallback where the sites' hash table fails), cleared only where it merges",
}

// intelKernel is what an Intel GPU binary says of one kernel: its name,
// its scratch space a thread (IGC's spills, both slots) and its private
// memory a work-item.
type intelKernel struct {
	name             string
	scratch, private uint32
}

// intelKernels reads the kernels of an ocloc binary: an ELF file whose
// section "Intel(R) OpenCL Device Binary" holds the program's header (7
// words: magic, version, device, pointer size, kernels, stepping, patch
// list size) and its patch list, then each kernel's header (a checksum, a
// 64-bit hash, then 7 words: name size, patch list size and the kernel,
// general, dynamic and surface state heaps' sizes, unpadded size), its
// name, heaps and patch list of tokens (a word each of token and size):
// MEDIA_VFE_STATE (18) and its slot 1 (55) with the scratch space a
// thread at byte 12, ALLOCATE_STATELESS_PRIVATE_MEMORY (38) with the
// private memory a work-item at byte 20 (IGC's patch_list.h).
func intelKernels(path string) ([]intelKernel, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var d []byte
	for _, s := range f.Sections {
		if strings.HasPrefix(s.Name, "Intel(R) OpenCL Device Binary") {
			if d, err = s.Data(); err != nil {
				return nil, err
			}
		}
	}
	bad := fmt.Errorf("%s: not an Intel device binary that this test reads", path)
	u32 := func(p int) (uint32, bool) {
		if p < 0 || p+4 > len(d) {
			return 0, false
		}
		return binary.LittleEndian.Uint32(d[p:]), true
	}
	nk, ok1 := u32(16)
	pl, ok2 := u32(24)
	if !ok1 || !ok2 {
		return nil, bad
	}
	p := 28 + int(pl)
	var out []intelKernel
	for i := uint32(0); i < nk; i++ {
		var w [7]uint32
		for i := range w {
			v, ok := u32(p + 12 + 4*i)
			if !ok {
				return nil, bad
			}
			w[i] = v
		}
		p += 40
		if p+int(w[0]) > len(d) {
			return nil, bad
		}
		k := intelKernel{name: strings.TrimRight(string(d[p:p+int(w[0])]), "\x00")}
		p += int(w[0]) + int(w[2]) + int(w[3]) + int(w[4]) + int(w[5])
		for q := p; q < p+int(w[1]); {
			tok, ok1 := u32(q)
			size, ok2 := u32(q + 4)
			if !ok1 || !ok2 || size < 8 {
				return nil, bad
			}
			switch tok {
			case 18, 55:
				v, _ := u32(q + 12)
				k.scratch += v
			case 38:
				v, _ := u32(q + 20)
				k.private += v
			}
			q += int(size)
		}
		p += int(w[1])
		out = append(out, k)
	}
	return out, nil
}

// offlineGPUKnobs are the knobs of the GPU plans an offline compile
// builds with (the others at their defaults: knobPlan).
var offlineGPUKnobs = map[string]int64{"CONTIG": 0, "ITEMS": 4, "RADIX_BITS": 8, "RADIX_KPT": 8, "RADIX_SWEEP": 1, "RADIX_EW": 1, "RADIX_SGS": 8,
	"RADIX_LATE": 1, "RADIX_SKIP": 1}

// clSource is a kernel file's OpenCL source as an offline compile reads
// it: written to path, with the file's OpenCL variants in name order.
type clSource struct {
	file      *host.FileDecl
	src, path string
	variants  []host.Variant
}

// writeCLSources writes every kernel file's OpenCL source into dir and
// lists its variants that OpenCL builds (not the Vulkan-only STRICT and
// subgroup ones).
func writeCLSources(t *testing.T, dir string) []clSource {
	vs, err := host.Variants()
	require.NoError(t, err)
	var out []clSource
	for _, f := range kernels.Files {
		src, err := host.CLSource(f.Name)
		require.NoError(t, err)
		c := clSource{file: f, src: src, path: filepath.Join(dir, f.Name+".cl")}
		require.NoError(t, os.WriteFile(c.path, []byte(src), 0o644))
		var names []string
		for key, v := range vs {
			if v.File == f.Name && !v.Strict() && v.Define("SG") != "1" { // SG=1: Vulkan's subgroup builds
				names = append(names, key)
			}
		}
		sort.Strings(names)
		for _, key := range names {
			c.variants = append(c.variants, vs[key])
		}
		out = append(out, c)
	}
	return out
}

// offlineJob is one offline compile: what it is (for a failure's
// message), the compiler's arguments but its output, and what else its
// result depends on (salt: a check of the output).
type offlineJob struct {
	what string
	args []string
	salt string
}

// runOffline runs the compiles jobs of tool (whose version says which
// compiler it is) on every core, from the sources srcs (writeCLSources:
// an argument naming one counts as its text in the cache's digest), each
// with outArgs(out) naming its output (a file or folder of dir), and
// fails the test for each that
// fails, or whose output or log check (given the job's index, its output
// and log; "" for none) finds a problem, with first stopping at the
// first. A compile that passed is remembered by the digest of the tool's
// version, its arguments and its sources (in the user cache directory, as
// go test's own cache; ACCEL_OFFLINE_CACHE=0 leaves it out), so a rerun
// compiles only what changed. It returns how many passed before, and the
// jobs that failed.
func runOffline(t *testing.T, tool string, version []byte, dir string, srcs []clSource, jobs []offlineJob, first bool, outArgs func(out string) []string,
	check func(i int, out string, log []byte) string) (int, []int) {
	cacheDir := ""
	if d, err := os.UserCacheDir(); err == nil && os.Getenv("ACCEL_OFFLINE_CACHE") != "0" {
		cacheDir = filepath.Join(d, "accel", "offline-compile")
		_ = os.MkdirAll(cacheDir, 0o755)
	}
	sources := map[string]string{}
	for _, c := range srcs {
		sources[c.path] = c.src
	}
	key := func(j offlineJob) string {
		h := sha256.New()
		h.Write(version)
		for _, a := range j.args {
			if src, ok := sources[a]; ok {
				fmt.Fprintf(h, "source %x\n", sha256.Sum256([]byte(src)))
				continue
			}
			fmt.Fprintf(h, "%q\n", a)
		}
		if j.salt != "" {
			fmt.Fprintf(h, "%s\n", j.salt)
		}
		return hex.EncodeToString(h.Sum(nil))
	}
	cached := 0
	var failed []int
	var mu sync.Mutex
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < runtime.NumCPU(); w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			out := filepath.Join(dir, fmt.Sprintf("out%d", w))
			for i := range next {
				j := jobs[i]
				done := ""
				if cacheDir != "" {
					done = filepath.Join(cacheDir, key(j))
					if _, err := os.Stat(done); err == nil {
						mu.Lock()
						cached++
						mu.Unlock()
						continue
					}
				}
				log, err := exec.Command(tool, append(slices.Clone(j.args), outArgs(out)...)...).CombinedOutput()
				problem := ""
				if err != nil {
					problem = fmt.Sprintf("%v", err)
				} else {
					problem = check(i, out, log)
				}
				if problem != "" {
					mu.Lock()
					failed = append(failed, i)
					t.Errorf("%s: %s\n%s\n%s %s", j.what, problem, clip(string(log), 4000), tool, strings.Join(j.args, " "))
					mu.Unlock()
				} else if done != "" {
					_ = os.WriteFile(done, nil, 0o644)
				}
			}
		}(w)
	}
	for i := range jobs {
		mu.Lock()
		stop := first && len(failed) > 0
		mu.Unlock()
		if stop {
			break // one report is enough to act on
		}
		next <- i
	}
	close(next)
	wg.Wait()
	sort.Ints(failed)
	return cached, failed
}

// stackAllowed are the functions whose NVIDIA builds may keep a
// work-item stack, each for its reason; TestOfflineCompile fails any
// other function of NVIDIA's plans that does (stackFunctions). A private
// array indexed at a run-time slot lives in the stack, local memory on a
// GPU (a load or store through the caches each access, where registers
// cost nothing): the radix sort's look-back window, its tiles' keys in
// the raking rounds (loops that were not unrolled) and the hash probe's
// first probes did, until this check found them.
var stackAllowed = map[string]string{
	"radix_count":      "the CPU plans' pass: each work-item's 2^bits counters",
	"radix_scatter":    "the CPU plans' pass: each work-item's 2^bits counters",
	"scatter_few":      "the CPU plans' few-targets pass (vector accumulators per target)",
	"scan_chain_cpu":   "the CPU plans' chained scan (a vector's lanes through a private array)",
	"scan_fixup_cpu":   "the CPU plans' chained scan",
	"scan_chain_write": "the CPU plans' chained scan",
	"scan_tile_write":  "the CPU plans' chained scan",
	"indice_search":    "the rows layout (CPU drivers): a cursor per kernel plane",
	"indice_count":     "the rows layout (CPU drivers): a count per offset",
	"indice_crows":     "the rows layout (CPU drivers): a cursor per offset and the kernel's valid indices",
	"indice_expand":    "the sorted sites' cursors per offset (the GPUs' fallback where the sites' hash table fails), cleared only where it merges",
}

// The checks TestOfflineCompile makes of a compile's output besides its
// errors and warnings (each also salts the compile's cache key).
const (
	checkNoStack    = "no stack, no call"        // NVIDIA's PTX: stackFunctions, ptxCalls
	checkAMDKernels = "AMD: no scratch, no call" // AMD's code: amdKernelProblems
)

// chainItems is the ITEMS of the GPUs' chained scan for scan variant v,
// as planScanChainGPU gives it on NVIDIA's 48 KiB and AMD's 64 KiB of
// local memory: 128 bytes of elements a lane.
func chainItems(v host.Variant) int64 {
	if strings.HasSuffix(v.Name, "64") {
		return 16
	}
	return 32
}

// amdScratchAllowed says whether AMD builds of entry point fn (its
// function's name) may keep scratch memory: intelMemoryAllowed's entries,
// for the same reasons, but the chained scan's, whose GPU code AMD's plans
// compile in alone (CHAIN=2).
func amdScratchAllowed(fn string) bool {
	_, ok := intelMemoryAllowed[fn]
	return ok && fn != "scan_chain" && fn != "scan_fixup"
}

// amdKernelProblems names the kernels of AMD GPU assembly asm (clang's,
// amdgcn-amd-amdhsa) that keep scratch memory (a work-item's private
// segment: a private array indexed at a run-time slot, spills, or the
// registers a call saves) or call a function (s_swappc_b64: a helper the
// compiler did not inline, which also makes the kernel assume the
// calling convention's registers), less amdScratchAllowed's; "" for none.
// AMD's compiler, like this clang, leaves a large helper with external
// linkage (every OpenCL C function but a kernel) a call: in the sort's
// 64-bit sweep that cost 120 bytes of scratch and 44 registers of
// spills a lane, until the helpers the kernels call were marked INLINE.
func amdKernelProblems(asm string) string {
	descRE := regexp.MustCompile(`(?ms)^\s*\.amdhsa_kernel (\w+)$(.*?)^\s*\.end_amdhsa_kernel`)
	privRE := regexp.MustCompile(`\.amdhsa_private_segment_fixed_size (\d+)`)
	var bad []string
	descs := descRE.FindAllStringSubmatch(asm, -1)
	for _, d := range descs {
		name := d[1]
		scratch := 0
		if m := privRE.FindStringSubmatch(d[2]); m != nil {
			scratch, _ = strconv.Atoi(m[1])
		}
		calls := 0
		if i := strings.Index(asm, "\n"+name+":"); i >= 0 {
			body := asm[i:]
			if j := strings.Index(body, ".Lfunc_end"); j >= 0 {
				body = body[:j]
			}
			calls = strings.Count(body, "s_swappc_b64")
		}
		if (scratch > 0 || calls > 0) && !amdScratchAllowed(strings.TrimSuffix(name, "_k")) {
			bad = append(bad, fmt.Sprintf("%s keeps %d bytes of scratch a work-item and makes %d calls", name, scratch, calls))
		}
	}
	if len(descs) == 0 {
		return "no kernel descriptor (.amdhsa_kernel) found in AMD's assembly"
	}
	return strings.Join(bad, "; ")
}

// ptxFunction is one function of PTX assembly: whether it is a kernel
// (.entry), its name and its text from its header to the next function's.
type ptxFunction struct {
	entry      bool
	name, text string
}

// ptxFunctions splits PTX asm into its functions.
func ptxFunctions(asm string) []ptxFunction {
	fnRE := regexp.MustCompile(`(?m)^\.(?:visible \.)?(entry|func)\s+(?:\([^)]*\)\s*)?(\w+)\(`)
	locs := fnRE.FindAllStringSubmatchIndex(asm, -1)
	out := make([]ptxFunction, len(locs))
	for i, l := range locs {
		end := len(asm)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		out[i] = ptxFunction{entry: asm[l[2]:l[3]] == "entry", name: asm[l[4]:l[5]], text: asm[l[0]:end]}
	}
	return out
}

// stackFunctions are the functions of PTX asm that keep a work-item stack
// (a __local_depot), less stackAllowed's (each kernel's entry _k as its
// body's name).
func stackFunctions(asm string) []string {
	var out []string
	for _, f := range ptxFunctions(asm) {
		if !strings.Contains(f.text, "__local_depot") {
			continue
		}
		if _, ok := stackAllowed[strings.TrimSuffix(f.name, "_k")]; !ok {
			out = append(out, f.name)
		}
	}
	return out
}

// ptxCalls are the calls in PTX asm's kernels (.entry) of the kernels'
// own functions, as "kernel -> function" (libclc's built-ins, C++-mangled
// names, are left out: NVIDIA's compiler has its own). Every OpenCL C
// function but a kernel has external linkage, so clang's inliner (and
// NVIDIA's, an LLVM too) may leave a large helper with one caller a call:
// a call through PTX's parameter space, with the callee compiled for any
// caller. The kernels' bodies and their large helpers are INLINE.
func ptxCalls(asm string) []string {
	callRE := regexp.MustCompile(`call(?:\.uni)?\s*(?:\([^)]*\),\s*)?(\w+),`)
	var out []string
	for _, f := range ptxFunctions(asm) {
		if !f.entry {
			continue
		}
		for _, c := range callRE.FindAllStringSubmatch(f.text, -1) {
			if !strings.HasPrefix(c[1], "_Z") {
				out = append(out, f.name+" -> "+c[1])
			}
		}
	}
	return out
}

func TestPTXFunctions(t *testing.T) {
	asm := ".visible .entry k_k(\n\t.local .align 8 .b8 __local_depot0[8];\n\tcall.uni \n\thelper, \n\t(\n\tparam0\n\t);\n\tcall.uni \n\t_Z3foov, \n\t(\n\t);\n}\n" +
		".func  (.param .b64 func_retval0) helper(\n\tret;\n}\n"
	fs := ptxFunctions(asm)
	require.Len(t, fs, 2)
	assert.Equal(t, ptxFunction{entry: true, name: "k_k", text: fs[0].text}, fs[0])
	assert.Equal(t, "helper", fs[1].name)
	assert.False(t, fs[1].entry)
	assert.Equal(t, []string{"k_k"}, stackFunctions(asm))
	assert.Equal(t, []string{"k_k -> helper"}, ptxCalls(asm))
}

// offlineProfile is a device's division, a plan's local size and knobs,
// the targets built with them and what their output is checked for.
type offlineProfile struct {
	name   string
	div    host.FP32DivMode
	local  int
	set    map[string]int64
	vendor int    // the targets built: vendorAny, vendorNVIDIA, vendorAMD
	check  string // what the output is checked for: "", checkNoStack, checkAMDKernels
}

// The targets an offlineProfile builds for.
const (
	vendorAny = iota
	vendorNVIDIA
	vendorAMD
)

// clangArgs are clang's arguments for an OpenCL build with options opts
// (host.CLOptions) of src for target (triple and flags), linked with the
// libclc builtins clc.
//
// The one warning silenced, -Wlinker-warnings, is libclc's triple: its
// bitcode says nvptx64-unknown-nvidiacl and amdgcn-unknown-amdhsa, the
// same targets as nvptx64-nvidia-nvcl and amdgcn-amd-amdhsa spelled with
// another vendor field, and clang warns that the two modules' triples
// differ.
func clangArgs(target, clc, opts, src string, mode ...string) []string {
	args := append([]string{"-target"}, strings.Fields(target)...)
	args = append(args, strings.Fields(opts)...)
	// the extensions the devices running these variants announce (H100:
	// all three), which clang's targets leave off by default
	args = append(args, "-Xclang", "-cl-ext=+cl_khr_fp64,+cl_khr_int64_base_atomics,+cl_khr_int64_extended_atomics")
	args = append(args, "-Xclang", "-mlink-builtin-bitcode", "-Xclang", clc, "-Wno-linker-warnings")
	args = append(args, mode...)
	return append(args, src)
}

// knobPlan is every declared knob at its default (a folded argument's -1
// compiled in as the run-time value), but those set.
func knobPlan(decl []host.KnobDecl, set map[string]int64) []host.Knob {
	var out []host.Knob
	for _, k := range decl {
		v := k.Default
		if s, ok := set[k.Name]; ok {
			v = s
		}
		out = append(out, host.Knob{Name: k.Name, Value: v})
	}
	return out
}

// ppRE finds preprocessor conditionals.
var ppRE = regexp.MustCompile(`(?m)^[ \t]*#[ \t]*(if|ifdef|ifndef|elif)\b.*$`)

// knobValues are the values of knob k a compile should try in source src:
// none where no preprocessor conditional reads it (its value only flows
// into expressions, so every value compiles the same code), else the
// values that select each branch (folded arguments: the run-time value
// and the codes 0..5, which cover every code group's and boolean's
// values).
func knobValues(src string, k host.KnobDecl) []int64 {
	word := regexp.MustCompile(`\b` + regexp.QuoteMeta(k.Name) + `\b`)
	used := false
	for _, line := range ppRE.FindAllString(src, -1) {
		used = used || word.MatchString(line)
	}
	if !used {
		return nil
	}
	vals := map[string][]int64{
		"ITEMS": {1, 4, 16}, "RADIX_BITS": {4, 8, 11}, "RADIX_KPT": {0, 4}, "RADIX_EW": {1}, "SPIN": {16384}, "PROBE_K": {7},
		"SC_FEW": {-1, 1, 8, 16}, "SCAN_SG": {0},
	}[k.Name]
	if vals == nil {
		vals = []int64{0, 1}
		if k.Default < 0 {
			vals = []int64{-1, 0, 1, 2, 3, 4, 5}
		}
	}
	return slices.DeleteFunc(vals, func(v int64) bool { return v == k.Default && v != -1 })
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// TestOfflineNVTricks: NVIDIA's OpenCL builds of the native-add scatter
// variants (FADD=1) add floats with PTX's red.global.add
// (device_tricks.h, NV_TRICKS=1), where NVIDIA offers no
// cl_ext_float_atomics; another GPU's builds keep the compare-and-swap
// loop (atom.cas in PTX). Checked in clang's PTX for the nvptx target.
func TestOfflineNVTricks(t *testing.T) {
	clang, err := exec.LookPath("clang-16")
	clc := "/usr/lib/clc/nvptx64--nvidiacl.bc"
	if err == nil {
		_, err = os.Stat(clc)
	}
	if err != nil {
		if os.Getenv("CI") == "true" && os.Getenv("ACCEL_GPU_RUN") != "1" {
			require.NoError(t, err, "clang-16 and libclc-16 not found in CI (make deps installs them)")
		}
		t.Skipf("clang-16 and libclc-16 not found (%v)", err)
	}
	src, err := host.CLSource("scatter")
	require.NoError(t, err)
	dir := t.TempDir()
	path := filepath.Join(dir, "scatter.cl")
	require.NoError(t, os.WriteFile(path, []byte(src), 0o644))
	other := host.Caps{Backend: host.OpenCL, Type: host.TypeDiscreteGPU, FP64: true, Int64: true, Int64Atomics: true,
		FP32Div: host.FP32DivNative, Vendor: "Another GPU vendor", Platform: "Another OpenCL 3.0"}
	nvidia := other
	nvidia.Vendor, nvidia.Platform = "NVIDIA Corporation", "NVIDIA CUDA OpenCL 3.0 CUDA 13.0.97"
	for _, v := range []struct{ variant, red string }{{"f32a", "atom.global.add.f32"}, {"f64a", "red.global.add.f64"}} {
		for _, c := range []host.Caps{nvidia, other} {
			plan := host.Plan{LocalSize: 256, Groups: [3]int64{1, 1, 1}}
			opts, err := host.CLOptions(c, "scatter", v.variant, plan)
			require.NoError(t, err)
			out := filepath.Join(dir, v.variant+".ptx")
			log, err := exec.Command(clang, append(clangArgs("nvptx64-nvidia-nvcl", clc, opts+" -DACCEL_ONLY=scatter_reduce_k",
				path, "-S", "-O2"), "-o", out)...).CombinedOutput()
			require.NoError(t, err, "%s for %s: %s", v.variant, c.Vendor, log)
			require.Empty(t, string(log), "%s for %s: warnings", v.variant, c.Vendor)
			ptx, err := os.ReadFile(out)
			require.NoError(t, err)
			if c.Vendor == nvidia.Vendor {
				assert.Contains(t, string(ptx), v.red, "%s for NVIDIA: PTX's float add", v.variant)
			} else {
				assert.NotContains(t, string(ptx), v.red, "%s for %s: PTX only for NVIDIA", v.variant, c.Vendor)
				// libclc's 64-bit compare-and-swap is a function of its own
				assert.True(t, strings.Contains(string(ptx), "atom.global.cas") || strings.Contains(string(ptx), "atom_cmpxchg"),
					"%s for %s: the compare-and-swap loop", v.variant, c.Vendor)
			}
		}
	}
	// the radix sort's ranking by subgroup ballots: the warp's votes
	// and barrier on NVIDIA (the knob RADIX_SGS picks it at run time)
	src, err = host.CLSource("radix")
	require.NoError(t, err)
	path = filepath.Join(dir, "radix.cl")
	require.NoError(t, os.WriteFile(path, []byte(src), 0o644))
	for _, c := range []host.Caps{nvidia, other} {
		plan := host.Plan{LocalSize: 256, Groups: [3]int64{1, 1, 1}, Knobs: []host.Knob{host.KnobRadixBits.Set(8), host.KnobRadixKpt.Set(16),
			host.KnobRadixSweep.Set(1), host.KnobRadixSgs.Set(8), host.KnobRadixEw.Set(1)}}
		opts, err := host.CLOptions(c, "radix", "k32", plan)
		require.NoError(t, err)
		out := filepath.Join(dir, "radix.ptx")
		log, err := exec.Command(clang, append(clangArgs("nvptx64-nvidia-nvcl", clc, opts+" -DACCEL_ONLY=radix_sweep_k",
			path, "-S", "-O2"), "-o", out)...).CombinedOutput()
		require.NoError(t, err, "radix for %s: %s", c.Vendor, log)
		require.Empty(t, string(log), "radix for %s: warnings", c.Vendor)
		ptx, err := os.ReadFile(out)
		require.NoError(t, err)
		for _, op := range []string{"vote.sync.ballot.b32", "bar.warp.sync", "%lanemask_lt", "%laneid"} {
			if c.Vendor == nvidia.Vendor {
				assert.Contains(t, string(ptx), op, "radix for NVIDIA: the warp's votes")
			} else {
				assert.NotContains(t, string(ptx), op, "radix for %s: PTX only for NVIDIA", c.Vendor)
			}
		}
	}
}

// stackAllowedModule says whether SPIR-V module m is one entry point's
// (file.variant.eI, a file built as a module per entry point) that
// stackAllowed lets keep a stack, for the same reason as its OpenCL build.
func stackAllowedModule(m string) bool {
	parts := strings.Split(m, ".")
	if len(parts) != 3 || !strings.HasPrefix(parts[2], "e") {
		return false
	}
	i, err := strconv.Atoi(parts[2][1:])
	if err != nil {
		return false
	}
	for _, f := range kernels.Files {
		if f.Name == parts[0] && f.ModulePerEntry && i >= 0 && i < len(f.Entries) {
			_, ok := stackAllowed[f.Entries[i].Func()]
			return ok
		}
	}
	return false
}

// spirvFewArrays are the modules whose arrays of kernels.ScFewMax
// elements (and only those) may be indexed at a run-time slot: the
// few-targets passes' accumulators per target, the CPU plans'
// (scatter_few) and the GPU pass's registers, which Vulkan's plan keeps
// in scratch columns instead (SC_FEWG_SH).
const spirvFewArrays = "scatter."

// TestSPIRVNoStack: a function-scope array that a shader indexes at a
// slot known only at run time lives in the invocation's stack, local
// memory on a GPU (a load or store through the caches at every access,
// where registers cost nothing); the hash probe's batch and the copy's
// were, until this check. It reads every committed module (spirv-dis) and
// fails such an array outside the entry points stackAllowed lists (the
// rows layout's cursors: stackAllowedModule), and in spirvFewArrays' of
// any length but kernels.ScFewMax. Arrays whose length is a
// specialization constant are not counted: their loops run to the same
// constant and carry the Unroll hint (portable.h's UNROLL), which the
// driver takes once the constant is known (the radix sort's keys a lane).
// The OpenCL side is checked in NVIDIA's PTX (TestOfflineCompile).
func TestSPIRVNoStack(t *testing.T) {
	if _, err := exec.LookPath("spirv-dis"); err != nil {
		if os.Getenv("CI") == "true" && os.Getenv("ACCEL_GPU_RUN") != "1" {
			require.NoError(t, err, "spirv-dis not found in CI (make deps installs spirv-tools)")
		}
		t.Skip("spirv-dis not found: the committed SPIR-V is checked where make deps installed spirv-tools")
	}
	committed, err := fs.Glob(shaders.FS, "*.spv")
	require.NoError(t, err)
	require.NotEmpty(t, committed)
	dir := t.TempDir()
	for _, name := range committed {
		m := strings.TrimSuffix(name, ".spv")
		code, err := shaders.FS.ReadFile(name)
		require.NoError(t, err)
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, code, 0o644))
		out, err := exec.Command("spirv-dis", "--raw-id", path).CombinedOutput()
		require.NoError(t, err, "spirv-dis %s: %s", name, out)
		lens := spirvStackArrays(string(out))
		if stackAllowedModule(m) {
			continue
		}
		if strings.HasPrefix(m, spirvFewArrays) {
			lens = slices.DeleteFunc(lens, func(n int64) bool { return n == kernels.ScFewMax })
		}
		assert.Empty(t, lens, "shaders/%s indexes function-scope arrays (of these lengths) at a run-time slot (a stack: local memory on a GPU): index them at constant slots, or unroll their loops (UNROLL)", name)
	}
}

// spirvStackArrays are the lengths of the function-scope arrays of
// constant length in the module dis (spirv-dis --raw-id) that an access
// chain indexes with a value that is not a constant.
func spirvStackArrays(dis string) []int64 {
	consts := map[string]int64{} // integer constants, by id (-1: another kind)
	arrays := map[string]int64{} // array types of constant length
	ptrs := map[string]int64{}   // function pointers to them
	vars := map[string]int64{}
	for _, line := range strings.Split(dis, "\n") {
		f := strings.Fields(line)
		if len(f) < 3 || f[1] != "=" {
			continue
		}
		switch {
		case f[2] == "OpConstant":
			consts[f[0]] = -1
			if len(f) == 5 {
				if v, err := strconv.ParseInt(f[4], 10, 64); err == nil {
					consts[f[0]] = v
				}
			}
		case f[2] == "OpTypeArray" && len(f) == 5:
			if n, ok := consts[f[4]]; ok {
				arrays[f[0]] = n
			}
		case f[2] == "OpTypePointer" && len(f) == 5 && f[3] == "Function":
			if n, ok := arrays[f[4]]; ok {
				ptrs[f[0]] = n
			}
		case f[2] == "OpVariable" && len(f) >= 5 && f[4] == "Function":
			if n, ok := ptrs[f[3]]; ok {
				vars[f[0]] = n
			}
		}
	}
	dyn := map[string]bool{}
	var lens []int64
	for _, line := range strings.Split(dis, "\n") {
		f := strings.Fields(line)
		if len(f) < 6 || f[1] != "=" || f[2] != "OpAccessChain" && f[2] != "OpInBoundsAccessChain" {
			continue
		}
		n, isVar := vars[f[4]]
		if _, isConst := consts[f[5]]; isVar && !isConst && !dyn[f[4]] {
			dyn[f[4]] = true
			lens = append(lens, n)
		}
	}
	return lens
}
