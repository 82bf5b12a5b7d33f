package accel

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"

	"github.com/accelkern/accel/host"
	"github.com/accelkern/accel/host/kernels"
)

// ErrTableFull: an insert would take a HashTable past the number of keys it
// was made for. The table then holds part of that insert; Reset empties it.
var ErrTableFull = errors.New("hash table full")

// HashTable is a device hash table from 64-bit keys (Int64 or Uint64
// tensors, any value, the all-ones key included) to dense ids: the keys of
// a table get the ids 0, 1, ... in order of first occurrence, over the
// inserts in call order and within one insert in input order, whatever
// order the device runs in. It is made for a fixed number of keys and
// holds them at load factor at most 0.5: open addressing with linear
// probing over a power-of-two number of slots at least twice the capacity,
// with a 64-bit compare-and-swap per probe, so it needs a device with
// 64-bit atomics (Info().Int64Atomics).
//
// It serves sparse convolution's index maps: InsertDense the output
// coordinates packed into int64 keys to get their dense output ids, then
// Lookup each neighbour's packed coordinates (-1 where there is none).
// Calls on one table must not run concurrently.
type HashTable struct {
	d        *Device
	table    *DeviceTensor // uint64 words: (key, value) per slot, see hash_body.h
	meta     *DeviceTensor // uint64[2]: key count, then the full and more flags (HT_META_*)
	capacity int64
	slots    int64
	size     int64
	broken   bool     // an insert overflowed: the contents are partial
	budget   int64    // tests: probes per work-item per launch (0: the plan's)
	probeCap int64    // the most probes of a key (0: the capacity's bound); Unique's tables bound them
	meta16   [16]byte // the meta words as probe last read them
	launches int      // tests: launches of the last insert or lookup
}

// NewHashTable returns an empty table for up to capacity distinct keys
// (slots: the smallest power of two at least 2*capacity, 16 bytes each).
// It fails with ErrUnsupported on a device without 64-bit atomics and with
// ErrTooLarge when the table does not fit one allocation.
func (d *Device) NewHashTable(capacity int64) (*HashTable, error) {
	t, err := d.newHashTable("hash_table", capacity)
	if err != nil {
		return nil, err
	}
	if err := d.flush("hash_table"); err != nil {
		t.Release()
		return nil, err
	}
	return t, nil
}

// newHashTable is NewHashTable for op with its clearing queued, not
// handed to the device (an op's own table goes with the rest of its
// work).
func (d *Device) newHashTable(op string, capacity int64) (*HashTable, error) {
	if capacity < 0 {
		return nil, argErr(op, "capacity", capacity, ">= 0", ErrInvalidArgument)
	}
	if !d.caps.Int64 || !d.caps.Int64Atomics {
		return nil, argErr(op, "device", d.caps.ID()+" "+d.caps.Name+" without 64-bit integer atomics",
			"a device with 64-bit atomic compare-and-swap (cl_khr_int64_base_atomics, shaderBufferInt64Atomics)", ErrUnsupported)
	}
	if capacity > math.MaxInt64/4 {
		return nil, argErr(op, "capacity", capacity, fmt.Sprintf("at most %d", int64(math.MaxInt64/4)), ErrTooLarge)
	}
	slots := hashSlots(capacity)
	if slots+1 > d.caps.MaxAllocBytes/16 {
		return nil, argErr(op, "capacity", capacity, fmt.Sprintf("at most %d keys (%d slots of 16 bytes fit the device's largest allocation)",
			d.caps.MaxAllocBytes/32, d.caps.MaxAllocBytes/16), ErrTooLarge)
	}
	t := &HashTable{d: d, capacity: capacity, slots: slots}
	var err error
	if t.table, err = d.alloc(op, Uint64, []int64{2 * (slots + 1)}); err != nil {
		return nil, err
	}
	if t.meta, err = d.alloc(op, Uint64, []int64{2}); err != nil {
		t.table.Release()
		return nil, err
	}
	if err := t.clear(); err != nil {
		t.Release()
		return nil, err
	}
	return t, nil
}

// hashSlots is the slot count of a table for capacity keys: the smallest
// power of two at least 2*capacity, and at least 2.
func hashSlots(capacity int64) int64 {
	if capacity <= 1 {
		return 2
	}
	return int64(1) << bits.Len64(uint64(2*capacity-1))
}

// Capacity returns the number of distinct keys the table was made for.
func (t *HashTable) Capacity() int64 { return t.capacity }

