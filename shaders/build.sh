#!/bin/sh
# Compiles every variant listed in shaders/variants.txt (generated from the
# declarations in host/kernels: go generate ./host/kernels) into OUTDIR
# (default: shaders/): shaders/<base>.<variant>.spv, or for the files that
# shaders/split.txt lists (a module per entry point) one module per entry
# I, shaders/<base>.<variant>.e<I>.spv, built with -DACCEL_ONLY_ENTRY=I.
# Used by `make shaders` and by the test that checks the committed SPIR-V
# against its sources, so both use exactly these flags. Two compiles run
# at a time.
set -eu
cd "$(dirname "$0")/.."
OUT=${1:-shaders}
GLSLC=${GLSLC:-glslc}
export OUT GLSLC
# one line per module: its name, then its -D flags
grep -v '^[[:space:]]*#' shaders/variants.txt | while read -r base variant defs; do
	[ -n "$base" ] || continue
	flags=""
	for d in $defs; do flags="$flags -D$d"; done
	entries=$(awk -v b="$base" '$1 == b { print $2 }' shaders/split.txt)
	if [ -z "$entries" ]; then
		echo "$base.$variant$flags"
		continue
	fi
	i=0
	while [ "$i" -lt "$entries" ]; do
		echo "$base.$variant.e$i$flags -DACCEL_ONLY_ENTRY=$i"
		i=$((i + 1))
	done
done | xargs -P 2 -L 1 sh -c '
	name=$1
	shift
	exec "$GLSLC" --target-env=vulkan1.2 -O -I clkernels/common "$@" "shaders/${name%%.*}.comp" -o "$OUT/$name.spv"
' sh
