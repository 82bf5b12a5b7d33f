package host

import (
	"fmt"
	"math/bits"
	"os"
	"strconv"
	"sync"
	"time"
)

// Pool reuses device buffers by size class, for one Device. Writing into
// freshly allocated memory is an order of magnitude slower than into reused
// memory on every driver measured here (first-touch page faults on CPU
// drivers, allocation cost on GPU drivers), so ops allocate through a Pool.
//
// A buffer released by its owner goes back to the pool's free list for its
// class; the pool keeps at most Cap bytes idle, evicting the least recently
// returned buffers first, and frees buffers idle longer than IdleTimeout at
// the next pool call. A Pool is safe for concurrent use. It never hands one
// driver buffer to two owners: a buffer is in exactly one of the free list
// or a live owner's hands.
type Pool struct {
	dev         Device
	cap         int64
	idleTimeout time.Duration

	mu     sync.Mutex
	hook   func(size int64) error // tests: fails allocations on demand
	free   map[int64][]idleBuf    // by class size
	held   int64                  // bytes idle in free lists
	inUse  int64                  // bytes of class capacity handed out
	used   int64                  // requested bytes handed out
	peak   int64                  // the most requested bytes on loan at once since ResetPeak
	stats  PoolStats
	closed bool
}

type idleBuf struct {
	buf   Buffer
	since time.Time
}

// PoolStats are a pool's counters.
type PoolStats struct {
	Hits       int64 `json:"pool_hits"`         // allocations served from the free lists
	Misses     int64 `json:"pool_misses"`       // allocations that went to the driver
	Frees      int64 `json:"pool_frees"`        // driver buffers freed (eviction, trim, close)
	BytesHeld  int64 `json:"pool_bytes_held"`   // idle bytes kept for reuse
	BytesInUse int64 `json:"pool_bytes_in_use"` // class bytes handed out and not yet returned
	// PeakBytes is the most requested bytes on loan at once (the sizes
	// asked for, not their classes) since the pool was made or ResetPeak.
	PeakBytes int64 `json:"pool_peak_bytes"`
	CapBytes  int64 `json:"pool_cap_bytes"`
}

// DefaultPoolFraction is the inverse share of the device's memory a pool
// may keep idle unless ACCEL_POOL_BYTES says otherwise.
const DefaultPoolFraction = 2

// DefaultPoolCap returns ACCEL_POOL_BYTES if set (bytes; 0 disables
// pooling), else half of the device's global memory .
func DefaultPoolCap(c Caps) (int64, error) {
	if s := os.Getenv("ACCEL_POOL_BYTES"); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v < 0 {
			return 0, fmt.Errorf("ACCEL_POOL_BYTES = %q: must be a byte count >= 0", s)
		}
		return v, nil
	}
	return c.GlobalMemBytes / DefaultPoolFraction, nil
}

// NewPool returns a pool over dev keeping at most capBytes idle.
func NewPool(dev Device, capBytes int64) *Pool {
	return &Pool{dev: dev, cap: capBytes, idleTimeout: time.Minute, free: map[int64][]idleBuf{}}
}

// SetAllocHook installs f, which every Alloc calls first with the size
// asked for; an error from f fails that Alloc (wrapped with
// ErrOutOfMemory), as a driver out of memory would. Tests make each
// allocation of an op fail in turn with it. nil removes the hook.
func (p *Pool) SetAllocHook(f func(size int64) error) {
	p.mu.Lock()
	p.hook = f
	p.mu.Unlock()
}

// SetIdleTimeout sets how long an idle buffer may stay (default a minute).
func (p *Pool) SetIdleTimeout(d time.Duration) {
	p.mu.Lock()
	p.idleTimeout = d
	p.mu.Unlock()
}

// sizeClass rounds size up to one of four classes per power of two (so at
// most 25% is wasted), with 256 bytes as the smallest class.
func sizeClass(size int64) int64 {
	if size <= 256 {
		return 256
	}
	e := 63 - bits.LeadingZeros64(uint64(size-1)) // 2^e < size <= 2^(e+1)
	step := int64(1) << (e - 2)
	return (size + step - 1) / step * step
}

// PooledBuffer is a Buffer on loan from a Pool; Release returns it.
type PooledBuffer struct {
	pool  *Pool
	buf   Buffer
	size  int64
	class int64
	mu    sync.Mutex
}

// Size returns the size asked for (the driver buffer may be larger).
func (b *PooledBuffer) Size() int64 { return b.size }

// Underlying returns the driver buffer, or nil once released.
func (b *PooledBuffer) Underlying() Buffer {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf
}

// Release returns the buffer to its pool. It is safe to call more than once.
func (b *PooledBuffer) Release() {
	b.mu.Lock()
	buf := b.buf
	b.buf = nil
	b.mu.Unlock()
	if buf != nil {
		b.pool.put(buf, b.class, b.size)
	}
}

