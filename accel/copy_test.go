package accel

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/accelkern/accel/host"
)

// TestCopyKernel runs the copy kernel (planCopy: CPU OpenCL drivers' and
// Vulkan GPUs' copy) on every device by forcing it, over sizes around its
// chunk and odd group counts, in the GPUs' shape, at word offsets, and
// through diagonal_scatter's copy of its input; each destination starts with other random bits, so an unwritten
// word shows.
func TestCopyKernel(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		plans(d).copyKernel = true
		defer func() { plans(d).copyKernel, plans(d).launchFn = false, nil }()
		rng := rand.New(rand.NewSource(9))
		const chunk = 16 << 10
		streamed := func(p host.Plan) host.Plan {
			// non-temporal stores (OpenCL C; GLSL stores plainly)
			if p.Kernel == "copy" {
				p.Knobs = []host.Knob{host.KnobItems.Set(host.KnobItems.Of(p)), host.KnobContig.Set(1), host.KnobStream.Set(1)}
			}
			return p
		}
		for _, groups := range []int64{0, 1, 3, -3} {
			plans(d).launchFn = func(p host.Plan) host.Plan {
				// (not under a loop limit, where a group takes one chunk)
				if p.Kernel == "copy" && groups != 0 && d.caps.LoopLimit == 0 {
					p.Groups = [3]int64{max(groups, -groups), 1, 1}
				}
				if groups < 0 {
					p = streamed(p)
				}
				return p
			}
			for _, n := range []int64{0, 1, 3, chunk - 1, chunk, chunk + 1, 3*chunk + 5} {
				for _, dt := range []DType{Int32, Float64} {
					copyChecked(t, d, rng, dt, n, fmt.Sprintf("groups %d, %d %s", groups, n, dt))
				}
			}
		}
		// the GPUs' shape (planCopy on a GPU: the elementwise plan, CONTIG
		// 0): lane rows of consecutive words, tiles taken by a grid stride
		// (fewer groups than tiles) or a group each
		gpuCaps := d.caps
		gpuCaps.Type = host.TypeDiscreteGPU
		gpuShape := func(local int, groups, items int64) func(host.Plan) host.Plan {
			return func(p host.Plan) host.Plan {
				if p.Kernel != "copy" {
					return p
				}
				q := host.PlanElementwise("copy", gpuCaps, 4*chunk)
				q.LocalSize = local
				if items > 0 { // not a multiple of the kernel's batch of loads
					q.Knobs = []host.Knob{host.KnobItems.Set(items), host.KnobContig.Set(0)}
				}
				if groups > 0 {
					q.Groups = [3]int64{groups, 1, 1}
				}
				return q
			}
		}
		for _, shape := range []struct {
			local         int
			groups, items int64
		}{{8, 3, 0}, {32, 1, 0}, {64, 0, 0}, {16, 2, 6}} {
			plans(d).launchFn = gpuShape(shape.local, shape.groups, shape.items)
			for _, n := range []int64{1, 7, 4*int64(shape.local) - 1, 4*int64(shape.local) + 1, 3*chunk + 5} {
				copyChecked(t, d, rng, Uint32, n, fmt.Sprintf("gpu shape local %d groups %d items %d, %d words", shape.local, shape.groups, shape.items, n))
			}
		}
		plans(d).launchFn = nil
		// word offsets inside the buffers: words [5, 5+n) of a to [2, 2+n)
		// of b, plainly, streamed (a head before dst's 64-byte boundary)
		// and in the GPUs' shape
		const n = chunk + 3
		for _, hook := range []func(host.Plan) host.Plan{nil, streamed, gpuShape(32, 3, 0)} {
			plans(d).launchFn = hook
			a, b := randTensor(t, rng, Uint32, n+9), randTensor(t, rng, Uint32, n+9)
			da, db := mustUpload(t, d, a), mustUpload(t, d, b)
			require.NoError(t, d.copyBytes("t", db.raw(), 8, da.raw(), 20, 4*n))
			got := mustHost(t, db)
			da.Release()
			want := append([]byte(nil), b.data...)
			copy(want[8:8+4*n], a.data[20:20+4*n])
			requireElems(t, want, got.data, "copy at word offsets (hook %p)", hook)
		}
		plans(d).launchFn = nil
		// diagonal_scatter copies its input first
		in, src := randTensor(t, rng, Float64, 3, 130, 170), randTensor(t, rng, Float64, 3, 130)
		want2, err := RefDiagonalScatter(in, src, 0, -2, -1)
		require.NoError(t, err)
		ts, release := uploadAll(t, d, in, src)
		defer release()
		out := must(t)(d.DiagonalScatter(ts[0], ts[1], 0, -2, -1))
		requireElems(t, want2.data, mustHost(t, out).data, "diagonal_scatter through the copy kernel")
	})
}

// copyChecked copies n random elements of dt over other random bits with
// Device.Copy and checks every element.
func copyChecked(t *testing.T, d *Device, rng *rand.Rand, dt DType, n int64, name string) {
	t.Helper()
	src, dst := randTensor(t, rng, dt, n), randTensor(t, rng, dt, n)
	ds, dd := mustUpload(t, d, src), mustUpload(t, d, dst)
	require.NoError(t, d.Copy(dd, ds), name)
	got := mustHost(t, dd)
	ds.Release()
	requireElems(t, src.data, got.data, "%s: copy", name)
}

