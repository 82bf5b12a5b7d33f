#!/bin/bash
# gpu-run.sh STAGE...: on an NVIDIA GPU machine without Go or network, run
# what scripts/gpu-prepare.sh packed into .gpu/ on NVIDIA's OpenCL and Vulkan
# drivers, and leave at most 8 files under $OUT (default ./gpu-out). Each
# stage fits in one 10-minute call (bench and torch together too):
#   info   devinfo, nvidia-smi, the drivers chosen  -> info.log, devinfo.json
#   peers  accel selftest; the peer cases through `accel run --batch` (one
#          batch per op and backend, validation on), check.py --all
#                                                   -> peers.txt (per op)
#   test   every package's test binary at once, CI=true, -test.timeout 8m20s
#          and $ACCEL_GPU_TEST_ARGS (e.g. -test.run X)  -> test.log
#   bench  accel bench --json --no-ref --warmup 200ms, one process per op
#          and backend (the warm-up: each case called for 200 ms more before
#          its measured calls; 2026-11-27's Vulkan rows were fast in a
#          process's first case only)           -> bench.json
#   torch  bench/torch_cuda.py beside bench.json     -> torch.json
#   all    all five, in that order (longer than 10 minutes)
#   sh     bash -c "$ACCEL_GPU_SH" with the drivers set up as for the tests
#          ($ACCEL_GPU_PACK: the unpacked pack, its test binaries under
#          bin/; at most ACCEL_GPU_SH_S seconds, 300)  -> sh.log
# summary.txt: one line per step with its exit status; run.log: the other
# steps' output. Exit status 1 when a step failed, 3 when a stage or one of
# its backends was refused (no NVIDIA driver for it, or no python3 module).
# ACCEL_GPU_BENCH_OPS, _REPS (10), _WARMUP (200ms) and _S (390 s in all), ACCEL_GPU_PEERS_S
# (480) and ACCEL_GPU_PYTHON change the defaults.
#
# The pack's Debian OpenCL ICD loader, Vulkan loader, validation layer and
# glvnd (libGLdispatch, which NVIDIA's Vulkan driver libGLX_nvidia needs) are
# unpacked under /tmp and put first on LD_LIBRARY_PATH. Whatever
# /etc/OpenCL/vendors and the Vulkan ICD folders hold (PoCL, lavapipe),
# OpenCL sees only an ICD file of our own naming libnvidia-opencl.so
# (OCL_ICD_VENDORS) and Vulkan only NVIDIA's ICD json (VK_DRIVER_FILES);
# ACCEL_GPU_OCL_LIB and ACCEL_GPU_VK_ICD name others instead (to try this
# script on PoCL and lavapipe), ACCEL_BIN another CLI. Every step runs with
# CI=true (a missing device fails) and ACCEL_GPU_RUN=1 (tests: from the pack).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
root=$PWD
OUT=${OUT:-$root/gpu-out}
for stage in "${@:-all}"; do
	case $stage in
	info | peers | test | bench | torch | all | sh) ;;
	*) echo "gpu-run: unknown stage $stage (info, peers, test, bench, torch, all, sh)" >&2; exit 2 ;;
	esac
done
[ -f .gpu/accel-gpu.tar.xz ] || { echo "gpu-run: no .gpu/accel-gpu.tar.xz: run scripts/gpu-prepare.sh first and carry .gpu" >&2; exit 2; }
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd) || exit 2
G=$(mktemp -d "${TMPDIR:-/tmp}/accel-gpu.XXXXXX") || exit 2
trap 'rm -rf "$G"' EXIT
tar -xJf .gpu/accel-gpu.tar.xz -C "$G" || exit 2
INFO=$OUT/info.log RUNLOG=$OUT/run.log SUMMARY=$OUT/summary.txt
log() { echo "$*" | tee -a "$INFO" >&2; }
echo "== gpu-run.sh ${*:-all} at $(date -u +%FT%TZ) on $(uname -n), pack of $(cat "$G/commit")" | tee -a "$SUMMARY" >>"$INFO"

# The pack's binaries were built from the sources listed in sums.
if [ -f "$G/sums" ]; then
	changed=$(sha256sum -c --quiet "$G/sums" 2>/dev/null | sed 's/: .*//')
	[ -z "$changed" ] || log "gpu-run: warning: changed since the pack was built (run gpu-prepare.sh again): $(echo "$changed" | tr '\n' ' ')"
fi

