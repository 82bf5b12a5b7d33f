package host

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
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
	for key, v := range vs {
		want, err := os.ReadFile(filepath.Join(dir, key+".spv"))
		require.NoError(t, err)
		got, err := shaders.FS.ReadFile(key + ".spv")
		require.NoError(t, err, "%s.spv is not committed: run make shaders", key)
		assert.True(t, bytes.Equal(got, want), "shaders/%s.spv differs from glslc's output for its source: run make shaders", key)
		// the backend loads exactly the committed code
		code, err := SPIRV(v.File, v.Name)
		require.NoError(t, err, "SPIRV(%q, %q)", v.File, v.Name)
		assert.True(t, bytes.Equal(got, code), "SPIRV(%q, %q) differs from the committed %s.spv", v.File, v.Name, key)
	}
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
