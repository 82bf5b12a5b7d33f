#!/bin/sh
# Compiles every variant listed in shaders/variants.txt (generated from the
# declarations in host/kernels: go generate ./host/kernels) into OUTDIR
# (default: shaders/). Used by `make shaders` and by the test that checks the
# committed SPIR-V against its sources, so both use exactly these flags.
set -eu
cd "$(dirname "$0")/.."
out=${1:-shaders}
GLSLC=${GLSLC:-glslc}
grep -v '^[[:space:]]*#' shaders/variants.txt | while read -r base variant defs; do
	[ -n "$base" ] || continue
	flags=""
	for d in $defs; do flags="$flags -D$d"; done
	# shellcheck disable=SC2086
	"$GLSLC" --target-env=vulkan1.2 -O -I clkernels/common $flags \
		"shaders/$base.comp" -o "$out/$base.$variant.spv"
done
