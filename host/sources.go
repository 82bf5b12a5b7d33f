package host

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/accelkern/accel/clkernels"
	"github.com/accelkern/accel/shaders"
)

// Variant is one build of a kernel file: a FileDecl's variant, and a line
// of shaders/variants.txt (generated from the declarations).
type Variant struct {
	File    string // set by FileDecl.Init
	Name    string
	Defines []string // NAME=VALUE
}

// Strict reports whether v is a STRICT SPIR-V build of another variant
// (STRICT=1 or 2; Vulkan only; see StrictVariant).
func (v Variant) Strict() bool {
	return slices.Contains(v.Defines, "STRICT=1") || slices.Contains(v.Defines, "STRICT=2")
}

// Base returns the name of the variant a STRICT build stands in for
// ("f32" for "f32.strict", "f32.strictd" and "f32.strictf"), else v's own
// name.
func (v Variant) Base() string {
	return strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(v.Name, ".strictd"), ".strictf"), ".strict")
}

// Define returns the value of the define name in v, or "".
func (v Variant) Define(name string) string {
	for _, d := range v.Defines {
		if k, val, ok := strings.Cut(d, "="); ok && k == name {
			return val
		}
	}
	return ""
}

// StrictVariant returns the variant of file the Vulkan backend loads for
// variant on a device with caps: variant + ".strictd" where
// shaders/variants.txt lists one (a float32 build declaring
// SignedZeroInfNanPreserve and DenormPreserve) and the device offers both
// float controls; else variant + ".strictf" where it lists one (the
// float32 build declaring SignedZeroInfNanPreserve that keeps subnormals
// itself, DENORM_FIX=1: dtypes.h) and the device may flush them
// (denormFix); else variant + ".strict" where it lists one (declaring
// SignedZeroInfNanPreserve at its float width) and the device offers that;
// else variant (the plain build, which keeps subnormals itself too).
// ACCEL_VK_STRICT=0 keeps variant and ACCEL_VK_STRICT=1 stops short of
// ".strictd" (the tests run the builds on one device with them).
func StrictVariant(c Caps, file, variant string) string {
	vs, err := Variants()
	if err != nil {
		return variant
	}
	env := os.Getenv("ACCEL_VK_STRICT")
	sv, ok := vs[file+"."+variant+".strict"]
	if !ok || env == "0" {
		return variant
	}
	f64 := sv.Define("DT") == "4"
	if f64 && !c.FloatPreserve64 || !f64 && !c.FloatPreserve32 {
		return variant
	}
	if dv, ok := vs[file+"."+sv.Name+"d"]; ok && env != "1" && !f64 && c.DenormPreserve32 {
		return dv.Name
	}
	if fv, ok := vs[file+"."+sv.Name+"f"]; ok && !f64 && denormFix(c) {
		return fv.Name
	}
	return sv.Name
}

// DeviceKnobs returns the knobs a kernel of variant v for a device with
// caps is built with, whatever its plan: the device class's, not the
// op's (a plan that sets one of them wins: WithDeviceKnobs).
//   - CPU_TRICKS (OpenCL C): 1 on CPU drivers compiles in the tricks of
//     clkernels/common/device_tricks.h (non-temporal stores, prefetches,
//     clang's vector shuffles), 0 elsewhere: GPU compilers need not
//     accept them.
//   - FDIV, for float32 variants: how float32 divides (Caps.FP32Div,
//     dtypes.h's T_DIV): 0 the device's own division, 2 in integers.
func DeviceKnobs(c Caps, v Variant) []Knob {
	var k []Knob
	if c.Backend == OpenCL {
		cpu := int64(0)
		if c.Type == TypeCPU {
			cpu = 1
		}
		k = append(k, knobCPUTricks.Set(cpu))
		switch {
		case nvTricksEmulated():
			k = append(k, knobNVTricks.Set(2))
		case nvidiaGPU(c) && os.Getenv("ACCEL_NV_TRICKS") != "0":
			k = append(k, knobNVTricks.Set(1))
		}
	}
	if v.Define("DT") == "3" {
		fdiv := map[FP32DivMode]int64{FP32DivNative: 0, FP32DivDevice: 0, FP32DivInteger: 2}[c.FP32Div]
		k = append(k, KnobFdiv.Set(fdiv))
	}
	return k
}

