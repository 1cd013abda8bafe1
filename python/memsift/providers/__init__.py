"""Embedding provider adapters and OpenClaw's provider resolution (reference §8.2).

>>> from memsift import load_config
>>> resolve_provider(load_config({'agents': {'defaults': {'memorySearch': {'provider': 'none'}}}})).provider is None
True
>>> {'openai', 'gemini', 'ollama'} <= set(ADAPTERS)
True
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memsift._record import record, replace
from memsift.config import MemoryConfig
from memsift.embedding import EmbeddingProvider
from memsift.errors import ProviderError
from memsift.providers.base import MissingApiKey, RemoteEmbeddings

if TYPE_CHECKING:
    from memsift.providers.local import LocalEmbeddings

__all__ = [
    'ADAPTERS',
    'AUTO_ORDER',
    'SILENT',
    'LocalEmbeddings',
    'MissingApiKey',
    'ProviderResolution',
    'create_provider',
    'fall_back',
    'resolve_provider',
]


class _Adapters(dict[str, 'type[RemoteEmbeddings] | str']):
    """Provider id -> adapter class. An adapter's module loads on first lookup (``module:Class`` until then), so
    resolving ``auto`` without keys, or ``none``, imports no adapter it does not try."""

    def __getitem__(self, provider_id: str) -> type[RemoteEmbeddings]:
        adapter = super().__getitem__(provider_id)
        if isinstance(adapter, str):
            module, _, name = adapter.partition(':')
            adapter = getattr(importlib.import_module(module), name)
            super().__setitem__(provider_id, adapter)
        return adapter

    def get(self, provider_id: str, default: Any = None) -> Any:
        try:
            return self[provider_id]
        except KeyError:
            return default

    def values(self) -> list[type[RemoteEmbeddings]]:  # type: ignore[override]
        return [self[provider_id] for provider_id in self]

    def items(self) -> list[tuple[str, type[RemoteEmbeddings]]]:  # type: ignore[override]
        return [(provider_id, self[provider_id]) for provider_id in self]


ADAPTERS = _Adapters(
    {
        'openai': 'memsift.providers.openai:OpenAIEmbeddings',
        'openai-compatible': 'memsift.providers.openai:OpenAICompatibleEmbeddings',
        'gemini': 'memsift.providers.gemini:GeminiEmbeddings',
        'voyage': 'memsift.providers.voyage:VoyageEmbeddings',
        'mistral': 'memsift.providers.openai:MistralEmbeddings',
        'deepinfra': 'memsift.providers.openai:DeepInfraEmbeddings',
        'ollama': 'memsift.providers.ollama:OllamaEmbeddings',
        'lmstudio': 'memsift.providers.openai:LmStudioEmbeddings',
        'github-copilot': 'memsift.providers.copilot:CopilotEmbeddings',
        'bedrock': 'memsift.providers.bedrock:BedrockEmbeddings',
    }
)
"""Provider id -> adapter class."""

AUTO_ORDER = ('local', 'openai', 'gemini', 'voyage', 'mistral')
"""What ``provider: "auto"`` tries, in order; a provider without a key is skipped."""


@record(frozen=False, slots=False)
class ProviderResolution:
    """The provider a config resolves to, or why there is none.

    ``reason`` explains a silent keyword-only mode (``none``, ``auto`` with nothing available, ``local``);
    ``error`` is set when an explicitly configured provider is unavailable, which searches report instead of
    answering keyword-only.
    """

    provider: EmbeddingProvider | None
    requested: str
    reason: str | None = None
    error: str | None = None
    fallback_from: str | None = None
    fallback_reason: str | None = None

    def fallback_report(self) -> dict[str, str] | None:
        """``{'from': ..., 'reason': ...}`` after a switch to the fallback provider (as results and status show
        it), else ``None``."""
        if self.fallback_from is None:
            return None
        return {'from': self.fallback_from, 'reason': self.fallback_reason or ''}


API_ALIASES = {'openai-completions': 'openai-compatible', 'openai-responses': 'openai-compatible'}
"""OpenClaw model-provider ``api`` names that mean an OpenAI-style embeddings endpoint."""

SILENT = frozenset({'auto', 'local'})
"""Requested providers that degrade to keyword-only search silently (with the reason in debug and status)."""


def create_provider(
    provider_id: str, config: MemoryConfig, env: Mapping[str, str] | None = None
) -> RemoteEmbeddings | LocalEmbeddings:
    """Build the adapter ``provider_id`` from ``config`` (``remote.*``, ``model``, keys from config or ``env``)."""
    if provider_id == 'local':
        from memsift.providers.local import LocalEmbeddings

        return LocalEmbeddings(config)
    entry = config.model_providers.get(provider_id)
    if entry is not None:
        # models.providers.<id>: endpoint defaults under memorySearch.remote (remote.* wins, headers merge), and
        # for a custom id the adapter its `api` names.
        remote = replace(
            config.remote,
            base_url=config.remote.base_url or entry.base_url,
            api_key=config.remote.api_key if config.remote.api_key is not None else entry.api_key,
            headers={**entry.headers, **config.remote.headers},
        )
        config = replace(config, remote=remote)
        api = API_ALIASES.get(entry.api or '', entry.api)
        if provider_id not in ADAPTERS and api is not None and api in ADAPTERS:
            provider_id = api
    adapter = ADAPTERS.get(provider_id)
    if adapter is None:
        known = ', '.join(sorted(ADAPTERS))
        raise ProviderError(f'embedding provider {provider_id!r} is not available in this memsift (known: {known})')
    return adapter(config, os.environ if env is None else env)


def resolve_provider(config: MemoryConfig, env: Mapping[str, str] | None = None) -> ProviderResolution:
    """OpenClaw's resolution: ``none`` -> keyword-only; ``auto`` -> the first of :data:`AUTO_ORDER` that has a key,
    else keyword-only; an explicit provider that cannot be created -> its ``fallback`` if one is set, else an
    error that searches report."""
    requested = config.provider or 'auto'
    if requested == 'none':
        return ProviderResolution(None, requested, reason='provider "none": keyword search only')
    if requested == 'local':
        try:
            from memsift.providers.local import LocalEmbeddings

            return ProviderResolution(LocalEmbeddings(config), requested)
        except Exception as exc:  # any local failure degrades silently (OpenClaw)
            return ProviderResolution(
                None, requested, reason=f'local embeddings unavailable ({exc}): keyword search only'
            )
    if requested == 'auto':
        reasons = []
        for provider_id in AUTO_ORDER:
            model_path = config.local.model_path
            if provider_id == 'local' and not (model_path and Path(model_path).expanduser().is_file()):
                reasons.append('local: no local.modelPath file')
                continue
            try:
                return ProviderResolution(create_provider(provider_id, config, env), requested)
            except Exception as exc:  # a missing key (or a broken local model) moves on to the next provider
                reasons.append(str(exc))
        return ProviderResolution(
            None, requested, reason='no embedding provider available (' + '; '.join(reasons) + '): keyword search only'
        )
    try:
        return ProviderResolution(create_provider(requested, config, env), requested)
    except ProviderError as exc:
        try:
            fallen_back = fall_back(config, requested, exc, env)
        except ProviderError as fallback_exc:
            return ProviderResolution(None, requested, error=f'{exc}; fallback {config.fallback!r}: {fallback_exc}')
        return fallen_back or ProviderResolution(None, requested, error=str(exc))


def fall_back(
    config: MemoryConfig, requested: str, error: ProviderError, env: Mapping[str, str] | None = None
) -> ProviderResolution | None:
    """OpenClaw's fallback rule, for a provider that cannot be created and for one failing at request time: an
    explicit provider hands over to ``fallback`` (with that provider's own default model: the configured one
    belongs to the primary). ``None`` when no other fallback is configured.

    Raises:
        ProviderError: the fallback provider cannot be created either.
    """
    fallback = config.fallback
    if not fallback or fallback in ('none', requested):
        return None
    provider = create_provider(fallback, replace(config, model=None), env)
    return ProviderResolution(provider, requested, fallback_from=requested, fallback_reason=str(error))


def __getattr__(name: str) -> Any:
    if name == 'LocalEmbeddings':  # the local model's module loads when asked for
        from memsift.providers.local import LocalEmbeddings

        return LocalEmbeddings
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
