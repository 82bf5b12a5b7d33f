package host

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelkern/accel/shaders"
)

// TestSPIRVUpToDate recompiles every variant in shaders/variants.txt with
// glslc (through the same shaders/build.sh that `make shaders` runs) and
// fails if a committed .spv differs from what its source produces.
func TestSPIRVUpToDate(t *testing.T) {
	if _, err := exec.LookPath("glslc"); err != nil {
		if os.Getenv("CI") == "true" && os.Getenv("ACCEL_GPU_RUN") != "1" {
			require.NoError(t, err, "glslc not found in CI (make deps installs it)")
		}
		// scripts/gpu-run.sh sets ACCEL_GPU_RUN=1: a GPU machine runs the
		// packed test binaries without the toolchain, and this checks the
		// source tree, not the device
		t.Skip("glslc not found: the committed SPIR-V is checked where make deps installed glslc")
	}
	dir := t.TempDir()
	out, err := exec.Command("sh", "../shaders/build.sh", dir).CombinedOutput()
	require.NoError(t, err, "shaders/build.sh:\n%s", out)
	vs, err := Variants()
	require.NoError(t, err)
	require.NotEmpty(t, vs, "no variants")
	built, err := filepath.Glob(filepath.Join(dir, "*.spv"))
	require.NoError(t, err)
	committed, err := fs.Glob(shaders.FS, "*.spv")
	require.NoError(t, err)
	names := map[string]bool{}
	for _, p := range built {
		names[filepath.Base(p)] = true
	}
	for _, name := range committed {
		assert.True(t, names[name], "shaders/%s is committed but no variant builds it: remove it", name)
	}
	split := splitEntries(t)
	for key, v := range vs {
		modules := []string{key} // the variant's module, or one per entry point
		if n, ok := split[v.File]; ok {
			modules = nil
			for i := range n {
				modules = append(modules, fmt.Sprintf("%s.e%d", key, i))
			}
		}
		for i, m := range modules {
			want, err := os.ReadFile(filepath.Join(dir, m+".spv"))
			require.NoError(t, err)
			got, err := shaders.FS.ReadFile(m + ".spv")
			require.NoError(t, err, "%s.spv is not committed: run make shaders", m)
			assert.True(t, bytes.Equal(got, want), "shaders/%s.spv differs from glslc's output for its source: run make shaders", m)
			// the backend loads exactly the committed code
			code, err := SPIRV(v.File, v.Name, i)
			require.NoError(t, err, "SPIRV(%q, %q, %d)", v.File, v.Name, i)
			assert.True(t, bytes.Equal(got, code), "SPIRV(%q, %q, %d) differs from the committed %s.spv", v.File, v.Name, i, m)
		}
	}
}

// splitEntries reads shaders/split.txt: the files built as a module per
// entry point, and their entry counts.
func splitEntries(t *testing.T) map[string]int {
	data, err := shaders.FS.ReadFile("split.txt")
	require.NoError(t, err)
	split := map[string]int{}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		require.Len(t, f, 2, "split.txt: %q", line)
		n, err := strconv.Atoi(f[1])
		require.NoError(t, err, "split.txt: %q", line)
		split[f[0]] = n
	}
	return split
}

// TestCLSourcesResolve checks that every OpenCL kernel's includes resolve.
func TestCLSourcesResolve(t *testing.T) {
	vs, err := Variants()
	require.NoError(t, err)
	for _, v := range vs {
		src, err := CLSource(v.File)
		require.NoError(t, err, "%s.cl", v.File)
		assert.NotContains(t, src, "#include", "%s.cl: unresolved #include", v.File)
	}
}

// spirvExecModes returns the float-control execution modes a SPIR-V module
// declares (OpExecutionMode, opcode 16): mode -> the float widths.
func spirvExecModes(t *testing.T, code []byte) map[uint32][]uint32 {
	require.Zero(t, len(code)%4)
	w := make([]uint32, len(code)/4)
	for i := range w {
		w[i] = uint32(code[4*i]) | uint32(code[4*i+1])<<8 | uint32(code[4*i+2])<<16 | uint32(code[4*i+3])<<24
	}
	require.Greater(t, len(w), 5)
	require.Equal(t, uint32(0x07230203), w[0], "SPIR-V magic")
	modes := map[uint32][]uint32{}
	for i := 5; i < len(w); {
		n, op := w[i]>>16, w[i]&0xffff
		require.NotZero(t, n, "word %d", i)
		if op == 16 && n == 4 {
			modes[w[i+2]] = append(modes[w[i+2]], w[i+3])
		}
		i += int(n)
	}
	return modes
}

// TestStrictBuilds checks what each STRICT build declares (V.strict:
// SignedZeroInfNanPreserve at its float width; V.strictd: DenormPreserve
// 32 too) and which build StrictVariant loads for the float controls a
// device offers. lavapipe offers no DenormPreserve, so the .strictd builds
// run only on GPUs; this pins down what they are and when they load.
func TestStrictBuilds(t *testing.T) {
	const denormPreserve, signedZeroInfNan = 4459, 4461
	vs, err := Variants()
	require.NoError(t, err)
	nd := 0
	for key, v := range vs {
		if !v.Strict() {
			continue
		}
		code, err := SPIRV(v.File, v.Name, 0) // every entry's module declares the same modes
		require.NoError(t, err)
		modes := spirvExecModes(t, code)
		width := uint32(32)
		if v.Define("DT") == "4" {
			width = 64
		}
		assert.Equal(t, []uint32{width}, modes[signedZeroInfNan], key)
		if v.Define("STRICT") == "2" {
			nd++
			assert.Equal(t, []uint32{32}, modes[denormPreserve], key)
			assert.Equal(t, "3", v.Define("DT"), key)
		} else {
			assert.Empty(t, modes[denormPreserve], key)
		}
	}
	assert.Equal(t, 5, nd, "the float32 .strictd builds of scatter (2), scatter_bwd, segment, sparse")
	for _, c := range []struct {
		caps          Caps
		f32, f64, i64 string
	}{
		{Caps{}, "f32", "f64", "i64"},
		{Caps{FloatPreserve32: true, FloatPreserve64: true}, "f32.strict", "f64.strict", "i64"},
		{Caps{FloatPreserve32: true, FloatPreserve64: true, DenormPreserve32: true, DenormPreserve64: true}, "f32.strictd", "f64.strict", "i64"},
		{Caps{DenormPreserve32: true}, "f32", "f64", "i64"},
	} {
		assert.Equal(t, c.f32, StrictVariant(c.caps, "scatter", "f32"), "%+v", c.caps)
		assert.Equal(t, c.f64, StrictVariant(c.caps, "scatter", "f64"), "%+v", c.caps)
		assert.Equal(t, c.i64, StrictVariant(c.caps, "scatter", "i64"), "%+v", c.caps)
	}
	all := Caps{FloatPreserve32: true, DenormPreserve32: true}
	t.Setenv("ACCEL_VK_STRICT", "1")
	assert.Equal(t, "f32a.strict", StrictVariant(all, "scatter", "f32a"))
	t.Setenv("ACCEL_VK_STRICT", "0")
	assert.Equal(t, "f32a", StrictVariant(all, "scatter", "f32a"))
}