// denormFix says whether a Vulkan device loads the float32 builds that
// keep subnormals themselves (V.strictf, DENORM_FIX=1: sums, products and
// comparisons redone on the bits where a subnormal is at stake, dtypes.h)
// rather than the V.strict ones: Vulkan devices that do not promise to
// keep subnormals (no DenormPreserve: NVIDIA's compiler flushed them, and
// an H200's bit-reproducible product gave -0 for -1.47e-43), but not
// lavapipe, which makes no promise and keeps them (its host CPU's float
// units; the subnormal cases of the tests check it), and whose pipelines
// took twice as long to create with the fix's code in. ACCEL_DENORM_FIX=1
// says yes on any device, =0 no (the tests load the builds on lavapipe).
func denormFix(c Caps) bool {
	switch os.Getenv("ACCEL_DENORM_FIX") {
	case "1":
		return true
	case "0":
		return false
	}
	return c.Backend == Vulkan && !c.DenormPreserve32 && c.Type != TypeCPU
}

// knobCPUTricks is the device knob CPU_TRICKS, which every OpenCL build
// gets (DeviceKnobs) and no kernel file declares.
var knobCPUTricks = KnobKey{"CPU_TRICKS"}

// knobNVTricks is the device knob NV_TRICKS (device_tricks.h: PTX's
// float atomic add), which OpenCL builds for NVIDIA's GPUs get
// (DeviceKnobs; ACCEL_NV_TRICKS=0 turns it off, to compare, and
// ACCEL_NV_TRICKS=emulate sets 2 on any OpenCL device) and no kernel file
// declares.
var knobNVTricks = KnobKey{"NV_TRICKS"}

// nvidiaGPU says whether c is an NVIDIA GPU under NVIDIA's OpenCL, whose
// compiler takes inline PTX.
func nvidiaGPU(c Caps) bool {
	return c.Backend == OpenCL && c.Type != TypeCPU && strings.Contains(c.Vendor, "NVIDIA") &&
		strings.Contains(c.Platform, "NVIDIA")
}

// nvTricksEmulated says whether ACCEL_NV_TRICKS=emulate asks for NVIDIA's
// tricks emulated in OpenCL C with PTX's results (NV_TRICKS=2) on any
// OpenCL device: how the tests run NVIDIA's paths on PoCL.
func nvTricksEmulated() bool { return os.Getenv("ACCEL_NV_TRICKS") == "emulate" }

// withoutNVTricks returns OpenCL build options opts (CLOptions) with
// NVIDIA's PTX tricks off, and whether they were on: the build to try
// where a driver refuses them.
func withoutNVTricks(opts string) (string, bool) {
	on := "-D" + knobNVTricks.Name() + "=1"
	if !strings.Contains(opts, on) {
		return opts, false
	}
	return strings.Replace(opts, on, "-D"+knobNVTricks.Name()+"=0", 1), true
}

// WithDeviceKnobs returns the plan's knobs and, where the plan does not
// set them, the device's (DeviceKnobs).
func WithDeviceKnobs(c Caps, v Variant, plan []Knob) []Knob {
	out := append([]Knob(nil), plan...)
	for _, dk := range DeviceKnobs(c, v) {
		if !slices.ContainsFunc(plan, func(k Knob) bool { return k.Name == dk.Name }) {
			out = append(out, dk)
		}
	}
	return out
}

var (
	variantsOnce sync.Once
	variants     map[string]Variant
	variantsErr  error
)

