package accel

import (
	"fmt"

	"github.com/accelkern/accel/host"
	"github.com/accelkern/accel/host/kernels"
)

// planRadix plans the passes of the stable radix sort of n keys (see
// clkernels/common/radix_body.h): on GPUs the tiled passes of
// planRadixTiled; on CPUs the digit width (8 bits, where a work-item's 256
// counters live in cache, and on llvmpipe, whose compiler grows fast with
// more) and the number of work-items B, each owning a contiguous chunk of
// keys. B grows with the compute units and shrinks for small inputs (a
// histogram of 2^bits x B counts is scanned every pass), and every chunk
// stays under the driver's loop limit. keyBytes is the keys' word, 4 or 8
// bytes; the entries the keys carry (their positions, or a payload) lie in
// [0, entryLimit).
func planRadix(caps host.Caps, n int64, keyBytes int, entryLimit int64) host.Plan {
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
		return planRadixTiled(caps, n, keyBytes, entryLimit)
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
	// the passes whose digit is one for every key (the top bytes of
	// indices and small integers: five of eight for int64 keys below
	// 2^20) skipped on the device, from the first count's OR and AND of
	// the keys (radixRun.chunkPasses)
	p.Knobs = []host.Knob{host.KnobRadixBits.Set(bits), host.KnobRadixSkip.Set(1)}
	p.Reason += "; passes with one digit skipped"
	b := groups * int64(local)
	p.TileElems = (n + b - 1) / b // the chunk of each work-item
	p.Tiles = b
	return p
}

