package clkernels

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The kernel sources' portability rules, checked on the text of every
// OpenCL C file, shared header and GLSL shader (comments and strings
// blanked first):
//   - only OpenCL C and GLSL built-ins: compiler builtins (__builtin_*)
//     live in common/device_tricks.h alone, compiled in for CPU drivers
//     only (NVIDIA's OpenCL compiler refused the prefetch that scatter.cl
//     used);
//   - no division or remainder operator outside common/arith.h (integer
//     division: its helpers say which operands may be negative, since
//     GLSL leaves % of negative operands undefined) and dtypes.h's T_DIV
//     (float division, correctly rounded where the device allows); a line
//     may opt out with a comment "div-ok: <reason>".

// kernelSources returns the path and text of every kernel source: this
// package's *.cl and common/ headers (generated ones included) and the
// shaders' *.comp.
func kernelSources(t *testing.T) map[string]string {
	t.Helper()
	var paths []string
	for _, pat := range []string{"*.cl", "common/*.h", "common/gen/*.h", "../shaders/*.comp"} {
		m, err := filepath.Glob(pat)
		require.NoError(t, err)
		paths = append(paths, m...)
	}
	require.Greater(t, len(paths), 40, "kernel sources not found")
	out := map[string]string{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		out[p] = string(b)
	}
	return out
}

// blankComments replaces every comment and string literal of C-like
// source s by spaces, keeping its newlines, so line numbers stay.
func blankComments(s string) string {
	b := []byte(s)
	blank := func(i, j int) {
		for k := i; k < j; k++ {
			if b[k] != '\n' {
				b[k] = ' '
			}
		}
	}
	for i := 0; i < len(b); {
		switch {
		case b[i] == '/' && i+1 < len(b) && b[i+1] == '*':
			j := strings.Index(string(b[i+2:]), "*/")
			end := len(b)
			if j >= 0 {
				end = i + 2 + j + 2
			}
			blank(i, end)
			i = end
		case b[i] == '/' && i+1 < len(b) && b[i+1] == '/':
			j := strings.IndexByte(string(b[i:]), '\n')
			end := len(b)
			if j >= 0 {
				end = i + j
			}
			blank(i, end)
			i = end
		case b[i] == '"':
			j := strings.IndexByte(string(b[i+1:]), '"')
			end := len(b)
			if j >= 0 {
				end = i + 1 + j + 1
			}
			blank(i, end)
			i = end
		default:
			i++
		}
	}
	return string(b)
}

func TestBlankComments(t *testing.T) {
	in := "a / b; /* c / d\n e */ f % g // h / i\n#include \"x/y.h\"\n"
	got := blankComments(in)
	require.Equal(t, len(in), len(got))
	assert.Equal(t, strings.Count(in, "\n"), strings.Count(got, "\n"), "newlines kept")
	assert.Equal(t, 1, strings.Count(got, "/"), "only a / b's operator left: %q", got)
	assert.Equal(t, 1, strings.Count(got, "%"), "only f % g's operator left: %q", got)
}

func TestNoBuiltinsOutsideTricks(t *testing.T) {
	for p, src := range kernelSources(t) {
		if filepath.Base(p) == "device_tricks.h" {
			continue
		}
		for i, line := range strings.Split(blankComments(src), "\n") {
			assert.NotContains(t, line, "__builtin_", "%s:%d: a compiler builtin outside common/device_tricks.h", p, i+1)
		}
	}
}

// divRE finds a division or remainder operator (or its assignment form).
var divRE = regexp.MustCompile(`[/%]`)

func TestNoRawDivision(t *testing.T) {
	exempt := 0
	for p, src := range kernelSources(t) {
		if filepath.Base(p) == "arith.h" {
			continue
		}
		raw := strings.Split(src, "\n")
		for i, line := range strings.Split(blankComments(src), "\n") {
			trim := strings.TrimSpace(line)
			if strings.HasPrefix(trim, "#include") || !divRE.MatchString(line) {
				continue
			}
			if filepath.Base(p) == "dtypes.h" && strings.HasPrefix(trim, "#define T_DIV(") {
				continue
			}
			if strings.Contains(raw[i], "div-ok:") {
				exempt++
				continue
			}
			t.Errorf("%s:%d: a raw / or %%: use arith.h's helpers (integers) or T_DIV (floats), or say why not with div-ok:\n\t%s",
				p, i+1, strings.TrimSpace(raw[i]))
		}
	}
	assert.LessOrEqual(t, exempt, 1, "div-ok exemptions: keep them rare")
}
