#!/bin/bash
# gpu-run.sh STAGE...: on a GPU machine without Go or network, run what
# scripts/gpu-prepare.sh packed into .gpu/ on the GPU's OpenCL and Vulkan
# drivers, and leave at most 8 files under $OUT (default ./gpu-out):
#   info   devinfo --json                       -> devinfo.json
#   test   every package's tests, CI=true, both backends, validation on
#                                               -> test.log
#   bench  selftest, the peer cases through the CLI, accel bench --json
#                                               -> bench.json, selftest.log
#   torch  bench/torch_cuda.py: PyTorch CUDA on the bench's workloads
#                                               -> torch.json
#   all    the four
# summary.txt gets one line per step with its exit status.
#
# Where the machine lacks them, the OpenCL ICD loader, the Vulkan loader and
# the validation layer come from the pack's debs, unpacked under /tmp (not
# installed); the NVIDIA OpenCL library is found under /usr/local/nvidia
# (or the system's library folders) and named in an ICD file of our own;
# the Vulkan driver's ICD file likewise.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
OUT=${OUT:-$root/gpu-out}
mkdir -p "$OUT"
[ -f .gpu/accel-gpu.tar.xz ] || { echo "gpu-run: no .gpu/accel-gpu.tar.xz: run scripts/gpu-prepare.sh first and carry .gpu" >&2; exit 2; }
G=/tmp/accel-gpu
rm -rf "$G" && mkdir -p "$G" && tar -xJf .gpu/accel-gpu.tar.xz -C "$G" || exit 2
[ "$(cat "$G/commit")" = "$(git rev-parse HEAD 2>/dev/null || cat "$G/commit")" ] ||
	echo "gpu-run: warning: .gpu was built at $(cat "$G/commit"), the tree is at $(git rev-parse HEAD)" >&2

R=$G/root
mkdir -p "$R/vendors"
for d in "$G"/debs/*.deb; do [ -e "$d" ] && dpkg-deb -x "$d" "$R"; done
export LD_LIBRARY_PATH="$R/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if ! ls /etc/OpenCL/vendors/*.icd >/dev/null 2>&1; then
	lib=$(find /usr/local/nvidia /usr/lib/x86_64-linux-gnu /usr/lib64 -name 'libnvidia-opencl.so*' 2>/dev/null | sort | head -n 1)
	if [ -n "$lib" ]; then
		echo "$lib" >"$R/vendors/nvidia.icd"
		export OCL_ICD_VENDORS="$R/vendors"
	else
		echo "gpu-run: no libnvidia-opencl found; OpenCL will see no GPU" >&2
	fi
fi
if ! ls /usr/share/vulkan/icd.d/*.json /etc/vulkan/icd.d/*.json >/dev/null 2>&1; then
	icd=$(find /usr/local/nvidia -name 'nvidia_icd*.json' 2>/dev/null | head -n 1)
	[ -n "$icd" ] && export VK_DRIVER_FILES="$icd" VK_ICD_FILENAMES="$icd"
fi
[ -d "$R/usr/share/vulkan/explicit_layer.d" ] && export VK_LAYER_PATH="$R/usr/share/vulkan/explicit_layer.d"
export ACCEL_BIN="$G/bin/accel" ACCEL_DATASETS="$G/datasets" CI=true

step() { # step NAME LOG CMD...: run CMD with its output appended to LOG
	local name=$1 log=$2
	shift 2
	echo "== $name" | tee -a "$log"
	local t0=$SECONDS
	"$@" >>"$log" 2>&1
	local rc=$?
	echo "$name rc=$rc $((SECONDS - t0))s" | tee -a "$OUT/summary.txt"
	return $rc
}

for stage in "${@:-all}"; do
	case $stage in
	info | all)
		step devinfo "$OUT/info.log" sh -c "$G/bin/devinfo --json >'$OUT/devinfo.json'"
		step devinfo-text "$OUT/info.log" $G/bin/devinfo
		nvidia-smi >>"$OUT/info.log" 2>&1
		;;
	esac
	case $stage in
	test | all)
		while read -r pkg; do
			bin="$G/bin/$(echo "$pkg" | tr / _).test"
			step "test $pkg" "$OUT/test.log" sh -c "cd '$root/$pkg' && '$bin' -test.count=1 -test.timeout=9m"
		done <"$G/bin/tests.txt"
		;;
	esac
	case $stage in
	bench | all)
		step selftest "$OUT/selftest.log" $G/bin/accel selftest
		step bench "$OUT/selftest.log" sh -c "$G/bin/accel bench --json --reps 5 >'$OUT/bench.json'"
		;;
	esac
	case $stage in
	torch | all)
		ours=
		[ -s "$OUT/bench.json" ] && ours="--ours '$OUT/bench.json'"
		step torch "$OUT/selftest.log" sh -c "python3 bench/torch_cuda.py --out '$OUT/torch.json' $ours"
		;;
	esac
done
cat "$OUT/summary.txt"
