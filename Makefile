# Thin wrapper around CMake. `make test` and `make run` are the two set-up commands (README.md).
BUILD        ?= build
JOBS         ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS  ?=
FUZZ_SECONDS ?= 30
STEPS        ?= 20000
RESTART_EVERY ?= 500

.PHONY: all deps configure build test run sanitize stateful fuzz vectors bench clean stop

all: build

deps:
	@bash scripts/deps.sh

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)

build: $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

test: deps
	$(MAKE) build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

vectors: build
	python3 ../shared/tools/check-vectors $(BUILD)/poolsched ../shared/vectors/fair-share

# A local cluster on 127.0.0.1: scheduler, three nodes, example pools and operations (./run/).
run: deps
	$(MAKE) build
	@bash scripts/local-cluster.sh start $(BUILD)/poolsched

stop:
	@bash scripts/local-cluster.sh stop

# Tests again under AddressSanitizer and UndefinedBehaviorSanitizer.
sanitize: deps
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DPS_SANITIZE=ON $(CMAKE_FLAGS)
	cmake --build build-asan -j $(JOBS)
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --test-dir build-asan --output-on-failure -j $(JOBS)

# The stateful random test of the service at length, against the ASan+UBSan scheduler:
# make stateful STEPS=100000 [SEED=n] (a random seed by default; it is printed, and a failure
# prints the replay command). ctest runs a short form (tests/scripts/server_stateful.sh).
stateful: deps
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DPS_SANITIZE=ON $(CMAKE_FLAGS)
	cmake --build build-asan -j $(JOBS) --target poolsched
	python3 tests/scripts/server_stateful.py build-asan/poolsched --steps $(STEPS) \
	  --restart-every $(RESTART_EVERY) --progress 5000 $(if $(SEED),--seed $(SEED))

# Every libFuzzer target in fuzz/, FUZZ_SECONDS each, seeded from fuzz/corpus/<target>.
fuzz: deps
	CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Debug -DPS_FUZZ=ON -DPS_SANITIZE=ON -DPS_BUILD_TESTS=OFF $(CMAKE_FLAGS)
	cmake --build build-fuzz -j $(JOBS)
	@bash scripts/fuzz.sh build-fuzz $(FUZZ_SECONDS)

bench: build
	$(BUILD)/poolsched bench fair-share

clean:
	rm -rf $(BUILD) build-asan build-fuzz
