package host_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/accelkern/accel/host"
	"github.com/accelkern/accel/host/kernels"
)

// TestEntryKnobs: a plan shared by a scatter's passes carries SC_RED (the
// reduction, a folded argument of the passes that reduce); the passes
// that take no reduction (validate, the bucketed count and placing) get
// the plan without it, so they build once for every reduction, and the
// others keep it; knobs that are not folded arguments stay everywhere.
func TestEntryKnobs(t *testing.T) {
	p := host.Plan{LocalSize: 1, Groups: [3]int64{2, 1, 1},
		Knobs: []host.Knob{host.KnobItems.Set(4), host.KnobScRed.Set(3), host.KnobScSelf.Set(1)}}
	keep := append([]host.Knob(nil), p.Knobs...)
	for _, e := range []*host.EntryDecl{kernels.ScatterValidate{}.Entry(), kernels.ScatterBcount{}.Entry(), kernels.ScatterBplace{}.Entry()} {
		got := host.EntryKnobs(p, e)
		assert.Equal(t, []host.Knob{host.KnobItems.Set(4)}, got.Knobs, "%s", e.Func())
		assert.Equal(t, p.Groups, got.Groups, "%s", e.Func())
	}
	owned := host.EntryKnobs(p, kernels.ScatterOwned{}.Entry())
	assert.Equal(t, p.Knobs, owned.Knobs, "scatter_owned takes red and include_self")
	fold := host.EntryKnobs(p, kernels.ScatterBfold{}.Entry())
	assert.Contains(t, fold.Knobs, host.KnobScRed.Set(3), "the bucketed fold reduces")
	assert.Equal(t, keep, p.Knobs, "the shared plan is not changed")
}
