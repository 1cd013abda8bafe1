"""GitHub Copilot embeddings (OpenClaw reference §8, ``github-copilot``).

A GitHub token (``remote.apiKey``, else ``COPILOT_GITHUB_TOKEN``, ``GH_TOKEN`` or ``GITHUB_TOKEN``) is exchanged
for a short-lived Copilot token (``GET`` :data:`TOKEN_URL`, ``Authorization: token <github token>``); that token
is reused until :data:`REFRESH_MARGIN_S` before its ``expires_at``, and exchanged again once when the API answers
401. The API base is ``remote.baseUrl`` if set, else the token's ``endpoints.api``, else
:data:`DEFAULT_API_BASE`; the exchange URL is the ``COPILOT_TOKEN_URL`` variable of the environment given to the
adapter if set (tests point it at a loopback server), else :data:`TOKEN_URL`.

``GET {base}/models`` lists what the account offers; the configured ``model`` must be among its embedding models,
else the first of :data:`PREFERRED_MODELS` on offer, else the first embedding model listed. ``POST
{base}/embeddings`` takes OpenAI's ``{model, input}``; its ``data[]`` must hold every index exactly once with a
non-empty list of finite numbers. ``outputDimensionality`` is not sent. Nothing is fetched until the first
``dims`` or embedding call; errors never contain either token.
"""

from __future__ import annotations

import math
import os
import re
import threading
import time
from collections.abc import Mapping
from typing import Any, ClassVar

from memsift._core import __version__
from memsift.config import MemoryConfig
from memsift.errors import ProviderError
from memsift.providers._http import EmbeddingHttp
from memsift.providers.base import RemoteEmbeddings

__all__ = ['DEFAULT_API_BASE', 'PREFERRED_MODELS', 'TOKEN_URL', 'CopilotEmbeddings']

TOKEN_URL = 'https://api.github.com/copilot_internal/v2/token'
DEFAULT_API_BASE = 'https://api.individual.githubcopilot.com'
PREFERRED_MODELS = ('text-embedding-3-small', 'text-embedding-3-large', 'text-embedding-ada-002')
REFRESH_MARGIN_S = 60.0
"""A Copilot token is exchanged again this long before its ``expires_at``."""
FALLBACK_TTL_S = 20 * 60.0
"""How long a Copilot token without a usable ``expires_at`` is trusted (a 401 still refreshes it)."""
GET_TIMEOUT_S = 30.0
_EMBEDDING_ID = re.compile(r'\bembedding', re.I)


def ide_headers() -> dict[str, str]:
    """The editor headers the Copilot API expects from an IDE integration."""
    agent = f'memsift/{__version__}'
    return {
        'Editor-Version': agent,
        'Editor-Plugin-Version': agent,
        'Copilot-Integration-Id': 'vscode-chat',
        'User-Agent': agent,
    }


def embedding_models(answer: Any) -> list[str]:
    """Ids of the embedding models in a ``/models`` answer (``{data: [...]}`` or a bare list), in order."""
    entries = answer.get('data') if isinstance(answer, dict) else answer
    found = []
    for entry in entries if isinstance(entries, list) else []:
        model_id = entry.get('id') if isinstance(entry, dict) else None
        if not isinstance(model_id, str) or not model_id:
            continue
        endpoints = entry.get('supported_endpoints')
        by_endpoint = isinstance(endpoints, list) and any(isinstance(e, str) and 'embeddings' in e for e in endpoints)
        if (by_endpoint or _EMBEDDING_ID.search(model_id)) and model_id not in found:
            found.append(model_id)
    return found


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


