"""The command line starts fast because modules load when used: these tests pin down what a keyword-only process
imports, that every public name still resolves, and that a missing dependency fails clearly where it is needed."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

import memsift

HEAVY = ('numpy', 'httpx', 'mcp', 'rich', 'anyio', 'watchdog')
SLOW_TO_IMPORT = ('hashlib', 'json5')
"""Not heavy, but each costs ~4 ms at start-up where a keyword-only search has no use for it."""


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, '-c', textwrap.dedent(code)], capture_output=True, text=True, timeout=120, check=False
    )


def test_every_public_name_resolves_and_is_listed():
    for name in memsift.__all__:
        assert getattr(memsift, name) is not None, name
    assert set(memsift.__all__) <= set(dir(memsift))
    with pytest.raises(AttributeError, match='no_such_name'):
        memsift.no_such_name  # noqa: B018


def test_a_keyword_only_search_from_the_command_line_imports_no_heavy_module(tmp_path):
    (tmp_path / 'MEMORY.md').write_text('The deploy key lives in the team vault.\n')
    store = tmp_path / 'index.sqlite'
    common = f"['--workspace', {str(tmp_path)!r}, '--store', {str(store)!r}, '--json']"
    assert run_python(f'from memsift.tools.cli import main; assert main(["index", *{common}]) == 0').returncode == 0
    done = run_python(f"""
        import json, sys
        from memsift.tools.cli import main
        assert main(['search', 'deploy key', *{common}, '--no-sync']) == 0
        print(json.dumps(sorted(m for m in {HEAVY + SLOW_TO_IMPORT!r} if m in sys.modules)), file=sys.stderr)
    """)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stderr.strip().splitlines()[-1]) == []
    assert 'team vault' in done.stdout


def test_importing_memsift_loads_nothing_heavy():
    done = run_python(f"""
        import sys, memsift, memsift.tools, memsift.providers
        print(sorted(m for m in {HEAVY!r} + ('memsift.index.memory_index',) if m in sys.modules))
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == '[]'


def test_a_missing_http_client_fails_where_a_remote_provider_is_made_not_at_import():
    done = run_python("""
        import sys
        sys.modules['httpx'] = None  # as if the package were missing
        import memsift
        from memsift.config import load_config
        from memsift.providers import create_provider
        config = load_config({'agents': {'defaults': {'memorySearch': {'provider': 'openai', 'remote': {'apiKey': 'sk-test'}}}}})
        try:
            create_provider('openai', config)
        except ImportError as exc:
            print('ImportError:', exc)
    """)
    assert done.returncode == 0, done.stderr
    assert 'ImportError: import of httpx halted; None in sys.modules' in done.stdout


def test_a_missing_mcp_sdk_fails_the_mcp_command_with_its_name(tmp_path):
    done = run_python(f"""
        import sys
        sys.modules['mcp'] = None
        from memsift.tools.cli import main
        sys.exit(main(['mcp', '--workspace', {str(tmp_path)!r}, '--store', {str(tmp_path / 'i.sqlite')!r}]))
    """)
    assert done.returncode != 0
    assert 'mcp' in done.stderr
