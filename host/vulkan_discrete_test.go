package host

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A discrete GPU's memory on lavapipe (Options.EmulateDiscrete): device
// buffers are never mapped, so every transfer takes the staging path that
// only discrete GPUs take otherwise. The first GPU run (an H100) panicked
// there; these tests run it on every commit.

// vktDiscrete opens the first Vulkan device with its memory kept as a
// discrete GPU's, validation on.
func vktDiscrete(t *testing.T) *vkDevice {
	t.Helper()
	return vktOpenWith(t, Options{Validation: true, Timing: true, EmulateDiscrete: true})
}

// TestVulkanDiscreteTransfers moves data of every size class through the
// staging path (pieces shrunk to 64 KiB, so that a few kilobytes take
// several): uploads and downloads at aligned and odd offsets, sizes 0 to
// several pieces, 4- and 8-byte fills, and a kernel writing between them.
func TestVulkanDiscreteTransfers(t *testing.T) {
	d := vktDiscrete(t)
	defer vktClose(t, d)
	d.stagingBytes = 1 << 16
	const size = 3<<16 + 4096 + 24
	b, err := d.Alloc(size)
	require.NoError(t, err)
	defer b.Release()
	big, err := d.Alloc(3<<20 + 8) // CPU drivers import buffers this large: not when emulating
	require.NoError(t, err)
	defer big.Release()
	require.Nil(t, b.(*vkBuffer).b.mapped, "a device buffer is mapped")
	require.Nil(t, big.(*vkBuffer).b.mapped, "a large device buffer is mapped")
	require.Nil(t, big.(*vkBuffer).b.host, "a large device buffer is imported host memory")

	rng := rand.New(rand.NewSource(7))
	shadow := make([]byte, size) // what b holds
	rng.Read(shadow)
	require.NoError(t, d.Upload(b, 0, shadow))
	piece := int(d.stagingBytes)
	lens := []int{0, 1, 3, 4, 5, 8, 4095, 65535, 65536, 65537, piece - 1, piece, piece + 1, 2*piece + 7, size}
	offs := []int{0, 1, 4, 6, 4096, piece - 3, piece}
	for _, n := range lens {
		for _, off := range offs {
			if off+n > size {
				continue
			}
			src := make([]byte, n)
			rng.Read(src)
			require.NoError(t, d.Upload(b, int64(off), src), "upload %d bytes at %d", n, off)
			copy(shadow[off:], src)
			got := make([]byte, n)
			require.NoError(t, d.Download(b, int64(off), got), "download %d bytes at %d", n, off)
			require.Equal(t, -1, vktDiff(got, src), "round trip of %d bytes at %d: first differing byte", n, off)
		}
	}
	for _, pat := range [][]byte{{0x5a}, {1, 2, 3, 4}, {1, 2, 3, 4, 5, 6, 7, 8}} {
		off, n := 8, size-24
		require.NoError(t, d.Fill(b, int64(off), int64(n), pat))
		for i := 0; i < n; i++ {
			shadow[off+i] = pat[i%len(pat)]
		}
		got := make([]byte, size)
		require.NoError(t, d.Download(b, 0, got))
		require.Equal(t, -1, vktDiff(got, shadow), "fill with %d-byte pattern: first wrong byte", len(pat))
	}
	// a kernel's output, read back through staging
	vktColumn(t, d, big, int64(3<<20+8)/16)
	// waits count the device's work, not a staged read's own copy (as
	// OpenCL's blocking read of idle memory): one for a read after
	// queued work, none for a read of finished work
	require.NoError(t, d.Fill(b, 0, 64, []byte{7}))
	w0 := d.Stats().Waits
	require.NoError(t, d.Download(b, 0, make([]byte, 64)))
	w1 := d.Stats().Waits
	require.NoError(t, d.Download(b, 0, make([]byte, 64)))
	assert.Equal(t, []int64{1, 0}, []int64{w1 - w0, d.Stats().Waits - w1}, "waits of a read after a fill, and of a second read")
}