// planRadixTiled plans the radix sort's tiled passes (radix_tcount and
// radix_tscatter in clkernels/common/radix_body.h), planRadix's choice on
// GPUs: 8-bit digits (4 passes for 32-bit keys), each tile ranked in two
// 4-bit rounds, one work-group per tile at a time, the digit runs stored
// by consecutive lanes. Tiles of 256 lanes x 8 keys on OpenCL, 512 x 4 on
// Vulkan where its scratch fits (on the H200, 16M uint32 keys with their
// permutation: OpenCL 1.81 ms with 256 x 8, 1.87 with 256 x 4; Vulkan 2.16
// with 256 x 8, 1.83 with 512 x 4; with 4-bit digits in one round, 8
// passes, 2.13 and 2.38). The work-group scratch (radix_tile.h: the lanes'
// packed counts of a round's digits, each digit's run offset, the tile's
// keys of keyBytes and entries) must fit the device's local memory, so
// the tile shrinks where it is small. The passes are Onesweep's (knob
// RADIX_SWEEP): one count of every pass's digits, then a launch per pass
// whose tiles look back for their offsets. Where the device has subgroup
// ballots (Vulkan's, NVIDIA OpenCL's warp votes), a tile is ranked in one
// round of warp-level multisplit instead (knob RADIX_SGS,
// radixSubgroups). Entries below 2^32 (entryLimit) take one scratch word,
// not two (knob RADIX_EW), and where the ballots rank, the lanes then
// take more keys each, up to twice as many, as far as the scratch allows
// (the raking rounds keep their keys a lane: their code
// for AMD's gfx90a, the other GPU compiled offline, spilled 352 bytes a
// lane to scratch memory with 16 keys, 84 with 8). TileElems is the
// tile, Tiles their count.
func planRadixTiled(caps host.Caps, n int64, keyBytes int, entryLimit int64) host.Plan {
	const bits = 8
	ew := radixEntryWords(entryLimit)
	local, kpt := host.Pow2Local(caps, 256, 0), int64(8)
	scratch := func(kpt int64) int64 {
		return radixTiledScratch(bits, local, kpt, keyBytes, ew, radixSubgroups(caps, bits, local))
	}
	fits := func(kpt int64) bool { return caps.LocalMemBytes <= 0 || scratch(kpt) <= caps.LocalMemBytes }
	device, tiles := "gpu", "tiles"
	if caps.Backend == host.Vulkan && host.Pow2Local(caps, 512, 0) == 512 {
		local, kpt = 512, 4
		if fits(kpt) {
			device, tiles = "gpu vulkan", "tiles of 512 lanes"
		} else {
			local, kpt = 256, 8
		}
	}
	for !fits(kpt) && (kpt > 1 || local > 1) {
		if kpt > 1 {
			kpt /= 2
		} else {
			local /= 2
		}
	}
	sgs := radixSubgroups(caps, bits, local)
	ranking := "in two 4-bit rounds"
	if sgs > 0 {
		ranking = fmt.Sprintf("in one round of subgroup ballots (%d subgroups of %d)", sgs, caps.SubgroupSize)
	}
	p := host.Plan{Kernel: "radix", Reason: fmt.Sprintf("%s: 8-bit digits, %s ranked in work-group scratch %s, coalesced digit runs", device, tiles, ranking)}
	if ew == 1 && sgs > 0 && caps.LocalMemBytes > 0 {
		// the room the one-word entries free goes to more keys a lane,
		// up to twice as many: fewer tiles make fewer status words and
		// look-backs in every pass (a pass's status words moved about a
		// quarter of its keys' bytes with tiles of 2048 keys, 8 bytes a
		// key), and longer digit runs to store (Onesweep's tiles are 3840
		// to 5376 keys of 32 bits)
		for k := 2 * kpt; k > kpt; k-- {
			if fits(k) {
				p.Reason += fmt.Sprintf("; entries below 2^32 in one scratch word: %d keys a lane, not %d", k, kpt)
				kpt = k
				break
			}
		}
	}
	p.LocalSize = local
	p = withRadixTiles(caps, p, n, kpt)
	// Onesweep's passes: a tile looks back for the earlier tiles' counts;
	// a GPU runs the groups before it alongside, so it waits (at most
	// RADIX_SPIN rounds of polls) and the fixup launch has nothing to do.
	// A CPU driver (these plans forced, ACCEL_TEST_PLANS=gpu) may run a
	// group only after the one looking back has finished, so there a
	// tile waits little before it leaves itself to the fixup.
	spin := int64(16384)
	p.Reason += "; Onesweep: one count of every pass's digits, a launch a pass with look-back"
	if caps.Type == host.TypeCPU {
		spin = 64
		p.Reason += " (a CPU driver: tiles give up after 64 polls, the fixup writes them)"
	}
	// a pass whose digit is one for every key (the top bytes of indices
	// and small integers: five of eight passes for int64 keys below 2^20)
	// moves nothing: its launch finds it skipped (knob RADIX_SKIP), at a
	// round trip a tile to read its role
	p.Reason += "; passes with one digit skipped"
	p.Knobs = []host.Knob{host.KnobRadixBits.Set(bits), host.KnobRadixKpt.Set(kpt), host.KnobRadixSweep.Set(1),
		host.KnobRadixSpin.Set(spin), host.KnobRadixEw.Set(ew), host.KnobRadixSkip.Set(1)}
	if sgs > 0 {
		// the ballots leave each key's slot in a register, so the entries
		// can come after the ranking (knob RADIX_LATE, radix_body.h):
		// RADV's code for the 32-bit sweep with 256 x 16 keys took 96
		// registers a lane where it took 120 (the 64-bit one 144, 168)
		p.Knobs = append(p.Knobs, host.KnobRadixSgs.Set(sgs), host.KnobRadixLate.Set(1))
		p.Reason += "; entries loaded after the keys are ranked"
	}
	return p
}

