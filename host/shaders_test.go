package host

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/accelkern/accel/shaders"
)

// TestSPIRVUpToDate recompiles every variant in shaders/variants.txt with
// glslc (through the same shaders/build.sh that `make shaders` runs) and
// fails if a committed .spv differs from what its source produces.
func TestSPIRVUpToDate(t *testing.T) {
	if _, err := exec.LookPath("glslc"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("glslc not found in CI (make deps installs it)")
		}
		t.Skip("glslc not found; install glslc to check the committed SPIR-V")
	}
	dir := t.TempDir()
	cmd := exec.Command("sh", "../shaders/build.sh", dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("shaders/build.sh: %v\n%s", err, out)
	}
	vs, err := Variants()
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) == 0 {
		t.Fatal("no variants")
	}
	for key := range vs {
		want, err := os.ReadFile(filepath.Join(dir, key+".spv"))
		if err != nil {
			t.Fatal(err)
		}
		got, err := shaders.FS.ReadFile(key + ".spv")
		if err != nil {
			t.Fatalf("%s.spv is not committed: run make shaders", key)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("shaders/%s.spv differs from glslc's output for its source: run make shaders", key)
		}
	}
}

// TestCLSourcesResolve checks that every OpenCL kernel's includes resolve.
func TestCLSourcesResolve(t *testing.T) {
	vs, err := Variants()
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		src, err := CLSource(v.File)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains([]byte(src), []byte("#include")) {
			t.Errorf("%s.cl: unresolved #include", v.File)
		}
	}
}
