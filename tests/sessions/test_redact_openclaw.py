"""OpenClaw's own redaction samples, run against memsift.redact.redact.

The cases in ``redact_openclaw_cases.json`` are ported by hand from OpenClaw's ``src/logging/redact*.test.ts``
(``redactSensitiveText(text, {mode: "tools"})``). Each case checks that no listed secret survives, that ``keep``
cases come back unchanged, that the output equals ``expected`` where OpenClaw's test states one, and that it holds
each ``contains`` substring.

Every case passes since the Rust engine (issue 13): the JSON file's ``xfail`` list is empty, and should stay so. A
case known to fail (one ported from a newer OpenClaw test before the engine handles it) may be listed there by id;
it is then marked ``xfail(strict=True)``, and since the project sets ``xfail_strict = true`` it FAILS
(XPASS(strict)) once it passes, until its id is removed. ``benches/redact_conformance.py`` runs the same cases
against the real OpenClaw as well.
"""

import json
from pathlib import Path

import pytest

from memsift.redact import redact

CASES_FILE = Path(__file__).with_name('redact_openclaw_cases.json')
_DOC = json.loads(CASES_FILE.read_text(encoding='utf-8'))
CASES = _DOC['cases']
XFAIL = frozenset(_DOC['xfail'])
XFAIL_REASON = 'listed under xfail in redact_openclaw_cases.json'


def expand(value):
    """A case string: either a plain string or a list of segments (a string, or ``[string, count]`` to repeat)."""
    if isinstance(value, str):
        return value
    return ''.join(part if isinstance(part, str) else part[0] * part[1] for part in value)


def problems(case, output):
    """What is wrong with ``output`` for ``case``: an empty list when it conforms."""
    found = []
    for secret in case['secrets']:
        if expand(secret) in output:
            found.append(f'secret survives: {expand(secret)[:80]!r}')
    if case.get('keep') and output != expand(case['input']):
        found.append('a keep case was changed')
    if 'expected' in case and output != expand(case['expected']):
        found.append(f'expected {expand(case["expected"])[:200]!r}')
    for part in case.get('contains', ()):
        if expand(part) not in output:
            found.append(f'missing {expand(part)[:80]!r}')
    return found


def _param(case):
    marks = [pytest.mark.xfail(strict=True, reason=XFAIL_REASON)] if case['id'] in XFAIL else []
    return pytest.param(case, id=case['id'], marks=marks)


def test_case_file_is_consistent():
    ids = [case['id'] for case in CASES]
    assert len(ids) == len(set(ids)), 'case ids must be unique'
    assert set(ids) >= XFAIL, f'xfail ids without a case: {sorted(XFAIL - set(ids))}'
    for case in CASES:
        assert case['family'] and case['source'], case['id']
        assert case['secrets'] or case.get('keep') or 'expected' in case, case['id']


@pytest.mark.parametrize('case', [_param(case) for case in CASES])
def test_openclaw_case(case):
    output = redact(expand(case['input']))
    found = problems(case, output)
    assert not found, f'{case["source"]}\noutput: {output[:300]!r}\n' + '\n'.join(found)
