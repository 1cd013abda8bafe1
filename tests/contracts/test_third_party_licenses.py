"""LICENSE-THIRD-PARTY.md is up to date with Cargo.lock: the wheel ships the licences of every crate it links."""

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / 'scripts' / 'third_party_licenses.py'
OUTPUT = ROOT / 'LICENSE-THIRD-PARTY.md'


def _require_checkout() -> None:
    if shutil.which('cargo') is None:
        pytest.skip('cargo is not on PATH: cannot compute the linked crates')
    if not SCRIPT.is_file() or not (ROOT / 'Cargo.lock').is_file():
        pytest.skip('not a source checkout: scripts/third_party_licenses.py or Cargo.lock is missing')


def test_third_party_licenses_file_is_up_to_date():
    _require_checkout()
    result = subprocess.run(
        [sys.executable, str(SCRIPT), '--check'], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_summary_table_lists_exactly_the_linked_crates(monkeypatch):
    _require_checkout()
    spec = importlib.util.spec_from_file_location('third_party_licenses', SCRIPT)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)  # dataclasses look their module up there
    spec.loader.exec_module(module)
    listed = module.crates_in_file(OUTPUT.read_text(encoding='utf-8'))
    linked = module.computed_crates(ROOT)
    assert listed == linked, f'missing: {sorted(linked - listed)}; extra: {sorted(listed - linked)}'
    names = {name for name, _ in linked}
    assert {'tantivy', 'usearch', 'numkong', 'pyo3', 'numpy', 'regex'} <= names
    assert 'memsift' not in names