// TestVulkanStagedDownloadArena is the H100's panic: a download staged
// through an arena that the retirement of its own batch freed. A batch
// whose arenas the idle list cannot keep (shrunk to one arena here)
// stages an upload (one arena), an 8-byte fill (a second) and then a
// small download (a third: the batch's last arena is full); the batch's
// retirement keeps the first and frees the rest, so a download that
// reads its piece from a batch arena after the wait reads freed memory.
// Downloads stage through an arena of their own.
func TestVulkanStagedDownloadArena(t *testing.T) {
	d := vktDiscrete(t)
	defer vktClose(t, d)
	d.maxIdle = minArenaBytes
	b, err := d.Alloc(4 << 20)
	require.NoError(t, err)
	defer b.Release()
	for round := 0; round < 3; round++ {
		src := make([]byte, 96<<10) // staged: more than an update takes
		for i := range src {
			src[i] = byte(i*7 + round)
		}
		require.NoError(t, d.Upload(b, 0, src))
		pat := []byte{1, 2, 3, 4, 5, 6, 7, byte(round)}
		require.NoError(t, d.Fill(b, 1<<20, 2<<20, pat)) // stages a 1 MiB piece of the pattern
		got := make([]byte, 8)
		require.NoError(t, d.Download(b, 0, got[:4]), "round %d", round)
		require.Equal(t, src[:4], got[:4], "round %d: staged download", round)
		require.NoError(t, d.Download(b, 1<<20+8, got), "round %d", round)
		require.Equal(t, pat, got, "round %d: staged download after the fill", round)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	assert.Empty(t, d.pinned, "arenas still pinned")
}

// availableBytes is MemAvailable from /proc/meminfo, or 0.
func availableBytes() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemAvailable:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// TestVulkanStagedPast2GiB moves a buffer of the device's largest
// allocation, up to a little past 4 GiB (lavapipe: 2 GiB, exactly 2^31
// bytes, a length no int32 holds), to the device and back, through
// staging (the discrete GPU's path) and through the mapping (a unified
// memory's: one host view of the whole buffer), with offsets past 2^31
// (and 2^32 where the device allows), and checks every byte: no 32-bit
// length or offset on the way.
func TestVulkanStagedPast2GiB(t *testing.T) {
	for _, discrete := range []bool{true, false} {
		t.Run(fmt.Sprintf("discrete=%v", discrete), func(t *testing.T) {
			d := vktOpenWith(t, Options{Validation: true, Timing: true, EmulateDiscrete: discrete})
			defer vktClose(t, d)
			past2GiB(t, d)
		})
	}
}

func past2GiB(t *testing.T, d *vkDevice) {
	size := min(d.caps.MaxAllocBytes, 1<<32+1<<20)
	if size < 1<<31 {
		t.Skipf("%s: largest allocation %d MiB, below 2 GiB", d.caps.Name, size>>20)
	}
	if need := 2*size + 1<<30; availableBytes() < need {
		t.Skipf("needs %d MiB of free host memory (the buffer's on both sides), %d MiB available", need>>20, availableBytes()>>20)
	}
	b, err := d.Alloc(size)
	require.NoError(t, err)
	defer b.Release()
	host := make([]byte, size)
	word := func(i int64) uint64 { return uint64(i)*0x9E3779B97F4A7C15 + 1 }
	for i := int64(0); i+8 <= size; i += 8 {
		binary.LittleEndian.PutUint64(host[i:], word(i))
	}
	require.NoError(t, d.Upload(b, 0, host))
	clear(host)
	require.NoError(t, d.Download(b, 0, host))
	for i := int64(0); i+8 <= size; i += 8 {
		if got := binary.LittleEndian.Uint64(host[i:]); got != word(i) {
			require.Failf(t, "wrong word", "byte offset %d of %d: got %#x, want %#x", i, size, got, word(i))
		}
	}
	// windows across 2^31 (and 2^32): a piece that starts below and ends above
	for _, at := range []int64{1<<31 - 5, 1<<32 - 5} {
		if at+16 > size {
			continue
		}
		src := []byte("across 2^31/2^32")
		require.NoError(t, d.Upload(b, at, src), "upload at %d", at)
		got := make([]byte, len(src))
		require.NoError(t, d.Download(b, at, got), "download at %d", at)
		require.Equal(t, string(src), string(got), "window at byte %d", at)
	}
	mappedTo := b.(*vkBuffer).b.mapped != nil
	t.Logf("%s: %d bytes (2^31 + %d) to the device and back, mapped: %v", d.caps.Name, size, size-1<<31, mappedTo)
}