// TestFillKernel runs the fill kernel (planFill: the GPUs' fills of at
// least fillKernelMinBytes) on every device by forcing it, in the CPU
// drivers' shape and the GPUs', over patterns of 1, 2, 4 and 8 bytes at
// offsets and sizes around its chunk, each into a buffer of other random
// bits, so an unwritten or stray word shows; ranges the kernel does not
// take (a size or offset off the words, an 8-byte pattern off its
// boundary) go to the driver's fill with the same bytes.
func TestFillKernel(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		plans(d).fillKernel = true
		defer func() { plans(d).fillKernel, plans(d).launchFn = false, nil }()
		rng := rand.New(rand.NewSource(10))
		gpuCaps := d.caps
		gpuCaps.Type = host.TypeDiscreteGPU
		gpuShape := func(local int, groups int64) func(host.Plan) host.Plan {
			return func(p host.Plan) host.Plan {
				if p.Kernel != "fill" {
					return p
				}
				q := host.PlanElementwise("fill", gpuCaps, 1<<16)
				q.LocalSize = local
				if groups > 0 {
					q.Groups = [3]int64{groups, 1, 1}
				}
				return q
			}
		}
		// non-temporal stores from the first 64-byte boundary (OpenCL C;
		// GLSL stores plainly), in the CPU drivers' shape
		streamed := func(p host.Plan) host.Plan {
			if p.Kernel == "fill" {
				cpu := d.caps
				cpu.Type = host.TypeCPU
				q, _ := planFill(cpu, 1<<16)
				q.Knobs = []host.Knob{host.KnobItems.Set(host.KnobItems.Of(q)), host.KnobContig.Set(1), host.KnobStream.Set(1)}
				return q
			}
			return p
		}
		patterns := [][]byte{{0xab}, {0x12, 0x34}, {1, 2, 3, 4}, {1, 2, 3, 4, 5, 6, 7, 8}}
		for _, hook := range []func(host.Plan) host.Plan{nil, gpuShape(32, 3), gpuShape(64, 0), streamed} {
			plans(d).launchFn = hook
			for _, pat := range patterns {
				for _, off := range []int64{0, 8, 24, 4, 2, 40} {
					if off%int64(len(pat)) != 0 {
						continue
					}
					for _, size := range []int64{0, 4, 8, 12, 64, 4 * 4095, 4 * 4096, 4 * 4097, 4*3*4096 + 24, 4*16*1024*4 + 104, 6} {
						if size%int64(len(pat)) != 0 {
							continue
						}
						name := fmt.Sprintf("hook %p, pattern %d bytes, offset %d, %d bytes", hook, len(pat), off, size)
						buf := randTensor(t, rng, Uint32, (off+size)/4+3)
						db := mustUpload(t, d, buf)
						before := d.Stats().Launches
						require.NoError(t, d.fill(db.raw(), off, size, pat), name)
						kernel := size > 0 && size%4 == 0 && off%4 == 0 && (len(pat) != 8 || off%8 == 0)
						require.Equal(t, b2i(kernel), d.Stats().Launches-before, "%s: the kernel's launches", name)
						got := mustHost(t, db)
						db.Release()
						want := append([]byte(nil), buf.data...)
						for i := int64(0); i < size; i++ {
							want[off+i] = pat[i%int64(len(pat))]
						}
						requireElems(t, want, got.data, "%s", name)
					}
				}
			}
		}
	})
}

// TestCopyBy: CopyBy's driver copy and copy kernel give the same bytes on
// every device (a dtype of 8 bytes, sizes around the kernel's chunk), and
// it refuses an unknown method.
func TestCopyBy(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		rng := rand.New(rand.NewSource(12))
		for _, n := range []int64{0, 1, 16<<10 + 3} {
			for _, how := range []CopyMethod{CopyAuto, CopyDriver, CopyKernel} {
				src, dst := randTensor(t, rng, Float64, n), randTensor(t, rng, Float64, n)
				ds, dd := mustUpload(t, d, src), mustUpload(t, d, dst)
				before := d.Stats()
				require.NoError(t, d.CopyBy(dd, ds, how), "%d %d", n, how)
				ran := d.Stats().Sub(before)
				if n > 0 && how == CopyKernel {
					require.Equal(t, int64(1), ran.Launches, "the kernel")
				}
				if n > 0 && how == CopyDriver {
					require.Zero(t, ran.Launches, "the driver's copy")
				}
				got := mustHost(t, dd)
				ds.Release()
				dd.Release()
				requireElems(t, src.data, got.data, "%d elements by %d", n, how)
			}
		}
		a := mustUpload(t, d, randTensor(t, rng, Float64, 4))
		b := mustUpload(t, d, randTensor(t, rng, Float64, 4))
		defer a.Release()
		defer b.Release()
		require.ErrorIs(t, d.CopyBy(a, b, CopyMethod(7)), ErrInvalidArgument)
	})
}
