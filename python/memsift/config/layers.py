"""Reading an OpenClaw config and resolving one agent's settings: the file, the layers, the merge, :func:`load_config`.

The file is read with a size cap, as JSON first and JSON5 when that fails. The ``memorySearch`` layers (lowest
precedence first: ``agents.defaults``, the agent's ``agents.list[]`` entry; or ``memory.search`` and
``agents.entries.<id>.memory.search``) are each validated against :data:`~memsift.config.model.SEARCH_SCHEMA`,
deep-merged and built into a :class:`~memsift.config.model.MemoryConfig`.
"""

from __future__ import annotations

import json
import os
import re
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from memsift._record import replace
from memsift._text import preview
from memsift.config.keys import build, concatenated, is_set, key_path, read
from memsift.config.model import SEARCH_SCHEMA, MemoryConfig, ModelProvider, SessionToolsConfig
from memsift.config.profiles import MEMSIFT_SETTINGS, Profile, accepted_keys, profile_of
from memsift.config.schema import _check, _invalid, _section, _string
from memsift.errors import ConfigError, ConfigWarning

__all__ = [
    'MAX_CONFIG_BYTES',
    'agent_ids',
    'choose_agent',
    'declares_agents',
    'load_config',
    'openclaw_config_path',
    'openclaw_state_dir',
    'read_config',
    'state_workspace',
]

MAX_CONFIG_BYTES = 4 * 1024 * 1024
"""A config file larger than this is refused at once (OpenClaw configs are kilobytes; JSON5 parsing is slow)."""
_MULTIMODAL_PROVIDER, _MULTIMODAL_MODEL = 'gemini', 'gemini-embedding-2-preview'
_MULTIMODAL_ENABLED = key_path(MemoryConfig, 'multimodal.enabled')
_CONCATENATED = concatenated(MemoryConfig)


# ---------------------------------------------------------------- where OpenClaw keeps its setup


def openclaw_state_dir() -> Path:
    """``OPENCLAW_STATE_DIR``, else ``~/.openclaw``."""
    return Path(os.environ.get('OPENCLAW_STATE_DIR') or '~/.openclaw').expanduser()


def openclaw_config_path() -> Path:
    """``OPENCLAW_CONFIG_PATH``, else ``openclaw.json`` in the state folder."""
    configured = os.environ.get('OPENCLAW_CONFIG_PATH')
    return Path(configured).expanduser() if configured else openclaw_state_dir() / 'openclaw.json'


# ---------------------------------------------------------------- locating the layers


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


def agent_ids(root: Mapping[str, Any]) -> tuple[list[str], str | None]:
    """The agents a parsed config declares and its default one (``None``: several and no default, where OpenClaw
    asks which). 1.x: ``agents.list[]`` (its ``default: true`` entry, else the first); 2.x: ``agents.entries``
    (the one ``default: true`` entry unless ``agents.ownership`` is ``explicit``, else a sole entry). No agents:
    OpenClaw's implicit ``main``."""
    agents = _section(root, '', 'agents')
    listed = agents.get('list') or []
    if not isinstance(listed, (list, tuple)):
        raise _invalid('agents.list', listed, 'a list of agent objects')
    entries = _section(agents, 'agents', 'entries')
    declared = [(e['id'], e) for e in listed if isinstance(e, Mapping) and isinstance(e.get('id'), str)]
    if profile_of(root).agents_key == 'list':
        ids = [agent_id for agent_id, _ in declared] or ['main']
        return ids, next((i for i, e in declared if e.get('default') is True), ids[0])
    declared += [(str(agent_id), e) for agent_id, e in entries.items() if isinstance(e, Mapping)]
    ids = list(dict.fromkeys(agent_id for agent_id, _ in declared)) or ['main']
    marked = [i for i, e in declared if e.get('default') is True]
    if len(marked) == 1 and agents.get('ownership') != 'explicit':
        return ids, marked[0]
    return ids, ids[0] if len(ids) == 1 else None


def state_workspace(root: Mapping[str, Any], agent_id: str) -> Path:
    """Where OpenClaw keeps an agent's workspace when the config names none: ``<state>/workspace`` for the default
    (or sole) agent, ``<state>/workspace-<agentId>`` for the others."""
    ids, default_id = agent_ids(root)
    owner = agent_id == default_id or (default_id is None and len(ids) == 1)
    return openclaw_state_dir() / ('workspace' if owner else f'workspace-{agent_id}')


