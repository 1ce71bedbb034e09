# Two commands do everything on a fresh Debian 12 machine:
#   make run    install what is missing, build (release), run the default suite
#   make test   install what is missing, build release and asan+ubsan, run the landing tests
#               (every label but long and soak: tests/README.md)
# Other targets: deps, build, build-asan, quick, readme, profile, format, clean, the long
# runs outside `make test` (test-long, soak), and fuzzing (tests/fuzz/README.md): fuzz,
# fuzz-corpus, fuzz-coverage.

SHELL := /bin/bash
.DEFAULT_GOAL := run

# Debian 12 packages the build, the tests and the measurements need.
PACKAGES := cmake ninja-build g++ clang-14 libclang-rt-14-dev pkg-config \
  libkrb5-dev krb5-kdc krb5-admin-server krb5-user \
  libssl-dev openssl libgtest-dev libgmock-dev libbenchmark-dev \
  nlohmann-json3-dev libcli11-dev libalglib-dev libcmark-gfm-dev libcmark-gfm-extensions-dev \
  chromium libpng-dev libpcap-dev tcpdump tshark gnuplot-nox nfs-ganesha nfs-ganesha-vfs parallel \
  samba samba-ad-dc samba-ad-provision

JOBS ?= $(shell nproc)

.PHONY: run test test-long soak deps build build-asan quick readme profile format clean fuzz fuzz-corpus fuzz-coverage

deps:
	@bash tools/install-deps.sh $(PACKAGES)

build: deps
	@cmake --preset release >/dev/null
	@cmake --build --preset release -j $(JOBS)

build-asan: deps
	@cmake --preset asan >/dev/null
	@cmake --build --preset asan -j $(JOBS)

run: build
	@./build/release/cli/secmode run

quick: build
	@./build/release/cli/secmode run --quick

# README.md's headline table, drawn from the newest results/reference/ run.
readme: build
	@cmake -DSECMODE=build/release/cli/secmode -DROOT=$(CURDIR) -DMODE=write -P tools/readme-headline.cmake

# Where the CPU goes on the small-message path and on an end-to-end GETATTR,
# by category (perf cpu-clock samples): build/profile/profile.md
# (tools/profile.sh; PROFILE_SECONDS per part, default 3).
profile: build
	@bash tools/install-deps.sh linux-perf
	@bash tools/profile.sh

# The landing run: the release preset leaves out the labels long and soak
# (CMakePresets.json).
test: build build-asan
	@ctest --preset release -j $(JOBS)
	@ctest --preset asan -j $(JOBS)

# The long runs `make test` leaves out (label long: the lab validation, the
# hostile-client stress run, the whole quick run's shape), once.
test-long: build
	@ctest --preset long -j $(JOBS)

# The peer-dependent and timing-sensitive labels SOAK_REPEATS times, then the
# label soak once, and a table of each test's runs and failures; SOAK_HOG=1
# runs it all beside stress-ng with two CPU workers (tools/soak.sh).
SOAK_REPEATS ?= 5
SOAK_HOG ?= 0
soak: build
	@if [[ "$(SOAK_HOG)" == 1 ]]; then bash tools/install-deps.sh stress-ng; fi
	@SOAK_REPEATS=$(SOAK_REPEATS) SOAK_HOG=$(SOAK_HOG) SOAK_JOBS=$(JOBS) bash tools/soak.sh

# `make test` fuzzes each target for 6 s (ctest, asan preset); `make fuzz`
# runs them longer, FUZZ_SECONDS each, one after another, keeping the
# corpus they grow in build/asan/fuzz-corpus/<target> between runs. Same
# limits as the ctests (tests/fuzz/run_fuzzer.cmake).
FUZZ_SECONDS ?= 600
FUZZ_TARGETS ?= rpc_gss_fuzzer rpc_call_fuzzer rpc_record_fuzzer rpc_probe_fuzzer native_token_fuzz trace_capture_fuzz \
  smb_parsers_fuzz smb_client_fuzz

fuzz: build-asan
	@for t in $(FUZZ_TARGETS); do \
	  echo "== $$t: $(FUZZ_SECONDS) s"; \
	  cmake -DFUZZER=$(CURDIR)/build/asan/tests/fuzz/$$t -DNAME=$$t \
	    -DSEEDS=$(CURDIR)/tests/fuzz/corpus/$$t -DWORK=$(CURDIR)/build/asan/fuzz-corpus/$$t \
	    -DARTIFACTS=$(CURDIR)/build/asan/fuzz-artifacts -DSECONDS=$(FUZZ_SECONDS) -DKEEP=1 -DSEED=0 \
	    -P tests/fuzz/run_fuzzer.cmake || exit 1; \
	done

# Writes the committed seed corpora again from the project's encoders.
fuzz-corpus: build
	@./build/release/tests/fuzz/fuzz_corpus_gen tests/fuzz/corpus

# Clang source-based coverage of the fuzz targets over their seeds and
# whatever corpus `make test` / `make fuzz` grew; prints the GSS functions.
fuzz-coverage: deps
	@bash tools/install-deps.sh llvm-14
	@bash tests/fuzz/coverage.sh

format:
	@git ls-files '*.cc' '*.h' | xargs clang-format -i

clean:
	@rm -rf build
