package accel

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/accelkern/accel/host"
)

// knobOverrides parses $ACCEL_KNOBS, a tuning aid for trying plans on a
// device at hand without a rebuild (a GPU run has no Go toolchain):
// "KERNEL:NAME=V,NAME=V;KERNEL:..." sets, in every plan of the kernel
// file KERNEL that the device makes through Device.plan (the scan, radix
// and elementwise families), knob NAME (one the file declares: the launch
// fails otherwise), or LOCAL (the work-group size), GROUPS (the number
// of work-groups) or MAXREG (the registers a work-item may use, where the
// driver takes a cap: host.Plan.MaxRegs, NVIDIA's OpenCL; 0 none) to V,
// after the planner made it (a radix family's plan then keeps what the
// sort needs: radixTuned). The plan's reason says so.
// Four entries name a plan choice instead of a kernel file:
// unique_plan (tunedUnique), scatter_plan (tunedScatter), indice_plan
// (tunedIndice) and sparse_plan (CHUNK: the merge path's positions a
// walk, spChunk; ITEMS: its walks a work-item, chunkPlan). Empty: none.
func knobOverrides(env string) (map[string][]host.Knob, error) {
	if strings.TrimSpace(env) == "" {
		return nil, nil
	}
	m := map[string][]host.Knob{}
	for _, part := range strings.Split(env, ";") {
		kernel, list, ok := strings.Cut(strings.TrimSpace(part), ":")
		if !ok || kernel == "" {
			return nil, fmt.Errorf("ACCEL_KNOBS: %q is not KERNEL:NAME=V,...: %w", part, ErrInvalidArgument)
		}
		for _, kv := range strings.Split(list, ",") {
			name, val, ok := strings.Cut(strings.TrimSpace(kv), "=")
			v, err := strconv.ParseInt(val, 10, 64)
			if !ok || name == "" || err != nil || (name == "LOCAL" || name == "GROUPS") && v < 1 || name == "MAXREG" && (v < 0 || v > host.MaxRegsCap) {
				return nil, fmt.Errorf("ACCEL_KNOBS: %s: %q is not NAME=V (an integer; LOCAL and GROUPS at least 1, MAXREG in [0, %d]): %w", kernel, kv, host.MaxRegsCap, ErrInvalidArgument)
			}
			m[kernel] = append(m[kernel], host.Knob{Name: name, Value: v})
		}
	}
	return m, nil
}

// tuned is p with $ACCEL_KNOBS's overrides for its kernel file applied
// (knobOverrides).
func (d *Device) tuned(p host.Plan) host.Plan {
	ks, ok := d.knobs[p.Kernel]
	if !ok {
		return p
	}
	for _, k := range ks {
		switch k.Name {
		case "LOCAL":
			p.LocalSize = int(k.Value)
		case "GROUPS":
			p.Groups = host.FoldGroups(k.Value, d.caps.MaxWorkGroupCount)
		case "MAXREG":
			p.MaxRegs = int(k.Value)
		default:
			p = withKnob(p, k)
		}
	}
	p.Reason += " [ACCEL_KNOBS]"
	return p
}

// knobValue is the value $ACCEL_KNOBS gives knob name of kernel (a kernel
// file or a plan entry), and whether it gives one (the last, where it
// names the knob twice).
func (d *Device) knobValue(kernel, name string) (int64, bool) {
	ks := d.knobs[kernel]
	for i := len(ks) - 1; i >= 0; i-- {
		if ks[i].Name == name {
			return ks[i].Value, true
		}
	}
	return 0, false
}

// overridden says whether $ACCEL_KNOBS sets knob name (or LOCAL, GROUPS)
// in the plans of kernel file kernel.
func (d *Device) overridden(kernel, name string) bool {
	_, ok := d.knobValue(kernel, name)
	return ok
}

// withKnob is p with knob k set: its value replaced, or added (p's own
// knobs are left as they were).
func withKnob(p host.Plan, k host.Knob) host.Plan {
	p.Knobs = slices.Clone(p.Knobs)
	if i := slices.IndexFunc(p.Knobs, func(o host.Knob) bool { return o.Name == k.Name }); i >= 0 {
		p.Knobs[i] = k
	} else {
		p.Knobs = append(p.Knobs, k)
	}
	return p
}

// envKnobs is $ACCEL_KNOBS parsed (knobOverrides).
func envKnobs() (map[string][]host.Knob, error) { return knobOverrides(os.Getenv("ACCEL_KNOBS")) }