// Variants returns the variants listed in shaders/variants.txt (which
// go generate ./host/kernels writes from the declarations), keyed by
// "file.variant".
func Variants() (map[string]Variant, error) {
	variantsOnce.Do(func() {
		data, err := shaders.FS.ReadFile("variants.txt")
		if err != nil {
			variantsErr = err
			return
		}
		variants = map[string]Variant{}
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			f := strings.Fields(line)
			if len(f) < 2 {
				variantsErr = fmt.Errorf("variants.txt: bad line %q", line)
				return
			}
			variants[f[0]+"."+f[1]] = Variant{File: f[0], Name: f[1], Defines: f[2:]}
		}
	})
	return variants, variantsErr
}

func lookupVariant(file, variant string) (Variant, error) {
	vs, err := Variants()
	if err != nil {
		return Variant{}, err
	}
	v, ok := vs[file+"."+variant]
	if !ok {
		return Variant{}, fmt.Errorf("kernel %s variant %q is not listed in shaders/variants.txt", file, variant)
	}
	return v, nil
}

var includeRE = regexp.MustCompile(`(?m)^[ \t]*#[ \t]*include[ \t]+"([^"]+)"[ \t]*$`)

// memo computes a value once per key, for sources and digests that never
// change while the process runs.
type memo[T any] struct {
	m sync.Map // key -> *memoEntry[T]
}

type memoEntry[T any] struct {
	once sync.Once
	v    T
	err  error
}

func (m *memo[T]) get(key string, f func() (T, error)) (T, error) {
	e, _ := m.m.LoadOrStore(key, &memoEntry[T]{})
	me := e.(*memoEntry[T])
	me.once.Do(func() { me.v, me.err = f() })
	return me.v, me.err
}

var (
	clSources memo[string]
	clDigests memo[string]
	spvCode   memo[[]byte]
)

// CLSource returns clkernels/FILE.cl with its #include "x.h" lines replaced
// by the headers from clkernels/common (each header once), so the program
// builds from memory on any driver. It is expanded once per process.
func CLSource(file string) (string, error) {
	return clSources.get(file, func() (string, error) { return expandCL(file) })
}

// clSourceDigest is the digest of CLSource(file), computed once.
func clSourceDigest(file string) (string, error) {
	return clDigests.get(file, func() (string, error) {
		src, err := CLSource(file)
		if err != nil {
			return "", err
		}
		return Hash([]byte(src)), nil
	})
}

func expandCL(file string) (string, error) {
	seen := map[string]bool{}
	var expand func(name string, data []byte) (string, error)
	expand = func(name string, data []byte) (string, error) {
		var err error
		out := includeRE.ReplaceAllStringFunc(string(data), func(m string) string {
			inc := includeRE.FindStringSubmatch(m)[1]
			p := path.Join("common", inc)
			if seen[p] {
				return "/* " + inc + " already included */"
			}
			seen[p] = true
			b, e := fs.ReadFile(clkernels.FS, p)
			if e != nil {
				err = fmt.Errorf("%s: include %q: %w", name, inc, e)
				return ""
			}
			s, e := expand(p, b)
			if e != nil {
				err = e
			}
			return s
		})
		return out, err
	}
	src, err := fs.ReadFile(clkernels.FS, file+".cl")
	if err != nil {
		return "", err
	}
	return expand(file+".cl", src)
}

// SPIRV returns the committed SPIR-V of entry point entry (its index in
// the file's declaration) of a kernel file's variant, read once per
// process: the entry's own module where the file has one per entry point
// (FileDecl.ModulePerEntry: FILE.VARIANT.eENTRY.spv), else the variant's,
// whose main calls the entry the specialization constant SpecEntry names.
func SPIRV(file, variant string, entry int) ([]byte, error) {
	if _, err := lookupVariant(file, variant); err != nil {
		return nil, err
	}
	name := fmt.Sprintf("%s.%s.e%d", file, variant, entry)
	if _, err := fs.Stat(shaders.FS, name+".spv"); err != nil {
		name = file + "." + variant // one module for every entry point
	}
	return spvCode.get(name, func() ([]byte, error) {
		code, err := shaders.FS.ReadFile(name + ".spv")
		if err == nil && (len(code) == 0 || len(code)%4 != 0) {
			err = fmt.Errorf("%s.spv: %d bytes is not a whole, non-zero number of words", name, len(code))
		}
		return code, err
	})
}

