# The two commands of README: `make run` (the main job on the default scene)
# and `make test` (build and pass every test). Both install missing Debian
# packages first.
BUILD ?= build
JOBS ?= $(shell nproc)

.PHONY: all deps build run test bench fuzz format format-check clean demo demo-images

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

# sapling-demo in a window (README, "See it work"), and the README's pictures
# made headless into docs/images/.
demo: build
	$(BUILD)/tools/demo/sapling-demo

demo-images: build
	bash scripts/demo-images.sh $(BUILD)

bench: build
	$(BUILD)/bench/pair_manager_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
	$(BUILD)/bench/one_shot_bench --quick

# The fuzzers' longer campaign: 30 minutes per target (FUZZ_SECONDS to change).
fuzz:
	bash scripts/fuzz.sh

format:
	clang-format -i $$(git ls-files '*.hpp' '*.cpp')

format-check:
	clang-format --dry-run -Werror $$(git ls-files '*.hpp' '*.cpp')

clean:
	rm -rf $(BUILD)

# Side-by-side benchmark against the peer libraries (CGAL, Bullet, FCL,
# Box2D): installs their Debian packages if missing, builds with
# SAPLING_BENCH_PEERS=ON in build-peers, and runs the one-shot suite
# (tables on stdout, JSON and Markdown in build-peers/).
PEER_PACKAGES := libcgal-dev libbullet-dev libfcl-dev libbox2d-dev
.PHONY: bench-peers
bench-peers: deps
	@missing=""; for p in $(PEER_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=""; [ "$$(id -u)" -eq 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi
	@cmake -S . -B build-peers -G Ninja -DCMAKE_BUILD_TYPE=Release -DSAPLING_BENCH_PEERS=ON >/dev/null
	@cmake --build build-peers -j $(JOBS) --target sapling_cli
	build-peers/tools/sapling bench --suite one-shot --json build-peers/one-shot.json --md build-peers/one-shot.md $(BENCH_ARGS)
