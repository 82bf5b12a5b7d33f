package host_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/accelkern/accel/host"
	"github.com/accelkern/accel/host/kernels"
)

// declShape is what a kernel file's declaration fixes of its kernels'
// interface: the file, its knobs with their constant ids and defaults, and
// its entries with their arguments (docs left out).
type declShape struct {
	Name       string
	Knobs      []knobShape
	ParamBlock bool
	Entries    []entryShape
}

type knobShape struct {
	Name    string
	ID      int
	Default int64
}

type entryShape struct {
	Name    string
	Index   int
	Scratch bool
	Args    []argShape
}

type argShape struct {
	Name   string
	Kind   host.ArgKind
	Access host.Access
	Fold   string
}

func shapeOf(f *host.FileDecl) declShape {
	s := declShape{Name: f.Name, ParamBlock: f.ParamBlock()}
	for _, k := range f.AllKnobs() {
		id, _ := f.KnobID(k.Name)
		s.Knobs = append(s.Knobs, knobShape{Name: k.Name, ID: id, Default: k.Default})
	}
	for _, e := range f.Entries {
		es := entryShape{Name: e.Name, Index: e.Index(), Scratch: e.Scratch}
		for _, a := range e.Args {
			es.Args = append(es.Args, argShape{Name: a.Name, Kind: a.Kind, Access: a.Access, Fold: a.Fold})
		}
		s.Entries = append(s.Entries, es)
	}
	return s
}

// TestVulkanTriDeclMatchesKernels checks the internal Vulkan tests' own
// declaration of tri_indices (they cannot import package host/kernels,
// which imports host) against the real one, so that they launch the kernel
// the sources implement.
func TestVulkanTriDeclMatchesKernels(t *testing.T) {
	require.Equal(t, shapeOf(kernels.TriIndices), shapeOf(host.VulkanTestTriFile))
}
