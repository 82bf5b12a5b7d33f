// Package shaders holds the GLSL compute shaders (*.comp), their SPIR-V
// compiled by `make shaders` (NAME.VARIANT.spv, committed), and
// variants.txt, the one list of variants and their defines that both the
// Makefile (for glslc) and the OpenCL host path (for -D options) read.
package shaders

import "embed"

// FS holds the compiled SPIR-V, the GLSL sources and variants.txt.
//
//go:embed *.spv *.comp variants.txt
var FS embed.FS
