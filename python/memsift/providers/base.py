"""The shared shape of a remote embedding adapter: config, key lookup, timeouts, batching and concurrency.

Each adapter module says only what differs: endpoint, body, response and defaults.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from memsift.config import MemoryConfig
from memsift.errors import ProviderError
from memsift.providers._http import EmbeddingHttp, batches, map_concurrently
from memsift.providers.batch import FAILURE_LIMIT, BatchUnavailable

__all__ = ['MissingApiKey', 'RemoteEmbeddings']

QUERY_TIMEOUT_S = 60.0
BATCH_TIMEOUT_S = 120.0
LOCAL_SERVER_TIMEOUT_S = 600.0


class MissingApiKey(ProviderError):
    """No API key for a provider that needs one (``auto`` moves on to the next provider)."""


def _resolve_secret(value: str | Mapping[str, Any] | None, env: Mapping[str, str]) -> str | None:
    """A config secret: a string, or an OpenClaw SecretInput ``{source: "env", id: NAME}``."""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping) and value.get('source', 'env') == 'env' and isinstance(value.get('id'), str):
        return env.get(value['id'])
    return None


class RemoteEmbeddings:
    """Base of the HTTP adapters (an :class:`~memsift.embedding.EmbeddingProvider`)."""

    id: ClassVar[str]
    default_base_url: ClassVar[str]
    default_model: ClassVar[str]
    env_keys: ClassVar[tuple[str, ...]] = ()
    key_required: ClassVar[bool] = True
    known_dims: ClassVar[Mapping[str, int]] = {}
    local_server: ClassVar[bool] = False
    """Servers on the user's machine (Ollama, LM Studio) get 600 s batch timeouts, as in OpenClaw."""
    has_batch_api: ClassVar[bool] = False
    """The provider offers a batch API (:meth:`batch_embed`), used for chunks when ``remote.batch.enabled``."""
    batch_failures = 0
    batch_error: str | None = None

    def __init__(self, config: MemoryConfig, env: Mapping[str, str] | None = None) -> None:
        env = os.environ if env is None else env
        self.config = config
        self.model = config.model or self.default_model
        key = _resolve_secret(config.remote.api_key, env)
        if key is None:
            key = next((env[name] for name in self.env_keys if env.get(name)), None)
        if key is None and self.key_required:
            names = ' or '.join(self.env_keys) or 'remote.apiKey'
            raise MissingApiKey(f'No API key found for provider {self.id}: set remote.apiKey or {names}')
        self.api_key = key or ''
        # No client-wide Content-Type: httpx sets it per request (JSON bodies, and multipart batch-file uploads).
        headers = {**self.auth_headers(self.api_key), **config.remote.headers}
        self.http = EmbeddingHttp(self.id, config.remote.base_url or self.default_base_url, headers, [self.api_key])
        self.query_timeout = LOCAL_SERVER_TIMEOUT_S if self.local_server else QUERY_TIMEOUT_S
        configured = config.sync.embedding_batch_timeout_seconds
        self.batch_timeout = float(configured or (LOCAL_SERVER_TIMEOUT_S if self.local_server else BATCH_TIMEOUT_S))
        self.concurrency = max(1, config.remote.non_batch_concurrency)
        self._dims = config.output_dimensionality or self.known_dims.get(self.model)

    def auth_headers(self, key: str) -> dict[str, str]:
        """``Authorization: Bearer <key>``; an empty key sends no secret."""
        return {'Authorization': f'Bearer {key}'} if key else {}

    @property
    def dims(self) -> int:
        """Vector dimension: configured, known for the model, or learnt from one probe request."""
        if self._dims is None:
            self._dims = len(self.embed_query('dimension probe'))
        return self._dims

    def embed_query(self, text: str) -> list[float]:
        return self.embed([text], 'query', self.query_timeout)[0]

    def embed_documents(self, texts: Sequence[Any]) -> list[list[float]]:
        """Chunks: through the batch API when enabled (until it fails twice), else concurrent inline requests."""
        texts = list(texts)
        if self.has_batch_api and self.config.remote.batch.enabled and self.batch_failures < FAILURE_LIMIT and texts:
            try:
                return self.vectors(self.batch_embed(texts), len(texts), 'the batch output')
            except ProviderError as exc:
                self.batch_failures = FAILURE_LIMIT if isinstance(exc, BatchUnavailable) else self.batch_failures + 1
                self.batch_error = str(exc)
        done = map_concurrently(
            self._embed_split, [[texts[i] for i in group] for group in batches(texts)], self.concurrency
        )
        return [vector for group in done for vector in group]

    def _embed_split(self, texts: list[Any]) -> list[list[float]]:
        """One request; if the connection keeps breaking after retries, the halves are sent separately."""
        try:
            return self.embed(texts, 'document', self.batch_timeout)
        except ProviderError as exc:
            if not exc.transport or len(texts) < 2:
                raise
            half = len(texts) // 2
            return self._embed_split(texts[:half]) + self._embed_split(texts[half:])

    def batch_embed(self, texts: list[Any]) -> list[list[float]]:
        """Chunks through the provider's batch API (see :mod:`memsift.providers.batch`)."""
        raise NotImplementedError

    def embed(self, texts: list[Any], kind: str, timeout: float) -> list[list[float]]:
        """One request for ``texts`` (strings; media inputs for a multimodal adapter); ``kind`` is ``query`` or
        ``document``."""
        raise NotImplementedError

    def vectors(self, rows: Any, count: int, where: str) -> list[list[float]]:
        """Check a decoded list of vectors: a list of ``count`` lists of numbers."""
        if not isinstance(rows, list) or len(rows) != count or not all(isinstance(r, list) for r in rows):
            got = len(rows) if isinstance(rows, list) else type(rows).__name__
            raise ProviderError(f'{self.id} embeddings failed: expected {count} vectors in {where}, got {got}')
        return rows

    def close(self) -> None:
        self.http.close()

    def __repr__(self) -> str:
        return f'{type(self).__name__}(model={self.model!r}, base_url={self.http.base_url!r})'
