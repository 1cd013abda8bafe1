"""The resolved config: frozen records (memsift._record) whose fields declare their OpenClaw keys, once each.

Every field that OpenClaw configures says, in one place, its OpenClaw key, validator and default (and whether it is
a secret, left out of ``repr``); see :mod:`memsift.config.keys`. The rules OpenClaw applies on top (clamps, derived
defaults, a sibling's limit) are the ``convert`` entries and the finishers below each class.

>>> ChunkingConfig()
ChunkingConfig(tokens=400, overlap=80)
>>> SEARCH_SCHEMA['store']  # StoreConfig.fts_tokenizer declares 'fts.tokenizer'
{'driver': <function ...>, 'path': <function ...>, 'backend': <function ...>, 'dsn': <function ...>, 'fts': {...}, ...}
>>> SEARCH_SCHEMA['query']['hybrid']['mmr']
{'enabled': <function _boolean ...>, 'lambda': <function _number ...>}
"""

# ruff: noqa: RUF009 - key(), section() and direct() return field() declarations, not shared defaults

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping
from typing import Any, Literal, cast, get_args

from memsift._core import normalize_weights
from memsift._record import field, record, replace
from memsift.config.keys import Given, direct, finisher, key, schema_of, section
from memsift.config.profiles import OPENCLAW_1, Profile
from memsift.config.schema import (
    MAX_INTEGER,
    _boolean,
    _context_size,
    _Each,
    _Expected,
    _headers,
    _integer,
    _number,
    _patterns,
    _positive_integer,
    _secret,
    _string,
    _strings,
)

__all__ = [
    'SEARCH_SCHEMA',
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
    'SessionSyncConfig',
    'SessionToolsConfig',
    'StoreConfig',
    'SyncConfig',
    'TemporalDecayConfig',
    'Visibility',
]

Visibility = Literal['self', 'tree', 'agent', 'all']
SessionSearchMode = Literal['ranked', 'all-terms']
"""Which sessions a caller may see (``tools.sessions.visibility``, OpenClaw §11.4)."""
RerankProvider = Literal['cohere', 'voyage', 'jina', 'openai-compatible', 'local']
"""Who scores ``query.rerank``'s query/result pairs: a hosted reranker, an OpenAI-compatible server, or an ONNX
cross-encoder file run in process."""
MAX_RERANK_TOP_N = 100
"""``query.rerank.topN`` is clamped to this: a rerank call costs time and money per document, inside the search."""

_MODALITIES = ('image', 'audio')


# ---------------------------------------------------------------- conversions of values the config set


def _clamp(value: float, low: float, high: float) -> float:
    return min(high, max(low, value))


def _unit(value: float) -> float:
    """Clamped to [0, 1]."""
    return _clamp(value, 0.0, 1.0)


def _floored(low: int, high: float) -> Callable[[float], int]:
    """Floored to an integer, then clamped to [low, high]."""
    return lambda value: int(_clamp(math.floor(value), low, high))


# ---------------------------------------------------------------- validators of this package's own shapes


@record
class ExtraPath:
    """An ``extraPaths`` entry given as an object: a file or directory, an optional glob, an evergreen flag."""

    path: str
    pattern: str | None = None
    evergreen: bool = False


def _visibility(value: Any) -> Visibility:
    folded = value.strip().lower() if isinstance(value, str) else ''
    return cast(Visibility, folded) if folded in get_args(Visibility) else 'tree'


def _extra_path(value: Any) -> str | ExtraPath | None:
    if isinstance(value, str):  # a blank entry is dropped, as OpenClaw's normalisation drops it
        return value.strip() or None
    if isinstance(value, Mapping) and set(value) <= {'path', 'pattern', 'evergreen'}:
        path, pattern, evergreen = value.get('path'), value.get('pattern'), value.get('evergreen', False)
        if (
            isinstance(path, str)
            and path.strip()
            and isinstance(pattern, (str, type(None)))
            and isinstance(evergreen, bool)
        ):
            if pattern is not None and _escapes(pattern):
                raise _Expected(
                    f'a pattern relative to the extra path, such as "runbooks/**/*.md"; {pattern!r} reaches outside '
                    'it (give that folder as the path instead)'
                )
            return ExtraPath(path.strip(), pattern, evergreen)
    raise _Expected('a non-empty path string or an object {path: string, pattern?: string, evergreen?: boolean}')


