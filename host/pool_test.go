package host

import (
	"bytes"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// countingDevice counts live driver buffers, to prove the pool neither
// leaks nor allocates when it should reuse.
type countingDevice struct {
	Device
	allocs, live atomic.Int64
}

type countedBuf struct {
	Buffer
	d    *countingDevice
	once sync.Once
}

func (b *countedBuf) Release() {
	b.once.Do(func() { b.d.live.Add(-1); b.Buffer.Release() })
}

func (d *countingDevice) Alloc(size int64) (Buffer, error) {
	b, err := d.Device.Alloc(size)
	if err != nil {
		return nil, err
	}
	d.allocs.Add(1)
	d.live.Add(1)
	return &countedBuf{Buffer: b, d: d}, nil
}

func unwrapCounted(b Buffer) Buffer {
	if pb, ok := b.(*PooledBuffer); ok {
		b = pb.Underlying()
	}
	return b.(*countedBuf).Buffer
}

func TestSizeClass(t *testing.T) {
	prev := int64(0)
	for size := int64(0); size < 1<<20; size += 1 + size/7 {
		c := sizeClass(size)
		if c < size || c < prev || (size > 256 && float64(c) > 1.25*float64(size)+1) {
			t.Fatalf("sizeClass(%d) = %d (previous %d)", size, c, prev)
		}
		prev = c
	}
}

func TestPoolReuseCapAndClose(t *testing.T) {
	forBackends(t, func(t *testing.T, dev Device) {
		d := &countingDevice{Device: dev}
		p := NewPool(d, 64<<20)
		for i := 0; i < 1000; i++ {
			b, err := p.Alloc(3 << 20)
			if err != nil {
				t.Fatal(err)
			}
			b.Release()
			b.Release() // a second release must not return it twice
		}
		if n := d.allocs.Load(); n != 1 {
			t.Fatalf("1000 alloc/release loops made %d driver allocations, want 1", n)
		}
		if s := p.Stats(); s.Hits != 999 || s.Misses != 1 || s.BytesInUse != 0 {
			t.Fatalf("stats %+v", s)
		}
		// The cap: 40 live 3 MiB buffers returned to a 64 MiB pool keep <= 64 MiB idle.
		var bufs []*PooledBuffer
		for i := 0; i < 40; i++ {
			b, err := p.Alloc(3 << 20)
			if err != nil {
				t.Fatal(err)
			}
			bufs = append(bufs, b)
		}
		for _, b := range bufs {
			b.Release()
		}
		if s := p.Stats(); s.BytesHeld > 64<<20 || s.BytesHeld == 0 {
			t.Fatalf("held %d bytes with a cap of %d", s.BytesHeld, 64<<20)
		}
		// Idle trimming.
		p.SetIdleTimeout(time.Nanosecond)
		time.Sleep(time.Millisecond)
		b, err := p.Alloc(1000)
		if err != nil {
			t.Fatal(err)
		}
		if s := p.Stats(); s.BytesHeld != 0 {
			t.Fatalf("idle buffers not trimmed: %+v", s)
		}
		b.Release()
		p.Close()
		if n := d.live.Load(); n != 0 {
			t.Fatalf("%d driver buffers live after Close", n)
		}
	})
}

// TestPoolNoAliasConcurrent: goroutines take buffers, stamp them with their
// own pattern, yield, and check that nobody else wrote into them.
func TestPoolNoAliasConcurrent(t *testing.T) {
	forBackends(t, func(t *testing.T, dev Device) {
		d := &countingDevice{Device: dev}
		p := NewPool(d, 16<<20)
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				for i := 0; i < 40; i++ {
					size := int64(4096 * (1 + (g+i)%3))
					b, err := p.Alloc(size)
					if err != nil {
						errs <- err
						return
					}
					pat := []byte{byte(g), byte(i), 0x5A, byte(g ^ i)}
					if err := dev.Fill(unwrapCounted(b), 0, size, pat); err != nil {
						errs <- err
						return
					}
					time.Sleep(50 * time.Microsecond)
					got := make([]byte, size)
					if err := dev.Download(unwrapCounted(b), 0, got); err != nil {
						errs <- err
						return
					}
					if !bytes.Equal(got, bytes.Repeat(pat, int(size/4))) {
						errs <- fmt.Errorf("goroutine %d: buffer written by another owner", g)
						return
					}
					b.Release()
				}
			}(g)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		p.Close()
		if n := d.live.Load(); n != 0 {
			t.Fatalf("%d driver buffers live after Close", n)
		}
	})
}
