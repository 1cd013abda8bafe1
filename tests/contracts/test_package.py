"""Package-level contract: version, exports, errors, panics, typing files, stubs, GIL release."""

import importlib.util
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import tomllib

import memsift

REPO = Path(__file__).resolve().parents[2]
PACKAGE_DIR = Path(memsift.__file__).resolve().parent


def test_version_is_the_cargo_version():
    assert isinstance(memsift.__version__, str)
    assert memsift.__version__
    cargo_toml = REPO / 'Cargo.toml'
    if not cargo_toml.is_file():
        pytest.skip(f'{cargo_toml} not found (tests run outside the source tree)')
    with cargo_toml.open('rb') as f:
        cargo_version = tomllib.load(f)['package']['version']
    assert memsift.__version__ == cargo_version


def test_every_exported_name_exists():
    assert memsift.__all__
    missing = [name for name in memsift.__all__ if not hasattr(memsift, name)]
    assert missing == []


def test_error_hierarchy():
    assert issubclass(memsift.MemsiftError, Exception)
    for error in (memsift.InvalidInputError, memsift.SearchIndexError, memsift.InternalError):
        assert issubclass(error, memsift.MemsiftError)
        assert error is not memsift.MemsiftError
    assert memsift.errors.MemsiftError is memsift.MemsiftError
    assert memsift._core.InvalidInputError is memsift.InvalidInputError


def test_errors_raised_by_the_core_are_catchable_as_memsift_error():
    with pytest.raises(memsift.MemsiftError):
        memsift.chunk_markdown('text', tokens=0)


def test_rust_panic_surfaces_as_internal_error_and_interpreter_survives():
    before = memsift.tokenize('still alive after ERR_CONN_RESET')
    with pytest.raises(memsift.InternalError):
        memsift._core._debug_panic()
    with pytest.raises(memsift.InternalError):
        memsift._core._debug_panic()
    assert memsift.tokenize('still alive after ERR_CONN_RESET') == before
    assert sum(range(10)) == 45


def test_typing_files_ship_next_to_the_package():
    assert (PACKAGE_DIR / '__init__.py').is_file()
    assert (PACKAGE_DIR / 'py.typed').is_file()
    assert (PACKAGE_DIR / '_core.pyi').is_file()


def test_stubtest_agrees_with_the_binary(tmp_path):
    if importlib.util.find_spec('mypy') is None:
        pytest.skip('mypy is not installed')
    allowlist = REPO / '.mypy-stubtest-allowlist'
    if not allowlist.is_file():
        pytest.skip(f'{allowlist} not found')
    proc = subprocess.run(
        [sys.executable, '-m', 'mypy.stubtest', 'memsift._core', '--allowlist', str(allowlist)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=280,
    )
    assert proc.returncode == 0, f'stubtest failed:\n{proc.stdout}\n{proc.stderr}'


def test_python_layer_type_checks(tmp_path):
    if importlib.util.find_spec('mypy') is None:
        pytest.skip('mypy is not installed')
    source = REPO / 'python' / 'memsift'
    if not source.is_dir():
        pytest.skip(f'{source} not found')
    proc = subprocess.run(
        [sys.executable, '-m', 'mypy', '--ignore-missing-imports', '--cache-dir', str(tmp_path), str(source)],
        capture_output=True,
        text=True,
        timeout=280,
    )
    assert proc.returncode == 0, f'mypy failed:\n{proc.stdout}\n{proc.stderr}'


# ---------------------------------------------------------------- GIL release


def main_thread_steps_during(call):
    """Run ``call`` in a worker thread and count main-thread loop steps made while it was inside the call.

    The switch interval is raised so that the interpreter never forces the worker to hand over the GIL: the main
    thread can only run during the call if the call released the GIL itself.
    """
    span = {}
    errors = []

    def worker():
        try:
            span['start'] = time.perf_counter()
            call()
            span['end'] = time.perf_counter()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the main thread
            errors.append(exc)

    steps = []
    old_interval = sys.getswitchinterval()
    sys.setswitchinterval(30.0)
    try:
        thread = threading.Thread(target=worker)
        thread.start()
        while thread.is_alive():
            steps.append(time.perf_counter())
            time.sleep(0.0005)  # releases the GIL so the worker can start and finish
        thread.join()
    finally:
        sys.setswitchinterval(old_interval)
    if errors:
        raise errors[0]
    return sum(span['start'] < t < span['end'] for t in steps)


def test_tokenize_batch_releases_the_gil():
    texts = ['ERR_CONN_RESET 视频下载 running ' + '. , ; ' * 20_000 for _ in range(200)]
    analyzer = memsift.Analyzer()
    result = []
    steps = main_thread_steps_during(lambda: result.append(analyzer.tokenize_batch(texts)))
    assert len(result[0]) == len(texts)
    assert steps > 0, 'the main thread made no progress during tokenize_batch: is the GIL held?'


def test_exact_vector_search_batch_releases_the_gil():
    rng = np.random.default_rng(0)
    store = memsift.VectorStore(256, ann_threshold=10**9)  # exact scan only; no HNSW build
    store.add(np.arange(50_000), rng.standard_normal((50_000, 256)).astype(np.float32))
    queries = rng.standard_normal((64, 256)).astype(np.float32)
    result = []
    steps = main_thread_steps_during(lambda: result.append(store.search_batch(queries, k=10, exact=True)))
    assert len(result[0]) == 64
    assert steps > 0, 'the main thread made no progress during search_batch: is the GIL held?'
