#!/bin/sh
# cgo-coverage.sh SKIP: whether make test's cgocheck2 pass, which runs the
# tests of ./host/ and ./accel/ that the regular expression SKIP (the
# Makefile's CGO_SKIP) leaves, still reaches every cgo call in host/ that
# the whole of those tests reaches. Both runs are measured by coverage of
# the host package (-coverpkg=./host); a block of host/ that the whole
# suite runs, the reduced one does not, and whose source calls into C
# (`C.name`) is printed, and the script exits 1. Blocks without a C call
# (Go-only paths such as a cache hit) are counted, not failed.
#
# make cgo-coverage runs it (about 12 minutes on a 2-core machine with
# warm driver caches); run it after adding to CGO_SKIP or adding cgo
# calls.
set -eu
cd "$(dirname "$0")/.."
skip=${1:?usage: scripts/cgo-coverage.sh SKIP-REGEXP}
GO=${GO:-go}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
run() { # run NAME [go test flags]: a coverage profile NAME.out of host/
	name=$1
	shift
	if ! "$GO" test -count=1 -timeout 30m "$@" -coverpkg=./host -coverprofile="$dir/$name.out" ./host/ ./accel/ >"$dir/$name.log" 2>&1; then
		cat "$dir/$name.log"
		echo "cgo-coverage: the $name run failed" >&2
		exit 1
	fi
}
run all
run cgo -skip "$skip"
module=$("$GO" list -m)
# A profile line: FILE:L1.C1,L2.C2 STATEMENTS COUNT (a block repeated once
# per package that ran it). Print the blocks all covers and cgo does not,
# with whether lines L1..L2 of FILE hold a C call.
awk -v module="$module/" '
	FNR == 1 { f++ }
	/^mode:/ { next }
	f == 1 && $3 > 0 { all[$1] = 1 }
	f == 2 && $3 > 0 { cgo[$1] = 1 }
	END {
		for (b in all) {
			if (b in cgo) continue
			split(b, p, ":"); file = p[1]; sub("^" module, "", file)
			split(p[2], r, /[.,]/); from = r[1]; to = r[3]
			call = 0; n = 0
			while ((getline line < file) > 0) {
				n++
				if (n >= from && n <= to && line ~ /(^|[^A-Za-z0-9_])C\.[A-Za-z_]/) call = 1
			}
			close(file)
			print (call ? "C call" : "Go only") "\t" b
		}
	}' "$dir/all.out" "$dir/cgo.out" | sort >"$dir/missed"
total=$(awk '$3 > 0 { print $1 }' "$dir/all.out" | sort -u | wc -l)
calls=$(grep -c '^C call' "$dir/missed" || true)
gos=$(grep -c '^Go only' "$dir/missed" || true)
echo "cgo-coverage: host/ blocks run by the whole suite: $total; not by the cgocheck2 pass: $calls with a C call, $gos Go only"
cat "$dir/missed"
[ "$calls" -eq 0 ]