def _escapes(pattern: str) -> bool:
    """A glob that could name files outside the folder it is relative to: absolute, or with a ``..`` step."""
    clean = pattern.strip().replace('\\', '/')
    return clean.startswith('/') or clean[1:3] == ':/' or '..' in clean.split('/')


def _modalities(value: Any) -> tuple[str, ...]:
    items = [value] if isinstance(value, str) else value
    if isinstance(items, (list, tuple)) and all(item in (*_MODALITIES, 'all') for item in items):
        return _MODALITIES if 'all' in items else tuple(dict.fromkeys(items))
    raise _Expected("'all' or a list of 'image' and 'audio'")


# ---------------------------------------------------------------- memorySearch sections


@record
class BatchConfig:
    """``remote.batch``: the provider's asynchronous batch API."""

    enabled: bool = key('enabled', _boolean, False)
    wait: bool = key('wait', _boolean, True)
    concurrency: int = key('concurrency', _positive_integer, 2)
    poll_interval_ms: int = key('pollIntervalMs', _positive_integer, 2000)
    timeout_minutes: int = key('timeoutMinutes', _positive_integer, 60)


@record
class RemoteConfig:
    """Provider endpoint settings. ``api_key`` and ``headers`` are left out of ``repr`` so logs never show secrets."""

    base_url: str | None = key('baseUrl', _string())
    api_key: str | Mapping[str, Any] | None = key('apiKey', _secret, secret=True)
    headers: dict[str, str] = key('headers', _headers, factory=dict, secret=True)
    batch: BatchConfig = section('batch', BatchConfig)
    non_batch_concurrency: int = key('nonBatchConcurrency', _positive_integer, 4)
    """4, or 1 for ``ollama`` when the config does not say (see :class:`MemoryConfig`)."""


@record
class LocalConfig:
    """``local``: the in-process embedding model."""

    model_path: str | None = key('modelPath', _string())
    model_cache_dir: str | None = key('modelCacheDir', _string())
    context_size: int | str = key('contextSize', _context_size, 4096)


@record
class StoreConfig:
    """``store``: where the index lives. ``{agentId}`` in ``path`` becomes the agent's id, and ``~`` its home.

    ``backend`` (memsift's) is ``sqlite`` (the embedded default: files under ``path``) or ``postgres``: memory and
    sessions in the PostgreSQL database that ``dsn`` (or ``$MEMSIFT_PG_DSN``) names, shared by every process and
    host, each row carrying its agent id; ``path`` then only places this process's derived search indexes.
    ``snapshots`` (memsift's): where those derived indexes are published for new processes to start from."""

    driver: str = key('driver', _string('sqlite'), 'sqlite')
    path: str = key('path', _string(), '~/.memsift/memory/{agentId}.sqlite')
    backend: str = key('backend', _string('sqlite', 'postgres'), 'sqlite')
    dsn: str | None = key('dsn', _string(), secret=True)
    read_dsn: tuple[str, ...] = key('readDsn', _strings, (), secret=True)
    """memsift's: read replicas of ``dsn`` (a DSN or a list; else ``$MEMSIFT_PG_READ_DSN``) that serve catch-up,
    snapshot and search reads once they have replayed the generation the primary reports; writes go to ``dsn``."""
    replica_max_lag_ms: int = key('replicaMaxLagMs', _integer(0), 1000)
    """memsift's: a replica behind the primary for longer than this is left for the primary, with a warning."""
    fts_tokenizer: str = key('fts.tokenizer', _string('unicode61', 'trigram'), 'unicode61')
    vector_enabled: bool = key('vector.enabled', _boolean, True)
    vector_extension_path: str | None = key('vector.extensionPath', _string())
    snapshots_path: str | None = key('snapshots.path', _string())
    """memsift's: a folder (shared by the hosts) where syncs publish the derived indexes and new processes start
    from them (``memsift.index.snapshots``); ``~`` is the home."""
    snapshots_every_minutes: int = key('snapshots.everyMinutes', _integer(0), 60)
    """memsift's: a sync publishes a snapshot when the newest is older than this (0: after every sync that wrote)."""


