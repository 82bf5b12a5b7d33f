package accel

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/accelkern/accel/reference"
)

// FuzzHashTable fuzzes the device hash table: the fuzzer's bytes pick a
// capacity (sometimes negative or huge) and a sequence of inserts, dense
// inserts, lookups and resets over keys drawn from a small pool (so keys
// repeat) that holds the extremes, the all-ones key among them. Every step
// must give the scalar table's ids and sizes, or fail as it does (a full
// table, after which only Reset is used); a bad capacity or key dtype is
// an error wrapping a sentinel. `make fuzz` runs it with the ops' targets.
func FuzzHashTable(f *testing.F) {
	for _, seed := range [][]byte{{}, {3, 1, 9, 2, 4, 5, 6, 7, 8, 1, 0, 2, 3}, {1, 0, 7, 3, 3, 3, 3, 3, 3, 3, 0, 0, 1, 2, 9}, {200, 2, 40, 255, 254, 253, 1, 2, 3}} {
		f.Add(seed)
	}
	f.Fuzz(hashFuzzCase)
}

// hashFuzzCase runs one of FuzzHashTable's inputs.
func hashFuzzCase(t *testing.T, data []byte) {
	{
		i := 0
		next := func() int {
			if i >= len(data) {
				return 0
			}
			i++
			return int(data[i-1])
		}
		capacity := int64(next() % 40)
		if c := next(); c >= 251 {
			capacity = []int64{-1, math.MinInt64, math.MaxInt64, 1 << 61, math.MaxInt64 / 4}[c-251]
		}
		pool := []int64{-1, 0, 1, 2, 3, math.MinInt64, math.MaxInt64, -2, 1 << 32, 7, 1<<63 - 2, 12345678901}
		type step struct {
			kind int // 0 insert, 1 dense insert, 2 lookup, 3 reset
			keys []int64
			dt   DType
		}
		var steps []step
		for len(steps) < 6 && i < len(data) {
			s := step{kind: next() % 4, dt: Int64}
			switch next() % 16 {
			case 0:
				s.dt = Uint64
			case 1:
				s.dt = Int32 // not a key dtype
			}
			for n := next() % 48; n > 0; n-- {
				s.keys = append(s.keys, pool[next()%len(pool)]+int64(next()%5))
			}
			steps = append(steps, s)
		}
		forEachDevice(t, func(t *testing.T, d *Device) {
			tab, err := d.NewHashTable(capacity)
			if capacity < 0 || capacity > 1<<20 {
				require.Error(t, err, "capacity %d", capacity)
				require.True(t, errors.Is(err, ErrInvalidArgument) || errors.Is(err, ErrTooLarge) || errors.Is(err, ErrOutOfMemory),
					"capacity %d: %v", capacity, err)
				return
			}
			require.NoError(t, err)
			defer tab.Release()
			ref := reference.NewHashTable(capacity)
			full := false
			for k, s := range steps {
				if s.kind == 3 || full {
					require.NoError(t, tab.Reset(), "step %d: reset", k)
					ref.Reset()
					full = false
					continue
				}
				x, err := NewTensor(s.dt, int64(len(s.keys)))
				require.NoError(t, err)
				for j, v := range s.keys {
					switch s.dt {
					case Int64:
						x.Int64s()[j] = v
					case Uint64:
						x.Uint64s()[j] = uint64(v)
					case Int32:
						x.Int32s()[j] = int32(v)
					}
				}
				dx := mustUpload(t, d, x)
				defer dx.Release()
				if s.kind == 2 {
					got, err := tab.Lookup(dx)
					if s.dt == Int32 {
						require.ErrorIs(t, err, ErrInvalidArgument, "step %d: lookup of int32 keys", k)
						continue
					}
					require.NoError(t, err, "step %d: lookup", k)
					want := make([]int64, len(s.keys))
					ref.Lookup(s.keys, want)
					requireElems(t, want, mustHost(t, got).Int64s(), "step %d: lookup of %v", k, s.keys)
					continue
				}
				want := make([]int64, len(s.keys))
				ok := s.dt == Int32 || ref.InsertDense(s.keys, want)
				var ids *DeviceTensor
				var unique int64
				if s.kind == 1 {
					ids, unique, err = tab.InsertDense(dx)
				} else {
					err = tab.Insert(dx)
				}
				switch {
				case s.dt == Int32:
					require.ErrorIs(t, err, ErrInvalidArgument, "step %d: insert of int32 keys", k)
				case !ok:
					require.ErrorIs(t, err, ErrTableFull, "step %d: %d keys over capacity %d", k, len(s.keys), capacity)
					full = true
				default:
					require.NoError(t, err, "step %d: insert", k)
					require.Equal(t, ref.Len(), tab.Len(), "step %d: size", k)
					if ids != nil {
						require.Equal(t, ref.Len(), unique, "step %d: unique", k)
						requireElems(t, want, mustHost(t, ids).Int64s(), "step %d: ids of %v", k, s.keys)
					}
				}
			}
		})
	}
}
