package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"unsafe"

	"github.com/accelkern/accel/accel"
	"github.com/sbinet/npyio/npy"
)

// errNpyFormat marks a readable .npy file in a layout or dtype this tool
// does not take (big-endian, Fortran order, int8, ...): a rejection of the
// input, not an I/O failure.
var errNpyFormat = errors.New("unsupported .npy array")

// npyDTypes maps NumPy little-endian descriptors to accel dtypes.
var npyDTypes = map[string]accel.DType{
	"<i4": accel.Int32, "<i8": accel.Int64, "<u4": accel.Uint32, "<u8": accel.Uint64,
	"<f4": accel.Float32, "<f8": accel.Float64, "<f2": accel.Float16, "|b1": accel.Bool,
}

func npyDescr(dt accel.DType) (string, error) {
	for k, v := range npyDTypes {
		if v == dt {
			return k, nil
		}
	}
	return "", fmt.Errorf("dtype %s has no .npy descriptor here", dt)
}

// readNpy reads a little-endian .npy file (C or Fortran order) with npyio
// and returns it as a host tensor, in C order.
func readNpy(path string) (*accel.Tensor, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read npy: %w", err)
	}
	defer f.Close()
	br := bufio.NewReader(f)
	r, err := npy.NewReader(br)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	h := r.Header.Descr
	descr := h.Type
	if strings.HasPrefix(descr, ">") && descr[1:] != "b1" {
		return nil, fmt.Errorf("%s: big-endian dtype %q is not supported (save a.astype(a.dtype.newbyteorder('<'))): %w", path, h.Type, errNpyFormat)
	}
	if strings.HasPrefix(descr, "=") || strings.HasPrefix(descr, "|") && descr != "|b1" {
		descr = "<" + descr[1:] // native order: little-endian on every supported host
	}
	if descr == "<b1" || descr == ">b1" {
		descr = "|b1"
	}
	dt, ok := npyDTypes[descr]
	if !ok {
		return nil, fmt.Errorf("%s: dtype %q is not supported (want one of <i4 <i8 <u4 <u8 <f2 <f4 <f8 |b1): %w", path, h.Type, errNpyFormat)
	}
	shape := make([]int64, len(h.Shape))
	n := 1
	for i, s := range h.Shape {
		shape[i] = int64(s)
		n *= s
	}
	var data []byte
	asBytes := func(p unsafe.Pointer, size int) []byte {
		if size == 0 {
			return nil
		}
		return unsafe.Slice((*byte)(p), size)
	}
	// npyio reads into typed slices; the bytes are then the tensor's.
	switch dt {
	case accel.Int32:
		v := make([]int32, n)
		err = r.Read(&v)
		data = asBytes(unsafe.Pointer(unsafe.SliceData(v)), 4*n)
	case accel.Int64:
		v := make([]int64, n)
		err = r.Read(&v)
		data = asBytes(unsafe.Pointer(unsafe.SliceData(v)), 8*n)
	case accel.Uint32:
		v := make([]uint32, n)
		err = r.Read(&v)
		data = asBytes(unsafe.Pointer(unsafe.SliceData(v)), 4*n)
	case accel.Uint64:
		v := make([]uint64, n)
		err = r.Read(&v)
		data = asBytes(unsafe.Pointer(unsafe.SliceData(v)), 8*n)
	case accel.Float32:
		v := make([]float32, n)
		err = r.Read(&v)
		data = asBytes(unsafe.Pointer(unsafe.SliceData(v)), 4*n)
	case accel.Float64:
		v := make([]float64, n)
		err = r.Read(&v)
		data = asBytes(unsafe.Pointer(unsafe.SliceData(v)), 8*n)
	case accel.Bool:
		v := make([]bool, n)
		err = r.Read(&v)
		data = asBytes(unsafe.Pointer(unsafe.SliceData(v)), n)
	case accel.Float16:
		// npyio parsed the header but its Reader.Read has no type for
		// half floats ("<f2"); the little-endian payload that follows the
		// header is the tensor's bytes as they are.
		data = make([]byte, 2*n)
		if _, err = io.ReadFull(br, data); err != nil {
			err = fmt.Errorf("float16 payload: %w", err)
		}
	default:
		return nil, fmt.Errorf("%s: dtype %s cannot be read yet: %w", path, dt, errNpyFormat)
	}
	if err != nil && n > 0 {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(data) != n*dt.Size() {
		return nil, fmt.Errorf("%s: got %d data bytes, want %d for shape %v", path, len(data), n*dt.Size(), h.Shape)
	}
	if h.Fortran && len(shape) > 1 {
		data = fortranToC(data, shape, dt.Size())
	}
	t, err := accel.FromBytes(dt, shape, data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// fortranToC reorders the elements of a column-major array of the given
// shape (the payload of a .npy file with fortran_order True, as np.save
// writes an F-contiguous array such as a.T) into row-major order.
func fortranToC(data []byte, shape []int64, size int) []byte {
	out := make([]byte, len(data))
	if len(data) == 0 {
		return out
	}
	// stride of each dim in the Fortran payload, in elements
	fs := make([]int64, len(shape))
	st := int64(1)
	for d := range shape {
		fs[d] = st
		st *= shape[d]
	}
	idx := make([]int64, len(shape))
	f := int64(0) // Fortran offset of idx
	for c := 0; c < len(out); c += size {
		copy(out[c:c+size], data[f*int64(size):(f+1)*int64(size)])
		for d := len(shape) - 1; d >= 0; d-- { // odometer, last dim fastest
			idx[d]++
			f += fs[d]
			if idx[d] < shape[d] {
				break
			}
			f -= idx[d] * fs[d]
			idx[d] = 0
		}
	}
	return out
}

// writeNpy writes a tensor as a NumPy format 1.0 file (C order,
// little-endian). npyio's writer infers the shape from the Go value (a flat
// slice is always 1-D), so the header is written here; it is a few lines.
func writeNpy(path string, t *accel.Tensor) error {
	descr, err := npyDescr(t.DType())
	if err != nil {
		return err
	}
	shape := t.Shape()
	var dims []string
	for _, s := range shape {
		dims = append(dims, fmt.Sprint(s))
	}
	tuple := strings.Join(dims, ", ")
	if len(shape) == 1 {
		tuple += ","
	}
	hdr := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, tuple)
	// Pad with spaces so that magic(6)+version(2)+len(2)+header+'\n' is a
	// multiple of 64.
	total := 10 + len(hdr) + 1
	hdr += strings.Repeat(" ", (64-total%64)%64) + "\n"
	if len(hdr) > math.MaxUint16 {
		return fmt.Errorf("%s: npy header too long", path)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	w.Write(npy.Magic[:])
	w.Write([]byte{1, 0})
	binary.Write(w, binary.LittleEndian, uint16(len(hdr)))
	w.WriteString(hdr)
	w.Write(t.Bytes())
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
