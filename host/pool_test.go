package host_test

import (
	"bytes"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelkern/accel/host"
)

// countingDevice counts live driver buffers, to prove the pool neither
// leaks nor allocates when it should reuse.
type countingDevice struct {
	host.Device
	allocs, live atomic.Int64
}

type countedBuf struct {
	host.Buffer
	d    *countingDevice
	once sync.Once
}

func (b *countedBuf) Release() {
	b.once.Do(func() { b.d.live.Add(-1); b.Buffer.Release() })
}

func (d *countingDevice) Alloc(size int64) (host.Buffer, error) {
	b, err := d.Device.Alloc(size)
	if err != nil {
		return nil, err
	}
	d.allocs.Add(1)
	d.live.Add(1)
	return &countedBuf{Buffer: b, d: d}, nil
}

func unwrapCounted(b host.Buffer) host.Buffer {
	if pb, ok := b.(*host.PooledBuffer); ok {
		b = pb.Underlying()
	}
	return b.(*countedBuf).Buffer
}

func TestSizeClass(t *testing.T) {
	prev := int64(0)
	for size := int64(0); size < 1<<20; size += 1 + size/7 {
		c := host.SizeClass(size)
		require.GreaterOrEqual(t, c, size, "sizeClass(%d) = %d (previous %d): below the size", size, c, prev)
		require.GreaterOrEqual(t, c, prev, "sizeClass(%d) = %d (previous %d): not monotonic", size, c, prev)
		if size > 256 {
			require.LessOrEqual(t, float64(c), 1.25*float64(size)+1, "sizeClass(%d) = %d (previous %d): wastes over 25%%", size, c, prev)
		}
		prev = c
	}
}

func TestPoolReuseCapAndClose(t *testing.T) {
	forBackends(t, func(t *testing.T, dev host.Device) {
		d := &countingDevice{Device: dev}
		p := host.NewPool(d, 64<<20)
		for i := 0; i < 1000; i++ {
			b, err := p.Alloc(3 << 20)
			require.NoError(t, err)
			b.Release()
			b.Release() // a second release must not return it twice
		}
		require.Equal(t, int64(1), d.allocs.Load(), "driver allocations for 1000 alloc/release loops")
		s := p.Stats()
		require.Equal(t, int64(999), s.Hits, "stats %+v", s)
		require.Equal(t, int64(1), s.Misses, "stats %+v", s)
		require.Equal(t, int64(0), s.BytesInUse, "stats %+v", s)
		// The cap: 40 live 3 MiB buffers returned to a 64 MiB pool keep <= 64 MiB idle.
		var bufs []*host.PooledBuffer
		for i := 0; i < 40; i++ {
			b, err := p.Alloc(3 << 20)
			require.NoError(t, err)
			bufs = append(bufs, b)
		}
		for _, b := range bufs {
			b.Release()
		}
		s = p.Stats()
		require.LessOrEqual(t, s.BytesHeld, int64(64<<20), "held bytes with a cap of %d", 64<<20)
		require.NotZero(t, s.BytesHeld, "held bytes with a cap of %d", 64<<20)
		// Idle trimming.
		p.SetIdleTimeout(time.Nanosecond)
		time.Sleep(time.Millisecond)
		b, err := p.Alloc(1000)
		require.NoError(t, err)
		s = p.Stats()
		require.Zero(t, s.BytesHeld, "idle buffers not trimmed: %+v", s)
		b.Release()
		p.Close()
		require.Zero(t, d.live.Load(), "driver buffers live after Close")
	})
}

// TestPoolNoAliasConcurrent: goroutines take buffers, stamp them with their
// own pattern, yield, and check that nobody else wrote into them.
func TestPoolNoAliasConcurrent(t *testing.T) {
	forBackends(t, func(t *testing.T, dev host.Device) {
		d := &countingDevice{Device: dev}
		p := host.NewPool(d, 16<<20)
		var wg sync.WaitGroup
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				// assert, not require: this is not the test's goroutine
				for i := 0; i < 40; i++ {
					size := int64(4096 * (1 + (g+i)%3))
					b, err := p.Alloc(size)
					if !assert.NoError(t, err, "goroutine %d", g) {
						return
					}
					pat := []byte{byte(g), byte(i), 0x5A, byte(g ^ i)}
					if !assert.NoError(t, dev.Fill(unwrapCounted(b), 0, size, pat), "goroutine %d", g) {
						return
					}
					time.Sleep(50 * time.Microsecond)
					got := make([]byte, size)
					if !assert.NoError(t, dev.Download(unwrapCounted(b), 0, got), "goroutine %d", g) {
						return
					}
					if !assert.Equal(t, -1, firstDiff(got, bytes.Repeat(pat, int(size/4))),
						"goroutine %d: buffer written by another owner (first foreign byte)", g) {
						return
					}
					b.Release()
				}
			}(g)
		}
		wg.Wait()
		p.Close()
		require.Zero(t, d.live.Load(), "driver buffers live after Close")
	})
}
