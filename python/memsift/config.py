"""Load OpenClaw memory-search settings into a frozen, fully resolved :class:`MemoryConfig`.

Resolution follows OpenClaw's ``resolveMemorySearchConfig``: the agent's ``agents.list[].memorySearch`` wins
key-by-key over ``agents.defaults.memorySearch`` (nested objects are merged), ``extraPaths`` are concatenated and
de-duplicated, and the knobs OpenClaw clamps are clamped silently. The newer ``memory.search`` form (with
``agents.entries.<id>.memory.search`` overrides) takes the same inner keys. Wrong types and out-of-range values
raise :class:`ConfigError` naming the key path; unknown keys only warn with :class:`ConfigWarning`.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Union

import json5

from memsift._core import normalize_weights
from memsift._text import preview
from memsift.errors import ConfigError, ConfigWarning

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
    'SessionSyncConfig',
    'SessionToolsConfig',
    'StoreConfig',
    'SyncConfig',
    'TemporalDecayConfig',
    'Visibility',
    'load_config',
]

Visibility = Literal['self', 'tree', 'agent', 'all']
"""Which sessions a caller may see (``tools.sessions.visibility``, OpenClaw §11.4)."""

_MASKED_KEYS = frozenset({'apikey', 'token', 'password', 'secret', 'authorization', 'headers'})
_MAX_REPR = 80
MAX_CONFIG_BYTES = 4 * 1024 * 1024
"""A config file larger than this is refused at once (OpenClaw configs are kilobytes; JSON5 parsing is slow)."""
_MODALITIES = ('image', 'audio')
_MULTIMODAL_PROVIDER, _MULTIMODAL_MODEL = 'gemini', 'gemini-embedding-2-preview'
_DEFAULT_STORE_PATH = '~/.memsift/memory/{agentId}.sqlite'


# ---------------------------------------------------------------- resolved config


@dataclass(frozen=True, slots=True)
class ExtraPath:
    """An ``extraPaths`` entry given as an object: a file or directory, an optional glob, an evergreen flag."""

    path: str
    pattern: str | None = None
    evergreen: bool = False


@dataclass(frozen=True, slots=True)
class BatchConfig:
    enabled: bool
    wait: bool
    concurrency: int
    poll_interval_ms: int
    timeout_minutes: int


@dataclass(frozen=True, slots=True)
class RemoteConfig:
    """Provider endpoint settings. ``api_key`` and ``headers`` are left out of ``repr`` so logs never show secrets."""

    base_url: str | None
    api_key: str | Mapping[str, Any] | None = field(repr=False)
    headers: dict[str, str] = field(repr=False)
    batch: BatchConfig
    non_batch_concurrency: int


@dataclass(frozen=True, slots=True)
class LocalConfig:
    model_path: str | None
    model_cache_dir: str | None
    context_size: int | str


@dataclass(frozen=True, slots=True)
class StoreConfig:
    driver: str
    path: str
    fts_tokenizer: str
    vector_enabled: bool
    vector_extension_path: str | None


@dataclass(frozen=True, slots=True)
class ChunkingConfig:
    tokens: int
    overlap: int


@dataclass(frozen=True, slots=True)
class CacheConfig:
    enabled: bool
    max_entries: int | None


@dataclass(frozen=True, slots=True)
class SessionSyncConfig:
    delta_bytes: int
    delta_messages: int
    post_compaction_force: bool


@dataclass(frozen=True, slots=True)
class SyncConfig:
    on_session_start: bool
    on_search: bool
    watch: bool
    watch_debounce_ms: int
    interval_minutes: int
    sessions: SessionSyncConfig
    embedding_batch_timeout_seconds: int | None


@dataclass(frozen=True, slots=True)
class MmrConfig:
    enabled: bool
    lambda_: float


@dataclass(frozen=True, slots=True)
class TemporalDecayConfig:
    enabled: bool
    half_life_days: int


@dataclass(frozen=True, slots=True)
class HybridConfig:
    enabled: bool
    vector_weight: float
    text_weight: float
    candidate_multiplier: int
    mmr: MmrConfig
    temporal_decay: TemporalDecayConfig


@dataclass(frozen=True, slots=True)
class QueryConfig:
    max_results: int
    min_score: float
    hybrid: HybridConfig


@dataclass(frozen=True, slots=True)
class MultimodalConfig:
    enabled: bool
    modalities: tuple[str, ...]
    max_file_bytes: int


@dataclass(frozen=True, slots=True)
class ModelProvider:
    """An entry of OpenClaw's ``models.providers``: endpoint defaults for a provider id, and for a custom id the
    adapter (``api``) that speaks its wire format. ``api_key`` and ``headers`` stay out of ``repr``."""

    api: str | None
    base_url: str | None
    api_key: str | Mapping[str, Any] | None = field(repr=False)
    headers: dict[str, str] = field(repr=False)


@dataclass(frozen=True, slots=True)
class SessionToolsConfig:
    """The settings of ``sessions_search`` / ``sessions_history`` that live outside ``memorySearch``."""

    visibility: Visibility = 'tree'
    """``tools.sessions.visibility``: ``self``, ``tree``, ``agent`` or ``all``."""
    agent_to_agent: bool = False
    """``tools.agentToAgent.enabled``: with ``all``, other agents' sessions are visible."""
    sandbox_visibility: str = 'spawned'
    """``agents.defaults.sandbox.sessionToolsVisibility``: ``spawned`` or ``all``."""
    redact_patterns: tuple[str, ...] = ()
    """``logging.redactPatterns``: applied before the default secret patterns."""


