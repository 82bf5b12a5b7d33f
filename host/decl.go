package host

import (
	"fmt"
	"slices"
	"strings"
)

// Kernel interfaces are declared once, in Go (package host/kernels), with
// the types below. `go generate ./host/kernels` writes from them the header
// that both the OpenCL C wrapper (clkernels/NAME.cl) and the GLSL wrapper
// (shaders/NAME.comp) include (clkernels/common/gen/NAME.h: knobs as -D
// defaults or specialization constants, codes, the parameter list of every
// entry point's body function and the entry points themselves), and the Go
// argument structs the host packs launches from (host/kernels/args_gen.go).
// A test fails when the generated files are stale or a kernel source
// declares by hand what the declaration owns.

// Access says how a kernel entry uses a buffer argument. The Vulkan backend
// places a barrier between two commands only where one writes a buffer the
// other reads or writes, so a declaration must never claim less access than
// the kernel has (InOut is always safe).
type Access int

// Buffer access modes.
const (
	In    Access = iota + 1 // read only
	Out                     // written (and maybe read back) only after this entry wrote it
	InOut                   // read and written
)

// ArgKind is the type of one 64-bit argument slot.
type ArgKind int

// Argument kinds.
const (
	ArgBuf ArgKind = iota + 1 // a buffer: a cl_mem in OpenCL, a device address in Vulkan
	ArgI64                    // long in OpenCL C, int64_t in GLSL
	ArgU64                    // ulong in OpenCL C, uint64_t in GLSL
)

// ArgDecl declares one argument of an entry point.
type ArgDecl struct {
	Name   string  // the parameter name in the body function (C identifier)
	Kind   ArgKind // buffer or scalar
	Access Access  // buffers only
	// Fold names a knob that carries this scalar's value as a compile-time
	// constant on drivers that run both sides of every branch
	// (Caps.FoldArgs); planners may also set the knob everywhere. The
	// generated entry passes FOLD(knob, arg) to the body. The knob is
	// declared implicitly with default -1 (run-time value); values must be
	// at least 0.
	Fold string
	Doc  string
}

// KnobDecl declares a compile-time tuning parameter of a kernel file: a -D
// define in OpenCL C and a specialization constant in GLSL, with its
// default.
type KnobDecl struct {
	Name    string
	Default int64
	Doc     string
}

// EntryDecl declares one entry point (one pass) of a kernel file: an OpenCL
// kernel FILE_ENTRY_k and, in the file's one GLSL shader, the value of the
// ENTRY specialization constant that selects it. Both call the body
// function FILE_ENTRY that the shared header clkernels/common/FILE_body.h
// defines with the generated parameter list FILE_ENTRY_PARAMS.
type EntryDecl struct {
	File *FileDecl
	Name string
	Doc  string
	Args []ArgDecl
	// Scratch: the entry takes a work-group scratch array of SCRATCH_LEN
	// elements of SCRATCH_T (the wrapper defines both): OpenCL declares it
	// in the kernel and passes it as the last parameter, GLSL wrappers
	// declare it as a shared array.
	Scratch bool
	index   int
	// foreign: the file's folded-argument knobs (ArgDecl.Fold) that this
	// entry takes no argument for, so its code does not depend on them
	// (FOLD appears only in the generated wrappers of the entries that
	// take the argument): EntryKnobs drops them from its plans.
	foreign map[string]bool
}

// Func is the name of the entry's body function, e.g. "scatter_validate".
func (e *EntryDecl) Func() string { return e.File.Name + "_" + e.Name }

// CLName is the name of the entry's OpenCL kernel, e.g. "scatter_validate_k".
func (e *EntryDecl) CLName() string { return e.Func() + "_k" }

// Index is the entry's position in its file, the value of the GLSL ENTRY
// specialization constant that selects it.
func (e *EntryDecl) Index() int { return e.index }

// Slots is how many 64-bit argument slots the entry takes.
func (e *EntryDecl) Slots() int { return len(e.Args) }

