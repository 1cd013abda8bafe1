"""Load OpenClaw memory-search settings into a frozen, fully resolved :class:`MemoryConfig`.

Resolution follows OpenClaw's ``resolveMemorySearchConfig``: the agent's ``agents.list[].memorySearch`` wins
key-by-key over ``agents.defaults.memorySearch`` (nested objects are merged), ``extraPaths`` are concatenated and
de-duplicated, and the knobs OpenClaw clamps are clamped silently. A 2.x config (``memory.search`` with
``agents.entries.<id>.memory.search`` overrides) gets 2.x's semantics: the keys 2.x removed or never had are named in
a :class:`ConfigWarning` and not applied, the ranking 2.x fixes applies, and memsift's own settings live in
``plugins.entries.memsift.config`` (:mod:`~memsift.config.profiles`). Wrong types and out-of-range values raise
:class:`ConfigError` naming the key path; unknown keys only warn with :class:`ConfigWarning`.

>>> config = load_config({'agents': {'defaults': {'memorySearch': {'chunking': {'tokens': 100, 'overlap': 500}}}}})
>>> config.chunking
ChunkingConfig(tokens=100, overlap=99)
>>> load_config({'memory': {'search': {'query': {'maxResults': 0}}}})
Traceback (most recent call last):
    ...
memsift.errors.ConfigError: memory.search.query.maxResults: got 0; expected an integer from 1 to 9007199254740991

The package: :mod:`~memsift.config.model` holds the records, each field declaring its OpenClaw key, validator
and default once; :mod:`~memsift.config.keys` the declarations and the generic readers that walk them;
:mod:`~memsift.config.schema` the validators and error messages; :mod:`~memsift.config.profiles` what each
OpenClaw generation fixes and reads; :mod:`~memsift.config.layers` the file, the agents, the layers, the merge and
:func:`load_config`.
"""

from __future__ import annotations

from memsift.config.layers import MAX_CONFIG_BYTES as MAX_CONFIG_BYTES
from memsift.config.layers import load_config
from memsift.config.model import (
    BatchConfig,
    CacheConfig,
    ChunkingConfig,
    ExtraPath,
    HybridConfig,
    LocalConfig,
    MemoryConfig,
    MmrConfig,
    ModelProvider,
    MultimodalConfig,
    QueryConfig,
    RemoteConfig,
    RerankConfig,
    RerankProvider,
    SessionSearchMode,
    SessionSyncConfig,
    SessionToolsConfig,
    StoreConfig,
    SyncConfig,
    TemporalDecayConfig,
    Visibility,
)
from memsift.config.schema import MAX_INTEGER as MAX_INTEGER
from memsift.errors import ConfigError as ConfigError
from memsift.errors import ConfigWarning as ConfigWarning

__all__ = [
    'BatchConfig',
    'CacheConfig',
    'ChunkingConfig',
    'ExtraPath',
    'HybridConfig',
    'LocalConfig',
    'MemoryConfig',
    'MmrConfig',
    'ModelProvider',
    'MultimodalConfig',
    'QueryConfig',
    'RemoteConfig',
    'RerankConfig',
    'RerankProvider',
    'SessionSearchMode',
    'SessionSyncConfig',
    'SessionToolsConfig',
    'StoreConfig',
    'SyncConfig',
    'TemporalDecayConfig',
    'Visibility',
    'load_config',
]
