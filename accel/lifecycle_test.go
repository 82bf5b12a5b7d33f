package accel

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelkern/accel/host"
)

// openOwnDevice opens a device of backend b that the test alone uses (the
// lifecycle tests close theirs), failing under CI=true when there is none.
func openOwnDevice(t *testing.T, b string) *Device {
	t.Helper()
	return openOwnDeviceWith(t, b, Options{Validation: true})
}

// openOwnDeviceWith is openOwnDevice with options.
func openOwnDeviceWith(t *testing.T, b string, opts Options) *Device {
	t.Helper()
	sel := b
	if env := os.Getenv("ACCEL_TEST_" + b); env != "" {
		sel = env
	}
	d, err := OpenWith(sel, opts)
	if err != nil {
		require.NotEqual(t, "true", os.Getenv("CI"), "no %s device in CI: %v", b, err)
		t.Skipf("no %s device: %v", b, err)
	}
	return d
}

// forEachBackend runs f as a subtest per backend, with the backend's name.
func forEachBackend(t *testing.T, f func(t *testing.T, b string)) {
	for _, b := range []string{host.OpenCL, host.Vulkan} {
		t.Run(b, func(t *testing.T) { f(t, b) })
	}
}

// TestLifecycleMisuse: misuse of tensors, tables and devices is an error
// wrapping a sentinel, never a panic.
func TestLifecycleMisuse(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b string) {
		d := openOwnDevice(t, b)
		other := openOwnDevice(t, b)
		defer other.Close()

		x, err := FromInt64s([]int64{6}, []int64{3, 1, 2, 3, 0, 1})
		require.NoError(t, err)
		dx := mustUpload(t, d, x)
		ox := mustUpload(t, other, x)
		idx := mustUpload(t, d, mustTensor(FromInt64s([]int64{6}, []int64{0, 1, 0, 1, 0, 1})))
		base := mustUpload(t, d, hostZeros(Int64, 2))

		// A tensor of another device, as input and as output.
		_, err = d.Cumsum(ox, true)
		require.ErrorIs(t, err, ErrInvalidArgument, "cumsum of another device's tensor")
		_, err = d.ScatterReduce(base, 0, ox, dx, Sum, true)
		require.ErrorIs(t, err, ErrInvalidArgument, "scatter_reduce with another device's index")
		require.ErrorIs(t, d.Copy(ox, dx), ErrInvalidArgument, "copy into another device's tensor")

		// Double release, and use after release.
		gone := mustUpload(t, d, x)
		gone.Release()
		gone.Release()
		_, err = gone.ToHost()
		require.ErrorIs(t, err, ErrClosed, "ToHost after Release")
		_, err = d.Cumsum(gone, true)
		require.ErrorIs(t, err, ErrClosed, "cumsum of a released tensor")
		_, _, err = d.Sort(gone, true)
		require.ErrorIs(t, err, ErrClosed, "sort of a released tensor")
		require.ErrorIs(t, d.Copy(dx, gone), ErrClosed, "copy from a released tensor")

		// A hash table used after Release.
		tab, err := d.NewHashTable(16)
		require.NoError(t, err)
		require.NoError(t, tab.Insert(dx))
		tab.Release()
		tab.Release()
		require.ErrorIs(t, tab.Insert(dx), ErrClosed, "insert after Release")
		_, err = tab.Lookup(dx)
		require.ErrorIs(t, err, ErrClosed, "lookup after Release")
		require.ErrorIs(t, tab.Reset(), ErrClosed, "reset after Release")

		// A live table and tensors when the device closes; concurrent Close calls.
		tab2, err := d.NewHashTable(16)
		require.NoError(t, err)
		var wg sync.WaitGroup
		closeErrs := make([]error, 4)
		for i := range closeErrs {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				closeErrs[i] = d.Close()
			}(i)
		}
		wg.Wait()
		for i, err := range closeErrs {
			require.NoError(t, err, "concurrent Close %d", i)
		}
		require.NoError(t, d.Close(), "Close again")

		_, err = dx.ToHost()
		require.ErrorIs(t, err, ErrClosed, "ToHost after the device closed")
		_, err = d.Cumsum(dx, true)
		require.ErrorIs(t, err, ErrClosed, "cumsum after the device closed")
		_, err = d.ScatterReduce(base, 0, idx, dx, Sum, true)
		require.ErrorIs(t, err, ErrClosed, "scatter_reduce after the device closed")
		_, err = d.Upload(x)
		require.ErrorIs(t, err, ErrClosed, "upload after the device closed")
		_, err = d.NewHashTable(8)
		require.ErrorIs(t, err, ErrClosed, "new hash table after the device closed")
		require.ErrorIs(t, tab2.Insert(dx), ErrClosed, "insert after the device closed")
		require.ErrorIs(t, d.Sync(), ErrClosed, "sync after the device closed")
		dx.Release()
		idx.Release()
		base.Release()
		tab2.Release()

		// The other device is untouched.
		got, err := other.Cumsum(ox, false)
		require.NoError(t, err)
		h, err := got.ToHost()
		require.NoError(t, err)
		require.Equal(t, []int64{3, 4, 6, 9, 9, 10}, h.Int64s())
	})
}

// TestCloseWhileOpsInFlight: goroutines running ops while another closes
// the device finish or fail with a sentinel error; nothing panics or hangs.
func TestCloseWhileOpsInFlight(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b string) {
		var closedSeen atomic.Int64
		for round := 0; round < 3; round++ {
			d := openOwnDevice(t, b)
			const n = 20000
			vals := make([]int64, n)
			for i := range vals {
				vals[i] = int64((i * 7919) % 1000)
			}
			dv := mustUpload(t, d, mustTensor(FromInt64s([]int64{n}, vals)))
			const workers = 4
			var wg sync.WaitGroup
			start := make(chan struct{})
			errs := make(chan error, workers*64)
			for w := 0; w < workers; w++ {
				wg.Add(1)
				go func(w int) {
					defer wg.Done()
					defer func() {
						if r := recover(); r != nil {
							errs <- fmt.Errorf("worker %d panicked: %v", w, r)
						}
					}()
					<-start
					for i := 0; i < 64; i++ {
						var err error
						switch (w + i) % 3 {
						case 0:
							var c *DeviceTensor
							if c, err = d.Cumsum(dv, true); err == nil {
								_, err = c.ToHost()
								c.Release()
							}
						case 1:
							var s, p *DeviceTensor
							if s, p, err = d.Sort(dv, true); err == nil {
								s.Release()
								p.Release()
							}
						default:
							var u, inv, c *DeviceTensor
							if u, inv, c, err = d.Unique(dv); err == nil {
								u.Release()
								inv.Release()
								c.Release()
							}
						}
						if err != nil {
							if errors.Is(err, ErrClosed) {
								closedSeen.Add(1)
							} else {
								errs <- fmt.Errorf("worker %d op %d: %w", w, i, err)
							}
							return
						}
					}
				}(w)
			}
			close(start)
			// Close after the workers have some work queued.
			for deadline := time.Now().Add(5 * time.Second); d.Stats().Launches < int64(2+round*5) && time.Now().Before(deadline); {
				runtime.Gosched()
			}
			require.NoError(t, d.Close())
			wg.Wait()
			close(errs)
			for err := range errs {
				assert.NoError(t, err, "round %d", round)
			}
			dv.Release()
		}
		assert.Positive(t, closedSeen.Load(), "no op met the closed device: the test closed it too late")
	})
}
