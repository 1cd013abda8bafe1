"""Docstring examples are executed: the ``>>>`` lines in the Rust-side docstrings and the package docs."""

import doctest
import re
from pathlib import Path

import pytest

import memsift
import memsift._core
import memsift.aio
import memsift.config
import memsift.embedding
import memsift.indexer
import memsift.mcp_server
import memsift.memory
import memsift.providers
import memsift.providers._http
import memsift.redact
import memsift.sessions
import memsift.store
import memsift.tools
import memsift.workspace

MODULES = [
    memsift,
    memsift._core,
    memsift.config,
    memsift.embedding,
    memsift.indexer,
    memsift.memory,
    memsift.providers,
    memsift.providers._http,
    memsift.redact,
    memsift.sessions,
    memsift.store,
    memsift.workspace,
    memsift.tools,
    memsift.aio,
    memsift.mcp_server,
]


@pytest.mark.parametrize('module', MODULES, ids=[m.__name__ for m in MODULES])
def test_docstring_examples_run(module):
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    tests = finder.find(module, module.__name__, globs=vars(module).copy())
    examples = sum(len(t.examples) for t in tests)
    for test in tests:
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert examples > 0, 'no docstring examples were found'
    assert result.failed == 0, f'{result.failed} docstring example(s) failed; see output above'


def test_readme_python_example_runs():
    readme = Path(__file__).resolve().parent.parent / 'README.md'
    if not readme.exists():
        pytest.skip('README.md is not beside the tests')
    blocks = re.findall(r'```python\n(.*?)```', readme.read_text(encoding='utf-8'), flags=re.S)
    assert blocks, 'README has no python example'
    for block in blocks:
        exec(compile(block, str(readme), 'exec'), {})
