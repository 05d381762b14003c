# SPDX-License-Identifier: MIT
# Thin wrapper around CMake. See README.md: `make run` and `make test` are all a newcomer needs.
BUILD      ?= build
ASAN_BUILD ?= build-asan
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
# ctest runs one test more than there are cores: many tests spend much of their time waiting on
# a daemon, a server or a timer (on 2 cores the normal pass took 429 s at -j3 against 503 s at -j2).
TEST_JOBS  ?= $(shell echo $$(( $(JOBS) + 1 )))
FUZZ_SECONDS ?= 3
FUZZ_LONG_SECONDS ?= 1800
CMAKE_FLAGS ?=

.PHONY: all deps test-deps build asan test run fuzz soak install clean deb test-tmp-flood screenshots
# cmake --build runs make inside make: without this, every step prints "Entering directory".
QUIET_MAKE = -- --no-print-directory

all: build

# deps: what recd and rectool need to build and run (make run, make deb); test-deps: that plus
# what the test suite needs (clang, cmocka, a JDK, nats-server, systemd, lintian...).
deps:
	@bash scripts/install-deps.sh

test-deps:
	@bash scripts/install-deps.sh --test

# `make build` builds everything, the test suite included (a tree `make run` made without it
# gets it here).
build: test-deps
	@grep -qs '^RECD_TESTS:BOOL=ON' $(BUILD)/CMakeCache.txt || \
	  cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRECD_TESTS=ON $(CMAKE_FLAGS)
	@cmake --build $(BUILD) -j $(JOBS) $(QUIET_MAKE)

# Sanitizer build with clang: unit tests under ASan+UBSan plus a short libFuzzer run per target.
asan: test-deps
	CC=clang cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DRECD_SANITIZE=ON -DRECD_FUZZ=ON \
	  -DRECD_FUZZ_SECONDS=$(FUZZ_SECONDS) $(CMAKE_FLAGS)
	@cmake --build $(ASAN_BUILD) -j $(JOBS) $(QUIET_MAKE)

# The sanitizer pass skips what runs no C code of its own or repeats, ten times slower, what the
# normal pass already ran end to end, so `make test` stays within its budget (README):
# - rectool_cut runs 12k repairs through the code the fuzzers and unit tests cover under ASan;
# - python_install, java_maven: client packaging; npc_pawncc compiles, with a Pawn compiler it
#   builds first, what rectool_npc already writes under ASan;
# - daemon_layers, daemon_layers_self_test, readme_first_steps: source and README checks;
# - chaos_short, rectool_progress: minutes-long runs over big inputs (chaos also runs in make soak);
# - fleet_nats_takeover: a kill -9 of a loaded instance; fleet_nats, fleet_nats_failover and
#   fleet_nats_dedup take the same takeover code through ASan, and make soak runs it at 2,000;
# - java_nats, python_client, console_browser, bench_report: Java, Python and a browser driving
#   recd paths that fleet_nats, the daemon tests and console_hostile/console_access take through
#   ASan (bench_report runs Python only).
# - test_recovery_large recovers a 1 GiB sparse part: test_recovery and test_recovery_faults take
#   the same code through ASan on small parts.
# The fuzz smoke is 3 s per target (15 targets); make fuzz runs each for 30 minutes.
# Skipped in the sanitizer run: checks of the sources (the same answer in both builds), the Java
# and Python packaging, and the slowest end-to-end runs whose daemon paths other tests cover.
ASAN_SKIP ?= ^(rectool_cut|python_install|java_maven|java_client|npc_pawncc|daemon_layers|daemon_layers_self_test|daemon_file_circles|file_circles|file_circles_self_test|spdx_headers|man_pages|completions|format_names|readme_first_steps|chaos_short|rectool_progress|fleet_nats_takeover|java_nats|python_client|console_browser|bench_report|test_recovery_large)$$

test: build asan
	cd $(BUILD) && ctest --output-on-failure -j $(TEST_JOBS)
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -j $(TEST_JOBS) -E '$(ASAN_SKIP)'

