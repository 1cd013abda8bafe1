"""The framework examples in examples/ run as they are (each skipped when its framework is not installed)."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / 'examples'

CASES = [
    # (script, the module it needs, arguments, lines its output must contain)
    (
        'langchain_retriever.py',
        'langchain_core',
        ['ERR_CONN_RESET backoff'],
        ['memory/2026-11-20.md#L1-L16', 'retry with exponential backoff', '東京オフィスの定例会議は毎週火曜日'],
    ),
    (
        'llamaindex_retriever.py',
        'llama_index.core',
        ['Neovim editor'],
        ['MEMORY.md#L1-L24', 'Editor: Neovim with the LazyVim distribution', 'BBDown视频下载工具'],
    ),
    (
        'agents_tools.py',
        'agents',
        ['ERR_CONN_RESET backoff'],
        [
            'memory_search(query, max_results, min_score, corpus)',
            'memory/2026-11-20.md#L1-L16',
            '## Incident: sync-service connection resets',
            'agent:main:main user: Remember: the canary deploy waits 15 minutes.',
        ],
    ),
]


@pytest.mark.parametrize(('script', 'needs', 'args', 'expected'), CASES, ids=[case[0] for case in CASES])
def test_example_runs(tmp_path, script, needs, args, expected):
    if not (EXAMPLES / script).is_file():
        pytest.skip(f'{EXAMPLES / script} is not beside the tests')
    if importlib.util.find_spec(needs.partition('.')[0]) is None or importlib.util.find_spec(needs) is None:
        pytest.skip(f'{script} needs {needs}, which is not installed')
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / script), *args],
        capture_output=True,
        text=True,
        encoding='utf-8',
        timeout=240,
        cwd=tmp_path,  # the examples must not depend on (or write to) the current folder
        check=False,
    )
    assert done.returncode == 0, done.stderr
    for line in expected:
        assert line in done.stdout, f'{line!r} not in the output of {script}:\n{done.stdout}'
    assert list(tmp_path.iterdir()) == []
