// Package clkernels holds the OpenCL C kernel sources, one standalone file
// per kernel, and the portable headers in common/ that the GLSL shaders
// include too (the one place the index math of both languages lives).
package clkernels

import "embed"

// FS holds every *.cl file, the common/*.h headers and the headers
// generated from the kernel declarations (common/gen/*.h, see
// host/kernels).
//
//go:embed *.cl common/*.h common/gen/*.h
var FS embed.FS
