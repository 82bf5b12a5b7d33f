package main

import (
	"encoding/xml"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRatioSVG: `accel bench --svg FILE --peers JSON` draws one bar per
// row of a side-by-side file, as well-formed SVG whose title names the
// device.
func TestRatioSVG(t *testing.T) {
	in := filepath.Join("..", "..", "bench", "results", "2026-11-25-side-by-side-pocl.json")
	bars, title, err := peerBars(in, "opencl:0 PoCL test")
	require.NoError(t, err)
	require.NotEmpty(t, bars)
	require.Contains(t, title, "opencl:0 PoCL test")
	var sb strings.Builder
	require.NoError(t, writeRatioSVG(&sb, title, bars))
	dec := xml.NewDecoder(strings.NewReader(sb.String()))
	rects, texts := 0, 0
	for {
		tok, err := dec.Token()
		if err != nil {
			require.Equal(t, "EOF", err.Error(), "malformed SVG")
			break
		}
		if se, ok := tok.(xml.StartElement); ok {
			switch se.Name.Local {
			case "rect":
				rects++
			case "text":
				texts++
			}
		}
	}
	require.Equal(t, len(bars)+1, rects, "a bar per row and the background")
	require.Contains(t, sb.String(), "opencl:0 PoCL test")

	out := filepath.Join(t.TempDir(), "c.svg")
	var code int
	captureOutput(t, func() { code = run([]string{"bench", "--svg", out, "--peers", in}) })
	require.Equal(t, 0, code)
	require.FileExists(t, out)
	captureOutput(t, func() { code = run([]string{"bench", "--peers", in}) })
	require.Equal(t, 2, code, "--peers without --svg")
}
