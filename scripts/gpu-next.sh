#!/bin/bash
# gpu-next.sh: the next GPU call's questions, most wanted first, for
# scripts/gpu-run.sh's sh stage (the drivers set up, $ACCEL_BIN the CLI):
#
#   ACCEL_GPU_SH="$(cat scripts/gpu-next.sh)" ACCEL_GPU_SH_S=560 \
#       scripts/gpu-run.sh sh
#
# Each row is `accel bench --json` of one op on one backend, with the
# ACCEL_KNOBS it names, printed as one line per case (median ms, GB/s, the
# plan); each trace is ACCEL_TRACE's per-kernel device times of one rep.
# Rows that answer one question run in the same call, so compare them
# with each other only. GPU_NEXT_QUICK=1 adds --quick (a dry run on PoCL
# and lavapipe); GPU_NEXT_REPS sets --reps (10); GPU_NEXT_ONLY="0a 0f"
# runs only the sections it names (all by default; Q, P, M, C, T, R, W, S and V first);
# GPU_NEXT_TEST_S bounds section T's tests (300 s).
set -u
bin=${ACCEL_BIN:-accel}
reps=${GPU_NEXT_REPS:-10}
quick=
[ "${GPU_NEXT_QUICK:-0}" = 1 ] && quick=--quick
py=${ACCEL_GPU_PYTHON:-python3}

# the Python that prints a row's JSON per case, and a trace's kernels
# (each kernel and plan once: its count, minimum and median device time)
rowpy='
import json, sys
op, b, label = sys.argv[1:4]
try:
    rows = json.load(sys.stdin)
except Exception as e:
    print("%-16s %-7s %-36s no JSON (%s: timed out or failed)" % (op, b, label, e.__class__.__name__))
    sys.exit(0)
for r in rows:
    print("%-16s %-7s %-24s %-36s %9.3f ms %7.0f GB/s  %s" % (op, b, r["case"], label, 1e3 * r["median_s"],
        r.get("gbps") or 0, r.get("plan", "")[:200]))
'
tracepy='
import re, sys
seen = {}
for line in sys.stdin:
    m = re.match(r"accel: (\S+) (.*): ([0-9.]+) ms$", line.strip())
    if m:
        seen.setdefault(m.group(2)[:150], []).append(float(m.group(3)))
