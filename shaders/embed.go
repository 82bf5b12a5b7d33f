// Package shaders holds the GLSL compute shaders (*.comp), their SPIR-V
// compiled by `make shaders` (NAME.VARIANT.spv, committed), and
// variants.txt, the list of variants and their defines that both the
// Makefile (for glslc) and the OpenCL host path (for -D options) read,
// generated from the kernel declarations (go generate ./host/kernels).
package shaders

import "embed"

// FS holds the compiled SPIR-V, the GLSL sources, variants.txt and
// split.txt (the files built as a module per entry point).
//
//go:embed *.spv *.comp variants.txt split.txt
var FS embed.FS