// Len returns the number of distinct keys in the table.
func (t *HashTable) Len() int64 { return t.size }

// Reset empties the table, keeping its memory.
func (t *HashTable) Reset() error {
	if err := t.live("reset"); err != nil {
		return err
	}
	if err := t.clear(); err != nil {
		return err
	}
	return t.d.flush("hash_table reset")
}

// bounded says whether probing n keys runs under a probe budget (a
// driver's loop limit, or the table's own for tests), each launch then
// reading the table's progress words back.
func (t *HashTable) bounded(n int64) bool {
	_, budget := planHash(t.d.caps, n)
	return budget > 0 || t.budget > 0
}

// clear queues the table's emptying.
func (t *HashTable) clear() error {
	// every word starts as HT_EMPTY (all ones)
	if err := t.d.fill(t.table.raw(), 0, t.table.n*8, []byte{0xff, 0xff, 0xff, 0xff}); err != nil {
		return fmt.Errorf("accel: hash_table reset: %w", err)
	}
	if err := t.d.fill(t.meta.raw(), 0, 16, []byte{0, 0, 0, 0}); err != nil {
		return fmt.Errorf("accel: hash_table reset: %w", err)
	}
	t.size, t.broken = 0, false
	return nil
}

// Release frees the table's device memory. It is safe to call more than
// once.
func (t *HashTable) Release() {
	if t.table != nil {
		t.table.Release()
		t.meta.Release()
		t.table, t.meta = nil, nil
	}
}

func (t *HashTable) live(op string) error {
	if t.table == nil || t.table.buf == nil {
		return fmt.Errorf("accel: hash_table %s: the table was released: %w", op, ErrClosed)
	}
	return nil
}

func (t *HashTable) checkKeys(op string, keys *DeviceTensor) error {
	if err := t.live(op); err != nil {
		return err
	}
	if t.broken {
		return fmt.Errorf("accel: hash_table %s: an earlier insert overflowed the table (capacity %d keys) and left it partial; Reset it: %w",
			op, t.capacity, ErrTableFull)
	}
	if err := t.d.checkIn("hash_table "+op, "keys", keys); err != nil {
		return err
	}
	if keys.dtype != Int64 && keys.dtype != Uint64 {
		return argErr("hash_table "+op, "keys", "dtype "+keys.dtype.String(), "int64 or uint64", ErrInvalidArgument)
	}
	return nil
}

// Insert adds the keys (taken flattened) that are not in the table yet,
// giving them the next dense ids in order of first occurrence. Inserting
// more distinct keys than the capacity fails with ErrTableFull.
func (t *HashTable) Insert(keys *DeviceTensor) error {
	_, err := t.insert(keys, false)
	return err
}

// InsertDense inserts keys as Insert does and returns every key's dense id
// (int64, keys' shape) and the number of distinct keys in the table after
// the call, unique: ids are in [0, unique), equal keys get equal ids, and
// on a new table ids number the distinct keys of the input in order of
// first occurrence.
func (t *HashTable) InsertDense(keys *DeviceTensor) (ids *DeviceTensor, unique int64, err error) {
	ids, err = t.insert(keys, true)
	if err != nil {
		return nil, 0, err
	}
	return ids, t.size, nil
}

// Lookup returns the dense id of each key (int64, keys' shape), or -1 where
// the key is not in the table.
func (t *HashTable) Lookup(keys *DeviceTensor) (*DeviceTensor, error) {
	return t.lookup(keys)
}

// probeMode is what a probe launch does with each key.
type probeMode int

const (
	probeLookup probeMode = iota // res = the key's id, or -1
	probeInsert                  // res = the key's slot; new keys claim their value word
	probeCount                   // res = the key's slot, whose value word counts its occurrences
)

