package accel

import (
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/accelkern/accel/host"
	"github.com/accelkern/accel/reference"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPublicTypesMatch checks that accel's own types carry every field of
// the runtime's (DeviceInfo, Stats and PoolStats convert, so the compiler
// checks them; Options is copied field by field, so this test does), and
// that Options.host copies each one.
func TestPublicTypesMatch(t *testing.T) {
	ho, ao := reflect.TypeOf(host.Options{}), reflect.TypeOf(Options{})
	for i := 0; i < ho.NumField(); i++ {
		f := ho.Field(i)
		g, ok := ao.FieldByName(f.Name)
		require.True(t, ok, "accel.Options lacks host.Options.%s", f.Name)
		assert.Equal(t, f.Type, g.Type, "Options.%s", f.Name)
	}
	// every field set: the copy must carry each one
	var o Options
	ov := reflect.ValueOf(&o).Elem()
	for i := 0; i < ho.NumField(); i++ {
		f := ov.FieldByName(ho.Field(i).Name)
		switch f.Kind() {
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Int64:
			f.SetInt(8)
		case reflect.Func:
			f.Set(reflect.MakeFunc(f.Type(), func([]reflect.Value) []reflect.Value { return nil }))
		default:
			t.Fatalf("Options.%s: a %s field this test cannot fill", ho.Field(i).Name, f.Kind())
		}
	}
	hv := reflect.ValueOf(o.host())
	for i := 0; i < ho.NumField(); i++ {
		assert.False(t, hv.Field(i).IsZero(), "Options.host drops %s", ho.Field(i).Name)
	}
}

// OnPlan reports each family's plan as the op runs it, and stops on nil.
func TestOnPlan(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		var got []PlanReport
		d.OnPlan(func(r PlanReport) { got = append(got, r) })
		out, err := d.TrilIndices(5, 5, 0, Int64)
		require.NoError(t, err)
		out.Release()
		d.OnPlan(nil)
		require.Len(t, got, 1)
		assert.Equal(t, "tril_indices", got[0].Op)
		assert.Equal(t, "elementwise", got[0].Family)
		assert.Contains(t, got[0].String(), "tril_indices elementwise: ")
		out, err = d.TrilIndices(5, 5, 0, Int64)
		require.NoError(t, err)
		out.Release()
		assert.Len(t, got, 1, "OnPlan(nil) stops the reports")
	})
}

// A traced device writes its plans to its log, and on OpenCL what the
// driver compiled each kernel to (its private memory a work-item: the
// stack and spills a GPU keeps in local memory).
func TestPlanTrace(t *testing.T) {
	for _, b := range []string{"opencl", "vulkan"} {
		var mu sync.Mutex
		var lines []string
		d, err := OpenWith(b, Options{Validation: true, Trace: true, Log: func(m string) {
			mu.Lock()
			lines = append(lines, m)
			mu.Unlock()
		}})
		if err != nil {
			require.NotEqual(t, "true", os.Getenv("CI"), "no %s device in CI: %v", b, err)
			t.Logf("no %s device: %v", b, err)
			continue
		}
		out, err := d.TrilIndices(4, 4, 0, Int32)
		require.NoError(t, err)
		out.Release()
		require.NoError(t, d.Close())
		mu.Lock()
		found, kernel := false, false
		for _, l := range lines {
			found = found || strings.Contains(l, " plan tril_indices elementwise: ")
			kernel = kernel || strings.Contains(l, " kernel tri_indices.i32:") && strings.Contains(l, "private memory")
		}
		mu.Unlock()
		assert.True(t, found, "%s: no plan line in the trace: %q", b, lines)
		if b == "opencl" {
			assert.True(t, kernel, "%s: no kernel line in the trace: %q", b, lines)
		}
	}
}

// Options.GPUPlans (and ACCEL_GPU_PLANS=1) plan every op as for a
// discrete GPU on whatever device this is: a CPU driver's sort takes the
// GPU's tiled plan and gives the same keys and permutation as its own.
func TestGPUPlans(t *testing.T) {
	keys := make([]int32, 5000)
	for i := range keys {
		keys[i] = int32(i*7919%1013) - 500
	}
	wantPerm := reference.SortPerm(keys, false)
	want := make([]int32, len(keys))
	for i, p := range wantPerm {
		want[i] = keys[p]
	}
	for _, b := range []string{"opencl", "vulkan"} {
		for _, how := range []string{"option", "environment", "neither"} {
			t.Run(b+"/"+how, func(t *testing.T) {
				o := Options{Validation: true, GPUPlans: how == "option"}
				if how == "environment" {
					t.Setenv("ACCEL_GPU_PLANS", "1")
				}
				d, err := OpenWith(b, o)
				if err != nil {
					require.NotEqual(t, "true", os.Getenv("CI"), "no %s device in CI: %v", b, err)
					t.Skipf("no %s device: %v", b, err)
				}
				defer func() { require.NoError(t, d.Close()) }()
				gpu := how != "neither"
				if gpu {
					assert.Equal(t, TypeDiscreteGPU, d.Info().Type, "planned as a discrete GPU")
				}
				var plans []string
				d.OnPlan(func(r PlanReport) { plans = append(plans, r.String()) })
				x, err := FromInt32s([]int64{int64(len(keys))}, keys)
				require.NoError(t, err)
				dx, err := d.Upload(x)
				require.NoError(t, err)
				defer dx.Release()
				s, p, err := d.Sort(dx, false)
				require.NoError(t, err)
				defer s.Release()
				defer p.Release()
				got, err := s.ToHost()
				require.NoError(t, err)
				perm, err := p.ToHost()
				require.NoError(t, err)
				assert.Equal(t, want, got.Int32s())
				assert.Equal(t, wantPerm, perm.Int64s())
				gpuPlan := false
				for _, l := range plans {
					gpuPlan = gpuPlan || strings.Contains(l, "radix: ") && strings.Contains(l, "(gpu")
				}
				assert.Equal(t, gpu || d.Info().Type != TypeCPU, gpuPlan, "the sort's plans: %q", plans)
			})
		}
	}
}