@record
class ChunkingConfig:
    """``chunking``: chunk size and overlap in tokens (the overlap stays below the size)."""

    tokens: int = key('tokens', _positive_integer, 400)
    overlap: int = key('overlap', _integer(), 80)


@finisher(ChunkingConfig)
def _chunking(chunking: ChunkingConfig, given: Given) -> ChunkingConfig:
    return replace(chunking, overlap=int(_clamp(chunking.overlap, 0, chunking.tokens - 1)))


@record
class CacheConfig:
    """``cache``: the embedding cache (``max_entries`` floored, at least 1)."""

    enabled: bool = key('enabled', _boolean, True)
    max_entries: int | None = key('maxEntries', _number, convert=_floored(1, MAX_INTEGER))


@record
class SessionSyncConfig:
    """``sync.sessions``: how much a transcript must grow before it is indexed again."""

    delta_bytes: int = key('deltaBytes', _integer(0), 100_000)
    delta_messages: int = key('deltaMessages', _integer(0), 50)
    post_compaction_force: bool = key('postCompactionForce', _boolean, True)


@record
class SyncConfig:
    """``sync``: when the index catches up with the workspace."""

    on_session_start: bool = key('onSessionStart', _boolean, True)
    on_search: bool = key('onSearch', _boolean, True)
    watch: bool = key('watch', _boolean, True)
    watch_debounce_ms: int = key('watchDebounceMs', _integer(0), 1500)
    interval_minutes: int = key('intervalMinutes', _integer(0), 0)
    sessions: SessionSyncConfig = section('sessions', SessionSyncConfig)
    embedding_batch_timeout_seconds: int | None = key('embeddingBatchTimeoutSeconds', _positive_integer)


@record
class MmrConfig:
    """``query.hybrid.mmr``: diversity re-ranking (``lambda`` clamped to [0, 1])."""

    enabled: bool = key('enabled', _boolean, False)
    lambda_: float = key('lambda', _number, 0.7, convert=_unit)


@record
class TemporalDecayConfig:
    """``query.hybrid.temporalDecay``: older dated notes score less (``half_life_days`` floored, at least 1)."""

    enabled: bool = key('enabled', _boolean, False)
    half_life_days: int = key('halfLifeDays', _number, 30, convert=_floored(1, math.inf))


@record
class HybridConfig:
    """``query.hybrid``: vector and keyword fusion. The weights are clamped and normalized to sum to 1, and the
    candidate multiplier is floored and clamped to [1, 20]."""

    enabled: bool = key('enabled', _boolean, True)
    vector_weight: float = key('vectorWeight', _number, 0.7)
    text_weight: float = key('textWeight', _number, 0.3)
    candidate_multiplier: int = key('candidateMultiplier', _number, 4, convert=_floored(1, 20))
    mmr: MmrConfig = section('mmr', MmrConfig)
    temporal_decay: TemporalDecayConfig = section('temporalDecay', TemporalDecayConfig)


@finisher(HybridConfig)
def _hybrid(hybrid: HybridConfig, given: Given) -> HybridConfig:
    vector_weight, text_weight = normalize_weights(hybrid.vector_weight, hybrid.text_weight)
    return replace(hybrid, vector_weight=vector_weight, text_weight=text_weight)


@record
class RerankConfig:
    """``query.rerank`` (memsift's, off by default): a reranker rescores the ``top_n`` best merged results of
    ``memory_search`` within ``timeout_ms`` (and the call's deadline); any failure keeps the merged order.

    ``provider`` defaults to ``local`` when ``model_path`` is set. ``base_url``, ``api_key`` and ``model`` default to
    the provider's (the key from ``models.providers.<provider>``, then ``remote`` when the embedding provider is the
    same one, then ``COHERE_API_KEY`` / ``VOYAGE_API_KEY`` / ``JINA_API_KEY``). ``api_key`` stays out of ``repr``.

    >>> RerankConfig()
    RerankConfig(enabled=False, provider=None, model=None, top_n=20, base_url=None, timeout_ms=2000, model_path=None)
    """

    enabled: bool = key('enabled', _boolean, False)
    provider: RerankProvider | None = key('provider', _string(*get_args(RerankProvider)))
    model: str | None = key('model', _string())
    top_n: int = key('topN', _positive_integer, 20, convert=lambda n: min(n, MAX_RERANK_TOP_N))
    base_url: str | None = key('baseUrl', _string())
    api_key: str | Mapping[str, Any] | None = key('apiKey', _secret, secret=True)
    timeout_ms: int = key('timeoutMs', _positive_integer, 2000)
    """The whole rerank stage, retries included; never past the search's own deadline either."""
    model_path: str | None = key('modelPath', _string())
    """``local``: an ONNX cross-encoder (query/document pair in, one relevance logit out), ``tokenizer.json`` beside."""