// probe queues insert or lookup launches (mode) of keys into res: one
// launch where the plan does not bound the probes per work-item, and then
// nothing is read back; else launches until every key has finished,
// reading the meta flags after each. It returns whether the last launch's
// flags were read (and then full, the full flag).
func (t *HashTable) probe(op string, mode probeMode, keys, res host.Buffer, n int64) (read, full bool, err error) {
	d := t.d
	plan, budget := planHash(d.caps, n)
	plan = d.plan(plan)
	d.report(op, "hash", hashReport{plan, budget})
	if t.budget > 0 && (budget <= 0 || t.budget < budget) {
		budget = t.budget
	}
	bounded := budget > 0
	if !bounded {
		budget = math.MaxInt64
	}
	// Two probes a launch let a key paused in its compare-and-swap find
	// its slot again and retry, so every launch makes progress.
	budget = max(budget, 2)
	// Each launch advances every work-item with keys left by a probe or a
	// compare-and-swap that changes a word; a key needs at most maxProbes
	// probes, and its value word changes at most once per occurrence. A
	// driver that cut loops short silently would fail here, not hang.
	items := max(host.KnobItems.Of(plan), 1)
	// A key probes at most every slot, and while the table holds at most
	// capacity keys no run of occupied slots is longer than that.
	maxProbes := min(t.slots, t.capacity+1)
	if t.probeCap > 0 {
		maxProbes = min(maxProbes, t.probeCap)
	}
	maxSteps := 16 + 4*(float64(maxProbes)+2+float64(n))*float64(items)/float64(budget)
	if err := d.fill(t.meta.raw(), 8, 8, []byte{0, 0, 0, 0}); err != nil {
		return false, false, fmt.Errorf("accel: %s: %w", op, err)
	}
	t.launches = 0
	for step := int64(0); ; step++ {
		var err error
		switch mode {
		case probeInsert:
			err = run(d, op, kernels.HashK64, plan, kernels.HashInsert{Table: t.table.raw(), Keys: keys, Res: res, Meta: t.meta.raw(),
				N: n, Slots: t.slots, MaxProbes: maxProbes, Budget: budget, Step: step, Capacity: t.capacity})
		case probeCount:
			err = run(d, op, kernels.HashK64, plan, kernels.HashCount{Table: t.table.raw(), Keys: keys, Res: res, Meta: t.meta.raw(),
				N: n, Slots: t.slots, MaxProbes: maxProbes, Budget: budget, Step: step, Capacity: t.capacity})
		default:
			err = run(d, op, kernels.HashK64, plan, kernels.HashLookup{Table: t.table.raw(), Keys: keys, Res: res, Meta: t.meta.raw(),
				N: n, Slots: t.slots, MaxProbes: maxProbes, Budget: budget, Step: step})
		}
		if err != nil {
			return false, false, err
		}
		t.launches++
		if !bounded {
			return false, false, nil
		}
		if err := d.h.Download(t.meta.raw(), 0, t.meta16[:]); err != nil {
			return false, false, fmt.Errorf("accel: %s: %w", op, err)
		}
		_, full := t.metaWords()
		more := binary.LittleEndian.Uint32(t.meta16[4*kernels.HtMetaMore:]) != 0
		if full || !more {
			return true, full, nil
		}
		if float64(step) > maxSteps {
			return false, false, fmt.Errorf("accel: %s: keys still unfinished after %d launches of %d probes per work-item: %w",
				op, step+1, budget, host.ErrDriver)
		}
		if err := d.fill(t.meta.raw(), 4*kernels.HtMetaMore, 4, []byte{0, 0, 0, 0}); err != nil {
			return false, false, fmt.Errorf("accel: %s: %w", op, err)
		}
	}
}

// pass queues one of the per-key passes after an insert (mark, commit,
// ids): plain elementwise loops.
func (t *HashTable) pass(op string, call host.Call, n int64) error {
	return t.d.launch(op, string(kernels.HashK64), t.d.elementwise("hash", n), call)
}

func (t *HashTable) full(op string, n, after int64) error {
	t.broken = true
	what := fmt.Sprintf("more than %d", t.capacity)
	if after > t.capacity {
		what = fmt.Sprint(after)
	}
	return fmt.Errorf("accel: %s: capacity %d keys (%d slots): the table held %d and this call of %d key(s) takes it to %s distinct keys: %w",
		op, t.capacity, t.slots, t.size, n, what, ErrTableFull)
}