// Alloc returns a buffer of at least size bytes (contents undefined), from
// the free list of its class when one is idle, else from the driver.
func (p *Pool) Alloc(size int64) (*PooledBuffer, error) {
	if size < 0 {
		return nil, fmt.Errorf("pool: alloc size %d < 0", size)
	}
	class := sizeClass(size)
	if class > p.dev.Caps().MaxAllocBytes && size <= p.dev.Caps().MaxAllocBytes {
		class = size // the class would not fit: take the exact size
	}
	p.mu.Lock()
	hook := p.hook
	p.mu.Unlock()
	if hook != nil {
		if err := hook(size); err != nil {
			return nil, fmt.Errorf("pool: alloc %d bytes: %w: %w", size, err, ErrOutOfMemory)
		}
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, ErrClosed
	}
	p.trimLocked(time.Now())
	if l := p.free[class]; len(l) > 0 {
		ib := l[len(l)-1]
		p.free[class] = l[:len(l)-1]
		p.held -= class
		p.inUse += class
		p.lend(size)
		p.stats.Hits++
		p.mu.Unlock()
		return &PooledBuffer{pool: p, buf: ib.buf, size: size, class: class}, nil
	}
	p.stats.Misses++
	p.mu.Unlock()
	buf, err := p.dev.Alloc(class)
	if err != nil {
		// Free idle memory and try once more before giving up.
		if p.Trim(0) > 0 {
			buf, err = p.dev.Alloc(class)
		}
		if err != nil {
			return nil, err
		}
	}
	p.mu.Lock()
	p.inUse += class
	p.lend(size)
	p.mu.Unlock()
	return &PooledBuffer{pool: p, buf: buf, size: size, class: class}, nil
}

// lend counts size requested bytes on loan (p.mu held).
func (p *Pool) lend(size int64) {
	p.used += size
	p.peak = max(p.peak, p.used)
}

// ResetPeak starts PoolStats.PeakBytes again from the bytes on loan now.
func (p *Pool) ResetPeak() {
	p.mu.Lock()
	p.peak = p.used
	p.mu.Unlock()
}

func (p *Pool) put(buf Buffer, class, size int64) {
	p.mu.Lock()
	p.inUse -= class
	p.used -= size
	if p.closed || class > p.cap {
		p.stats.Frees++
		p.mu.Unlock()
		buf.Release()
		return
	}
	p.free[class] = append(p.free[class], idleBuf{buf: buf, since: time.Now()})
	p.held += class
	victims := p.evictLocked()
	p.mu.Unlock()
	for _, v := range victims {
		v.Release()
	}
}

// evictLocked drops the least recently returned buffers until held <= cap.
func (p *Pool) evictLocked() []Buffer {
	var victims []Buffer
	for p.held > p.cap {
		var oldClass int64 = -1
		var oldest time.Time
		for c, l := range p.free {
			if len(l) > 0 && (oldClass < 0 || l[0].since.Before(oldest)) {
				oldClass, oldest = c, l[0].since
			}
		}
		if oldClass < 0 {
			break
		}
		victims = append(victims, p.free[oldClass][0].buf)
		p.free[oldClass] = p.free[oldClass][1:]
		p.held -= oldClass
		p.stats.Frees++
	}
	return victims
}

// trimLocked frees buffers idle longer than the idle timeout.
func (p *Pool) trimLocked(now time.Time) {
	if p.idleTimeout <= 0 {
		return
	}
	for c, l := range p.free {
		keep := l[:0]
		for _, ib := range l {
			if now.Sub(ib.since) > p.idleTimeout {
				ib.buf.Release()
				p.held -= c
				p.stats.Frees++
			} else {
				keep = append(keep, ib)
			}
		}
		p.free[c] = keep
	}
}

// Trim frees every buffer idle for longer than olderThan (0: all idle
// buffers) and returns the bytes freed.
func (p *Pool) Trim(olderThan time.Duration) int64 {
	p.mu.Lock()
	now := time.Now()
	var victims []Buffer
	var freed int64
	for c, l := range p.free {
		keep := l[:0]
		for _, ib := range l {
			if now.Sub(ib.since) >= olderThan {
				victims = append(victims, ib.buf)
				freed += c
				p.stats.Frees++
			} else {
				keep = append(keep, ib)
			}
		}
		p.free[c] = keep
	}
	p.held -= freed
	p.mu.Unlock()
	for _, v := range victims {
		v.Release()
	}
	return freed
}

// Stats returns the pool's counters.
func (p *Pool) Stats() PoolStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.stats
	s.BytesHeld, s.BytesInUse, s.CapBytes, s.PeakBytes = p.held, p.inUse, p.cap, p.peak
	return s
}

// Close frees every idle buffer; buffers still on loan are freed when
// released (or by the device's Close).
func (p *Pool) Close() {
	p.Trim(0)
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
}
