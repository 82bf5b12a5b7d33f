package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSoakShort runs the soak for a few seconds on both devices and reads
// its summary: ops ran on each, a sample was checked, and the verdict is a
// pass (pools empty at the end, no mismatch, no error without a sentinel).
func TestSoakShort(t *testing.T) {
	requireDevice(t, "opencl")
	requireDevice(t, "vulkan")
	out := filepath.Join(t.TempDir(), "soak.json")
	var code int
	stdout, stderr := captureOutput(t, func() {
		code = run([]string{"soak", "--duration", "4s", "--goroutines", "4", "--report", "1s", "--json", out})
	})
	require.Equal(t, 0, code, "soak exit status\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	var sum soakSummary
	require.NoError(t, json.Unmarshal(b, &sum))
	assert.Len(t, sum.Devices, 2)
	assert.Positive(t, sum.Ops)
	assert.Positive(t, sum.Checked)
	assert.Zero(t, sum.Mismatches)
	assert.NotEmpty(t, sum.Samples)
	for name, live := range sum.FinalPoolLive {
		assert.Zero(t, live, "%s pool live bytes at the end", name)
	}
	assert.Contains(t, sum.Verdict, "pass")
}

// TestRSSSlope: the fit over the second half of the readings, in MB per
// minute, and no verdict from too few readings.
func TestRSSSlope(t *testing.T) {
	var s []soakSample
	for i := 0; i < 12; i++ {
		rss := int64(100 << 20)
		if i >= 6 {
			rss += int64(i-6) * (3 << 20) // 3 MB per minute from minute 6
		} else {
			rss = int64(i) * (40 << 20) // warm-up, left out
		}
		s = append(s, soakSample{ElapsedS: float64(60 * i), RSSBytes: rss})
	}
	slope, ok := rssSlope(s)
	require.True(t, ok)
	assert.InDelta(t, 3, slope, 1e-9)
	_, ok = rssSlope(s[:minSlopeSamples-1])
	assert.False(t, ok)

	// readings after the deadline (workers finishing a last op, a kernel
	// build among them) are left out of the fit, however steep
	for i := 12; i < 20; i++ {
		s = append(s, soakSample{ElapsedS: float64(60 * i), RSSBytes: int64(100+40*i) << 20, Draining: true})
	}
	slope, ok = rssSlope(s)
	require.True(t, ok)
	assert.InDelta(t, 3, slope, 1e-9)
	// and too few readings under load give no verdict, however many drain
	_, ok = rssSlope(s[minSlopeSamples-1:])
	assert.False(t, ok)
}
