package clkernels

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The kernel sources' portability rules, checked on the text of every
// OpenCL C file, shared header and GLSL shader (comments and strings
// blanked first):
//   - only OpenCL C and GLSL built-ins: compiler builtins (__builtin_*)
//     and inline assembly live in common/device_tricks.h alone, compiled
//     in for the device class they are for only (NVIDIA's OpenCL compiler
//     refused the prefetch that scatter.cl used);
//   - no division or remainder operator outside common/arith.h (integer
//     division: its helpers say which operands may be negative, since
//     GLSL leaves % of negative operands undefined) and dtypes.h's T_DIV
//     (float division, correctly rounded where the device allows); a line
//     may opt out with a comment "div-ok: <reason>";
//   - no unmarked 32-bit integer: a tensor may pass 2^31 and 2^32
//     elements, so element offsets, positions and counts are 64-bit
//     (i64/u64, long, int64_t); every declaration of a 32-bit integer
//     (int, uint, unsigned, i32, u32, int32_t, uint32_t: variables, loop
//     counters, parameters, function results, specialization constants)
//     and every cast to one (CAST(int, x), (uint)x, GLSL's int(x),
//     convert_int(x)) carries on its line a comment "32-ok: <why it is
//     bounded>" (a local id, a digit, a bit count, a host-checked limit).
//     The variants' element and word types (T, UBITS, WORD, KEY) hold
//     values, not indices, and are not checked.

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
			assert.False(t, asmRE.MatchString(line), "%s:%d: inline assembly outside common/device_tricks.h", p, i+1)
		}
	}
}

// asmRE finds inline assembly.
var asmRE = regexp.MustCompile(`\b(__)?asm(__)?\b`)

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

// narrow32Types are the 32-bit integer types: OpenCL C's and GLSL's, and
// portable.h's i32/u32 (\b keeps out int64_t, uint2, uvec, as_uint...).
const narrow32Types = `(?:unsigned(?:\s+int)?|int|uint|i32|u32|int32_t|uint32_t)`

// narrow32RE finds, on comment-blanked text, a declaration of a 32-bit
// integer (the type followed by a name: a variable, a loop counter, a
// parameter, a function) or a cast to one (CAST(T, x), a C cast (T),
// GLSL's constructor T(x), OpenCL C's scalar convert_int(x)).
var narrow32RE = regexp.MustCompile(
	`\b` + narrow32Types + `\s+[A-Za-z_]` + // declaration
		`|\bCAST\(\s*` + narrow32Types + `\s*,` + // CAST(int, x)
		`|\(\s*` + narrow32Types + `\s*\)` + // (int)x
		`|\b` + narrow32Types + `\s*\(` + // int(x)
		`|\bconvert_u?int(?:_sat)?(?:_rt[enzp])?\s*\(`) // OpenCL C's convert_int(x)

// commentText returns the characters of raw, a line of source, that
// blanked (the same line with comments blanked) blanks: its comments'
// (and strings') text, spaces dropped.
func commentText(raw, blanked string) string {
	var b strings.Builder
	for k := 0; k < len(raw) && k < len(blanked); k++ {
		if raw[k] != blanked[k] {
			b.WriteByte(raw[k])
		}
	}
	return b.String()
}

// typeAliasRE is a macro naming a type, such as portable.h's
// "#define i32 int": no declaration.
var typeAliasRE = regexp.MustCompile(`^\s*#\s*define\s+\w+\s+\w+\s*$`)

// narrow32Sites returns the 1-based lines of src that declare or cast to
// a 32-bit integer without a "32-ok:" comment, and the count of those
// with one.
func narrow32Sites(src string) (bad []int, marked int) {
	raw := strings.Split(src, "\n")
	for i, line := range strings.Split(blankComments(src), "\n") {
		if !narrow32RE.MatchString(line) || typeAliasRE.MatchString(line) {
			continue
		}
		if strings.Contains(commentText(raw[i], line), "32-ok:") {
			marked++
			continue
		}
		bad = append(bad, i+1)
	}
	return bad, marked
}

func TestNarrow32Matcher(t *testing.T) {
	for _, c := range []struct {
		line string
		bad  bool
	}{
		{"int j = 0;", true},
		{"for (int j = 0; j < n; j++) {", true},
		{"uint f(i64 a, u32 b) {", true},
		{"const unsigned x = 1;", true},
		{"unsigned int x = 1;", true},
		{"int32_t x;", true},
		{"i64 k = CAST(i64, CAST(int, v));", true},
		{"i64 k = CAST( uint , v);", true},
		{"i64 k = (uint)v;", true},
		{"i64 k = int(v) + uint (w);", true},
		{"i64 k = convert_uint_sat(v);", true},
		{"layout(constant_id = 1) const int ENTRY = 0;", true},
		{"__local uint sh[64];", true},
		{"int d = 0; // 32-ok: a digit, < 256", false},
		{"int d = 0; /* 32-ok: a digit */ i64 k;", false},
		{"i64 k = n; long m; ulong u; int64_t a; uint64_t b; I64C(x);", false},
		{"uint2 v; int4 w; uvec2 p; ivec4 q; u64 r = as_uint(x) + convert_int2(y);", false},
		{"i64 print = intern + uint_max + point(x) + integer;", false},
		{"__global uint* p, __global const int *q", false},
		{"#define i32 int", false},
		{"#define WORD uint", false},
		{"i64 k = 0; // an int(x) in a comment", false},
		{"i64 k = 0; // 32-ok: but nothing to mark", false},
	} {
		bad, marked := narrow32Sites(c.line)
		assert.Equal(t, c.bad, len(bad) == 1, "%q: flagged", c.line)
		if !c.bad && strings.Contains(c.line, "32-ok:") && narrow32RE.MatchString(blankComments(c.line)) {
			assert.Equal(t, 1, marked, "%q: marked", c.line)
		}
	}
}

func TestNo32BitIndices(t *testing.T) {
	srcs := kernelSources(t)
	var paths []string
	for p := range srcs {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	marked := 0
	for _, p := range paths {
		bad, m := narrow32Sites(srcs[p])
		marked += m
		raw := strings.Split(srcs[p], "\n")
		for _, n := range bad {
			t.Errorf("%s:%d: a 32-bit integer: make it 64-bit (i64/u64) if it can pass 2^31 (an element offset, a position, a count), else say why it is bounded with a comment \"32-ok: <bound>\" on its line\n\t%s",
				p, n, strings.TrimSpace(raw[n-1]))
		}
	}
	t.Logf("%d 32-bit integer sites marked 32-ok", marked)
}