// CLOptions returns the OpenCL build options for a file's variant and a
// plan on a device with caps: -cl-fp32-correctly-rounded-divide-sqrt
// where the device offers it, the variant's defines, the local size, and
// the device's knobs (DeviceKnobs) and the plan's knobs as -D (sorted by
// name, so equal plans give equal options), and the plan's register cap
// where the device takes NVIDIA's options (Plan.MaxRegs, nvMaxRegOption).
func CLOptions(c Caps, file, variant string, plan Plan) (string, error) {
	v, err := lookupVariant(file, variant)
	if err != nil {
		return "", err
	}
	if v.Strict() {
		return "", fmt.Errorf("kernel %s variant %q is a Vulkan-only STRICT build", file, variant)
	}
	opts := []string{"-cl-std=CL1.2"}
	if c.FP32Div == FP32DivNative {
		opts = append(opts, "-cl-fp32-correctly-rounded-divide-sqrt")
	}
	for _, d := range v.Defines {
		opts = append(opts, "-D"+d)
	}
	opts = append(opts, fmt.Sprintf("-DLOCAL_SIZE=%d", plan.LocalSize))
	knobs := WithDeviceKnobs(c, v, plan.Knobs)
	sort.Slice(knobs, func(i, j int) bool { return knobs[i].Name < knobs[j].Name })
	for _, k := range knobs {
		opts = append(opts, fmt.Sprintf("-D%s=%d", k.Name, k.Value))
	}
	if plan.MaxRegs > 0 && nvCompilerOptions(c) {
		opts = append(opts, fmt.Sprintf("%s=%d", nvMaxRegOption, plan.MaxRegs))
	}
	return strings.Join(opts, " "), nil
}

// nvMaxRegOption is NVIDIA's OpenCL build option (cl_nv_compiler_options)
// that caps a work-item's registers, handed to ptxas as --maxrregcount.
// NVIDIA's first text of the extension spells it with "=N", Khronos's
// registry with " N"; CLOptions writes the former, and a device whose
// driver refuses it builds with the next form of nvRegForm that it takes.
const nvMaxRegOption = "-cl-nv-maxrregcount"

// MaxRegsCap is the largest register cap a plan may ask for
// (Plan.MaxRegs): 255, the most registers a thread of an NVIDIA GPU can
// address.
const MaxRegsCap = 255

// nvCompilerOptions says whether an OpenCL device takes NVIDIA's build
// options (it announces cl_nv_compiler_options). A variable, so the tests
// can make a device that does not say it so, and see its driver refuse
// the option.
var nvCompilerOptions = func(c Caps) bool {
	return c.Backend == OpenCL && slices.Contains(c.Extensions, "cl_nv_compiler_options")
}

// nvRegForms is the number of nvRegForm's forms; nvRegFormNames says
// each in the log.
const nvRegForms = 3

var nvRegFormNames = [nvRegForms]string{"as " + nvMaxRegOption + "=N", "as " + nvMaxRegOption + " N", "without the register cap"}

// nvRegForm returns build options opts (CLOptions's) with their register
// cap (nvMaxRegOption=N) in form: 0 as CLOptions writes it, 1 spelled
// "-cl-nv-maxrregcount N", 2 left out; and whether opts has a cap (opts
// as they are where not).
func nvRegForm(opts string, form int32) (string, bool) {
	for _, f := range strings.Fields(opts) {
		n, ok := strings.CutPrefix(f, nvMaxRegOption+"=")
		if !ok {
			continue
		}
		switch form {
		case 0:
			return opts, true
		case 1:
			return strings.Replace(opts, f, nvMaxRegOption+" "+n, 1), true
		}
		return strings.TrimSpace(strings.Replace(opts, " "+f, "", 1)), true
	}
	return opts, false
}

// Hash returns the hex SHA-256 of the parts, separated so that no two
// different part lists collide. Caches key on it.
func Hash(parts ...[]byte) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:", len(p))
		h.Write(p)
	}
	return hex.EncodeToString(h.Sum(nil))
}
