"""Which OpenClaw a config is written for, chosen once from its key trees: 1.x (``agents.defaults.memorySearch``,
``agents.list``) or 2.x (``memory.search``, ``agents.entries``: OpenClaw 2026.8.1 and later).

A :class:`Profile` holds everything that differs between the two, and each stage reads its own part: the config
layer here (where the settings live, which keys count, the settings OpenClaw fixes), the memory files and their
chunking (:mod:`memsift.index`), the importance stage (:mod:`memsift.search`), the tool answers
(:mod:`memsift.tools.agent`) and where the transcripts are (:mod:`memsift.tools.openclaw`). Supporting another
OpenClaw means adding a profile, not branching the stages.

memsift's own settings (its store, reranker, snapshots, …) have no place in a 2.x ``memory.search``, whose schema
OpenClaw enforces: they live in memsift's plugin entry, ``plugins.entries.memsift.config``, with the keys of a 1.x
``memorySearch`` object.

>>> profile_of({'agents': {'defaults': {'memorySearch': {}}}}).name, profile_of({'memory': {'search': {}}}).name
('openclaw-1', 'openclaw-2')
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any, Literal

from memsift._record import record
from memsift.errors import ConfigWarning

__all__ = ['MEMSIFT_SETTINGS', 'OPENCLAW_1', 'OPENCLAW_2', 'Profile', 'accepted_keys', 'profile_of']

MEMSIFT_SETTINGS = 'plugins.entries.memsift.config'
"""Where a 2.x config keeps memsift's own settings (memsift's plugin entry)."""

_FIRST_2X_RELEASE = (2026, 8, 1)

_LEAF = True
# The keys OpenClaw 2026.9.6 takes in memory.search (its strict schema, src/config/zod-schema.memory-search.ts).
_OPENCLAW_2_KEYS: Mapping[str, Any] = {
    'enabled': _LEAF,
    'rememberAcrossConversations': _LEAF,
    'sources': _LEAF,
    'extraPaths': _LEAF,  # items: a path, or {path, pattern} (checked by _accepted_extra_paths)
    'multimodal': {'enabled': _LEAF, 'modalities': _LEAF, 'maxFileBytes': _LEAF},
    'experimental': {'sessionMemory': _LEAF},
    'provider': _LEAF,
    'remote': {'baseUrl': _LEAF, 'apiKey': _LEAF, 'headers': _LEAF, 'batch': {'enabled': _LEAF}},
    'fallback': _LEAF,
    'model': _LEAF,
    'inputType': _LEAF,
    'queryInputType': _LEAF,
    'documentInputType': _LEAF,
    'outputDimensionality': _LEAF,
    'local': {'modelPath': _LEAF},
    'store': {'fts': {'tokenizer': _LEAF}, 'vector': {'enabled': _LEAF, 'extensionPath': _LEAF}},
    'query': {'maxResults': _LEAF, 'minScore': _LEAF},
    'cache': {'enabled': _LEAF},
}


@record
class Profile:
    """What one OpenClaw generation fixes, reads and answers; chosen by :func:`profile_of`."""

    name: str
    """``openclaw-1`` or ``openclaw-2``."""
    fixed: Mapping[str, Any]
    """Settings OpenClaw fixes, as a ``memorySearch`` object: the lowest layer, under everything a config sets."""
    accepts: Mapping[str, Any] | None
    """The keys its ``memory.search`` takes (nested, ``True`` for a leaf); ``None``: every key memsift knows."""
    root_files: tuple[str, ...]
    """The memory files at the workspace root, besides ``memory/``."""
    per_entry_files: tuple[str, ...]
    """Root files chunked one entry (a ``- `` item or a heading's section) at a time, with their annotations."""
    importance: bool
    """``<!-- importance: N -->`` annotations multiply an entry's score by ``0.75 + 0.05·N``."""
    lexical_boost: bool
    """A keyword hit scores as 2.x's does: ``r/(1+r)`` plus ``0.45·`` the share of the query's terms the chunk holds,
    ``0.2·`` their density, the path and length boosts (hybrid and keyword-only); and partial matches give way where
    2.x's keyword query leaves them out: to a chunk holding every term, or a stemmed-only match to exact ones
    (``rank_candidates(lexical=True)``)."""
    transcripts: Literal['jsonl', 'sqlite']
    """Where OpenClaw keeps transcripts: ``sessions/*.jsonl`` or the agent's ``openclaw-agent.sqlite``."""
    agents_key: Literal['list', 'entries']
    """How agents are declared: ``agents.list[]`` or ``agents.entries.<id>``."""
    tool_contract: Literal[1, 2]
    """The shape of tool answers: 2 adds ``status`` / ``textScore`` / ``provenance`` / corpus answers."""
    transcript_paths: Literal['key', 'session-id']
    """How a transcript hit's path reads: ``sessions/<key>.jsonl`` (1.x) or ``sessions/<agentId>/<sessionId>.jsonl``
    (2.x; an archive ``sessions/<agentId>/<archive name>``)."""


OPENCLAW_1 = Profile(
    name='openclaw-1',
    fixed={},
    accepts=None,
    root_files=('MEMORY.md', 'memory.md'),
    per_entry_files=(),
    importance=False,
    lexical_boost=False,
    transcripts='jsonl',
    agents_key='list',
    tool_contract=1,
    transcript_paths='key',
)

OPENCLAW_2 = Profile(
    name='openclaw-2',
    fixed={
        'query': {
            'hybrid': {
                'enabled': True,
                'vectorWeight': 0.7,
                'textWeight': 0.3,
                'candidateMultiplier': 4,
                'mmr': {'enabled': True, 'lambda': 0.7},
                'temporalDecay': {'enabled': True, 'halfLifeDays': 30},
            }
        },
        'chunking': {'tokens': 400, 'overlap': 80},
    },
    accepts=_OPENCLAW_2_KEYS,
    root_files=('MEMORY.md', 'USER.md'),
    per_entry_files=('MEMORY.md', 'USER.md'),
    importance=True,
    lexical_boost=True,
    transcripts='sqlite',
    agents_key='entries',
    tool_contract=2,
    transcript_paths='session-id',
)


def _version(text: object) -> tuple[int, ...]:
    parts = []
    for part in str(text).split('.')[:3]:
        digits = ''.join(c for c in part if c.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


def profile_of(root: Mapping[str, Any]) -> Profile:
    """The profile of a parsed OpenClaw config: 2.x when it has a ``memory.search`` object, ``agents.entries`` or
    was last written by OpenClaw 2026.8.1 or later (``meta.lastTouchedVersion``); else 1.x (an empty config too:
    memsift's defaults are 1.x's)."""
    memory = root.get('memory')
    agents = root.get('agents')
    meta = root.get('meta')
    touched = meta.get('lastTouchedVersion') if isinstance(meta, Mapping) else None
    if (
        (isinstance(memory, Mapping) and memory.get('search') is not None)
        or (isinstance(agents, Mapping) and agents.get('entries') is not None)
        or (isinstance(touched, str) and _version(touched) >= _FIRST_2X_RELEASE)
    ):
        return OPENCLAW_2
    return OPENCLAW_1


def _moved(path: str, key: str, why: str) -> None:
    warnings.warn(
        f"{path}: {why}; memsift ignores it here. memsift's own setting for it lives at {MEMSIFT_SETTINGS}.{key} "
        '(OpenClaw 2.x refuses unknown keys under memory.search; `openclaw doctor --fix` removes them)',
        ConfigWarning,
        stacklevel=4,
    )


def accepted_keys(raw: Any, accepts: Mapping[str, Any] | None, path: str, known: Mapping[str, Any]) -> Any:
    """``raw`` (a ``memory.search`` object at ``path``) without the keys ``accepts`` lacks, each named in a
    :class:`ConfigWarning` that says where memsift's own setting lives (``known``: the keys memsift reads, to tell
    a key OpenClaw retired from one it never had). Values are validated later, as in 1.x."""
    if accepts is None or not isinstance(raw, Mapping):
        return raw
    return _accepted(raw, accepts, path, '', known)


def _accepted(
    raw: Mapping[str, Any], accepts: Mapping[str, Any], path: str, prefix: str, known: Mapping[str, Any]
) -> dict[str, Any]:
    kept: dict[str, Any] = {}
    for key, value in raw.items():
        here, dotted = f'{path}.{key}', f'{prefix}{key}'
        allowed = accepts.get(key)
        if allowed is None:
            why = 'OpenClaw 2.x removed this key' if _was_openclaw(dotted, known) else 'not an OpenClaw 2.x key'
            _moved(here, dotted, why)
        elif allowed is _LEAF:
            kept[key] = _accepted_extra_paths(value, here) if key == 'extraPaths' else value
        elif isinstance(value, Mapping):
            kept[key] = _accepted(value, allowed, here, f'{dotted}.', known)
        else:
            kept[key] = value  # not an object: validation reports it
    return kept


def _was_openclaw(dotted: str, known: Mapping[str, Any]) -> bool:
    """Keys OpenClaw 1.x had and 2.x retired (chunking, hybrid tuning, sync, store path, …)."""
    node: Any = known
    for part in dotted.split('.'):
        if not isinstance(node, Mapping) or part not in node:
            return False
        node = node[part]
    return not any(dotted.startswith(own) for own in _MEMSIFT_ONLY)


_MEMSIFT_ONLY = (
    'store.backend', 'store.dsn', 'store.readDsn', 'store.replicaMaxLagMs', 'store.snapshots', 'query.rerank',
    'query.dedupe', 'query.timeWords', 'query.redactSnippets', 'query.redactGet',
)  # fmt: skip


def _accepted_extra_paths(value: Any, path: str) -> Any:
    if not isinstance(value, (list, tuple)):
        return value
    kept = []
    for i, item in enumerate(value):
        if isinstance(item, Mapping) and 'evergreen' in item:
            _moved(f'{path}[{i}].evergreen', 'extraPaths[].evergreen', 'OpenClaw 2.x removed this key')
            item = {k: v for k, v in item.items() if k != 'evergreen'}
        kept.append(item)
    return kept