class CopilotEmbeddings(RemoteEmbeddings):
    id = 'github-copilot'
    default_base_url = DEFAULT_API_BASE
    default_model = PREFERRED_MODELS[0]  # shown until discovery confirms or replaces it
    env_keys: ClassVar[tuple[str, ...]] = ('COPILOT_GITHUB_TOKEN', 'GH_TOKEN', 'GITHUB_TOKEN')
    known_dims: ClassVar[Mapping[str, int]] = {
        'text-embedding-3-small': 1536,
        'text-embedding-3-large': 3072,
        'text-embedding-ada-002': 1536,
    }

    def __init__(self, config: MemoryConfig, env: Mapping[str, str] | None = None) -> None:
        env = os.environ if env is None else env
        super().__init__(config, env)  # self.http checks remote.baseUrl; it is rebuilt once a token is known
        self.token_url = env.get('COPILOT_TOKEN_URL') or TOKEN_URL
        self._dims = None  # learnt only once the model is known
        self._lock = threading.Lock()
        self._token: str | None = None
        self._expires = 0.0
        self._secrets = {self.api_key}
        self._retired: list[EmbeddingHttp] = []
        self._chosen: str | None = None

    def auth_headers(self, key: str) -> dict[str, str]:
        return {}  # the GitHub token only goes to the token exchange, never to the Copilot API

    # ------------------------------------------------------------ token, API base and model

    def redact(self, text: str) -> str:
        for secret in self._secrets:
            if secret and len(secret) >= 4:
                text = text.replace(secret, '***')
        return text

    def _fail(self, message: str) -> ProviderError:
        return ProviderError(self.redact(f'{self.id} embeddings failed: {message}'))

    def _get(self, url: str, headers: Mapping[str, str], what: str) -> Any:
        """GET ``url`` for JSON; any failure is a :class:`ProviderError` naming ``what`` and the status."""
        import httpx

        try:
            response = httpx.get(url, headers=dict(headers), timeout=GET_TIMEOUT_S, follow_redirects=False)
        except httpx.TimeoutException as exc:
            raise self._fail(f'{what}: no answer within {GET_TIMEOUT_S:g} s') from exc
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            raise self._fail(f'{what}: {type(exc).__name__}: {exc}') from exc
        if 300 <= response.status_code < 400:
            raise self._fail(f'{what}: {response.status_code} redirect refused')
        if not response.is_success:
            hint = ' (does this GitHub token have Copilot access?)' if response.status_code in (401, 403) else ''
            raise self._fail(f'{what}: {response.status_code} {response.text[:200]}{hint}')
        try:
            return response.json()
        except ValueError as exc:
            raise self._fail(f'{what}: {response.status_code} with a body that is not JSON') from exc

    def _exchange(self) -> None:
        """Get a fresh Copilot token and point ``self.http`` at the API base with it."""
        answer = self._get(
            self.token_url,
            {'Authorization': f'token {self.api_key}', 'Accept': 'application/json', **ide_headers()},
            'token exchange',
        )
        token = answer.get('token') if isinstance(answer, dict) else None
        if not isinstance(token, str) or not token:
            raise self._fail('token exchange: the answer has no token')
        self._secrets.add(token)
        expires_at = answer.get('expires_at')
        if isinstance(expires_at, str) and expires_at.strip().isdigit():
            expires_at = int(expires_at)
        self._expires = expires_at - REFRESH_MARGIN_S if _is_number(expires_at) else time.time() + FALLBACK_TTL_S
        endpoints = answer.get('endpoints')
        api = endpoints.get('api') if isinstance(endpoints, dict) else None
        base = self.config.remote.base_url or (api if isinstance(api, str) and api else DEFAULT_API_BASE)
        headers = {
            'Content-Type': 'application/json',
            **ide_headers(),
            'Authorization': f'Bearer {token}',
            **self.config.remote.headers,
        }
        http = EmbeddingHttp(self.id, base, headers, self._secrets)
        # Another thread may still be using the previous client: it is closed at the next exchange, or on close().
        for old in self._retired:
            old.close()
        self._retired = [self.http]
        self.http, self._token = http, token

    def _choose_model(self) -> str:
        headers = {
            'Authorization': f'Bearer {self._token}',
            'Accept': 'application/json',
            **ide_headers(),
            **self.config.remote.headers,
        }
        offered = embedding_models(self._get(self.http.url('models'), headers, 'model discovery'))
        wanted = self.config.model
        if wanted:
            if wanted not in offered:
                raise self._fail(
                    f'model {wanted!r} is not offered to this account; embedding models offered: '
                    f'{", ".join(offered) or "none"}'
                )
            return wanted
        model = next((m for m in PREFERRED_MODELS if m in offered), offered[0] if offered else None)
        if model is None:
            raise self._fail('this account is offered no embedding model (GET /models lists none)')
        return model

    def _session(self, stale: EmbeddingHttp | None = None) -> tuple[EmbeddingHttp, str]:
        """The client and model to use; a new token when the cached one is (nearly) expired, or when ``stale``
        is still the current client (it just got a 401)."""
        with self._lock:
            if self._token is None or time.time() >= self._expires or stale is self.http:
                self._exchange()
            if self._chosen is None:
                self._chosen = self.model = self._choose_model()
            return self.http, self._chosen

    # ------------------------------------------------------------ embeddings

    @property
    def dims(self) -> int:
        """Known for the chosen model, else learnt from one probe; discovery (network) comes first, so the index
        identity names the real model and API base."""
        if self._dims is None:
            _, model = self._session()
            self._dims = self.known_dims.get(model) or len(self.embed_query('dimension probe'))
        return self._dims

    def embed(self, texts: list[str], kind: str, timeout: float) -> list[list[float]]:
        http, model = self._session()
        body = {'model': model, 'input': texts}
        try:
            answer = http.post('embeddings', body, timeout=timeout)
        except ProviderError as exc:
            if not str(exc).startswith(f'{self.id} embeddings failed: 401 '):
                raise
            http, model = self._session(stale=http)  # the token was revoked or expired early: one new exchange
            answer = http.post('embeddings', body, timeout=timeout)
        return self.parse(answer, len(texts))

    def parse(self, answer: Any, count: int) -> list[list[float]]:
        """``data[]`` of an answer to ``count`` inputs, in index order; anything missing or malformed is an error."""
        data = answer.get('data') if isinstance(answer, dict) else None
        if not isinstance(data, list):
            raise self._fail('the answer has no data list')
        vectors: list[list[float] | None] = [None] * count
        for position, item in enumerate(data):
            index = item.get('index') if isinstance(item, dict) else None
            if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < count:
                raise self._fail(f'data[{position}] has index {index!r}, expected 0..{count - 1}')
            if vectors[index] is not None:
                raise self._fail(f'index {index} appears more than once in data[]')
            embedding = item.get('embedding')
            if not isinstance(embedding, list) or not embedding or not all(_is_number(x) for x in embedding):
                raise self._fail(f'the embedding for index {index} is not a non-empty list of finite numbers')
            vectors[index] = [float(x) for x in embedding]
        missing = [i for i, v in enumerate(vectors) if v is None]
        if missing:
            raise self._fail(f'no embedding for index {", ".join(map(str, missing[:10]))} of {count} inputs')
        return [v for v in vectors if v is not None]

    def close(self) -> None:
        for old in self._retired:
            old.close()
        self._retired = []
        super().close()
