package host

import (
	"sync"
	"sync/atomic"
	"time"
)

// kernelCache holds a device's compiled kernels (OpenCL programs, Vulkan
// pipelines) by key. A miss builds outside the device's lock, and
// concurrent first calls for one key wait for a single build. A failed
// build is not kept: the next call tries again.
type kernelCache[T any] struct {
	mu sync.Mutex
	m  map[string]*cacheEntry[T]

	compiles  atomic.Int64
	compileNs atomic.Int64
	hits      atomic.Int64
	diskHits  atomic.Int64
}

type cacheEntry[T any] struct {
	done chan struct{}
	v    T
	err  error
}

// get returns the value for key, calling build once to make it.
func (c *kernelCache[T]) get(key string, build func() (T, error)) (T, error) {
	c.mu.Lock()
	if c.m == nil {
		c.m = map[string]*cacheEntry[T]{}
	}
	if e, ok := c.m[key]; ok {
		c.mu.Unlock()
		<-e.done
		if e.err == nil {
			c.hits.Add(1)
		}
		return e.v, e.err
	}
	e := &cacheEntry[T]{done: make(chan struct{})}
	c.m[key] = e
	c.mu.Unlock()
	t0 := time.Now()
	e.v, e.err = build()
	c.compiles.Add(1)
	c.compileNs.Add(int64(time.Since(t0)))
	if e.err != nil {
		c.mu.Lock()
		delete(c.m, key)
		c.mu.Unlock()
	}
	close(e.done)
	return e.v, e.err
}

// each calls f on every value built so far (for Close).
func (c *kernelCache[T]) each(f func(T)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.m {
		select {
		case <-e.done:
			if e.err == nil {
				f(e.v)
			}
		default:
		}
	}
	c.m = nil
}

func (c *kernelCache[T]) stats(s *Stats) {
	s.Compiles, s.CompileNs, s.CacheHits = c.compiles.Load(), c.compileNs.Load(), c.hits.Load()
	s.DiskHits = c.diskHits.Load()
}
