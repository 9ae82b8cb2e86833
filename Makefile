# Thin wrapper around CMake. `make test` and `make run` are the two set-up commands (README.md).
BUILD        ?= build
JOBS         ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS  ?=
FUZZ_SECONDS ?= 30
STEPS        ?= 20000
RESTART_EVERY ?= 500

.PHONY: all deps configure build test run sanitize tsan stateful fuzz vectors bench clean stop hostile-long faults screenshots run-ha stop-ha ha-faults what-if-long

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

# The long form of the connection-exhaustion test (issue 13): 10,000 idle connections, the
# scheduler started with its soft fd limit at the hard one (needs a hard limit above ~12,000).
hostile-long: build
	POOLSCHED_HOSTILE_IDLE=10000 POOLSCHED_HOSTILE_SOFT_NOFILE=$$(ulimit -Hn) \
	  bash tests/scripts/server_hostile_conns.sh $(BUILD)/poolsched tests/data .

# The fault suite at length (docs/faults.md): scheduler kill -9 under writes (20 rounds), node
# agents killed / stopped / duplicated, broken nodes, unrunnable operations, hostile clients
# (with 10,000 idle connections), a full disk. ctest runs the short form of each.
FAULT_TESTS ?= server_crash|node_e2e_agent|node_e2e_dupid|node_e2e_nodeloss|node_e2e_restart|server_broken_node|server_node_ban|server_unschedulable|server_hostile|server_disk_full|journal_faults|slot
faults: build
	POOLSCHED_CRASH_ROUNDS=20 ctest --test-dir $(BUILD) --output-on-failure -R '$(FAULT_TESTS)'
	$(MAKE) hostile-long

# Standby schedulers on PostgreSQL at length (docs/ha.md): a partition, 20 kill -9 rounds and 3
# SIGSTOP rounds of the leader under 8 writers and running jobs (HA_STRICT: takeover max <= 5 s),
# PostgreSQL killed under writers, and the fence weakened (FOR KEY SHARE, none) failing its test.
# ctest runs the short forms (ha_failover, store_pg_outage, store_pg_services).
ha-faults: build
	HA_ROUNDS=20 HA_STOP_ROUNDS=3 HA_STRICT=1 bash tests/scripts/ha_failover.sh $(BUILD)/poolsched tests/data .
	bash tests/scripts/store_pg_outage.sh $(BUILD)/poolsched tests/data .
	bash tests/scripts/store_pg_services.sh $(BUILD)/poolsched tests/data .   # weakened fences fail

# what-if after minutes of a mixed workload on a local cluster (docs/what-if.md "Fidelity and its
# tolerance"): three pools, two users, WHAT_IF_SOAK_SECONDS of submissions (default 240; the
# run drains for about as long again), WHAT_IF_SOAK_SEED. ctest runs the short form
# (what_if_e2e: four operations in two pools).
WHAT_IF_SOAK_SECONDS ?= 240
what-if-long: build
	WHAT_IF_SOAK_SECONDS=$(WHAT_IF_SOAK_SECONDS) python3 tests/scripts/what_if_soak.py $(BUILD)/poolsched

# PostgreSQL, two standby schedulers and two nodes that follow the leader (./run-ha/).
run-ha: deps
	$(MAKE) build
	@bash scripts/local-ha.sh start $(BUILD)/poolsched

stop-ha:
	@bash scripts/local-ha.sh stop

# The UI's screenshots in docs/screenshots/, taken by the browser test (tests/scripts/ui_browser.sh;
# ctest's run keeps them in a scratch directory).
screenshots: build
	PS_SCREENSHOTS=$(CURDIR)/docs/screenshots bash tests/scripts/ui_browser.sh $(BUILD)/poolsched tests/data .

vectors: build
	python3 tests/tools/check_vectors.py $(BUILD)/poolsched tests/data/vectors/fair-share

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

# The tests with threads (scheduler: HTTP workers, engine loop, journal writer; node agent; job
# runner) under ThreadSanitizer. Every report goes to build-tsan/tsan-logs (also of processes
# whose exit code a test does not check); any report fails the target.
TSAN_TESTS ?= server_|node_e2e|node_fake|cli_e2e|local_cluster|test_http|test_job|test_capture|test_journal_render
tsan: deps
	cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=Debug -DPS_TSAN=ON $(CMAKE_FLAGS)
	cmake --build build-tsan -j $(JOBS)
	rm -rf build-tsan/tsan-logs && mkdir -p build-tsan/tsan-logs
	TSAN_OPTIONS="die_after_fork=0 log_path=$(CURDIR)/build-tsan/tsan-logs/report" \
	  ctest --test-dir build-tsan --output-on-failure -j $(JOBS) -R '$(TSAN_TESTS)'
	@if [ -n "$$(ls build-tsan/tsan-logs)" ]; then cat build-tsan/tsan-logs/*; \
	  echo "ThreadSanitizer reported $$(ls build-tsan/tsan-logs | wc -l) process(es)"; exit 1; fi

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
	rm -rf $(BUILD) build-asan build-tsan build-fuzz
