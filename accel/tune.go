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
// fails otherwise), or LOCAL (the work-group size) or GROUPS (the number
// of work-groups) to V, after the planner made it (a radix LOCAL also
// sets RADIX_SGS, the ranking's subgroups, to the group's, unless it is
// set too). The plan's reason says so. Three entries name a plan choice instead of a kernel file:
// unique_plan (tunedUnique), scatter_plan (tunedScatter) and indice_plan
// (tunedIndice). Empty: none.
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
			if !ok || name == "" || err != nil || (name == "LOCAL" || name == "GROUPS") && v < 1 {
				return nil, fmt.Errorf("ACCEL_KNOBS: %s: %q is not NAME=V (an integer; LOCAL and GROUPS at least 1): %w", kernel, kv, ErrInvalidArgument)
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
	p.Knobs = slices.Clone(p.Knobs)
	local, sgs := false, false
	for _, k := range ks {
		switch k.Name {
		case "LOCAL":
			p.LocalSize, local = int(k.Value), true
		case "GROUPS":
			p.Groups = host.FoldGroups(k.Value, d.caps.MaxWorkGroupCount)
		default:
			i := slices.IndexFunc(p.Knobs, func(o host.Knob) bool { return o.Name == k.Name })
			if i < 0 {
				p.Knobs = append(p.Knobs, k)
			} else {
				p.Knobs[i] = k
			}
			sgs = sgs || k.Name == host.KnobRadixSgs.Name()
		}
	}
	if p.Kernel == "radix" && local && !sgs && host.KnobRadixSgs.Of(p) > 0 {
		// the sort's ranking by subgroups lays counters for the group's
		// subgroups: they follow its size, unless set too
		i := slices.IndexFunc(p.Knobs, func(o host.Knob) bool { return o.Name == host.KnobRadixSgs.Name() })
		p.Knobs[i] = host.KnobRadixSgs.Set(radixSubgroups(d.caps, host.KnobRadixBits.Of(p), p.LocalSize))
	}
	p.Reason += " [ACCEL_KNOBS]"
	return p
}

// envKnobs is $ACCEL_KNOBS parsed (knobOverrides).
func envKnobs() (map[string][]host.Knob, error) { return knobOverrides(os.Getenv("ACCEL_KNOBS")) }
