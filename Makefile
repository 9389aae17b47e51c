# Front door: `make demo` on a fresh Debian 12 machine installs what is missing, builds and runs
# the simulator on the bundled Alibaba trace; `make test` runs every test, the sanitizer build too.
BUILD ?= build
SAN   ?= build-san

.PHONY: all deps deps-build demo test test-release test-san bench format clean bench-daemon kubernetes \
	bench-attack

all: $(BUILD)/build.ninja
	ninja -C $(BUILD)

$(BUILD)/build.ninja:
	meson setup $(BUILD) --buildtype=release -Db_lto=true

$(SAN)/build.ninja:
	meson setup $(SAN) --buildtype=debug -Db_sanitize=address,undefined -Db_lundef=false

deps:
	scripts/install-deps

deps-build:
	scripts/install-deps --build

# The demo and the README's five minutes need the two programs: build them, with what building needs (the test-only
# tools, a browser and a Go toolchain among them, come with `make test`).
demo: deps-build $(BUILD)/build.ninja
	ninja -C $(BUILD) gpusched gpuschedd
	$(BUILD)/gpusched simulate --policy all --seeds 42..51
	$(BUILD)/gpusched generate tenant-day | $(BUILD)/gpusched simulate --scenario -

test: deps
	scripts/run-tests

test-release: all
	meson test -C $(BUILD) --print-errorlogs

test-san: $(SAN)/build.ninja
	ninja -C $(SAN)
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1 \
		meson test -C $(SAN) --print-errorlogs --timeout-multiplier 4

bench: all
	$(BUILD)/bench_simulate
	$(BUILD)/bench_tenancy
	$(BUILD)/tests/shim/bench_gpushare

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(BUILD) $(SAN) build-fuzz build-nolto

bench-daemon: all
	$(BUILD)/bench_daemon

# kube-apiserver and kube-scheduler for tests/e2e, cached outside the clone (make test does it too).
kubernetes: deps
	scripts/build-kubernetes

bench-attack: all
	$(BUILD)/bench_attack
