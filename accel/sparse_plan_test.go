package accel

import (
	"testing"

	"github.com/accelkern/accel/host"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPlanUnion: the bucket union on CPU drivers without a loop limit
// only; buckets of about 32K records whose low key bits fit 32-bit
// records and never split a key's two tags; chunks of at most 32K.
func TestPlanUnion(t *testing.T) {
	cpu := host.Caps{Backend: host.OpenCL, Type: host.TypeCPU, ComputeUnits: 2}
	lvp := host.Caps{Backend: host.Vulkan, Type: host.TypeCPU, ComputeUnits: 2, LoopLimit: 65535}
	gpu := host.Caps{Backend: host.Vulkan, Type: host.TypeDiscreteGPU, ComputeUnits: 132}
	assert.Equal(t, unionByCoalescing, planUnion(gpu, 11_000_000, 36).Strategy, "gpu")
	assert.Equal(t, unionByCoalescing, planUnion(lvp, 11_000_000, 36).Strategy, "loop limit")
	assert.Equal(t, unionByCoalescing, planUnion(cpu, 1<<31, 36).Strategy, "positions past 32 bits")
	assert.Equal(t, unionByCoalescing, planUnion(cpu, 1000, 44).Strategy, "keys past 43 bits")
	p := planUnion(cpu, 11_000_000, 36)
	require.Equal(t, unionByBuckets, p.Strategy, p.Reason)
	assert.Equal(t, 9, p.BucketBits, "11M records in 512 buckets of about 21K")
	assert.Equal(t, int64(32<<10), p.Chunk)
	p = planUnion(cpu, 1000, 43)
	require.Equal(t, unionByBuckets, p.Strategy, p.Reason)
	assert.Equal(t, 12, p.BucketBits, "44 tagged bits: 32 in the records")
	assert.Equal(t, int64(1024), p.Chunk, "small inputs: chunks of at least 1024")
	for _, c := range []struct {
		keyBits, bits, want int
	}{{0, 0, 0}, {0, 5, 0}, {3, 9, 3}, {36, 0, 5}, {36, 40, 12}, {20, 7, 7}} {
		p := planUnionBuckets(100, c.keyBits, c.bits, 7)
		require.Equal(t, unionByBuckets, p.Strategy, "%+v", c)
		assert.Equal(t, c.want, p.BucketBits, "%+v", c)
		assert.LessOrEqual(t, c.keyBits+1-p.BucketBits, 32, "%+v: records' bits", c)
		assert.GreaterOrEqual(t, c.keyBits+1-p.BucketBits, 1, "%+v: a key's tags share a bucket", c)
	}
	assert.Equal(t, unionByCoalescing, planUnionBuckets(100, 45, 0, 7).Strategy, "45-bit keys")
}
