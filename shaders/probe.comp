#version 460
// The self-check kernel for Vulkan: a thin wrapper over
// clkernels/common/probe_body.h (shared with clkernels/probe.cl), whose
// entry point and knob are declared in host/kernels
// (clkernels/common/gen/probe.h). Its arguments come in a parameter block.
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_buffer_reference : require
#extension GL_GOOGLE_include_directive : require
#include "portable.h"
#include "memory.h"

#include "gen/probe.h"
#include "probe_body.h"

PROBE_ENTRIES
