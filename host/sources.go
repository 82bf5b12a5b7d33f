package host

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strings"
	"sync"

	"github.com/accelkern/accel/clkernels"
	"github.com/accelkern/accel/shaders"
)

// Variant is one line of shaders/variants.txt.
type Variant struct {
	File    string
	Name    string
	Defines []string // NAME=VALUE
}

var (
	variantsOnce sync.Once
	variants     map[string]Variant
	variantsErr  error
)

// Variants returns the variants listed in shaders/variants.txt, keyed by
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

func lookupVariant(spec KernelSpec) (Variant, error) {
	vs, err := Variants()
	if err != nil {
		return Variant{}, err
	}
	v, ok := vs[spec.File+"."+spec.Variant]
	if !ok {
		return Variant{}, fmt.Errorf("kernel %s variant %q is not listed in shaders/variants.txt", spec.File, spec.Variant)
	}
	return v, nil
}

var includeRE = regexp.MustCompile(`(?m)^[ \t]*#[ \t]*include[ \t]+"([^"]+)"[ \t]*$`)

// CLSource returns clkernels/FILE.cl with its #include "x.h" lines replaced
// by the headers from clkernels/common (each header once), so the program
// builds from memory on any driver.
func CLSource(file string) (string, error) {
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

// SPIRV returns the committed SPIR-V of a kernel variant.
func SPIRV(spec KernelSpec) ([]byte, error) {
	if _, err := lookupVariant(spec); err != nil {
		return nil, err
	}
	return shaders.FS.ReadFile(spec.File + "." + spec.Variant + ".spv")
}

// CLOptions returns the OpenCL build options for a variant and a plan:
// the variant's defines, the local size and every knob as -D.
func CLOptions(spec KernelSpec, plan Plan) (string, error) {
	v, err := lookupVariant(spec)
	if err != nil {
		return "", err
	}
	opts := []string{"-cl-std=CL1.2"}
	for _, d := range v.Defines {
		opts = append(opts, "-D"+d)
	}
	opts = append(opts, fmt.Sprintf("-DLOCAL_SIZE=%d", plan.LocalSize))
	for _, k := range plan.Knobs {
		opts = append(opts, fmt.Sprintf("-D%s=%d", k.Name, k.Value))
	}
	return strings.Join(opts, " "), nil
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
