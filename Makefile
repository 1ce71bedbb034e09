# Two commands do everything on a fresh Debian 12 machine:
#   make run    install what is missing, build (release), run the default suite
#   make test   install what is missing, build release and asan+ubsan, run every test
# Other targets: deps, build, build-asan, quick, format, clean.

SHELL := /bin/bash
.DEFAULT_GOAL := run

# Debian 12 packages the build, the tests and the measurements need.
PACKAGES := cmake ninja-build g++ clang-14 libclang-rt-14-dev pkg-config \
  libkrb5-dev krb5-kdc krb5-admin-server krb5-user \
  libssl-dev openssl libgtest-dev libgmock-dev libbenchmark-dev \
  nlohmann-json3-dev libcli11-dev tshark gnuplot-nox

JOBS ?= $(shell nproc)

.PHONY: run test deps build build-asan quick format clean

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

test: build build-asan
	@ctest --preset release -j $(JOBS)
	@ctest --preset asan -j $(JOBS)

format:
	@git ls-files '*.cc' '*.h' | xargs clang-format -i

clean:
	@rm -rf build
