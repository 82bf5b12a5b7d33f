package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"

	"github.com/accelkern/accel/accel"
)

// outputSummary describes one output of `accel run`: what a user checks
// first (shape, dtype, the first values) and a digest to compare runs by.
type outputSummary struct {
	Name   string  `json:"name"`
	DType  string  `json:"dtype"`
	Shape  []int64 `json:"shape"`
	First  []any   `json:"first"`  // up to summaryValues elements, in C order
	SHA256 string  `json:"sha256"` // of the elements' little-endian bytes
	File   string  `json:"file,omitempty"`
}

// summaryValues is how many leading elements a summary shows.
const summaryValues = 6

// summarize describes an output tensor.
func summarize(name string, t *accel.Tensor) outputSummary {
	sum := sha256.Sum256(t.Bytes())
	s := outputSummary{Name: name, DType: t.DType().String(), Shape: t.Shape(), First: []any{}, SHA256: hex.EncodeToString(sum[:])}
	n := int(min(t.Len(), summaryValues))
	for i := 0; i < n; i++ {
		var v any
		switch t.DType() {
		case accel.Int32:
			v = t.Int32s()[i]
		case accel.Int64:
			v = t.Int64s()[i]
		case accel.Float32:
			v = jsonFloat(float64(t.Float32s()[i]))
		case accel.Float64:
			v = jsonFloat(t.Float64s()[i])
		case accel.Uint32:
			v = t.Uint32s()[i]
		case accel.Uint64:
			v = t.Uint64s()[i]
		case accel.Bool:
			v = t.Bools()[i] != 0
		default: // float16: its bits
			w := t.DType().Size()
			v = fmt.Sprintf("0x%x", t.Bytes()[i*w:(i+1)*w])
		}
		s.First = append(s.First, v)
	}
	return s
}

// jsonFloat keeps NaN and infinities printable in JSON (as strings).
func jsonFloat(f float64) any {
	if f != f || f > 1.7976931348623157e308 || f < -1.7976931348623157e308 {
		return fmt.Sprint(f)
	}
	return f
}

// line formats the summary on one line:
// "out: int64[2 6] [0 1 1 2 2 2 ...] sha256:0123456789ab".
func (s outputSummary) line() string {
	vals := make([]string, len(s.First))
	for i, v := range s.First {
		vals[i] = fmt.Sprint(v)
	}
	n := int64(1)
	for _, d := range s.Shape {
		n *= d
	}
	more := ""
	if n > int64(len(s.First)) {
		more = " ..."
	}
	line := fmt.Sprintf("%s: %s%v [%s%s] sha256:%s", s.Name, s.DType, s.Shape, strings.Join(vals, " "), more, s.SHA256[:12])
	if s.File != "" {
		line += " -> " + s.File
	}
	return line
}

// summaries describes every output, sorted by name.
func summaries(outs map[string]*accel.Tensor) []outputSummary {
	names := make([]string, 0, len(outs))
	for name := range outs {
		names = append(names, name)
	}
	sort.Strings(names)
	ss := make([]outputSummary, len(names))
	for i, name := range names {
		ss[i] = summarize(name, outs[name])
	}
	return ss
}

// flagLine matches a flag's line in flag.PrintDefaults' output.
var flagLine = regexp.MustCompile(`(?m)^  -([A-Za-z])`)

// printFlags prints fs's flags as PrintDefaults does, but spelled as the
// usage lines spell them (--name, which the flag package accepts too).
func printFlags(fs *flag.FlagSet, w io.Writer) {
	var b bytes.Buffer
	out := fs.Output()
	fs.SetOutput(&b)
	fs.PrintDefaults()
	fs.SetOutput(out)
	io.WriteString(w, flagLine.ReplaceAllString(b.String(), "  --$1"))
}
