#!/bin/sh
# gpu-prepare.sh: build here, into .gpu/accel-gpu.tar.xz (git-ignored;
# about 15 MB, so that it and the working tree stay under the device tool's
# 64 MiB), everything that
# scripts/gpu-run.sh needs on a GPU machine that has no Go toolchain and no
# network: the CLI and devinfo, one test binary per package, the Debian
# packages of the OpenCL ICD loader, the Vulkan loader and the Khronos
# validation layer (unpacked there, not installed), and the datasets the
# bench reads. Then carry .gpu with the working tree (the device tool's
# `carry`), e.g.
#   scripts/gpu-prepare.sh        # here
#   scripts/gpu-run.sh test       # there; also: info, bench, torch, all
set -eu
cd "$(dirname "$0")/.."
exclude="$(git rev-parse --git-common-dir)/info/exclude"
grep -qsx '/.gpu/' "$exclude" || echo '/.gpu/' >>"$exclude"
export CGO_CFLAGS="${CGO_CFLAGS:--O2 -g -DCL_TARGET_OPENCL_VERSION=120}"
GO=${GO:-go}
rm -rf .gpu
S=.gpu/stage
mkdir -p $S/bin $S/debs $S/datasets
"$GO" build -ldflags="-s -w" -o $S/bin/ ./cmd/accel ./cmd/devinfo
for p in $("$GO" list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{end}}' ./...); do
	rel=${p#github.com/accelkern/accel/}
	"$GO" test -c -ldflags="-s -w" -o "$S/bin/$(echo "$rel" | tr / _).test" "./$rel"
	echo "$rel" >>$S/bin/tests.txt
done
# The loaders and the layer, for a machine that lacks them. The layer from
# Debian 12 needs only glibc and libstdc++.
(cd $S/debs && apt-get download ocl-icd-libopencl1 libvulkan1 vulkan-validationlayers 2>/dev/null)
for d in ../shared/datasets /work/shared/datasets; do
	if [ -d "$d/indice_pairs" ]; then cp -r "$d/indice_pairs" $S/datasets/; break; fi
done
git rev-parse HEAD >$S/commit
tar -cf - -C $S . | xz -T0 -6 >.gpu/accel-gpu.tar.xz
rm -rf $S
ls -la .gpu/accel-gpu.tar.xz
