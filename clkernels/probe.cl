/* The self-check kernel for OpenCL C: a thin wrapper over
 * common/probe_body.h (shared with shaders/probe.comp), whose entry point
 * and knob are declared in host/kernels (common/gen/probe.h). */
#include "portable.h"
#include "memory.h"

#include "gen/probe.h"
#include "probe_body.h"

PROBE_ENTRIES