# Loaders, validation layer and glvnd from the pack.
R=$G/root
mkdir -p "$R/vendors"
command -v dpkg-deb >/dev/null || log "gpu-run: no dpkg-deb: the pack's loaders and glvnd are not unpacked"
for d in "$G"/debs/*.deb; do
	[ -e "$d" ] && { dpkg-deb -x "$d" "$R" || log "gpu-run: cannot unpack $(basename "$d")"; }
done
libs=$R/usr/lib/x86_64-linux-gnu
[ -d "$R/usr/share/vulkan/explicit_layer.d" ] && export VK_LAYER_PATH="$R/usr/share/vulkan/explicit_layer.d"

is_elf64() { [ "$(od -An -tx1 -N5 "$1" 2>/dev/null | tr -d ' \n')" = 7f454c4602 ]; }
# pick_lib NAME DIR...: the first 64-bit library NAME* under the DIRs (in
# their order; the .so.1 name first).
pick_lib() {
	local name=$1 d f
	shift
	for d in "$@"; do
		[ -d "$d" ] || continue
		while IFS= read -r f; do
			is_elf64 "$f" && { echo "$f"; return 0; }
		done < <(find "$d" \( -type f -o -type l \) -name "$name*" 2>/dev/null |
			awk '{ print ($0 ~ /\.so\.1$/ ? 0 : 1) "\t" $0 }' | sort | cut -f2-)
	done
	return 1
}
icd_lib() { sed -n 's/.*"library_path" *: *"\([^"]*\)".*/\1/p' "$1" | head -n 1; }
nvdirs=(/usr/local/nvidia /usr/lib/x86_64-linux-gnu /usr/lib64)

# OpenCL: an ICD folder holding only the NVIDIA library (or ACCEL_GPU_OCL_LIB).
ocl=${ACCEL_GPU_OCL_LIB:-$(pick_lib libnvidia-opencl.so "${nvdirs[@]}")}
if [ -n "$ocl" ]; then
	echo "$ocl" >"$R/vendors/accel-gpu.icd"
	log "gpu-run: OpenCL: $R/vendors/accel-gpu.icd -> $ocl${ACCEL_GPU_OCL_LIB:+ (ACCEL_GPU_OCL_LIB)}"
else
	log "gpu-run: OpenCL: no libnvidia-opencl.so under ${nvdirs[*]}: OpenCL gets no driver"
fi
export OCL_ICD_VENDORS="$R/vendors" OPENCL_VENDOR_PATH="$R/vendors"
unset OCL_ICD_FILENAMES VK_ADD_DRIVER_FILES # they would add drivers

# Vulkan: NVIDIA's ICD json (nvidia_icd*.json first, else one whose library
# names nvidia), or ACCEL_GPU_VK_ICD; none at all rather than lavapipe.
vk=${ACCEL_GPU_VK_ICD:-}
if [ -z "$vk" ]; then
	jsons=$({
		find /usr/local/nvidia -name '*.json' -path '*icd.d*' 2>/dev/null
		find /usr/share/vulkan/icd.d /etc/vulkan/icd.d -maxdepth 1 -name '*.json' 2>/dev/null
	})
	vk=$(echo "$jsons" | grep '/nvidia_icd[^/]*\.json$' | head -n 1)
	if [ -z "$vk" ]; then
		for j in $jsons; do icd_lib "$j" | grep -qi nvidia && { vk=$j; break; }; done
	fi
fi
if [ -n "$vk" ]; then
	log "gpu-run: Vulkan: $vk -> $(icd_lib "$vk")${ACCEL_GPU_VK_ICD:+ (ACCEL_GPU_VK_ICD)}"
	export VK_DRIVER_FILES="$vk" VK_ICD_FILENAMES="$vk"
else
	log "gpu-run: Vulkan: no NVIDIA ICD json under /usr/local/nvidia, /usr/share/vulkan/icd.d, /etc/vulkan/icd.d: Vulkan gets no driver"
	export VK_DRIVER_FILES="$R/no-vulkan-driver.json" VK_ICD_FILENAMES="$R/no-vulkan-driver.json"
fi