@dataclass(frozen=True, slots=True)
class MemoryConfig:
    """The resolved memory-search settings of one agent (OpenClaw camelCase keys as snake_case)."""

    agent_id: str
    workspace: str | None
    source_path: str | None
    enabled: bool
    provider: str
    model: str | None
    fallback: str
    sources: tuple[str, ...]
    extra_paths: tuple[str | ExtraPath, ...]
    experimental_session_memory: bool
    remember_across_conversations: bool | None
    output_dimensionality: int | None
    input_type: str | None
    query_input_type: str | None
    document_input_type: str | None
    remote: RemoteConfig
    local: LocalConfig
    store: StoreConfig
    chunking: ChunkingConfig
    cache: CacheConfig
    sync: SyncConfig
    query: QueryConfig
    multimodal: MultimodalConfig
    citations: str
    model_providers: Mapping[str, ModelProvider] = field(default_factory=dict, repr=False)
    session_tools: SessionToolsConfig = field(default_factory=SessionToolsConfig)


# ---------------------------------------------------------------- error messages


def _is_masked(key: object) -> bool:
    return isinstance(key, str) and key.lower() in _MASKED_KEYS


def _redact(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {key: '***' if _is_masked(key) else _redact(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_redact(item) for item in value]
    return value


def _show(path: str, value: Any) -> str:
    masked = any(_is_masked(part) for part in re.split(r'[.\[\]]', path))
    try:
        text = repr('***' if masked else _redact(value))
    except (RecursionError, ValueError):  # nested too deeply; an int past Python's digit limit
        text = f'<{type(value).__name__}>'
    return text if len(text) <= _MAX_REPR else text[: _MAX_REPR - 3] + '...'


def _invalid(path: str, value: Any, expected: str) -> ConfigError:
    return ConfigError(f'{path}: got {_show(path, value)}; expected {expected}', key_path=path)


# ---------------------------------------------------------------- leaf validators


class _Expected(Exception):
    """A leaf value did not validate; the argument says what was expected."""


Leaf = Callable[[Any], Any]


def _is_number(value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an int beyond a float's range (10**400) is no usable setting
        return False


def _boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    raise _Expected('a boolean (true or false)')


def _number(value: Any) -> float:
    if _is_number(value):
        return value
    raise _Expected('a finite number')


MAX_INTEGER = 2**53 - 1
"""The largest integer a setting may take (JavaScript's largest exact integer, so OpenClaw reads it the same)."""


def _integer(minimum: int | None = None) -> Leaf:
    low = -MAX_INTEGER if minimum is None else minimum
    expected = f'an integer from {low} to {MAX_INTEGER}'

    def check(value: Any) -> int:
        integral = _is_number(value) and (isinstance(value, int) or value.is_integer())
        if integral and low <= value <= MAX_INTEGER:
            return int(value)
        raise _Expected(expected)

    return check


def _string(*choices: str) -> Leaf:
    expected = 'one of ' + ', '.join(map(repr, choices)) if choices else 'a string'

    def check(value: Any) -> str:
        if isinstance(value, str) and (not choices or value in choices):
            return value
        raise _Expected(expected)

    return check


_positive_integer = _integer(1)


def _context_size(value: Any) -> int | str:
    if value == 'auto':
        return value
    try:
        return _positive_integer(value)
    except _Expected:
        raise _Expected("'auto' or an integer >= 1") from None


def _secret(value: Any) -> str | Mapping[str, Any]:
    if isinstance(value, (str, Mapping)):
        return value
    raise _Expected('a string or a secret reference object')


def _headers(value: Any) -> dict[str, str]:
    if isinstance(value, Mapping) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        return dict(value)
    raise _Expected('an object mapping header names to string values')


def _extra_path(value: Any) -> str | ExtraPath:
    if isinstance(value, str) and value.strip():
        return value.strip()
    if isinstance(value, Mapping) and set(value) <= {'path', 'pattern', 'evergreen'}:
        path, pattern, evergreen = value.get('path'), value.get('pattern'), value.get('evergreen', False)
        if (
            isinstance(path, str)
            and path.strip()
            and isinstance(pattern, (str, type(None)))
            and isinstance(evergreen, bool)
        ):
            return ExtraPath(path.strip(), pattern, evergreen)
    raise _Expected('a non-empty path string or an object {path: string, pattern?: string, evergreen?: boolean}')


def _modalities(value: Any) -> tuple[str, ...]:
    items = [value] if isinstance(value, str) else value
    if isinstance(items, (list, tuple)) and all(item in (*_MODALITIES, 'all') for item in items):
        return _MODALITIES if 'all' in items else tuple(dict.fromkeys(items))
    raise _Expected("'all' or a list of 'image' and 'audio'")


@dataclass(frozen=True, slots=True)
class _Each:
    """Schema node: a list whose items are checked by ``item``; the result is a de-duplicated tuple."""

    item: Leaf


Schema = Union[Mapping[str, 'Schema'], _Each, Leaf]  # noqa: UP007 - recursive: the forward reference needs Union

_SCHEMA: Mapping[str, Schema] = {
    'enabled': _boolean,
    'provider': _string(),
    'model': _string(),
    'fallback': _string(),
    'sources': _Each(_string('memory', 'sessions')),
    'extraPaths': _Each(_extra_path),
    'experimental': {'sessionMemory': _boolean},
    'rememberAcrossConversations': _boolean,
    'outputDimensionality': _positive_integer,
    'inputType': _string(),
    'queryInputType': _string(),
    'documentInputType': _string(),
    'remote': {
        'baseUrl': _string(),
        'apiKey': _secret,
        'headers': _headers,
        'batch': {
            'enabled': _boolean,
            'wait': _boolean,
            'concurrency': _positive_integer,
            'pollIntervalMs': _positive_integer,
            'timeoutMinutes': _positive_integer,
        },
        'nonBatchConcurrency': _positive_integer,
    },
    'local': {'modelPath': _string(), 'modelCacheDir': _string(), 'contextSize': _context_size},
    'store': {
        'driver': _string('sqlite'),
        'path': _string(),
        'fts': {'tokenizer': _string('unicode61', 'trigram')},
        'vector': {'enabled': _boolean, 'extensionPath': _string()},
    },
    'chunking': {'tokens': _positive_integer, 'overlap': _integer()},
    'cache': {'enabled': _boolean, 'maxEntries': _number},
    'sync': {
        'onSessionStart': _boolean,
        'onSearch': _boolean,
        'watch': _boolean,
        'watchDebounceMs': _integer(0),
        'intervalMinutes': _integer(0),
        'sessions': {'deltaBytes': _integer(0), 'deltaMessages': _integer(0), 'postCompactionForce': _boolean},
        'embeddingBatchTimeoutSeconds': _positive_integer,
    },
    'query': {
        'maxResults': _positive_integer,
        'minScore': _number,
        'hybrid': {
            'enabled': _boolean,
            'vectorWeight': _number,
            'textWeight': _number,
            'candidateMultiplier': _number,
            'mmr': {'enabled': _boolean, 'lambda': _number},
            'temporalDecay': {'enabled': _boolean, 'halfLifeDays': _number},
        },
    },
    'multimodal': {'enabled': _boolean, 'modalities': _modalities, 'maxFileBytes': _positive_integer},
}


# ---------------------------------------------------------------- schema walk (types, unknown keys)


def _check(schema: Schema, value: Any, path: str) -> Any:
    if isinstance(schema, Mapping):
        return _check_object(schema, value, path)
    if isinstance(schema, _Each):
        if not isinstance(value, (list, tuple)):
            raise _invalid(path, value, 'a list')
        return tuple(dict.fromkeys(_check(schema.item, item, f'{path}[{i}]') for i, item in enumerate(value)))
    try:
        return schema(value)
    except _Expected as exc:
        raise _invalid(path, value, str(exc)) from None


def _check_object(schema: Mapping[str, Schema], value: Any, path: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise _invalid(path, value, 'an object')
    checked = {}
    for key, item in value.items():
        if key not in schema:
            warnings.warn(f'{path}.{key}: unknown key, ignored', ConfigWarning, stacklevel=2)
        elif item is not None:
            checked[key] = _check(schema[key], item, f'{path}.{key}')
    return checked


# ---------------------------------------------------------------- locating the layers


def _section(parent: Mapping[str, Any], parent_path: str, key: str) -> Mapping[str, Any]:
    path = f'{parent_path}.{key}' if parent_path else key
    value = parent.get(key)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise _invalid(path, value, 'an object')
    return value


def _listed_agent(agents: Mapping[str, Any], agent_id: str) -> tuple[str, Mapping[str, Any]] | None:
    entries = agents.get('list', [])
    if not isinstance(entries, (list, tuple)):
        raise _invalid('agents.list', entries, 'a list of agent objects')
    for i, entry in enumerate(entries):
        if not isinstance(entry, Mapping):
            raise _invalid(f'agents.list[{i}]', entry, 'an agent object')
        if entry.get('id') == agent_id:
            return f'agents.list[{i}]', entry
    return None


_Scope = tuple[str, Mapping[str, Any]]


def _agent_scopes(root: Mapping[str, Any], agent_id: str) -> tuple[_Scope, _Scope | None, _Scope]:
    """Where this agent's settings may live: agents.defaults, its agents.list[] entry, agents.entries.<id>."""
    agents = _section(root, '', 'agents')
    entry_path = f'agents.entries.{agent_id}'
    entry = _section(_section(agents, 'agents', 'entries'), 'agents.entries', agent_id)
    defaults = ('agents.defaults', _section(agents, 'agents', 'defaults'))
    return defaults, _listed_agent(agents, agent_id), (entry_path, entry)


def _layers(root: Mapping[str, Any], agent_id: str) -> list[tuple[str, Any]]:
    """The raw memory-search objects to merge, lowest precedence first, each with its key path."""
    defaults, listed, (entry_path, entry) = _agent_scopes(root, agent_id)
    classic = [(f'{path}.memorySearch', scope.get('memorySearch')) for path, scope in filter(None, [defaults, listed])]
    memories = [
        ('memory', _section(root, '', 'memory')),
        (f'{entry_path}.memory', _section(entry, entry_path, 'memory')),
    ]
    newer = [(f'{path}.search', memory.get('search')) for path, memory in memories]
    classic, newer = _present(classic), _present(newer)
    if classic and newer:
        message = 'both agents.*.memorySearch and memory.search are set; using agents.*.memorySearch'
        warnings.warn(message, ConfigWarning, stacklevel=2)
    return classic or newer


def _present(layers: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    return [(path, raw) for path, raw in layers if raw is not None]


def _workspace(root: Mapping[str, Any], agent_id: str) -> str | None:
    defaults, listed, entry = _agent_scopes(root, agent_id)
    for path, scope in filter(None, [listed, entry, defaults]):
        if scope.get('workspace') is not None:
            return os.path.expanduser(_check(_string(), scope['workspace'], f'{path}.workspace'))
    return None


def _session_tools(root: Mapping[str, Any]) -> SessionToolsConfig:
    tools = _section(root, '', 'tools')
    sessions = _section(tools, 'tools', 'sessions')
    a2a = _section(tools, 'tools', 'agentToAgent')
    sandbox = _section(_section(_section(root, '', 'agents'), 'agents', 'defaults'), 'agents.defaults', 'sandbox')
    patterns = _section(root, '', 'logging').get('redactPatterns', [])
    if not isinstance(patterns, (list, tuple)) or not all(isinstance(p, str) for p in patterns):
        raise _invalid('logging.redactPatterns', patterns, 'a list of regular expression strings')
    return SessionToolsConfig(
        visibility=_check(
            _string('self', 'tree', 'agent', 'all'), sessions.get('visibility', 'tree'), 'tools.sessions.visibility'
        ),
        agent_to_agent=_check(_boolean, a2a.get('enabled', False), 'tools.agentToAgent.enabled'),
        sandbox_visibility=_check(
            _string('spawned', 'all'),
            sandbox.get('sessionToolsVisibility', 'spawned'),
            'agents.defaults.sandbox.sessionToolsVisibility',
        ),
        redact_patterns=tuple(patterns),
    )


def _citations(root: Mapping[str, Any]) -> str:
    value = _section(root, '', 'memory').get('citations', 'auto')
    return _check(_string('auto', 'on', 'off'), value, 'memory.citations')


# ---------------------------------------------------------------- merge


def _deep_merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in override.items():
        nested = isinstance(value, Mapping) and isinstance(merged.get(key), Mapping)
        merged[key] = _deep_merge(merged[key], value) if nested else value
    return merged


def _merge_layers(layers: list[Mapping[str, Any]]) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for layer in layers:
        merged = _deep_merge(merged, layer)
    merged['extraPaths'] = tuple(dict.fromkeys(path for layer in layers for path in layer.get('extraPaths', ())))
    return merged


# ---------------------------------------------------------------- resolution (defaults, clamps)


def _clamp(value: float, low: float, high: float) -> float:
    return min(high, max(low, value))


def _remote(raw: Mapping[str, Any], provider: str) -> RemoteConfig:
    batch = raw.get('batch', {})
    return RemoteConfig(
        base_url=raw.get('baseUrl'),
        api_key=raw.get('apiKey'),
        headers=raw.get('headers', {}),
        batch=BatchConfig(
            enabled=batch.get('enabled', False),
            wait=batch.get('wait', True),
            concurrency=batch.get('concurrency', 2),
            poll_interval_ms=batch.get('pollIntervalMs', 2000),
            timeout_minutes=batch.get('timeoutMinutes', 60),
        ),
        non_batch_concurrency=raw.get('nonBatchConcurrency', 1 if provider == 'ollama' else 4),
    )


def _local(raw: Mapping[str, Any]) -> LocalConfig:
    return LocalConfig(
        model_path=raw.get('modelPath'),
        model_cache_dir=raw.get('modelCacheDir'),
        context_size=raw.get('contextSize', 4096),
    )


def _store(raw: Mapping[str, Any], agent_id: str) -> StoreConfig:
    path = raw.get('path', _DEFAULT_STORE_PATH).replace('{agentId}', agent_id)
    return StoreConfig(
        driver=raw.get('driver', 'sqlite'),
        path=os.path.expanduser(path),
        fts_tokenizer=raw.get('fts', {}).get('tokenizer', 'unicode61'),
        vector_enabled=raw.get('vector', {}).get('enabled', True),
        vector_extension_path=raw.get('vector', {}).get('extensionPath'),
    )


def _chunking(raw: Mapping[str, Any]) -> ChunkingConfig:
    tokens = raw.get('tokens', 400)
    return ChunkingConfig(tokens=tokens, overlap=int(_clamp(raw.get('overlap', 80), 0, tokens - 1)))


def _cache(raw: Mapping[str, Any]) -> CacheConfig:
    max_entries = raw.get('maxEntries')
    return CacheConfig(
        enabled=raw.get('enabled', True),
        max_entries=None if max_entries is None else int(_clamp(math.floor(max_entries), 1, MAX_INTEGER)),
    )


def _sync(raw: Mapping[str, Any]) -> SyncConfig:
    sessions = raw.get('sessions', {})
    return SyncConfig(
        on_session_start=raw.get('onSessionStart', True),
        on_search=raw.get('onSearch', True),
        watch=raw.get('watch', True),
        watch_debounce_ms=raw.get('watchDebounceMs', 1500),
        interval_minutes=raw.get('intervalMinutes', 0),
        sessions=SessionSyncConfig(
            delta_bytes=sessions.get('deltaBytes', 100_000),
            delta_messages=sessions.get('deltaMessages', 50),
            post_compaction_force=sessions.get('postCompactionForce', True),
        ),
        embedding_batch_timeout_seconds=raw.get('embeddingBatchTimeoutSeconds'),
    )


def _hybrid(raw: Mapping[str, Any]) -> HybridConfig:
    mmr, decay = raw.get('mmr', {}), raw.get('temporalDecay', {})
    vector_weight, text_weight = normalize_weights(raw.get('vectorWeight', 0.7), raw.get('textWeight', 0.3))
    return HybridConfig(
        enabled=raw.get('enabled', True),
        vector_weight=vector_weight,
        text_weight=text_weight,
        candidate_multiplier=int(_clamp(math.floor(raw.get('candidateMultiplier', 4)), 1, 20)),
        mmr=MmrConfig(enabled=mmr.get('enabled', False), lambda_=_clamp(mmr.get('lambda', 0.7), 0.0, 1.0)),
        temporal_decay=TemporalDecayConfig(
            enabled=decay.get('enabled', False), half_life_days=max(1, math.floor(decay.get('halfLifeDays', 30)))
        ),
    )


def _query(raw: Mapping[str, Any]) -> QueryConfig:
    return QueryConfig(
        max_results=raw.get('maxResults', 6),
        min_score=_clamp(raw.get('minScore', 0.35), 0.0, 1.0),
        hybrid=_hybrid(raw.get('hybrid', {})),
    )


def _multimodal(raw: Mapping[str, Any]) -> MultimodalConfig:
    enabled = raw.get('enabled', False)
    return MultimodalConfig(
        enabled=enabled,
        modalities=raw.get('modalities') or (_MODALITIES if enabled else ()),
        max_file_bytes=raw.get('maxFileBytes', 10 * 1024 * 1024),
    )


def _sources(sources: tuple[str, ...], session_memory: bool) -> tuple[str, ...]:
    return tuple(source for source in sources if source != 'sessions' or session_memory) or ('memory',)


def _resolve(
    merged: Mapping[str, Any], *, agent_id: str, workspace: str | None, citations: str, source_path: str | None
) -> MemoryConfig:
    provider = merged.get('provider', 'auto')
    session_memory = merged.get('experimental', {}).get('sessionMemory', False)
    return MemoryConfig(
        agent_id=agent_id,
        workspace=workspace,
        source_path=source_path,
        enabled=merged.get('enabled', True),
        provider=provider,
        model=merged.get('model'),
        fallback=merged.get('fallback', 'none'),
        sources=_sources(merged.get('sources', ('memory',)), session_memory),
        extra_paths=merged['extraPaths'],
        experimental_session_memory=session_memory,
        remember_across_conversations=merged.get('rememberAcrossConversations'),
        output_dimensionality=merged.get('outputDimensionality'),
        input_type=merged.get('inputType'),
        query_input_type=merged.get('queryInputType'),
        document_input_type=merged.get('documentInputType'),
        remote=_remote(merged.get('remote', {}), provider),
        local=_local(merged.get('local', {})),
        store=_store(merged.get('store', {}), agent_id),
        chunking=_chunking(merged.get('chunking', {})),
        cache=_cache(merged.get('cache', {})),
        sync=_sync(merged.get('sync', {})),
        query=_query(merged.get('query', {})),
        multimodal=_multimodal(merged.get('multimodal', {})),
        citations=citations,
    )


def _check_multimodal(config: MemoryConfig, layers: list[tuple[str, Mapping[str, Any]]]) -> None:
    if not config.multimodal.enabled:
        return
    if (config.provider, config.model, config.fallback) == (_MULTIMODAL_PROVIDER, _MULTIMODAL_MODEL, 'none'):
        return
    path = next(f'{p}.multimodal.enabled' for p, layer in reversed(layers) if 'enabled' in layer.get('multimodal', {}))
    raise ConfigError(
        f'{path}: multimodal embeddings need provider {_MULTIMODAL_PROVIDER!r} with model {_MULTIMODAL_MODEL!r} and '
        f"fallback 'none'; got provider {config.provider!r}, model {config.model!r}, fallback {config.fallback!r}",
        key_path=path,
    )


# ---------------------------------------------------------------- entry points


def _json5_error(file: str, exc: ValueError) -> ConfigError:
    match = re.match(r'^<string>:(\d+) (.*) at column (\d+)$', str(exc))
    where = f' at line {match[1]}, column {match[3]}' if match else ''
    detail = match[2] if match else str(exc)
    return ConfigError(f'{file}: invalid JSON5{where}: {detail}', file=file)


def _read_file(file: str) -> Any:
    try:
        size = os.stat(file).st_size
        if size > MAX_CONFIG_BYTES:
            raise ConfigError(
                f'{file}: the config file is {size} bytes, more than the {MAX_CONFIG_BYTES} a config '
                'may have; point --config at the OpenClaw config (openclaw.json)',
                file=file,
            )
        data = Path(file).read_bytes()
    except FileNotFoundError:
        raise ConfigError(
            f'{file}: config file not found; check the path, create the file (OpenClaw JSON5 such as '
            '{agents: {defaults: {memorySearch: {}}}}), or pass a dict or None to use the defaults',
            file=file,
        ) from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL or an unencodable character in the path
        raise ConfigError(
            f'{preview(file)}: cannot read config file: {getattr(exc, "strerror", None) or exc}', file=file
        ) from None
    try:
        text = data.decode('utf-8-sig')
    except UnicodeDecodeError as exc:
        message = f'{file}: not valid UTF-8 (bad byte at offset {exc.start}); save the file as UTF-8'
        raise ConfigError(message, file=file) from None
    try:
        return json.loads(text)  # most configs are plain JSON, which the C parser reads 100x faster than json5
    except ValueError:
        pass
    except RecursionError:
        raise ConfigError(f'{file}: the config is nested too deeply', file=file) from None
    try:
        return json5.loads(text)
    except ValueError as exc:
        raise _json5_error(file, exc) from None
    except RecursionError:
        raise ConfigError(f'{file}: the config is nested too deeply', file=file) from None


def _from_root(root: Any, agent_id: str, source_path: str | None) -> MemoryConfig:
    if not isinstance(root, Mapping):
        raise _invalid('(root)', root, 'an object')
    layers = [(path, _check(_SCHEMA, raw, path)) for path, raw in _layers(root, agent_id)]
    config = _resolve(
        _merge_layers([layer for _, layer in layers]),
        agent_id=agent_id,
        workspace=_workspace(root, agent_id),
        citations=_citations(root),
        source_path=source_path,
    )
    _check_multimodal(config, layers)
    return dataclasses.replace(config, model_providers=_model_providers(root), session_tools=_session_tools(root))


def _model_providers(root: Mapping[str, Any]) -> dict[str, ModelProvider]:
    """``models.providers.<id>``: only the keys memory search uses are read (the rest configures chat models)."""
    models = root.get('models')
    raw = models.get('providers') if isinstance(models, Mapping) else None
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise _invalid('models.providers', raw, 'an object of provider entries')
    found = {}
    for provider_id, entry in raw.items():
        path = f'models.providers.{provider_id}'
        if not isinstance(entry, Mapping):
            raise _invalid(path, entry, 'an object')
        for key in ('api', 'baseUrl'):
            if entry.get(key) is not None and not isinstance(entry.get(key), str):
                raise _invalid(f'{path}.{key}', entry.get(key), 'a string')
        try:
            headers = _headers(entry.get('headers', {}))
            api_key = _secret(entry['apiKey']) if entry.get('apiKey') is not None else None
        except _Expected as exc:
            raise _invalid(f'{path}.headers/apiKey', '…', str(exc)) from None
        found[str(provider_id)] = ModelProvider(entry.get('api'), entry.get('baseUrl'), api_key, headers)
    return found


def load_config(
    path_or_dict: str | os.PathLike[str] | Mapping[str, Any] | None = None, agent_id: str = 'main'
) -> MemoryConfig:
    """Resolve the memory-search settings of ``agent_id`` from an OpenClaw config.

    ``path_or_dict`` is a path to an OpenClaw JSON5 file (comments and trailing commas allowed), the parsed config
    as a dict, or ``None`` for all defaults. Raises :class:`ConfigError` for unusable values or files; warns with
    :class:`ConfigWarning` about unknown keys.

    >>> load_config({'agents': {'defaults': {'memorySearch': {'query': {'maxResults': 3}}}}}).query.max_results
    3
    >>> load_config().chunking
    ChunkingConfig(tokens=400, overlap=80)
    """
    if not isinstance(agent_id, str) or not agent_id.strip():
        raise ConfigError(f'agent_id must be a non-empty string, not {agent_id!r}')
    if path_or_dict is None or isinstance(path_or_dict, Mapping):
        try:
            return _from_root(path_or_dict or {}, agent_id, None)
        except RecursionError:
            raise ConfigError('the config is nested too deeply') from None
    if not isinstance(path_or_dict, (str, os.PathLike)):
        raise ConfigError(
            f'load_config() takes a config file path, a config dict or None, not {type(path_or_dict).__name__}'
        )
    file = os.fspath(path_or_dict)
    root = _read_file(file)
    try:
        return _from_root(root, agent_id, file)
    except RecursionError:
        raise ConfigError(f'{file}: the config is nested too deeply', file=file) from None
    except ConfigError as exc:
        raise ConfigError(f'{file}: {exc}', key_path=exc.key_path, file=file) from None