def declares_agents(root: Mapping[str, Any]) -> bool:
    """Whether a parsed config names its agents: a 2.x config always does (none listed: the implicit ``main``), a
    1.x config with an ``agents.list``."""
    agents = root.get('agents')
    listed = agents.get('list') if isinstance(agents, Mapping) else None
    return profile_of(root).agents_key == 'entries' or bool(listed)


def choose_agent(root: Mapping[str, Any], agent_id: str | None, file: str | None = None) -> str:
    """``agent_id`` if the config declares it, else the config's default agent.

    Raises:
        ConfigError: an agent the config does not declare, or several agents and none named (OpenClaw's words).
    """
    ids, default = agent_ids(root)
    where = f'{file}: ' if file else ''
    if agent_id is None:
        if default is None:
            raise ConfigError(
                f'{where}Multiple agents are configured, but this operation has no explicit owner. Select an '
                f'agent explicitly: pass --agent <id> (agents: {", ".join(ids)})',
                file=file,
            )
        return default
    if agent_id not in ids and agent_id.lower() not in ids:
        raise ConfigError(
            f'{where}Unknown agent id {agent_id!r}: the config declares {", ".join(ids)} '
            f'(in {"agents.entries" if profile_of(root).agents_key == "entries" else "agents.list"})',
            file=file,
        )
    return agent_id if agent_id in ids else agent_id.lower()


def _layers(root: Mapping[str, Any], agent_id: str, profile: Profile) -> list[tuple[str, Any]]:
    """The raw memory-search objects to merge, lowest precedence first, each with its key path.

    1.x: ``agents.defaults.memorySearch``, then the agent's ``agents.list[]`` entry's. 2.x: memsift's own settings
    (``plugins.entries.memsift.config``), then ``memory.search`` and ``agents.entries.<id>.memory.search`` with only
    the keys 2.x takes; a legacy ``memorySearch`` beside them fills what they leave unset, as ``openclaw doctor
    --fix`` merges it."""
    defaults, listed, (entry_path, entry) = _agent_scopes(root, agent_id)
    scopes = [('', root), defaults, listed, (entry_path, entry)]  # a top-level memorySearch (oldest) lowest
    classic = _present(
        [(_join(path, 'memorySearch'), scope.get('memorySearch')) for path, scope in filter(None, scopes)]
    )
    if profile.accepts is None:
        return classic
    memories = [
        ('memory', _section(root, '', 'memory')),
        (f'{entry_path}.memory', _section(entry, entry_path, 'memory')),
    ]
    newer = _present([(f'{path}.search', memory.get('search')) for path, memory in memories])
    if classic:
        names = ', '.join(path for path, _ in classic)
        warnings.warn(
            f'{names}: the OpenClaw 1.x form; memory.search wins key by key and these fill only what it leaves '
            'unset (run `openclaw doctor --fix` to move them)',
            ConfigWarning,
            stacklevel=3,
        )
    own = _memsift_settings(root)
    if any(isinstance(raw, Mapping) and 'extraPaths' in raw for _, raw in newer):
        # doctor's merge fills only missing keys: a list memory.search sets keeps its value, the legacy one is dropped
        classic = [
            (path, {k: v for k, v in raw.items() if k != 'extraPaths'} if isinstance(raw, Mapping) else raw)
            for path, raw in classic
        ]
    filtered = [(path, accepted_keys(raw, profile.accepts, path, SEARCH_SCHEMA)) for path, raw in [*classic, *newer]]
    return [*own, *filtered]


def _join(path: str, key: str) -> str:
    return f'{path}.{key}' if path else key


_PLUGIN_KEYS = ('command', 'args', 'deadlineMs', 'env')
"""Keys of memsift's plugin entry that its OpenClaw plugin reads (how to start memsift), not search settings."""