// FileDecl declares a kernel file: clkernels/NAME.cl and shaders/NAME.comp
// (compiled per variant), their variants, knobs and entry points.
type FileDecl struct {
	Name string
	Doc  string
	// Variants are the file's builds, each with its defines; a variant V
	// with a variant V.strict (defining STRICT=1) has a second SPIR-V build
	// for Vulkan, a V.strictd after it (STRICT=2) a third, and a V.strictf
	// (STRICT=1 and DENORM_FIX=1) a fourth (StrictVariant). The generator
	// writes them to shaders/variants.txt, which shaders/build.sh and
	// Variants read.
	Variants []Variant
	Knobs    []KnobDecl
	Entries  []*EntryDecl
	// Codes lists the code groups (see CodeGroup) the file's kernels use;
	// the generated header includes their definitions.
	Codes []*CodeGroup
	// ModulePerEntry builds a SPIR-V module per entry point of each
	// variant (FILE.VARIANT.eI.spv, shaders/split.txt), not one whose
	// main picks the entry by specialization constant: a driver
	// translates a pipeline's whole module before it specializes it
	// (lavapipe took 110-300 ms a pipeline of sparse's 510 KB modules,
	// 35-95 ms of its largest entry's 100 KB one), so files of many large
	// entries get one each.
	ModulePerEntry bool

	knobIDs map[string]int
}

// Constant ids of the GLSL specialization constants: 0 is the local size,
// 1 the entry, and the file's knobs follow in declaration order.
const (
	SpecLocalSize = 0
	SpecEntry     = 1
	specFirstKnob = 2
)

// MaxPushSlots is how many 64-bit argument slots fit the 128-byte
// push-constant block every Vulkan device guarantees. Entries of a file
// with more slots take their arguments from a parameter block (a buffer
// whose device address is the one push constant) on Vulkan; OpenCL passes
// every argument as a kernel argument.
const MaxPushSlots = 16

// ParamBlock reports whether the file's entries take their arguments from
// a parameter block on Vulkan (some entry has more than MaxPushSlots).
func (f *FileDecl) ParamBlock() bool {
	for _, e := range f.Entries {
		if e.Slots() > MaxPushSlots {
			return true
		}
	}
	return false
}

// AllKnobs returns the declared knobs followed by the implicit ones of
// folded arguments (default -1), in constant-id order.
func (f *FileDecl) AllKnobs() []KnobDecl {
	out := append([]KnobDecl(nil), f.Knobs...)
	seen := map[string]bool{}
	for _, k := range f.Knobs {
		seen[k.Name] = true
	}
	for _, e := range f.Entries {
		for _, a := range e.Args {
			if a.Fold != "" && !seen[a.Fold] {
				seen[a.Fold] = true
				out = append(out, KnobDecl{Name: a.Fold, Default: -1, Doc: "folded argument " + a.Name + " (-1: the run-time value)"})
			}
		}
	}
	return out
}

// KnobID returns the specialization constant id of the named knob, and
// false when the file declares no such knob.
func (f *FileDecl) KnobID(name string) (int, bool) {
	id, ok := f.knobIDs[name]
	return id, ok
}

// Entry returns the entry point called name, or nil.
func (f *FileDecl) Entry(name string) *EntryDecl {
	for _, e := range f.Entries {
		if e.Name == name {
			return e
		}
	}
	return nil
}

