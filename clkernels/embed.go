// Package clkernels holds the OpenCL C kernel sources, one standalone file
// per kernel, and the portable headers in common/ that the GLSL shaders
// include too (the one place the index math of both languages lives).
package clkernels

import "embed"

// FS holds every *.cl file and the common/*.h headers.
//
//go:embed *.cl common/*.h
var FS embed.FS