# The drivers' own folders (not the system's) go on LD_LIBRARY_PATH after
# the pack's, for the libraries they load by name.
path=$libs
vklib=${vk:+$(icd_lib "$vk")}
case $vklib in
'' | /*) ;;
*) vklib=$(pick_lib "$vklib" /usr/local/nvidia/lib64 "${nvdirs[@]}") ;;
esac
for f in "$ocl" "$vklib"; do
	d=$(dirname "${f:-/}")
	case $d in / | /lib* | /usr/lib | /usr/lib64 | /usr/lib/x86_64-linux-gnu) continue ;; esac
	case :$path: in *:"$d":*) ;; *) path=$path:$d ;; esac
done
export LD_LIBRARY_PATH="$path${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
for f in "$ocl" "$vklib"; do
	[ -n "$f" ] && [ -e "$f" ] && command -v ldd >/dev/null && ldd "$f" 2>&1 | grep -i 'not found' | sed "s|^|gpu-run: $(basename "$f") needs|" | tee -a "$INFO" >&2
done
log "gpu-run: LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
backends=()
[ -n "$ocl" ] && backends+=(opencl)
[ -n "$vk" ] && backends+=(vulkan)

ACCEL=${ACCEL_BIN:-$G/bin/accel}
export ACCEL_BIN=$ACCEL ACCEL_DATASETS="$G/datasets" CI=true ACCEL_GPU_RUN=1
# a python3 that imports $1
python_with() {
	local p
	for p in ${ACCEL_GPU_PYTHON:-} python3 /usr/bin/python3; do
		"$p" -c "import $1" 2>/dev/null && { echo "$p"; return 0; }
	done
	return 1
}

status=0
note() { echo "$*" | tee -a "$SUMMARY"; }
fail() { [ "$status" -ne 0 ] || status=1; }
step() { # step NAME LOG SECS CMD...: CMD, killed after SECS, its output appended to LOG
	local name=$1 log=$2 secs=$3 t0=$SECONDS rc
	shift 3
	echo "== $name" >>"$log"
	timeout -k 10 "$secs" "$@" >>"$log" 2>&1
	rc=$?
	[ $rc -eq 124 ] && echo "$name: killed after ${secs}s" >>"$log"
	note "$name rc=$rc $((SECONDS - t0))s"
	[ $rc -eq 0 ] || fail
	return $rc
}
# budget SECS: the stage now starting gets SECS in all; cap N: N seconds or
# what is left of them, at least 1 (a step still runs, and says it was cut).
budget() { stage_t0=$SECONDS stage_s=$1; }
cap() { local left=$((stage_s - (SECONDS - stage_t0))); echo $((left < $1 ? (left > 0 ? left : 1) : $1)); }
# need BACKEND STAGE: whether BACKEND has its NVIDIA driver; notes a refusal.
need() {
	case " ${backends[*]} " in *" $1 "*) return 0 ;; esac
	note "$2 $1 refused: no NVIDIA $1 driver found (info.log) rc=3"
	status=3
	return 1
}

stage_peers() {
	local P=$G/peers cases=$root/testdata/peer-cases py b op ops=() rc
	declare -A brc=()
	budget "${ACCEL_GPU_PEERS_S:-480}"
	mkdir -p "$P"
	for b in opencl vulkan; do need $b peers || continue
		step "selftest $b" "$RUNLOG" "$(cap 150)" "$ACCEL" selftest --backend $b
	done
	py=$(python_with json) || { note "peers refused: no python3 rc=3"; status=3; return; }
	for op in "$cases"/*/; do op=$(basename "$op"); ls "$cases/$op"/*/manifest.json >/dev/null 2>&1 && ops+=("$op"); done
	for b in "${backends[@]}"; do
		for op in "${ops[@]}"; do
			"$py" scripts/peer-jobs.py "$cases" "$op" "$P/$b" >"$P/jobs-$b-$op.jsonl" 2>>"$RUNLOG"
			step "peers $b $op" "$RUNLOG" "$(cap 120)" env ACCEL_VK_VALIDATION=1 "$ACCEL" run --batch "$P/jobs-$b-$op.jsonl" --backend "$b"
			brc[$b/$op]=$?
		done
	done
	py=$(python_with numpy) || note "check.py refused: no python3 with numpy rc=3"
	for b in "${backends[@]}"; do
		[ -n "$py" ] || break
		timeout -k 10 "$(cap 120)" "$py" "$cases/check.py" --all "$cases" "$P/$b" >"$P/check-$b.txt" 2>&1
		rc=$?
		note "check.py $b rc=$rc: $(tail -n 1 "$P/check-$b.txt")"
		[ $rc -eq 0 ] || fail
		{ echo "== check.py --all $b"; cat "$P/check-$b.txt"; } >>"$RUNLOG"
	done
	{
		printf '%-26s %-8s %7s %7s %9s\n' op backend passed failed batch_rc
		for b in "${backends[@]}"; do
			for op in "${ops[@]}"; do
				if [ -f "$P/check-$b.txt" ]; then
					awk -v op="$op" -v b="$b" -v rc="${brc[$b/$op]}" '
						{ split($2, a, "/") } a[1] == op && $1 == "PASS" { p++ } a[1] == op && $1 == "FAIL" { f++ }
						END { printf "%-26s %-8s %7d %7d %9s\n", op, b, p, f, rc }' "$P/check-$b.txt"
				else
					printf '%-26s %-8s %7s %7s %9s\n' "$op" "$b" - - "${brc[$b/$op]}"
				fi
			done
			printf '%-26s %-8s %s\n' total "$b" "$(tail -n 1 "$P/check-$b.txt" 2>/dev/null || echo 'not checked')"
		done
		for b in "${backends[@]}"; do
			[ -f "$P/check-$b.txt" ] && grep -m 200 '^FAIL' "$P/check-$b.txt" | sed "s/^/$b /"
		done
	} >"$OUT/peers.txt"
}

stage_test() {
	local T=$G/test pkg i=0 n rc secs targs=()
	need opencl test && need vulkan test || return
	read -ra targs <<<"${ACCEL_GPU_TEST_ARGS:-}"
	mkdir -p "$T"
	while read -r pkg; do
		(
			cd "$root/$pkg" || exit
			t0=$SECONDS
			timeout -k 10 530 "$G/bin/$(echo "$pkg" | tr / _).test" -test.count=1 -test.timeout=8m20s ${targs[@]+"${targs[@]}"} >"$T/$i.log" 2>&1
			echo "$? $((SECONDS - t0))" >"$T/$i.rc"
		) &
		echo "$pkg" >"$T/$i.pkg"
		i=$((i + 1))
	done <"$G/bin/tests.txt"
	wait
	: >"$OUT/test.log"
	for ((n = 0; n < i; n++)); do
		read -r rc secs 2>/dev/null <"$T/$n.rc" || { rc=-1 secs='?'; }
		pkg=$(cat "$T/$n.pkg")
		{ echo "== test $pkg rc=$rc ${secs}s"; cat "$T/$n.log"; } >>"$OUT/test.log"
		note "test $pkg rc=$rc ${secs}s"
		[ "$rc" = 0 ] || fail
	done
}

stage_bench() {
	local B=$G/bench b op reps=${ACCEL_GPU_BENCH_REPS:-10} warm=${ACCEL_GPU_BENCH_WARMUP:-200ms} jsons=()
	local bops=${ACCEL_GPU_BENCH_OPS:-tril_indices triu_indices diagonal_scatter scatter_reduce cumsum sort unique hash_table get_indice_pairs sparse_div}
	budget "${ACCEL_GPU_BENCH_S:-390}"
	mkdir -p "$B"
	for b in opencl vulkan; do need $b bench; done
	for op in $bops; do
		for b in "${backends[@]}"; do
			[ "$(cap 20)" -ge 20 ] || { note "bench $b $op skipped: the stage's ${stage_s}s are spent"; fail; continue; }
			# shellcheck disable=SC2016 # $1... are sh's
			step "bench $b $op" "$RUNLOG" "$(cap 90)" \
				sh -c '"$1" bench --op "$2" --backend "$3" --reps "$4" --warmup "$6" --no-ref --json >"$5"' sh "$ACCEL" "$op" "$b" "$reps" "$B/$b-$op.json" "$warm"
			jsons+=("$B/$b-$op.json")
		done
	done
	python3 - "$OUT/bench.json" ${jsons[@]+"${jsons[@]}"} <<'EOF' 2>>"$RUNLOG" || fail
import json, sys
rows = []
for f in sys.argv[2:]:
    try:
        rows += json.load(open(f))
    except ValueError:
        print("bench: %s: no JSON (the step failed)" % f, file=sys.stderr)
json.dump(rows, open(sys.argv[1], "w"), indent=1)
EOF
}

stage_torch() {
	local py ours=()
	py=$(python_with torch) || { note "torch refused: no python3 with torch rc=3"; status=3; return; }
	[ -s "$OUT/bench.json" ] && ours=(--ours "$OUT/bench.json")
	step torch "$RUNLOG" 150 "$py" bench/torch_cuda.py --out "$OUT/torch.json" ${ours[@]+"${ours[@]}"}
}

for stage in "${@:-all}"; do
	case $stage in
	info | all)
		# shellcheck disable=SC2016
		step devinfo "$INFO" 60 sh -c '"$1" --json >"$2"' sh "$G/bin/devinfo" "$OUT/devinfo.json"
		step devinfo-text "$INFO" 60 "$G/bin/devinfo"
		command -v nvidia-smi >/dev/null && step nvidia-smi "$INFO" 30 nvidia-smi
		step drivers "$INFO" 30 sh -c 'ls -l /etc/OpenCL/vendors /usr/share/vulkan/icd.d /etc/vulkan/icd.d; find /usr/local/nvidia -maxdepth 4 | sort | head -n 100'
		;;
	esac
	case $stage in peers | all) stage_peers ;; esac
	case $stage in test | all) stage_test ;; esac
	case $stage in bench | all) stage_bench ;; esac
	case $stage in torch | all) stage_torch ;; esac
	case $stage in sh) export ACCEL_GPU_PACK=$G && step sh "$OUT/sh.log" "${ACCEL_GPU_SH_S:-300}" bash -c "${ACCEL_GPU_SH:-true}" ;; esac
done
exit $status
