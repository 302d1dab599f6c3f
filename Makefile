# The two commands (README): `make run` and `make test`. Both install what they need first.
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
BUILD_TYPE ?= RelWithDebInfo
ARGS ?=

.PHONY: all bootstrap configure build run test bench release torture fuzz format clean

all: build

bootstrap:
	@scripts/bootstrap.sh

configure: bootstrap
	@cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) >/dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

# The main job: the array (ISE 860 G3 preset, SQLite state in ./var/afasim) serving ReST and NBD.
# Builds the afasim program only (the tests and benchmarks are `make test`'s and `make bench`'s).
run: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS) --target afasim
	$(BUILD_DIR)/app/afasim serve $(ARGS)

# Unit, simulation and integration tests; must stay under 10 minutes on 2 cores.
test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) -LE 'torture|bench'

# Long seed sweeps, beyond what `make test` runs.
torture: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) -L torture

# Benchmarks print ratios measured side by side; they are not pass/fail tests.
bench: build release
	@scripts/bootstrap.sh bench
	@cmake --build $(BUILD_DIR) -j $(JOBS) --target bench_all
	@for b in $(BUILD_DIR)/bench/bench_*; do echo "== $$b"; \
	  AFASIM_RELEASE=$(abspath $(RELEASE_DIR))/use/app/afasim $$b || exit 1; done

# The release afasim for long studies: profile-guided (trained on the shipped job files and
# scenarios), the same results as $(BUILD_DIR)'s, ~1.2x faster. docs/build.md.
RELEASE_DIR ?= build-release
release: bootstrap
	@scripts/release_build.sh $(RELEASE_DIR) $(JOBS)

# libFuzzer targets (tests/fuzz), built with clang, ASan and UBSan in $(FUZZ_BUILD_DIR), each run
# for FUZZ_SECONDS from its seed corpus; `make test` replays the corpora.
FUZZ_BUILD_DIR ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?=
fuzz: bootstrap
	@scripts/bootstrap.sh fuzz
	@cmake -S . -B $(FUZZ_BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
	  -DCMAKE_CXX_COMPILER=clang++ -DAFASIM_FUZZ=ON >/dev/null
	@cmake --build $(FUZZ_BUILD_DIR) -j $(JOBS) --target fuzz_all
	@scripts/fuzz.sh $(FUZZ_BUILD_DIR) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

format:
	@git ls-files '*.h' '*.cpp' | xargs clang-format -i

clean:
	rm -rf $(BUILD_DIR) $(FUZZ_BUILD_DIR) $(RELEASE_DIR)