// insert inserts keys; with wantIDs it returns their dense ids. Where the
// probes are unbounded it queues every pass and waits once, at the end,
// for the full flag and the count of new keys.
func (t *HashTable) insert(keys *DeviceTensor, wantIDs bool) (*DeviceTensor, error) {
	const op = "hash_table insert"
	if err := t.checkKeys("insert", keys); err != nil {
		return nil, err
	}
	d := t.d
	n := keys.n
	var ids *DeviceTensor
	var err error
	if wantIDs {
		if ids, err = d.alloc(op, Int64, keys.shape); err != nil {
			return nil, err
		}
	}
	fail := func(err error) (*DeviceTensor, error) {
		ids.Release()
		return nil, err
	}
	if n == 0 {
		return ids, nil
	}
	var tmp temps
	defer tmp.release()
	slots, err := tmp.alloc(d, op, Int64, n)
	if err != nil {
		return fail(err)
	}
	pos := ids
	if pos == nil {
		if pos, err = tmp.alloc(d, op, Int64, n); err != nil {
			return fail(err)
		}
	}
	if d.reporting() {
		sp := d.plan(planScan(d.caps, n, 8, d.scanSubgroups(Int64)))
		d.reportModel(op, "hash_table", hashOp{"insert", n, t.slots}, func() traffic { return hashTableTraffic(sp, n, t.slots, true, wantIDs, t.bounded(n)) },
			hashTableMinBytes(n, t.slots, wantIDs))
	}
	read, full, err := t.probe(op, probeInsert, keys.raw(), slots.raw(), n)
	if err != nil {
		return fail(err)
	}
	if read && full {
		return fail(t.full(op, n, 0))
	}
	if err := t.pass(op, kernels.HashMark{Table: t.table.raw(), Res: slots.raw(), Aux: pos.raw(), N: n, Slots: t.slots}, n); err != nil {
		return fail(err)
	}
	s, err := d.scanBuf(op, Int64, pos.raw(), pos.raw(), n, kernels.FlagNone, true)
	if err != nil {
		return fail(err)
	}
	defer s.release()
	if err := t.pass(op, kernels.HashCommit{Table: t.table.raw(), Res: slots.raw(), Aux: pos.raw(), N: n, Slots: t.slots,
		Base: t.size}, n); err != nil {
		return fail(err)
	}
	if wantIDs {
		if err := t.pass(op, kernels.HashIds{Table: t.table.raw(), Res: slots.raw(), Aux: ids.raw(), N: n, Slots: t.slots}, n); err != nil {
			return fail(err)
		}
	}
	if err := d.flush(op); err != nil {
		return fail(err)
	}
	// The count of new keys, then (if not read already) the full flag:
	// one wait, then a read of finished work.
	added, err := s.total(op)
	if err != nil {
		return fail(err)
	}
	if !read {
		full, err := t.fullFlag(op)
		if err != nil {
			return fail(err)
		}
		if full {
			return fail(t.full(op, n, 0))
		}
	}
	if after := t.size + int64(added); after > t.capacity {
		return fail(t.full(op, n, after))
	}
	t.size += int64(added)
	return ids, nil
}

// hashOp prints a HashTable call for its model's report.
type hashOp struct {
	what     string
	n, slots int64
}

func (h hashOp) String() string {
	return fmt.Sprintf("%s of %d keys into %d slots", h.what, h.n, h.slots)
}

// fullFlag reads the table's full flag (a wait for the work queued
// before it).
func (t *HashTable) fullFlag(op string) (bool, error) {
	_, full, err := t.readMeta(op)
	return full, err
}

// readMeta reads the table's meta words (a wait for the work queued
// before them): its key count and its full flag.
func (t *HashTable) readMeta(op string) (count uint64, full bool, err error) {
	if err := t.d.h.Download(t.meta.raw(), 0, t.meta16[:]); err != nil {
		return 0, false, fmt.Errorf("accel: %s: %w", op, err)
	}
	count, full = t.metaWords()
	return count, full, nil
}

// metaWords are the meta words last read: the key count and the full
// flag.
func (t *HashTable) metaWords() (count uint64, full bool) {
	return binary.LittleEndian.Uint64(t.meta16[8*kernels.HtMetaCount:]),
		binary.LittleEndian.Uint32(t.meta16[4*kernels.HtMetaFull:]) != 0
}

func (t *HashTable) lookup(keys *DeviceTensor) (*DeviceTensor, error) {
	const op = "hash_table lookup"
	if err := t.checkKeys("lookup", keys); err != nil {
		return nil, err
	}
	out, err := t.d.alloc(op, Int64, keys.shape)
	if err != nil {
		return nil, err
	}
	if keys.n > 0 {
		n, d := keys.n, t.d
		d.reportModel(op, "hash_table", hashOp{"lookup", n, t.slots}, func() traffic { return hashTableTraffic(host.Plan{}, n, t.slots, false, false, t.bounded(n)) },
			hashTableMinBytes(n, t.slots, true))
		if _, _, err = t.probe(op, probeLookup, keys.raw(), out.raw(), keys.n); err == nil {
			err = t.d.flush(op)
		}
	}
	if err != nil {
		out.Release()
		return nil, err
	}
	return out, nil
}
