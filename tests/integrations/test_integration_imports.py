"""The integrations load their framework only when imported, and say which extra brings a missing one."""

import subprocess
import sys
import textwrap

import pytest

FRAMEWORKS = ('langchain_core', 'llama_index', 'agents', 'langchain_tests')


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, '-c', textwrap.dedent(code)], capture_output=True, text=True, timeout=120, check=False
    )


def test_importing_memsift_and_the_agents_helper_loads_no_framework():
    done = run_python(f"""
        import sys, memsift, memsift.tools, memsift.integrations, memsift.integrations.agents
        print(sorted(m for m in {FRAMEWORKS!r} if m in sys.modules))
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == '[]'


@pytest.mark.parametrize(
    ('module', 'blocked', 'extra'),
    [('langchain', 'langchain_core', 'memsift[langchain]'), ('llamaindex', 'llama_index', 'memsift[llamaindex]')],
)
def test_a_missing_framework_names_its_extra(module, blocked, extra):
    done = run_python(f"""
        import sys
        sys.modules[{blocked!r}] = None  # as if the package were missing
        import memsift.integrations.{module}
    """)
    assert done.returncode != 0
    assert f'ImportError: memsift.integrations.{module} needs' in done.stderr and extra in done.stderr