for k, v in seen.items():
    v.sort()
    print("%4d x  min %9.3f  med %9.3f ms  %s" % (len(v), v[0], v[len(v) // 2], k))
'

# the Python that prints ptxas's line a kernel (its registers, stack and
# spills) from the build logs ACCEL_CL_DUMP wrote into a folder (argv[1];
# argv[2], if given, keeps the programs whose name contains it)
ptxpy='
import glob, os, re, sys
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*.txt"))):
    name = os.path.basename(f)[:-4]
    if len(sys.argv) > 2 and sys.argv[2] not in name:
        continue
    entry, stack, entries, funcs = None, "", set(), set()
    for line in open(f, errors="replace"):
        m = re.search(r"Compiling entry function .(\w+).", line)
        if m:
            entry = m.group(1)
            entries.add(entry)
        m = re.search(r"Function properties for (\w+)", line)
        if m:
            funcs.add(m.group(1))
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m:
            stack = "stack %s, spills %s/%s" % m.groups()
        m = re.search(r"Used (\d+) registers(.*)", line)
        if m:
            print("%-52s %-26s %3s registers%s; %s" % (name[:52], entry or "?", m.group(1), m.group(2)[:60], stack))
    if funcs - entries:
        print("%-52s functions not inlined: %s" % (name[:52], " ".join(sorted(funcs - entries))[:200]))
'

# want SECTION: whether GPU_NEXT_ONLY names SECTION (or is empty)
want() { [ -z "${GPU_NEXT_ONLY:-}" ] || case " $GPU_NEXT_ONLY " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

# cases: --case CASE where CASE names one (not with --quick, whose cases
# are others), and no scalar reference on the host
cases() {
	echo --no-ref
	[ -n "${CASE:-}" ] && [ -z "$quick" ] && echo --case "$CASE"
}

# [CASE=NAME] row OP BACKEND KNOBS SECONDS [LABEL]: one bench row,
# printed per case (CASE: that case only)
row() {
	local op=$1 b=$2 knobs=$3 s=$4 label=${5:-${3:-"(default)"}}
	# shellcheck disable=SC2046 # one word per flag
	ACCEL_KNOBS=$knobs timeout "$s" "$bin" bench --op "$op" --backend "$b" --reps "$reps" $quick $(cases) --json 2>/dev/null |
		"$py" -c "$rowpy" "$op" "$b" "$label"
}

# [CASE=NAME] trace OP BACKEND KNOBS SECONDS: per-kernel device times of
# three reps
trace() {
	echo "== trace $1 $2 ${3:-(default)} ${CASE:-}"
	# shellcheck disable=SC2046 # one word per flag
	ACCEL_KNOBS=$3 ACCEL_TRACE=1 timeout "$4" "$bin" bench --op "$1" --backend "$2" --reps 3 $quick $(cases) 2>&1 |
		"$py" -c "$tracepy" | head -80
}

if want Q; then
echo "== Q. Vulkan after a bench's first case (session 15's reading of 2026-11-27): each Vulkan process's first case ran within 7% of OpenCL on the same plan or ahead of it (scatter rand16M_1M sum 0.202 ms against 0.281, hash insert8M 2.670 against 3.105, subm248636 0.277 against 0.265), and the later rows 3-10x behind (subm248636_LL 1.225 against the first case's 0.277, with the same plan, kernels and arguments). If the order decides it, the pairs below swap their times when swapped, a case alone is fast, and the GPU's clocks (nvidia-smi every 50 ms, summed per row) show what changed: the SM clock dropping while the host computes the scalar reference, and Vulkan's short bursts not raising it again, is the guess"
clk=${OUT:-/tmp}/clocks.csv
cpid=
if command -v nvidia-smi >/dev/null; then
	nvidia-smi --query-gpu=timestamp,pstate,clocks.sm,clocks.mem,power.draw,utilization.gpu --format=csv,noheader,nounits -lms 50 >"$clk" 2>/dev/null &
	cpid=$!
fi
# qrow LABEL ARGS...: one bench run's rows, then the clocks while it ran
qrow() {
	local label=$1 t0 t1
	shift
	t0=$(date +%s.%N)
	timeout 60 "$bin" bench --reps "$reps" --json "$@" 2>/dev/null | "$py" -c "$rowpy" "-" "-" "$label"
	t1=$(date +%s.%N)
	[ -n "$cpid" ] && "$py" -c '
import sys, datetime
t0, t1 = float(sys.argv[2]), float(sys.argv[3])
sm, mem, pw, ps = [], [], [], set()
for line in open(sys.argv[1]):
    f = [x.strip() for x in line.split(",")]
    try:
        t = datetime.datetime.strptime(f[0], "%Y/%m/%d %H:%M:%S.%f").replace(tzinfo=datetime.timezone.utc).timestamp()
        if t0 <= t <= t1:
            sm.append(float(f[2])); mem.append(float(f[3])); pw.append(float(f[4])); ps.add(f[1])
    except Exception:
        pass
if sm:
    sm.sort(); mem.sort(); pw.sort()
    print("    clocks: %d samples, SM MHz min %d med %d max %d; memory MHz min %d max %d; power W med %.0f max %.0f; %s" % (len(sm), sm[0], sm[len(sm)//2], sm[-1], mem[0], mem[-1], pw[len(pw)//2], pw[-1], " ".join(sorted(ps))))
' "$clk" "$t0" "$t1"
}
for b in vulkan opencl; do
	qrow "$b: sum, then amax" --op scatter_reduce --backend "$b" --no-ref --case rand16M_1M_sum --case rand16M_1M_amax
	qrow "$b: amax, then sum" --op scatter_reduce --backend "$b" --no-ref --case rand16M_1M_amax --case rand16M_1M_sum
	qrow "$b: amax alone" --op scatter_reduce --backend "$b" --no-ref --case rand16M_1M_amax
	qrow "$b: subm, then subm_LL" --op get_indice_pairs --backend "$b" --no-ref --case subm248636 --case subm248636_LL
	qrow "$b: subm_LL, then subm" --op get_indice_pairs --backend "$b" --no-ref --case subm248636_LL --case subm248636
	qrow "$b: lookup8M alone" --op hash_table --backend "$b" --no-ref --case lookup8M
done
qrow "vulkan: sum, then amax, with the host reference" --op scatter_reduce --backend vulkan --case rand16M_1M_sum --case rand16M_1M_amax
qrow "vulkan: sum, then amax, reps 100" --op scatter_reduce --backend vulkan --no-ref --reps 100 --case rand16M_1M_sum --case rand16M_1M_amax
# bench --warmup (session 15): each case calls for 300 ms before its
# measured calls; if the clocks are the cause, this row is as fast as the
# first case
qrow "vulkan: sum, then amax, --warmup 300ms" --op scatter_reduce --backend vulkan --no-ref --warmup 300ms --case rand16M_1M_sum --case rand16M_1M_amax
qrow "vulkan: subm, then subm_LL, --warmup 300ms" --op get_indice_pairs --backend vulkan --no-ref --warmup 300ms --case subm248636 --case subm248636_LL
[ -n "$cpid" ] && kill "$cpid" 2>/dev/null
fi
if want P; then
echo "== P. NVIDIA's OpenCL programs as its compiler built them (session 16; read offline from \$OUT/gpu-dump.tar.xz): ACCEL_CL_DUMP writes each program built from source, its binary (PTX) and its build log with -cl-nv-verbose (ptxas's registers, stack, spills and shared memory a kernel), for every op's bench cases on the default plans; below, ptxas's line a kernel. Vulkan: ACCEL_VK_DUMP, each pipeline's statistics and the driver's internal representations, if NVIDIA's gives any. Session 15 asked: whether the chained scan at ITEMS 32 takes so many registers that it halves occupancy (ACCEL_KNOBS=scan:ITEMS=16 then), whether NVIDIA's front end inlines the body functions into their entries (since session 24 every body is INLINE: a call left in the PTX is news), whether the sort's sweep keeps its 16 keys a lane in flight"
dd=$(mktemp -d "${TMPDIR:-/tmp}/cl-dump.XXXXXX")
for op in sort unique cumsum scatter_reduce get_indice_pairs hash_table sparse_div diagonal_scatter tril_indices; do
	ACCEL_CL_DUMP=$dd timeout 60 "$bin" bench --op "$op" --backend opencl --reps 1 --no-ref $quick >/dev/null 2>&1 || echo "P: $op rc=$?"
done
"$py" -c "$ptxpy" "$dd"
# session 24: every entry's body is INLINE, so NVIDIA's PTX should call
# nothing of ours (a call is news: its target names the function)
echo "P: PTX call sites: $(find "$dd" -name '*.bin' -exec grep -a -c '^[[:space:]]*call' {} + 2>/dev/null | awk -F: '{s+=$NF} END{print s+0}'); the first: $(find "$dd" -name '*.bin' -exec grep -a -h -A1 -m1 '^[[:space:]]*call' {} + 2>/dev/null | head -4 | tr -s '[:space:]' ' ')"
# Vulkan: ACCEL_VK_DUMP writes each pipeline's constants, the driver's
# statistics and whatever internal representations it gives (RADV: its
# disassembly; NVIDIA's offer is what this finds out)
mkdir -p "$dd/vulkan"
for op in sort cumsum scatter_reduce hash_table get_indice_pairs; do
	ACCEL_VK_DUMP=$dd/vulkan timeout 60 "$bin" bench --op "$op" --backend vulkan --reps 1 --no-ref $quick >/dev/null 2>&1 || echo "P: vulkan $op rc=$?"
done
echo "P: vulkan: $(find "$dd/vulkan" -name '*.txt' | wc -l) pipelines, representations: $(cat "$dd"/vulkan/*.txt 2>/dev/null | grep '^== ' | sort | uniq -c | tr '\n' ' ')"
echo "P: $(find "$dd" -name '*.bin' | wc -l) programs, $(du -sh "$dd" | cut -f1)"
tar -C "$dd" -cJf "${OUT:-/tmp}/gpu-dump.tar.xz" . && ls -l "${OUT:-/tmp}/gpu-dump.tar.xz"
rm -rf "$dd"
fi
if want M; then
echo "== M. the sort's registers against its occupancy (session 20): the sweep's group takes 45,316 bytes of shared memory, so 5 groups of 256 fit a multiprocessor (1,280 lanes, 51 registers each), but ptxas chooses the registers without that bound (LLVM's AMD backend, which spends registers up to what the shared memory leaves, gives the same sweep, ballots and all, 184 VGPRs on gfx1100: the code has the room to grow); if ptxas gives it over 64, 3 groups or fewer run a multiprocessor at once, over 128 one. ACCEL_KNOBS radix:MAXREG=N caps them (-cl-nv-maxrregcount, host.Plan.MaxRegs). A row a cap, each with ptxas's line for its sweep (registers, spills); then (session 25) the entries loaded with the keys (RADIX_LATE=0) against after the ranking (the plan's since), on both backends; then (session 26) the passes with one digit skipped (RADIX_SKIP) or run. 2026-11-27: a pass 0.271 ms, 1.286 ms the sort"
md=$(mktemp -d "${TMPDIR:-/tmp}/cl-maxreg.XXXXXX")
# then (session 25) the entries loaded with the keys (RADIX_LATE=0)
# against after the ballots' ranking (RADIX_LATE=1, the plan's since;
# RADV's registers for the 32-bit sweep of 256 x 16 keys: 96 against 120)
for k in MAXREG=0 MAXREG=64 MAXREG=80 MAXREG=96 MAXREG=128 RADIX_LATE=0 RADIX_LATE=0,MAXREG=80; do
	CASE=uint32_16M_perm row sort opencl "radix:$k" 30
	mkdir -p "$md/$k"
	ACCEL_KNOBS="radix:$k" ACCEL_CL_DUMP=$md/$k timeout 60 "$bin" bench --op sort --backend opencl --reps 1 --no-ref $quick >/dev/null 2>"$md/$k.err" || echo "M: $k rc=$?"
	grep -h "refused" "$md/$k.err" | cut -c1-300
	"$py" -c "$ptxpy" "$md/$k" radix
done
for k in "" radix:RADIX_LATE=0; do
	CASE=uint32_16M_perm row sort vulkan "$k" 30
done
# session 26: the sweep skips a pass whose digit is one for every key
# (RADIX_SKIP=1, the plan's: each tile reads its pass's role before its
# keys, a cached round trip, and a launch computes the roles); without
# it (RADIX_SKIP=0) every pass runs as before. The int64 keys below 2^20
# skip five of eight passes (predicted: about 3/8 of the sweeps' time);
# the full-range uint32 keys skip none, so their two rows are the cost
echo "M: passes with one digit skipped (RADIX_SKIP)"
for b in opencl vulkan; do
	for k in "" radix:RADIX_SKIP=0; do
		CASE=int64_16M_below1M row sort $b "$k" 30
		CASE=uint32_16M_perm row sort $b "$k" 30
	done
done
# session 27: radix_thist adds a lane's keys with one digit in a pass by
# one atomic, and no barrier parts a group's tiles; this trace's thist
# (eight passes' counts of 128 MB of keys) and W's (uint32: four of 64 MB;
# 0.081 ms on 2026-11-27) show what that made of it
CASE=int64_16M_below1M trace sort opencl "" 30
# the cumsum's chained scan (ITEMS 32 a lane on NVIDIA's OpenCL), the
# same way
for r in 0 64 96; do
	row cumsum opencl "scan:MAXREG=$r" 30
done
rm -rf "$md"
fi
if want C; then
echo "== C. the atomic scatter's folds (session 21): the device's atomic adds (the default on GPUs; integer sums and means since session 21, where they took a compare-and-swap loop) against compare-and-swap loops from a plain load, a batch's four first words loaded before its first atomic (ACCEL_KNOBS scatter_reduce:SC_CAS=1, lavapipe's plan: 2.5-3x faster there); amax folds by compare-and-swap either way, now from the batch's preloaded words in the builds without an atomic add (2026-11-27: rand16M_1M sum 0.281 / 0.202 ms, amax 0.240 / 0.769, perm16M 0.682 / 2.141, OpenCL / Vulkan)"
for b in opencl vulkan; do
	for c in rand16M_1M_sum rand16M_1M_amax perm16M_sum; do
		CASE=$c row scatter_reduce $b "" 20
		CASE=$c row scatter_reduce $b "scatter_reduce:SC_CAS=1" 20
	done
done
fi
if want T; then
echo "== T. accel's tests that the 2026-11-27 call did not reach (its 200 s cap stopped inside TestSortTiled, after 32 s there), first the ones of session 12: float32 subnormals kept on NVIDIA's Vulkan (DENORM_FIX: TestIndexReduceRandom/vulkan gave -0 for -1.47e-43 there), the sparse merge path's chunks of 32; and the plain builds' NaN (TestVulkanPlainBuilds, failing since 2026-11-26)"
tests='TestScatterAtomicFolds|TestSparseSoakFinds|TestSparseRowsRandom|TestSparseSkewedRows|TestSparseCoalesceAndConvert|TestSparseInto|TestSparseBadInputs|TestSparseUnionBuckets|TestSparseUnionBucketsBad|TestSortTiled|TestSortNVTricksEmulated|TestUniqueRandom|TestUniqueHashed|TestSegmentReduceRandom|TestPrimErrors|TestScanPaths|TestVulkanSubgroupControl|TestSyncBounds|TestReleaseWhileQueued|TestFaultInjection|TestConcurrentMixedOps|TestScatterNVTricksEmulated|TestScatterReduceBackward|TestScatterReduceBackwardLongRuns|TestScatterReduceBackwardErrors|TestScatterReduceDeterministic|TestScatterPartition|TestScatterReduceRandom|TestScatterPrivateBlocks|TestScatterAssignPermutation|TestScatterErrors|TestScatterFewMax|TestScatterFewBlocks|TestScatterPlanPast2p32|TestScatterFewGroupsScratch|TestTriIndicesRandom|TestTriIndicesGroupShapes|TestTriIndicesErrors|TestTriIndicesHuge|TestConcurrentTriIndices|TestPoolReuseLoop|TestWarm|TestWarmEveryOp|TestVulkanPlainBuilds'
# gotest SECONDS REGEXP: accel's tests matching REGEXP, in their file
# order, for at most SECONDS; the passes of subtests and the goroutines of
# a time-out's panic left out
gotest() {
	(cd accel && timeout -k 10 "$1" "$ACCEL_GPU_PACK/bin/accel.test" -test.count=1 -test.timeout="$(($1 - 10))s" -test.v -test.run "$2" 2>&1 |
		sed '/^goroutine /,$d' | grep -v '^=== \|^ *--- PASS: .*/' | tail -200)
}
if [ -x "${ACCEL_GPU_PACK:-}/bin/accel.test" ]; then
	# session 12's first, then the rest (go test runs a binary's tests in
	# file order, whatever -test.run lists)
	first='TestSubnormalFloat32|TestIndexReduceRandom|TestSparseBinaryCSR|TestSparseBinaryCOO'
	gotest 90 "^($first)\$"
	gotest "${GPU_NEXT_TEST_S:-300}" "^($tests)\$"
else
	echo "no \$ACCEL_GPU_PACK/bin/accel.test (run this under gpu-run.sh sh)"
fi
fi
if want R; then
echo "== R. what NVIDIA's Vulkan compiler made of each pipeline (session 14: VK_KHR_pipeline_executable_properties, which the trace now prints for every pipeline it builds): registers and local memory a thread, beside OpenCL's private memory for the same kernels (0f). Vulkan's slow rows of 2026-11-27 are the latency-bound ones, on the same plan as OpenCL (hash lookup8M 1.873 ms against 0.422, rand16M_1M amax 0.769 against 0.240, conv149100 1.325 against 0.296): pipelines with far more registers than OpenCL's kernels (less occupancy, fewer loads in flight) would explain them. AMD's compiler (RADV, TestVulkanAMDBuilds) keeps every GPU-plan pipeline free of spills, 48 VGPRs or fewer for these"
# stats OP BACKEND PATTERN CASE...: the trace's lines matching PATTERN for
# one rep of each CASE (every case with --quick)
stats() {
	local op=$1 b=$2 pat=$3
	shift 3
	local c=""
	if [ -z "$quick" ]; then
		for x in "$@"; do c="$c --case $x"; done
	fi
	# shellcheck disable=SC2086 # one word per flag
	ACCEL_TRACE=1 timeout 60 "$bin" bench --op "$op" --backend "$b" --reps 1 --no-ref $quick $c 2>&1 | grep "$pat" | sed 's/^accel: //' | sort -u | head -40
}
for b in vulkan opencl; do
	pat="driver statistics"
	[ "$b" = opencl ] && pat="private memory"
	stats hash_table $b "$pat" lookup8M
	stats scatter_reduce $b "$pat" rand16M_1M_amax rand16M_1M_mean hot16M_16_sum perm16M_sum rand16M_1M_sum_det
	stats get_indice_pairs $b "$pat" conv149100 subm248636
	stats sort $b "$pat" uint32_16M_perm
	stats cumsum $b "$pat" int32_64M
done
fi
if want W; then
echo "== W. session 13's blind changes (2026-11-27, after the H200 call): loads in flight before the work that kept them in order (the sort's ranking by ballots and its histogram pass; the atomic scatter pass, the few-targets pass and its merge), fixup launches on a grid of eight groups a compute unit. Predicted on the H200 (2026-11-27 measured): sort 16M+perm about 0.9-1.0 ms (1.286 OpenCL, 1.445 Vulkan; a sweep pass 0.271 -> about 0.2, thist 0.081 -> about 0.04, fixups 0.014-0.026 -> under 0.005); hot16M_16 amax / mean OpenCL about 0.3 / 0.3 (1.041 / 0.962: the merge's 2112 copies a round trip or two each); rand16M_1M sum OpenCL about 0.2 (0.281). Session 15: OpenCL cumsum int32 64M 0.239 ms -> about 0.15-0.16 (the chained scan's 32 tile loads a work-item in flight together, where a branch on the kind and the tile's end kept them one at a time), rand16M_1M_sum_det 2.242 -> about 0.6-0.7 (the partition's fold in work-group memory, its count and place passes four positions at a time). Then Vulkan's scatter rows under each SPIR-V build (ACCEL_VK_STRICT=0: the plain builds; ACCEL_DENORM_FIX=0: V.strict for V.strictf), to see whether a build is what makes them slow"
for b in opencl vulkan; do
	row sort $b "" 40
	trace sort $b "" 40
	row scatter_reduce $b "" 90
	row cumsum $b "" 30
done
# session 16: the hash table's passes, loads in flight (the early stops'
# flags once a batch, a new key's claim in one compare-and-swap, the slot
# passes 4 elements at a time: RADV's round trips hash_count 10 -> 8,
# hash_insert 11 -> 10, mark / ids 8 -> 2, commit 12 -> 2); 2026-11-27:
# insert8M 3.105 ms OpenCL, 2.670 Vulkan; unique 3.163 / 2.220 (its count
# and inverse passes); session 17: hash_rank's four elements a step at a
# time (RADV 16 -> 3 round trips a work-item)
for b in opencl vulkan; do
	CASE=insert8M trace hash_table $b "" 40
	trace unique $b "" 60
done
# session 16: Vulkan's cumsum takes the subgroups' reduce-then-scan (x read
# twice: 0.332 ms on 2026-11-27), chosen in session 2 over a chained scan
# whose tile loads then waited one by one (0.57 against 0.41); since
# session 15 the chained tile's loads are in flight (RADV: 2 round trips
# over its paths, testdata/amd_loads.txt), so OpenCL's shape may now win
# on Vulkan too (one read of x: the 90%-of-copy goal, 0.157)
row cumsum vulkan "scan:CHAIN=2,SCAN_SG=0,ITEMS=32,LOCAL=256" 30 "vulkan chained, OpenCL's tiles"
row cumsum vulkan "scan:CHAIN=2,SCAN_SG=0,ITEMS=16,LOCAL=512" 30 "vulkan chained, 512 x 16"
CASE=hot16M_16_sum trace scatter_reduce vulkan "" 40
# session 15: the partition's fold sorts each tile's words in work-group
# memory (2026-11-27: rand16M_1M_sum_det 2.242 ms OpenCL, 7.075 Vulkan,
# model 0.296; predicted about 0.6-0.7 OpenCL if the fold's insertion
# sorts in device memory were most of it, as estimated)
for b in opencl vulkan; do CASE=rand16M_1M_sum_det trace scatter_reduce $b "" 40; done
# session 18: the slotted partition (no count pass, no scan, one wait:
# model 0.301 -> 0.209 ms on the H100, 8 launches -> 4), predicted about
# 0.35-0.45 ms on OpenCL; SLOT=0 is session 15's counted partition
for b in opencl vulkan; do
	for k in "" "scatter_plan:SLOT=0"; do CASE=rand16M_1M_sum_det row scatter_reduce $b "$k" 40; done
done
# session 19: the partitions' folds with twice the scratch (96 buckets a
# tile of 128 work-items, from 48; SC_FEWG_SH=0 is session 18's), the
# slotted fold's elements of dst loaded eight targets at a time, before
# its sort (perm16M_sum_det: buckets of 16 targets, a hit each; its fold
# predicted about 0.1 -> 0.03 ms); rand16M_1M_sum_det about 0.33-0.42
for b in opencl vulkan; do
	CASE=rand16M_1M_sum_det row scatter_reduce $b "scatter_sfold:SC_FEWG_SH=0" 40 "the fold's scratch as in session 18"
	CASE=perm16M_sum_det trace scatter_reduce $b "" 40
done
CASE=perm16M_sum trace scatter_reduce vulkan "" 40
CASE=hot16M_16_mean trace scatter_reduce opencl "" 40
for c in hot16M_16_sum perm16M_sum rand16M_1M_amax; do
	ACCEL_VK_STRICT=0 CASE=$c row scatter_reduce vulkan "" 40 "ACCEL_VK_STRICT=0 (plain builds)"
	ACCEL_DENORM_FIX=0 CASE=$c row scatter_reduce vulkan "" 40 "ACCEL_DENORM_FIX=0 (V.strict)"
done
fi
if want S; then
echo "== S. sparse_div csr200k_5M: the merge path in chunks of 32 positions, a lane each (session 12, blind; 2026-11-27 at chunks of 512, four a work-item, 19 groups: 9.13 ms OpenCL, 14.29 Vulkan; model 0.28; cuSPARSE add 2.41 on the H100), against 16, 64 and the old 512 x 4; with traces"
for b in opencl vulkan; do
	for k in "" "sparse_plan:CHUNK=16" "sparse_plan:CHUNK=64" "sparse_plan:CHUNK=512,ITEMS=4"; do CASE=csr200k_5M row sparse_div $b "$k" 40; done
	CASE=csr200k_5M trace sparse_div $b "" 40
done
fi
if want V; then
# session 17: get_indice_pairs' GPU passes with a row's loads together
# (RADV: keys 21 -> 5 round trips, wpairs four rows for one's 8, gouts'
# bit loop without a load a target): conv149100's trace shows what
# gouts and wpairs take now
echo "== V. Vulkan's unexplained rows of 2026-11-27, traced on both backends: rand16M_1M amax (Vulkan 0.769 ms, 0.243 on 2026-11-26 with the same plan; OpenCL 0.240), hash_table lookup8M (Vulkan 1.873, OpenCL 0.422), get_indice_pairs conv149100 (Vulkan 1.325, OpenCL 0.296) and subm248636_LL (Vulkan 1.225 where the default case with the same plan took 0.277)"
for b in vulkan opencl; do
	CASE=rand16M_1M_amax trace scatter_reduce $b "" 40
	CASE=lookup8M trace hash_table $b "" 40
	CASE=conv149100 trace get_indice_pairs $b "" 40
done
CASE=subm248636_LL trace get_indice_pairs vulkan "" 40
CASE=subm248636 trace get_indice_pairs vulkan "" 40
fi
if want 0; then
echo "== 0. the radix sort's tiles ranked by subgroup ballots (session 10: Vulkan's ballots, NVIDIA OpenCL's warp votes in PTX; knob RADIX_SGS, the plan's subgroups a group) against the raking rounds (RADIX_SGS=0), both in Onesweep's passes (RADIX_SWEEP=1, the GPU plan since session 5), and the votes in a count, a scan and a scatter per pass (RADIX_SWEEP=0; session 3: sort 1.81-1.89 ms OpenCL, 1.80 Vulkan; a pass 0.11 ms counting, 0.035 scanning, 0.29-0.35 scattering; unique 6.24 / 7.13, since session 6 with 32-bit entries beside its 64-bit keys and no gather). Where the default rows' plan says two 4-bit rounds, the device's ballots were not found (devinfo: subgroup ballot)"
for b in opencl vulkan; do
	for k in "" "radix:RADIX_SGS=0" "radix:RADIX_SWEEP=0"; do
		row sort $b "$k" 40
		row unique $b "$k" 60
	done
done
fi
if want 0a; then
echo "== 0a. the sort's tiles with entries in one scratch word (session 11, knob RADIX_EW=1: 3072-key tiles on Vulkan, 512 x 6, and 4096 on OpenCL, 256 x 16; model 0.518 ms on the H100, 0.551 with session 10's tiles) against session 10's (RADIX_KPT=4 on Vulkan, 8 on OpenCL: 2048 keys)"
row sort opencl "radix:RADIX_KPT=8" 40
row sort vulkan "radix:RADIX_KPT=4" 40
trace sort opencl "" 40
trace sort vulkan "" 40

fi
if want 0b; then
echo "== 0b. unique's hash plan (session 7, the GPUs' plan for 64-bit keys: model 0.625 ms on the H100, 4.95x the least; PyTorch 2.93) against the sort of every key (unique_plan:HASH=0) and a table for n/16 keys (SHARE=16); traces: hash_count's 16M atomics beside scatter_reduce rand16M_1M sum's"
for b in opencl vulkan; do
	for k in "" "unique_plan:HASH=0" "unique_plan:SHARE=16"; do row unique $b "$k" 60; done
	trace unique $b "" 60
done

fi
if want 0c; then
echo "== 0c. the bit-reproducible scatter: the GPUs' partition (session 7: each target's positions grouped in one pass and sorted in place; model 0.296 ms for rand16M_1M sum on the H100, PyTorch's non-reproducible 0.198) against the packed sort (scatter_plan:PART=0, model 0.619; session 3 measured 2.53 OpenCL, 12.99 Vulkan before the packing)"
for b in opencl vulkan; do
	for k in "" "scatter_plan:PART=0"; do row scatter_reduce $b "$k" 60; done
done

fi
if want 0d; then
echo "== 0d. get_indice_pairs (sessions 8-9): the sites in a hash table (session 9; model subm248636 0.113 ms, 11 launches, conv149100 0.115, 16) against sorted (indice_plan:TABLE=0; model 0.182 and 0.175); conv149100 on candidates through the dense grid (a bit a key since session 9: one wait, no sort of the targets) against the sort of its targets (indice_plan:GRID=0; model 0.211 with the table); conv248636 (new: 43.5M target keys, the grid's bits where it sorted before); subm248636 writes its pairs by tiles (session 3: subm248636 0.599, conv149100 0.584 OpenCL); with traces"
for b in opencl vulkan; do
	for k in "" "indice_plan:TABLE=0" "indice_plan:GRID=0"; do row get_indice_pairs $b "$k" 90; done
	trace get_indice_pairs $b "" 90
done

fi
if want 0e; then
echo "== 0e. cumsum (session 10): the chained scan's look-back reads a tile's prefix and sum words at once and adds integer carries as it walks (one round trip a window of 32 tiles, where it took about three; H200 session 2: 0.28-0.31 ms OpenCL for 64M int32 on tiles of 8192, PyTorch 0.223, copy 0.125); Vulkan's chained scan (scan:CHAIN=2,SCAN_SG=0,ITEMS=16,LOCAL=512, session 2's best shape there) beside its reduce-then-scan (0.41 against 0.57 before); with traces"
for b in opencl vulkan; do
	row cumsum $b "" 40
done
row cumsum vulkan "scan:CHAIN=2,SCAN_SG=0,ITEMS=16,LOCAL=512" 40
trace cumsum opencl "" 40

fi
if want 0f; then
echo "== 0f. what NVIDIA's OpenCL compiler made of each GPU kernel (session 11): a work-item's private memory is its stack and register spills, local memory on the GPU; clang's PTX keeps none in the GPU plans' kernels (TestOfflineCompile), so a large figure here is the driver's spills (the sort's tiles: 16 keys a lane)"
for op in sort unique cumsum scatter_reduce get_indice_pairs; do
	ACCEL_TRACE=1 timeout 60 "$bin" bench --op "$op" --backend opencl --reps 1 $quick 2>&1 | grep "private memory" | sed 's/^accel: //' | sort -u | head -40
done

fi
if want 1; then
echo "== 1. Vulkan copies with our kernel (session 3: NVIDIA's vkCmdCopyBuffer 843 GB/s, OpenCL 4.08 TB/s; diag4096 0.172 ms Vulkan, 0.044 OpenCL)"
for b in vulkan opencl; do row diagonal_scatter $b "" 40; done

fi
if want 2; then
echo "== 2. few-targets scatter: scratch columns (SC_FEWG_SH=1, Vulkan's plan) against registers (0, OpenCL's), both backends (session 3: hot16M_16 sum 4.33 ms Vulkan, 0.24 OpenCL)"
for b in vulkan opencl; do
	for k in 0 1; do row scatter_reduce $b "scatter_gpu_few:SC_FEWG_SH=$k" 60; done
done

fi
if want 2b; then
echo "== 2b. OpenCL's float sums by PTX's atomic add (NV_TRICKS, the default) against the compare-and-swap loop (ACCEL_NV_TRICKS=0; session 3: rand16M_1M sum 0.490 ms OpenCL, 0.211 Vulkan's native add; perm16M 0.712)"
ACCEL_NV_TRICKS=0 row scatter_reduce opencl "" 60 "ACCEL_NV_TRICKS=0 (compare-and-swap)"

fi
if want 3; then
echo "== 3. traces of Vulkan's slow scatter rows (perm16M 2.61 ms against 0.71 OpenCL; deterministic rand16M_1M sum 12.99 against 2.53 in session 3, since session 6 a sort of packed target-value words, since session 7 the partition: predicted about 0.3-0.5 ms)"
trace scatter_reduce vulkan "" 60
trace scatter_reduce opencl "" 60

fi
if want 4; then
echo "== 4. sort tiles: OpenCL with Vulkan's 512 x 4 (session 3: 1.887 ms at 256 x 8)"
row sort opencl "" 30
row sort opencl "radix:RADIX_KPT=4,LOCAL=512" 30

fi
if want 5; then
echo "== 5. index pairs and the sparse divide on Vulkan with their own time (session 3 cut them at 27 s)"
row get_indice_pairs vulkan "" 150
row sparse_div vulkan "" 90
trace get_indice_pairs vulkan "" 90
fi
