package accel

import (
	"github.com/accelkern/accel/host"
)

// planRadix plans the passes of the stable radix sort of n keys (see
// clkernels/common/radix_body.h): the digit width (8 bits on CPUs, where a
// work-item's 256 counters live in cache, and on llvmpipe, whose
// compiler grows fast with more; 4 on GPUs, where 16 fit in registers) and the number of work-items B, each owning a contiguous chunk
// of keys. B grows with the compute units and shrinks for small inputs (a
// histogram of 2^bits x B counts is scanned every pass), and every chunk
// stays under the driver's loop limit.
func planRadix(caps host.Caps, n int64) host.Plan {
	p := host.Plan{Kernel: "radix"}
	local, bits := 64, int64(4)
	perCU, minChunk := int64(2048), int64(64)
	if caps.Type == host.TypeCPU {
		local, bits, perCU, minChunk = 64, 8, 256, 4096
		p.Reason = "cpu: 8-bit digits, long chunks per work-item"
		if caps.LoopLimit > 0 {
			// llvmpipe: groups of one SIMD vector run 1.3x faster than
			// groups of 64. 11-bit digits (3 passes for 32-bit keys, not
			// 4) ran 16M uint32 keys with their permutation 6-8% faster
			// (421.7 against 454.6 ms; unique of 16M int64 1512 against
			// 1605 ms, minima of 3 alternating runs, Mesa 25.0), but
			// llvmpipe compiles a shader at its first dispatch, and the
			// passes' private counters (2^bits per work-item) make that
			// grow fast: a fresh machine's first sort took 1.2 s with
			// 8-bit digits, 3.6 with 9, 10.9 with 10 and 27 s with 11
			// (issue #30), so 8.
			local, bits = 8, 8
			p.Reason = "cpu with a loop limit: 8-bit digits, groups of 8, long chunks per work-item"
		}
	} else {
		return planRadixTiled(caps, n)
	}
	local = host.Pow2Local(caps, local, 0)
	cu := max(int64(caps.ComputeUnits), 1)
	items := min(cu*perCU, (n+minChunk-1)/minChunk)
	lc := host.LoopCap(caps)
	items = max(items, (n+lc-1)/lc, 1)
	groups := (items + int64(local) - 1) / int64(local)
	if caps.MaxWorkGroupCount[0] > 0 {
		groups = min(groups, caps.MaxWorkGroupCount[0])
	}
	p.LocalSize = local
	p.Groups = [3]int64{groups, 1, 1}
	p.Knobs = []host.Knob{host.KnobRadixBits.Set(bits)}
	b := groups * int64(local)
	p.TileElems = (n + b - 1) / b // the chunk of each work-item
	p.Tiles = b
	return p
}

// planRadixTiled plans the radix sort's tiled passes (radix_tcount and
// radix_tscatter in clkernels/common/radix_body.h), planRadix's choice on
// GPUs: 4-bit digits, tiles of LOCAL_SIZE x RADIX_KPT keys (256 x 8 where
// the device allows: on the H200, 16M uint32 keys with their permutation
// sorted in 4.88 ms on OpenCL and 3.28 on Vulkan, against 5.57 and 3.60
// with 256 x 4; 5-bit digits took 7.33 and 6.71), one work-group per tile at a time, every global load
// and store by consecutive lanes. The work-group scratch (radix_tile.h:
// the lanes' packed digit counts, then the tile's keys and 64-bit entries)
// must fit the device's local memory, so the tile shrinks where it is
// small. TileElems is the tile, Tiles their count.
func planRadixTiled(caps host.Caps, n int64) host.Plan {
	p := host.Plan{Kernel: "radix", Reason: "gpu: 4-bit digits, tiles ranked in work-group scratch, coalesced digit runs"}
	const bits = 4
	local, kpt := host.Pow2Local(caps, 256, 0), int64(8)
	scratch := func() int64 { return radixTiledScratch(bits, local, kpt) }
	for caps.LocalMemBytes > 0 && scratch() > caps.LocalMemBytes && (kpt > 1 || local > 1) {
		if kpt > 1 {
			kpt /= 2
		} else {
			local /= 2
		}
	}
	p.LocalSize = local
	p.TileElems = int64(local) * kpt
	p.Tiles = (n + p.TileElems - 1) / p.TileElems
	p.Groups = host.FoldGroups(max(p.Tiles, 1), caps.MaxWorkGroupCount)
	p.Knobs = []host.Knob{host.KnobRadixBits.Set(bits), host.KnobRadixKpt.Set(kpt)}
	return p
}

// radixTiledScratch is the tiled radix passes' work-group scratch in bytes
// for 64-bit keys (clkernels/common/radix_tile.h's RADIX_SCRATCH_LEN words:
// the lanes' packed digit counts with a pad word every 32, the segment
// sums, two words per digit, the tile's keys and its 64-bit entries).
func radixTiledScratch(bits int64, local int, kpt int64) int64 {
	words := int64(local) * (int64(1) << bits) / 2
	return 4 * (words + words/32 + int64(local) + 2*(int64(1)<<bits) + int64(local)*kpt*(2+2))
}

// radixTiledScratchBytes is the work-group scratch a tiled radix plan
// (planRadixTiled) takes, in bytes.
func radixTiledScratchBytes(p host.Plan) int64 {
	return radixTiledScratch(host.KnobRadixBits.Of(p), p.LocalSize, host.KnobRadixKpt.Of(p))
}
