# accel: vendor-neutral GPU compute kernels for Go.
#   make deps   install drivers and tools (Debian 12, as root or with sudo)
#   make run    list the devices, check every op on every device, short speed table
#   make test   vet, format check, SPIR-V freshness and the whole test suite
#   make fuzz   run every fuzz target for FUZZTIME each (make test replays their corpus)

GO ?= $(shell command -v go 2>/dev/null || ls -d /usr/local/go/bin/go /usr/lib/go-1.2[2-9]/bin/go 2>/dev/null | tail -n 1)
# The OpenCL target version is set in the Go sources (#cgo CFLAGS in
# host/clbind.go), so no CGO_CFLAGS is needed here or in a program that
# imports the library.

# lavapipe from bookworm-backports (Mesa 25.0) runs our kernels up to twice
# as fast as bookworm's Mesa 22.3; everything is tested on both. Set
# MESA_BACKPORTS=0 to keep the release's driver.
MESA_BACKPORTS ?= 1

# clang-16 and libclc-16 compile every OpenCL kernel offline for NVIDIA and
# AMD GPUs in the tests (TestOfflineCompile in host/kernels).
APT_PACKAGES = pocl-opencl-icd ocl-icd-opencl-dev opencl-headers clinfo mesa-vulkan-drivers \
	libvulkan-dev vulkan-tools vulkan-validationlayers glslc spirv-tools gcc make ca-certificates \
	clang-16 libclc-16 intel-opencl-icd

.PHONY: deps build run test test-race test-gpu-plans fuzz shaders generate bench vet fmt-check clean cgo-coverage

deps:
	@set -e; if [ "$$(id -u)" -eq 0 ]; then SUDO=; else SUDO=sudo; fi; \
	if grep -qs bookworm /etc/os-release; then \
		echo 'deb http://deb.debian.org/debian bookworm-backports main' | $$SUDO tee /etc/apt/sources.list.d/backports.list >/dev/null; \
	fi; \
	$$SUDO apt-get update -qq; \
	DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $(APT_PACKAGES); \
	if [ "$(MESA_BACKPORTS)" = 1 ] && apt-cache policy mesa-vulkan-drivers | grep -q bookworm-backports; then \
		echo "deps: lavapipe from bookworm-backports (Mesa 25; MESA_BACKPORTS=0 keeps the release's)"; \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends -t bookworm-backports mesa-vulkan-drivers; \
	fi; \
	if [ -z "$(GO)" ] || ! "$(GO)" version | grep -Eq 'go1\.(2[2-9]|[3-9][0-9])'; then \
		echo "deps: no Go >= 1.22 found; installing golang-1.23 from bookworm-backports"; \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq -t bookworm-backports golang-1.23-go; \
	fi
	@GO=$$(command -v go 2>/dev/null || ls -d /usr/local/go/bin/go /usr/lib/go-1.2[2-9]/bin/go 2>/dev/null | tail -n 1); \
	"$$GO" mod download && echo "deps: ready ($$("$$GO" version))"

build:
	$(GO) build -o bin/ ./cmd/...