def _memsift_settings(root: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """memsift's plugin entry config (a 2.x config's home for memsift's own settings), if set."""
    node: Any = root
    for part in MEMSIFT_SETTINGS.split('.'):
        node = node.get(part) if isinstance(node, Mapping) else None
    if isinstance(node, Mapping):
        node = {key: value for key, value in node.items() if key not in _PLUGIN_KEYS}
    return [] if node is None else [(MEMSIFT_SETTINGS, node)]


def _personal_install(root: Mapping[str, Any]) -> bool:
    """OpenClaw 2.x's default of ``rememberAcrossConversations``: on for a personal install, where direct chats
    share the main session (``session.dmScope`` unset or ``main``, and no binding sets its own)."""
    session = root.get('session')
    scope = session.get('dmScope') if isinstance(session, Mapping) else None
    bindings = root.get('bindings')
    own_scopes = any(
        isinstance(b, Mapping) and isinstance(b.get('session'), Mapping) and b['session'].get('dmScope') is not None
        for b in (bindings if isinstance(bindings, list) else [])
    )
    return scope in (None, 'main') and not own_scopes


def _present(layers: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    return [(path, raw) for path, raw in layers if raw is not None]


def _workspace(root: Mapping[str, Any], agent_id: str) -> str | None:
    """The agent's own ``workspace``, else ``agents.defaults.workspace``: in 2.x only for the default agent, the
    others getting a folder named after them inside it (OpenClaw's ``resolveAgentWorkspaceDir``)."""
    defaults, listed, entry = _agent_scopes(root, agent_id)
    for path, scope in filter(None, [listed, entry, defaults]):
        if scope.get('workspace') is not None:
            folder = os.path.expanduser(_check(_string(), scope['workspace'], f'{path}.workspace'))
            shared = path == 'agents.defaults' and profile_of(root).agents_key == 'entries'
            return os.path.join(folder, agent_id) if shared and agent_ids(root)[1] != agent_id else folder
    return None


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
        found[str(provider_id)] = ModelProvider(**read(ModelProvider, entry, path))
    return found


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
    for key in _CONCATENATED:  # extraPaths add up across layers
        merged[key] = tuple(dict.fromkeys(item for layer in layers for item in layer.get(key, ())))
    return merged


def _check_multimodal(config: MemoryConfig, layers: list[tuple[str, Mapping[str, Any]]]) -> None:
    if not config.multimodal.enabled:
        return
    if (config.provider, config.model, config.fallback) == (_MULTIMODAL_PROVIDER, _MULTIMODAL_MODEL, 'none'):
        return
    path = next(f'{p}.{_MULTIMODAL_ENABLED}' for p, layer in reversed(layers) if is_set(layer, _MULTIMODAL_ENABLED))
    raise ConfigError(
        f'{path}: multimodal embeddings need provider {_MULTIMODAL_PROVIDER!r} with model {_MULTIMODAL_MODEL!r} and '
        f"fallback 'none'; got provider {config.provider!r}, model {config.model!r}, fallback {config.fallback!r}",
        key_path=path,
    )


# ---------------------------------------------------------------- the file


def _json5_error(file: str, exc: ValueError) -> ConfigError:
    match = re.match(r'^<string>:(\d+) (.*) at column (\d+)$', str(exc))
    where = f' at line {match[1]}, column {match[3]}' if match else ''
    detail = match[2] if match else str(exc)
    return ConfigError(f'{file}: invalid JSON5{where}: {detail}', file=file)


def read_config(file: str | os.PathLike[str]) -> Any:
    """The parsed config file (JSON, else JSON5), size-capped; errors name the file and the fix."""
    return _read_file(os.fspath(file))


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
    import json5  # only for a file the C parser refused (~5 ms to import)

    try:
        return json5.loads(text)
    except ValueError as exc:
        raise _json5_error(file, exc) from None
    except RecursionError:
        raise ConfigError(f'{file}: the config is nested too deeply', file=file) from None


# ---------------------------------------------------------------- entry points


def _from_root(root: Any, agent_id: str, source_path: str | None) -> MemoryConfig:
    if not isinstance(root, Mapping):
        raise _invalid('(root)', root, 'an object')
    profile = profile_of(root)
    layers = [(path, _check(SEARCH_SCHEMA, raw, path)) for path, raw in _layers(root, agent_id, profile)]
    merged = _merge_layers([profile.fixed, *(layer for _, layer in layers)])
    if profile.name == 'openclaw-2' and 'rememberAcrossConversations' not in merged:
        merged['rememberAcrossConversations'] = _personal_install(root)
    workspace = _workspace(root, agent_id)
    direct = read(MemoryConfig, root)  # memory.citations
    config = build(
        MemoryConfig, merged, agent_id=agent_id, workspace=workspace, source_path=source_path, profile=profile, **direct
    )
    _check_multimodal(config, layers)
    providers = _model_providers(root)
    session_tools = SessionToolsConfig(**read(SessionToolsConfig, root))
    return replace(config, model_providers=providers, session_tools=session_tools)


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