@finisher(RerankConfig)
def _rerank(rerank: RerankConfig, given: Given) -> RerankConfig:
    if rerank.provider is None and rerank.model_path is not None:
        return replace(rerank, provider='local')
    return rerank


@record
class QueryConfig:
    """``query``: how many results, from what score (``min_score`` clamped to [0, 1]), and the optional reranker."""

    max_results: int = key('maxResults', _positive_integer, 6)
    min_score: float = key('minScore', _number, 0.35, convert=_unit)
    hybrid: HybridConfig = section('hybrid', HybridConfig)
    redact_snippets: bool = key('redactSnippets', _boolean, True)
    """memsift: mask secrets in ``memory_search`` snippets (``memory_get`` stays verbatim: the files are the user's)."""
    redact_get: bool = key('redactGet', _boolean, False)
    """memsift: mask secrets in the text ``memory_get`` returns too; off (OpenClaw's contract): the file verbatim."""
    rerank: RerankConfig = section('rerank', RerankConfig)
    dedupe: bool = key('dedupe', _boolean, True)
    """memsift: one hit per fact: a chunk whose text repeats a better-ranked one's (or nearly) folds into its
    ``alsoIn``, and the next result takes the slot (``memsift.search.dedupe``); off: every copy is a result."""
    time_words: bool = key('timeWords', _boolean, True)
    """memsift: read time expressions in the query ("last week", "上周", "先週", "latest") as a window that ranks
    material from then first (``memsift.search.when``); off: the query is read as keywords only, as OpenClaw does."""


@record
class MultimodalConfig:
    """``multimodal``: images and audio as memory (enabled without ``modalities``: both)."""

    enabled: bool = key('enabled', _boolean, False)
    modalities: tuple[str, ...] = key('modalities', _modalities, ())
    max_file_bytes: int = key('maxFileBytes', _positive_integer, 10 * 1024 * 1024)


@finisher(MultimodalConfig)
def _multimodal(multimodal: MultimodalConfig, given: Given) -> MultimodalConfig:
    if multimodal.enabled and not multimodal.modalities:
        return replace(multimodal, modalities=_MODALITIES)
    return multimodal


# ---------------------------------------------------------------- settings outside memorySearch


@record
class ModelProvider:
    """An entry of OpenClaw's ``models.providers``: endpoint defaults for a provider id, and for a custom id the
    adapter (``api``) that speaks its wire format. ``api_key`` and ``headers`` stay out of ``repr``."""

    api: str | None = direct('api', _string())
    base_url: str | None = direct('baseUrl', _string())
    headers: dict[str, str] = direct('headers', _headers, factory=dict, secret=True)
    api_key: str | Mapping[str, Any] | None = direct('apiKey', _secret, secret=True)