run: build
	./bin/accel selftest

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# Every test runs on the real CPU drivers (PoCL, lavapipe with the Khronos
# validation layer); under CI=true a missing device fails instead of skipping.
# The cgocheck2 pass (Go pointers handed to C) runs the tests of host/ and
# accel/ again but those CGO_SKIP names: the randomized sweeps, the
# plain-SPIR-V rerun, the 2 GiB staging test, the glslc rebuild of the
# SPIR-V (no cgo) and the other suites of more than 3 s. The tests it
# keeps reach every cgo call in host/ that the whole of both packages
# reaches (make cgo-coverage checks it from coverage profiles; session 17:
# of the 997 host/ blocks the whole suite runs it leaves none with a C call,
# and 2 Go-only ones, ACCEL_FP32_DIV's forced modes), since every op and
# device path has a smaller test. With 9 tests skipped it took 270 s of
# make test's 18 minutes (accel 270 s beside host's 105); alone with
# coverage on, these leave accel 95 s and host 5.
# The time-outs only stop a hung test: on the 2-core VM the accel package
# takes 490-670 s with the drivers' caches warm, but 1628 s on a fresh
# machine's cold ones (PoCL's and Mesa's compiles: TestSortTiled 386 s,
# TestVulkanPlainBuilds 286, TestScatterFewBlocks 185, session 16), and
# 1199 s of a 20-minute limit beside other work, so they are 30 minutes.
CGO_SKIP = ^(TestSegmentReduceRandom|TestSortRandom|TestUniqueRandom|TestScatterReduceDeterministic|TestAlongAxisRandom|TestScanPaths|TestIndexReduceRandom|TestVulkanPlainBuilds|TestVulkanStagedPast2GiB|TestSortTiled|TestScatterFewBlocks|TestUniqueHashed|TestSparseBinaryCOO|TestSparseBinaryCSR|TestScatterReduceRandom|TestSubnormalFloat32|TestIndicePairsSplits|TestHashTableCollisions|TestFP32DivisionModes|TestSparseUnionBuckets|TestSPIRVUpToDate|TestScatterVariantsBuild|TestScatterAtomicFolds)$$
test: fmt-check vet
	$(GO) test -count=1 -timeout 30m ./...
	$(GO) test -count=1 -race -timeout 20m -run 'Concurrent|Race|Pool|Lifecycle|CloseWhile' ./host/ ./host/kernels/ ./accel/
	GOEXPERIMENT=cgocheck2 $(GO) test -count=1 -timeout 30m -skip '$(CGO_SKIP)' ./host/ ./accel/

# The GPU paths on the CPU drivers, before a change to a GPU plan lands:
# the accel package with every op planned as for a discrete GPU (about 11
# minutes alone on a 2-core VM, so not in make test), then the peers'
# random cases through both plans where Debian's python3-torch is
# installed (scripts/peer_fuzz.py). Session 19 found two tests that a
# GPU plan of session 18 had broken this way.
test-gpu-plans: build
	CI=true ACCEL_TEST_PLANS=gpu $(GO) test -count=1 -timeout 60m ./accel/
	@if /usr/bin/python3 -c 'import torch, scipy' 2>/dev/null; then \
		/usr/bin/python3 scripts/peer_fuzz.py --n 40 --seed $${SEED:-1}; \
	else echo "test-gpu-plans: python3-torch or python3-scipy missing: no peer fuzz"; fi

# Whether the cgocheck2 pass still reaches every cgo call the whole suite
# reaches (scripts/cgo-coverage.sh).
cgo-coverage:
	GO=$(GO) sh scripts/cgo-coverage.sh '$(CGO_SKIP)'

# Each fuzz target (one per op family: the ops' in cmd/accel/internal/ops,
# the hash table's in accel) runs for FUZZTIME on both devices; a finding
# is written to its package's testdata/fuzz, which make test then replays.
FUZZTIME ?= 1m
FUZZPKGS = ./cmd/accel/internal/ops ./accel
fuzz:
	@set -e; for p in $(FUZZPKGS); do \
		for f in $$($(GO) test -list '^Fuzz' $$p | grep '^Fuzz'); do \
			echo "== $$p $$f ($(FUZZTIME))"; \
			$(GO) test -run '^$$' -fuzz "^$$f\$$" -fuzztime $(FUZZTIME) -parallel $${FUZZPARALLEL:-1} $$p; \
		done; \
	done

shaders:
	sh shaders/build.sh

# Rewrite the kernel interfaces generated from host/kernels/decl.go, then
# the SPIR-V that includes them.
generate:
	$(GO) generate ./host/kernels
	sh shaders/build.sh

bench: build
	./bin/accel bench

clean:
	rm -rf bin
