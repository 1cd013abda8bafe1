"""Docstring examples are executed: the ``>>>`` lines in the Rust-side docstrings and the package docs."""

import doctest
import importlib
import pkgutil
import re
from pathlib import Path

import pytest

import memsift
import memsift._core


def _importable(name: str):
    """The module, or ``None`` for an integration whose optional framework is not installed (its own tests say so)."""
    try:
        return importlib.import_module(name)
    except ImportError:
        if name.startswith('memsift.integrations.'):
            return None
        raise


# Every module of the package, found rather than listed, so a new module's examples run too.
MODULES = [
    memsift,
    memsift._core,
    *(
        module
        for info in pkgutil.walk_packages(memsift.__path__, 'memsift.')
        if info.name != 'memsift.__main__'  # importing it runs the command line
        if (module := _importable(info.name)) is not None
    ),
]


@pytest.mark.parametrize('module', MODULES, ids=[m.__name__ for m in MODULES])
def test_docstring_examples_run(module):
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    tests = finder.find(module, module.__name__, globs=vars(module).copy())
    for test in tests:
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f'{result.failed} docstring example(s) failed; see output above'


EXAMPLED = [
    'memsift',
    'memsift._core',
    'memsift._sqlite',
    'memsift._text',
    'memsift.config',
    'memsift.errors',
    'memsift.index.sync',
    'memsift.index.memory_index',
    'memsift.sessions',
    'memsift.index.store',
    'memsift.tools',
    'memsift.index.workspace',
]


def test_the_main_modules_show_an_example():
    finder = doctest.DocTestFinder(exclude_empty=True)
    without = [
        module.__name__
        for module in MODULES
        if module.__name__ in EXAMPLED and not any(test.examples for test in finder.find(module, module.__name__))
    ]
    assert without == []


def test_readme_python_example_runs():
    readme = Path(__file__).resolve().parents[2] / 'README.md'
    if not readme.exists():
        pytest.skip('README.md is not beside the tests')
    blocks = re.findall(r'```python\n(.*?)```', readme.read_text(encoding='utf-8'), flags=re.S)
    assert blocks, 'README has no python example'
    for block in blocks:
        exec(compile(block, str(readme), 'exec'), {})