// radixSubgroups is how many subgroups a tiled radix plan's group of
// local lanes has where the device can rank its tiles by subgroup ballots
// (knob RADIX_SGS, radix_body.h's RADIX_RANK_TILE_WL: each subgroup counts
// its keys of every digit, two digits a scratch word, so the scratch holds
// that many subgroups' counters), else 0: a device with ballots (Vulkan's,
// or NVIDIA's warp votes on its OpenCL), whose subgroups divide the group.
// A dispatch whose subgroups are not whole, or more, ranks in the raking
// rounds, as does an OpenCL build without NVIDIA's tricks (the driver
// refused them).
func radixSubgroups(caps host.Caps, bits int64, local int) int64 {
	sg := caps.SubgroupSize
	if !caps.SubgroupBallot || sg <= 0 || bits < 1 || local < sg || local%sg != 0 {
		return 0
	}
	return int64(local / sg)
}

// radixVariant is the radix file's variant for a plan sorting words of
// wordBytes: the SG build where the plan ranks by subgroup ballots on a
// device that has them (radixSubgroups).
func radixVariant(caps host.Caps, p host.Plan, wordBytes int) kernels.RadixVariant {
	v := kernels.RadixK32
	if wordBytes == 8 {
		v = kernels.RadixK64
	}
	if host.KnobRadixSgs.Of(p) > 0 && caps.Backend == host.Vulkan && caps.SubgroupBallot {
		v += "s"
	}
	return v
}

// radixEntryWords is the scratch words a tiled radix plan gives each
// slot's entry (knob RADIX_EW): one where the entries lie below
// entryLimit <= 2^32, else two.
func radixEntryWords(entryLimit int64) int64 {
	if entryLimit <= 1<<32 {
		return 1
	}
	return 2
}

// radixTiledScratch is the tiled radix passes' work-group scratch in bytes
// for keys of keyBytes (clkernels/common/radix_tile.h's RADIX_SCRATCH_LEN
// words: the lanes' packed counts of a round's digits, with a pad word
// every 32, or where more the counts of sgs subgroups, two digits a word;
// the segment sums, two words per digit, the tile's keys and their
// entries of ew words, with a pad slot every 32). Digits wider than 5 bits
// are ranked in two rounds of half their width (rounded up).
func radixTiledScratch(bits int64, local int, kpt int64, keyBytes int, ew, sgs int64) int64 {
	rb := bits
	if bits > 5 {
		rb = (bits + 1) / 2
	}
	words := int64(local) * (int64(1) << rb) / 2
	counters := max(words+words/32, sgs*(int64(1)<<bits)/2)
	slots := int64(local) * kpt
	slots += slots / 32 // a pad slot every 32
	return 4 * (counters + int64(local) + 2*(int64(1)<<bits) + slots*(int64(keyBytes)/4+ew))
}

// radixTiledScratchBytes is the work-group scratch a tiled radix plan
// (planRadixTiled) takes for keys of keyBytes, in bytes.
func radixTiledScratchBytes(p host.Plan, keyBytes int) int64 {
	ew := host.KnobRadixEw.Of(p)
	if ew <= 0 {
		ew = 2 // the knob's default
	}
	return radixTiledScratch(host.KnobRadixBits.Of(p), p.LocalSize, host.KnobRadixKpt.Of(p), keyBytes, ew, host.KnobRadixSgs.Of(p))
}

// withRadixTiles is tiled plan p (LocalSize set) with the kernels' tile,
// LocalSize x kpt keys, over n keys: its tiles, and a group each.
func withRadixTiles(caps host.Caps, p host.Plan, n, kpt int64) host.Plan {
	p.TileElems = int64(p.LocalSize) * kpt
	p.Tiles = (n + p.TileElems - 1) / p.TileElems
	p.Groups = host.FoldGroups(max(p.Tiles, 1), caps.MaxWorkGroupCount)
	return p
}

// radixMaps says whether a sort on plan p writes its keys XOR a mask from
// its last pass (radixSortMapped): the chunked passes and the sweep do,
// the tiled passes without the sweep do not.
func radixMaps(p host.Plan) bool {
	return host.KnobRadixKpt.Of(p) == 0 || host.KnobRadixSweep.Of(p) > 0
}
