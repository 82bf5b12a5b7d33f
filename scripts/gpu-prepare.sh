#!/bin/sh
# gpu-prepare.sh: build here, into .gpu/accel-gpu.tar.xz (git-ignored), all
# that scripts/gpu-run.sh needs on an NVIDIA GPU machine with no Go toolchain
# and no network: the CLI and devinfo, one test binary per package, the
# checksums of the sources they were built from, Debian 12's .debs of the
# OpenCL ICD loader, the Vulkan loader, the Khronos validation layer and
# glvnd (libGLdispatch for NVIDIA's Vulkan driver), unpacked there, not
# installed, and the datasets the bench reads. It checks that the pack and
# the working tree stay under the device tool's 64 MiB. Then carry .gpu with
# the working tree (the device tool's `carry`), e.g.
#   scripts/gpu-prepare.sh              # here
#   scripts/gpu-run.sh info peers       # there, one call each (10 minutes):
#   scripts/gpu-run.sh test             #   also: bench torch, all
set -eu
cd "$(dirname "$0")/.."
exclude="$(git rev-parse --git-common-dir)/info/exclude"
grep -qsx '/.gpu/' "$exclude" || echo '/.gpu/' >>"$exclude"
GO=${GO:-go}
# the files the device tool carries: tracked, or untracked and not ignored
tree_files() { git ls-files -co --exclude-standard -- "$@" | while IFS= read -r f; do [ -f "$f" ] && echo "$f"; done | tr '\n' '\0'; }
rm -rf .gpu
S=.gpu/stage
mkdir -p $S/bin $S/debs $S/datasets
# gpu-run.sh warns when these sources (hashed before the build)
# differ from the tree it runs in.
tree_files '*.go' go.mod go.sum clkernels shaders | xargs -0 sha256sum >$S/sums
"$GO" build -ldflags="-s -w" -o $S/bin/ ./cmd/accel ./cmd/devinfo
for p in $("$GO" list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{end}}' ./...); do
	rel=${p#github.com/accelkern/accel/}
	"$GO" test -c -ldflags="-s -w" -o "$S/bin/$(echo "$rel" | tr / _).test" "./$rel"
	echo "$rel" >>$S/bin/tests.txt
done
# The loaders, the layer and glvnd (Debian 12's need only glibc and libstdc++).
debs="ocl-icd-libopencl1 libvulkan1 vulkan-validationlayers libglvnd0 libglx0 libegl1 libgl1 libopengl0 libgles2"
# shellcheck disable=SC2086 # one argument per package
(cd $S/debs && apt-get download $debs >/dev/null 2>&1) || true
for d in $debs; do
	ls $S/debs/"${d}"_*.deb >/dev/null 2>&1 || { echo "gpu-prepare: apt-get download $d gave no .deb" >&2; exit 1; }
done
for d in ../shared/datasets /work/shared/datasets; do
	if [ -d "$d/indice_pairs" ]; then cp -r "$d/indice_pairs" $S/datasets/; break; fi
done
[ -d $S/datasets/indice_pairs ] || echo "gpu-prepare: warning: no shared/datasets/indice_pairs: the bench leaves out the get_indice_pairs rows there" >&2
git rev-parse HEAD >$S/commit
tar -cf - -C $S . | xz -T0 -6 >.gpu/accel-gpu.tar.xz
rm -rf $S
pack=$(wc -c <.gpu/accel-gpu.tar.xz)
tree=$(tree_files | xargs -0 cat | wc -c)
echo "gpu-prepare: .gpu/accel-gpu.tar.xz $((pack >> 20)) MiB + working tree $((tree >> 20)) MiB (of 64 MiB carried)"
[ $((pack + tree)) -lt $((64 << 20)) ] || { echo "gpu-prepare: pack and tree exceed 64 MiB" >&2; exit 1; }