# `make run` installs and builds only what it runs (recd and rectool, no tests or fuzzers) and
# starts recd on its built-in defaults: loopback, recordings under ./recordings (git ignores it;
# RUN_OUTPUT=DIR for another folder). `make test` builds everything in the same tree.
RUN_OUTPUT ?=
run: deps
	@[ -f $(BUILD)/CMakeCache.txt ] || \
	  cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRECD_TESTS=OFF $(CMAKE_FLAGS)
	@cmake --build $(BUILD) -j $(JOBS) --target recd rectool $(QUIET_MAKE)
	@if [ -x $(BUILD)/daemon/recd ]; then exec $(BUILD)/daemon/recd $(if $(RUN_OUTPUT),--output $(RUN_OUTPUT)); \
	 else $(BUILD)/tools/rectool --help; fi

fuzz: test-deps
	$(MAKE) asan FUZZ_SECONDS=$(FUZZ_LONG_SECONDS)
	cd $(ASAN_BUILD) && ctest --output-on-failure -L fuzz -j $(JOBS)

# Endurance run (10 minutes by default, SOAK_SECONDS=N to change): mixed load, reloads, a kill -9
# and restart, RSS tracking, then every output file checked; then the chaos harness for as long
# (CHAOS_SECONDS, CHAOS_CLASSES, CHAOS_SEED); then the fleet's kill -9 takeover with 2,000 sessions,
# packed and one-frame publishers mixed (fleet_nats_takeover.sh; skipped without nats-server). All
# run; any failing fails. See docs/operations.md.
# The console screenshots in docs/images/, retaken by the browser test.
screenshots: build
	cd $(BUILD) && RECD_SCREENSHOT_DIR=$(CURDIR)/docs/images ctest -R '^console_browser$$' --output-on-failure

soak: build
	@bash tests/soak/run.sh $(BUILD); soak=$$?; \
	python3 tests/chaos/chaos.py --recd $(BUILD)/daemon/recd --rectool $(BUILD)/tools/rectool \
	    --seconds $${CHAOS_SECONDS:-$${SOAK_SECONDS:-600}} $${CHAOS_SEED:+--seed $$CHAOS_SEED}; chaos=$$?; \
	RECD=$(abspath $(BUILD))/daemon/recd RECTOOL=$(abspath $(BUILD))/tools/rectool \
	    FLEET_TAKEOVER_SESSIONS=2000 RECD_TEST_TIME_SCALE=$${RECD_TEST_TIME_SCALE:-5} \
	    bash tests/integration/fleet_nats_takeover.sh; fleet=$$?; [ $$fleet -eq 77 ] && fleet=0; \
	RECD_FLOAT_TEXT_COUNT=100000000 $(BUILD)/tests/test_msg_float_text >/dev/null; floats=$$?; \
	[ $$soak -eq 0 ] && [ $$chaos -eq 0 ] && [ $$fleet -eq 0 ] && [ $$floats -eq 0 ]

# package_systemd with /tmp holding a million small files (FLOOD_FILES), as benchmark and test runs
# can leave it: the throw-away root must boot as fast as on a clean machine (issue 43). A few
# minutes, most of them creating and removing the files; not part of `make test`.
test-tmp-flood: build
	bash tests/host/tmp_flood.sh $(BUILD)

install: build
	cmake --install $(BUILD)

# Debian packages (recd, rectool, librecd1, librecd-dev) in $(DEB_BUILD)/packages: an optimised,
# hardened (dpkg-buildflags) build of only what they hold: no tests, no bench/ programs, installed
# under /usr (docs/operations.md, "Packages").
DEB_BUILD ?= build-deb
deb: deps
	cmake -S . -B $(DEB_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRECD_TESTS=OFF -DRECD_BENCH=OFF \
	  -DRECD_DPKG_BUILDFLAGS=ON -DCMAKE_INSTALL_PREFIX=/usr $(CMAKE_FLAGS)
	@cmake --build $(DEB_BUILD) -j $(JOBS) $(QUIET_MAKE)
	cd $(DEB_BUILD) && cpack -G DEB -B packages
	@ls -1 $(DEB_BUILD)/packages/*.deb

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(DEB_BUILD)

# Side-by-side benchmarks (not part of `make test`): recd vs rsyslog vs the raw socket-to-file
# limit on loopback. Installs rsyslog and socat, builds optimised in build-bench, writes
# bench/results/latest.md (bench-quick: a ~1 minute subset, bench/results/latest-quick.md).
# See docs/performance.md.
.PHONY: bench bench-quick
bench:
	bash bench/run.sh full

bench-quick:
	bash bench/run.sh quick
