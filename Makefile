# The two commands of README: `make run` (the main job on the default scene)
# and `make test` (build and pass every test). Both install missing Debian
# packages first.
BUILD ?= build
JOBS ?= $(shell nproc)

.PHONY: all deps build run test bench format format-check clean

all: build

deps:
	@bash scripts/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

run: build
	$(BUILD)/tools/sapling run

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

bench: build
	$(BUILD)/bench/pair_manager_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true

format:
	clang-format -i $$(git ls-files '*.hpp' '*.cpp')

format-check:
	clang-format --dry-run -Werror $$(git ls-files '*.hpp' '*.cpp')

clean:
	rm -rf $(BUILD)
