"""memsift against OpenClaw 2026.9.6's own answers on an OpenClaw 2.x config, keyword-only, without npm.

``benches/openclaw_diff.py --pin tests/surfaces/openclaw2_answers`` ran the cases of ``benches/_openclaw_cases.py``
through the real OpenClaw and pinned its answers here (``openclaw2_answers/README.md`` says when and how). This test
builds the same workspace (dated notes written back from today, so decay matters as it did there), serves it with
memsift's tools, and asserts:

- ranking: on every query whose right answer OpenClaw put on top, memsift's top hit is right too (a query OpenClaw
  gets wrong and memsift right is fine; the two memsift wins are kept as such);
- tool answers: every ``memory_search`` corpus answer and ``memory_get`` window or error has OpenClaw's shape (its
  keys, result keys and flags; only :data:`ALLOWED_EXTRA_KEYS` may be added), and ``memory_get`` returns the same
  text.

Queries memsift fails for a feature still being added carry ``xfail(strict=True)`` naming it, so they flip to a
failure (XPASS) the day it lands and the mark must go.
"""

import json
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from memsift.tools import MemoryTools

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / 'benches'))

cases = pytest.importorskip('_openclaw_cases', reason='benches/_openclaw_cases.py is not beside the tests')

PINNED = Path(__file__).resolve().parent / 'openclaw2_answers'
RANKING = json.loads((PINNED / 'ranking.json').read_text(encoding='utf-8'))
TOOLS = json.loads((PINNED / 'tools.json').read_text(encoding='utf-8'))['calls']

PENDING: dict[str, str] = {}
"""Why a query fails now, by the feature its :class:`Query` ``needs`` (being added)."""

GAPS: dict[str, str] = {}
"""Queries memsift gets wrong where OpenClaw is right, for reasons outside the pending features."""

WINS = ('backups', 'cjk')
"""Queries OpenClaw misses (unstemmed all-terms FTS; a CJK run indexed as one token) that memsift must keep."""


def _marks(query):
    reason = GAPS.get(query.id) or PENDING.get(query.needs or '')
    return [pytest.mark.xfail(strict=True, reason=reason)] if reason else []


@pytest.fixture(scope='module')
def served(tmp_path_factory):
    root = tmp_path_factory.mktemp('openclaw2-parity')
    ws = cases.ranking_workspace(root / 'ws', datetime.now(timezone.utc).date())
    config = cases.two_x_config(
        None, str(root / 'store' / '{agentId}.sqlite'), agents={'entries': {'main': {'workspace': str(ws.root)}}}
    )
    with MemoryTools.open(ws.root, config, sessions_path=root / 'sessions.sqlite', sync=False) as tools:
        tools.index.sync()
        yield tools, ws


def _pinned_top_is_right(pinned, query, ws):
    top = pinned['top3'][0] if pinned['top3'] else None
    return cases.is_right({**top, 'path': ws.real(top['path'])} if top else None, query, ws)


def test_pins_match_the_cases():
    assert [q.id for q in cases.QUERIES] == list(RANKING['queries'])
    assert [c.id for c in cases.TOOL_CALLS] == list(TOOLS)
    assert RANKING['made']['openclaw'] == '2026.9.6'


@pytest.mark.parametrize('query', [pytest.param(q, id=q.id, marks=_marks(q)) for q in cases.QUERIES])
def test_top_hit_is_right_wherever_openclaws_is(served, query):
    tools, ws = served
    pinned = RANKING['queries'][query.id]
    assert pinned['query'] == query.shown(), 're-pin: the query changed since OpenClaw answered it'
    openclaw_right = _pinned_top_is_right(pinned, query, ws)
    assert openclaw_right == pinned['right'], 're-pin: the right answer changed since OpenClaw answered'
    hits = tools.memory_search(query.query(ws), **RANKING['searchArgs'])['results']
    memsift_right = cases.is_right(hits[0] if hits else None, query, ws)
    top3 = [(ws.symbolic(h['path']), h['startLine'], h['endLine']) for h in hits[:3]]
    if openclaw_right or query.id in WINS:
        assert memsift_right, f'memsift top 3 {top3}; OpenClaw {pinned["top3"][:1]}'


def test_openclaw_misses_what_memsift_wins():
    """The pins still show OpenClaw missing the queries :data:`WINS` keeps (else they are no longer wins)."""
    assert [q for q in WINS if RANKING['queries'][q]['right']] == []


TOOL_GAPS: dict[str, str] = {}
"""Tool answers whose shape differs from OpenClaw's now, and why."""


def _tool_marks(call):
    reason = TOOL_GAPS.get(call.id)
    return [pytest.mark.xfail(strict=True, reason=reason)] if reason else []


@pytest.mark.parametrize('call', [pytest.param(c, id=c.id, marks=_tool_marks(c)) for c in cases.TOOL_CALLS])
def test_tool_answer_has_openclaws_shape(served, call):
    tools, ws = served
    pinned = TOOLS[call.id]
    assert (pinned['tool'], pinned['args']) == (call.tool, call.args), 're-pin: the call changed'
    answer = cases.call_tools(tools, call.tool, call.args)
    compared = cases.compare_shapes(pinned['shape'], cases.shape(answer))
    assert compared['verdict'] in ('same', 'deliberate'), compared['differences']
    if 'text' in pinned['answer']:
        assert cases.normalize_answer(answer, ws)['text'] == pinned['answer']['text']