@record
class SessionToolsConfig:
    """The settings of ``sessions_search`` / ``sessions_history`` that live outside ``memorySearch``."""

    visibility: Visibility = direct('tools.sessions.visibility', _visibility, 'tree')
    """``tools.sessions.visibility``: ``self``, ``tree``, ``agent`` or ``all``, any case; anything else is ``tree``
    (OpenClaw's ``resolveSessionToolsVisibility``)."""
    agent_to_agent: bool = direct('tools.agentToAgent.enabled', _boolean, False)
    """``tools.agentToAgent.enabled``: with ``all``, other agents' sessions are visible."""
    sandbox_visibility: str = direct(
        'agents.defaults.sandbox.sessionToolsVisibility', _string('spawned', 'all'), 'spawned'
    )
    """``agents.defaults.sandbox.sessionToolsVisibility``: ``spawned`` or ``all``."""
    redact_patterns: tuple[str, ...] = direct('logging.redactPatterns', _patterns, ())
    """``logging.redactPatterns``: applied before the default secret patterns."""
    search_mode: SessionSearchMode = direct('tools.sessions.search.mode', _string('ranked', 'all-terms'), 'ranked')
    """``tools.sessions.search.mode`` (memsift's): ``ranked`` tops the all-terms hits of ``sessions_search`` up with
    ranked partial matches when they are fewer than asked for; ``all-terms`` is OpenClaw's search exactly."""
    time_words: bool = direct('tools.sessions.search.timeWords', _boolean, True)
    """``tools.sessions.search.timeWords`` (memsift's): time words in a ``sessions_search`` query rank messages of
    the window they name first (``memsift.search.when``); off: OpenClaw's reading."""


# ---------------------------------------------------------------- the whole


@record
class MemoryConfig:
    """The resolved memory-search settings of one agent (OpenClaw camelCase keys as snake_case)."""

    agent_id: str
    workspace: str | None
    source_path: str | None
    enabled: bool = key('enabled', _boolean, True)
    provider: str = key('provider', _string(), 'auto')
    model: str | None = key('model', _string())
    fallback: str = key('fallback', _string(), 'none')
    sources: tuple[str, ...] = key('sources', _Each(_string('memory', 'sessions')), ('memory',))
    """``sessions`` only counts with ``experimental.sessionMemory``; with nothing left, ``('memory',)``."""
    extra_paths: tuple[str | ExtraPath, ...] = key('extraPaths', _Each(_extra_path), (), concat=True)
    experimental_session_memory: bool = key('experimental.sessionMemory', _boolean, False)
    remember_across_conversations: bool | None = key('rememberAcrossConversations', _boolean)
    output_dimensionality: int | None = key('outputDimensionality', _positive_integer)
    input_type: str | None = key('inputType', _string())
    query_input_type: str | None = key('queryInputType', _string())
    document_input_type: str | None = key('documentInputType', _string())
    remote: RemoteConfig = section('remote', RemoteConfig)
    local: LocalConfig = section('local', LocalConfig)
    store: StoreConfig = section('store', StoreConfig)
    chunking: ChunkingConfig = section('chunking', ChunkingConfig)
    cache: CacheConfig = section('cache', CacheConfig)
    sync: SyncConfig = section('sync', SyncConfig)
    query: QueryConfig = section('query', QueryConfig)
    multimodal: MultimodalConfig = section('multimodal', MultimodalConfig)
    citations: str = direct('memory.citations', _string('auto', 'on', 'off'), 'auto')
    model_providers: Mapping[str, ModelProvider] = field(default_factory=dict, repr=False)
    session_tools: SessionToolsConfig = field(default_factory=SessionToolsConfig)
    profile: Profile = field(default=OPENCLAW_1, repr=False)
    """The OpenClaw the config is written for (:mod:`memsift.config.profiles`): what it fixes, reads and answers."""


@finisher(MemoryConfig)
def _memory(config: MemoryConfig, given: Given) -> MemoryConfig:
    """The rules across sections: sources need session memory, Ollama gets one request at a time unless the config
    says otherwise, and the store path is the agent's."""
    # 2.x also lets sessions in through rememberAcrossConversations (its own boundary: memsift.index.session_memory)
    recall = config.profile.name == 'openclaw-2' and bool(config.remember_across_conversations)
    sources = tuple(s for s in config.sources if s != 'sessions' or config.experimental_session_memory or recall)
    remote = config.remote
    if config.provider == 'ollama' and 'remote.non_batch_concurrency' not in given:
        remote = replace(remote, non_batch_concurrency=1)
    path = os.path.expanduser(config.store.path.replace('{agentId}', config.agent_id))
    store = replace(config.store, path=path)
    return replace(config, sources=sources or ('memory',), remote=remote, store=store)


SEARCH_SCHEMA = schema_of(MemoryConfig)
"""What a ``memorySearch`` (or ``memory.search``) object may hold: OpenClaw key -> validator, nested."""