// Init links the file's entries to it and numbers its knobs; it panics on
// a malformed declaration (a programming error, caught by the package's
// tests). Declarations call it once, at package initialization.
func (f *FileDecl) Init() *FileDecl {
	if !isIdent(f.Name) {
		panic(fmt.Sprintf("kernel file name %q is not an identifier", f.Name))
	}
	f.knobIDs = map[string]int{}
	for i, k := range f.AllKnobs() {
		if !isIdent(k.Name) || k.Name == "ENTRY" || k.Name == "LOCAL_SIZE" {
			panic(fmt.Sprintf("kernel file %s: bad knob name %q", f.Name, k.Name))
		}
		if _, dup := f.knobIDs[k.Name]; dup {
			panic(fmt.Sprintf("kernel file %s: knob %s declared twice", f.Name, k.Name))
		}
		f.knobIDs[k.Name] = specFirstKnob + i
	}
	if len(f.Entries) == 0 {
		panic(fmt.Sprintf("kernel file %s: no entries", f.Name))
	}
	variants := map[string]bool{}
	for i := range f.Variants {
		v := &f.Variants[i]
		base := v.Base()
		strict, strictd, strictf := base != v.Name, strings.HasSuffix(v.Name, ".strictd"), strings.HasSuffix(v.Name, ".strictf")
		okDefs := strict == v.Strict() && strictd == (v.Define("STRICT") == "2") && strictf == (v.Define("DENORM_FIX") == "1")
		if !isIdent("x"+base) || variants[v.Name] || !okDefs || strict && !variants[base] || (strictd || strictf) && !variants[base+".strict"] {
			panic(fmt.Sprintf("kernel file %s: bad or repeated variant %q (a V.strict variant follows V and defines STRICT=1, a V.strictd follows V.strict and defines STRICT=2, a V.strictf follows V.strict and defines STRICT=1 and DENORM_FIX=1)", f.Name, v.Name))
		}
		for _, d := range v.Defines {
			if k, _, ok := strings.Cut(d, "="); !ok || !isIdent(k) {
				panic(fmt.Sprintf("kernel file %s: variant %s: bad define %q", f.Name, v.Name, d))
			}
		}
		variants[v.Name] = true
		v.File = f.Name
	}
	folds := map[string]bool{}
	for _, e := range f.Entries {
		for _, a := range e.Args {
			if a.Fold != "" {
				folds[a.Fold] = true
			}
		}
	}
	for _, e := range f.Entries {
		e.foreign = map[string]bool{}
		for k := range folds {
			if !slices.ContainsFunc(e.Args, func(a ArgDecl) bool { return a.Fold == k }) {
				e.foreign[k] = true
			}
		}
	}
	names := map[string]bool{}
	for i, e := range f.Entries {
		if names[e.Name] || !isIdent("x"+e.Name) {
			panic(fmt.Sprintf("kernel file %s: bad or repeated entry name %q", f.Name, e.Name))
		}
		names[e.Name] = true
		e.File, e.index = f, i
		args := map[string]bool{}
		for _, a := range e.Args {
			if !isIdent(a.Name) || args[a.Name] {
				panic(fmt.Sprintf("kernel %s: bad or repeated argument %q", e.Func(), a.Name))
			}
			args[a.Name] = true
			switch a.Kind {
			case ArgBuf:
				if a.Access < In || a.Access > InOut || a.Fold != "" {
					panic(fmt.Sprintf("kernel %s: buffer argument %s needs an access mode and cannot fold", e.Func(), a.Name))
				}
			case ArgI64, ArgU64:
				if a.Access != 0 {
					panic(fmt.Sprintf("kernel %s: scalar argument %s has an access mode", e.Func(), a.Name))
				}
			default:
				panic(fmt.Sprintf("kernel %s: argument %s has no kind", e.Func(), a.Name))
			}
		}
	}
	return f
}

// reserved are words either kernel language keeps for itself, which
// declarations must not use as names.
var reserved = map[string]bool{
	"in": true, "out": true, "inout": true, "buffer": true, "shared": true, "uniform": true, "const": true,
	"sample": true, "patch": true, "input": true, "output": true, "filter": true, "common": true,
	"partition": true, "active": true, "precise": true, "coherent": true, "volatile": true, "restrict": true,
	"readonly": true, "writeonly": true, "subroutine": true, "invariant": true, "smooth": true, "flat": true,
	"main": true, "global": true, "local": true, "private": true, "constant": true, "kernel": true,
	"half": true, "double": true, "float": true, "int": true, "long": true, "uint": true, "ulong": true,
	"char": true, "uchar": true, "short": true, "ushort": true, "bool": true, "void": true, "struct": true,
	"union": true, "enum": true, "typedef": true, "static": true, "extern": true, "image": true, "sampler": true,
	"sh": true, // the scratch parameter's name
}

func isIdent(s string) bool {
	if reserved[s] {
		return false
	}
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// Code is one named value of a CodeGroup.
type Code struct {
	Name  string // upper case, without the group's prefix
	Value int64
	Doc   string
}

// CodeGroup declares named integer codes shared by kernels and the host
// (reduction codes, flag kinds, metadata offsets): PREFIX_NAME defines in
// the kernels' generated headers and PrefixName constants in Go.
type CodeGroup struct {
	Prefix string // e.g. "RED"
	Doc    string
	Codes  []Code
	// Unsigned: the values are 64-bit bit patterns (written with a UL
	// suffix in the kernels and as uint64 in Go).
	Unsigned bool
}

// GoName turns a kernel identifier such as "RED_SUM" or "dim_size" into a
// Go name such as "RedSum" or "DimSize".
func GoName(s string) string {
	var b strings.Builder
	for _, part := range strings.Split(strings.ToLower(s), "_") {
		if part == "" {
			continue
		}
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}

// Call is one launch's arguments, packed from a generated struct of
// package host/kernels (one per entry point).
type Call interface {
	// Entry returns the entry point the arguments are for.
	Entry() *EntryDecl
	// AppendArgs appends the argument slots in declaration order.
	AppendArgs(dst []Arg) []Arg
}
