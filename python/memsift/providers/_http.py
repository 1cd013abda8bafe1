"""HTTP plumbing shared by the remote embedding adapters: one host, retries, batching, concurrency, redaction.

OpenClaw's rules (reference §8, §8.1): only the configured base URL's host is ever contacted (no redirects);
429, 5xx and rate-limit messages are retried up to 3 times with 500 ms doubling delays (x 1-1.2 jitter, capped at
8 s; a ``Retry-After`` header is honoured); requests carry at most 8000 UTF-8 bytes of text; an error names the
provider and the HTTP status, and never contains the API key.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from memsift.errors import ProviderError

if TYPE_CHECKING:
    import httpx

__all__ = ['MAX_BATCH_BYTES', 'EmbeddingHttp', 'batches', 'map_concurrently']

MAX_BATCH_BYTES = 8000
"""OpenClaw's ``EMBEDDING_BATCH_MAX_TOKENS``, counted in UTF-8 bytes of input text per request."""
RETRIES = 3
BASE_DELAY_S = 0.5
MAX_DELAY_S = 8.0
MAX_RETRY_AFTER_S = 60.0
_RETRYABLE = re.compile(r'rate[_ ]limit|too many requests|resource has been exhausted|cloudflare|tokens per day', re.I)
"""OpenClaw's retryable messages; its ``429`` and ``5\\d\\d`` are matched on the status code instead, so digits in a
response body (an id, an echoed key) never cause retries."""
_sleep = time.sleep
"""Waits between retries (a module global so tests can record the pauses instead of sleeping)."""
T = TypeVar('T')
R = TypeVar('R')


def _size(item: object) -> int:
    """Request bytes an input costs: UTF-8 text, or a media input's label plus its base64 data."""
    if isinstance(item, str):
        return len(item.encode('utf-8'))
    data, label = getattr(item, 'data', b''), getattr(item, 'label', '')
    return len(label.encode('utf-8')) + (len(data) + 2) // 3 * 4


def batches(texts: Sequence[object], max_bytes: int = MAX_BATCH_BYTES) -> list[list[int]]:
    """Indices of ``texts`` grouped in order so each group holds at most ``max_bytes`` of UTF-8 (a larger input
    travels alone).

    >>> batches(['a' * 5000, 'b' * 2000, 'c' * 2000, 'd'])
    [[0, 1], [2, 3]]
    """
    groups: list[list[int]] = []
    size = 0
    for i, text in enumerate(texts):
        length = _size(text)
        if groups and size + length <= max_bytes:
            groups[-1].append(i)
            size += length
        else:
            groups.append([i])
            size = length
    return groups


def map_concurrently(fn: Callable[[T], R], items: Sequence[T], concurrency: int) -> list[R]:
    """``[fn(item) for item in items]`` with up to ``concurrency`` calls in flight; the first error is raised."""
    if concurrency <= 1 or len(items) <= 1:
        return [fn(item) for item in items]
    from concurrent.futures import ThreadPoolExecutor  # here: the pool and its imports only serve remote calls

    with ThreadPoolExecutor(max_workers=min(concurrency, len(items)), thread_name_prefix='memsift-embed') as pool:
        return list(pool.map(fn, items))


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get('retry-after')
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        import email.utils

        parsed = email.utils.parsedate_to_datetime(value) if value else None
        return None if parsed is None else max(0.0, parsed.timestamp() - time.time())


class EmbeddingHttp:
    """A JSON-over-HTTP client bound to one provider endpoint.

    Args:
        provider_id: Named in every error.
        base_url: Requests go to paths below it, and only to its host.
        headers: Sent with every request (auth included); their values never appear in errors.
        secrets: Further strings to scrub from error text (the API key).
    """

    def __init__(
        self,
        provider_id: str,
        base_url: str,
        headers: Mapping[str, str],
        secrets: Iterable[str] = (),
    ) -> None:
        import httpx  # loaded with the first remote provider, not with memsift

        self.provider_id = provider_id
        self.base_url = base_url.rstrip('/')
        try:
            self._host = httpx.URL(self.base_url).host
        except httpx.InvalidURL as exc:
            raise ProviderError(f'{provider_id}: remote.baseUrl {base_url!r} is not a valid URL') from exc
        if not self._host or not self.base_url.startswith(('http://', 'https://')):
            raise ProviderError(f'{provider_id}: remote.baseUrl {base_url!r} must be an http(s) URL')
        self._secrets = [s for s in (*secrets, *headers.values()) if s and len(s) >= 4]
        self._client = httpx.Client(headers=dict(headers), follow_redirects=False)

    def add_secrets(self, *secrets: str | None) -> None:
        """Further strings to scrub from errors (a signing secret, a session token)."""
        self._secrets.extend(s for s in secrets if s and len(s) >= 4 and s not in self._secrets)

    def on_request(self, hook: Callable[[httpx.Request], None]) -> None:
        """Run ``hook`` on every request just before it is sent, retries included (request signing)."""
        self._client.event_hooks = {'request': [hook], 'response': []}

    def redact(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, '***')
        return text

    def url(self, path: str) -> str:
        """``path`` below the base URL, or an absolute URL, which must be on the base URL's host."""
        import httpx

        url = path if path.startswith(('http://', 'https://')) else f'{self.base_url}/{path.lstrip("/")}'
        if httpx.URL(url).host != self._host:
            raise ProviderError(f'{self.provider_id}: refusing to contact {httpx.URL(url).host!r}, only {self._host!r}')
        return url

    def _fail(self, message: str) -> ProviderError:
        return ProviderError(self.redact(f'{self.provider_id} embeddings failed: {message}'))

    def send(
        self, method: str, path: str, *, timeout: float, deadline: float | None = None, **kwargs: Any
    ) -> httpx.Response:
        """One request (``kwargs`` as for httpx: ``json``, ``params``, ``files``, ``data``), retrying what OpenClaw
        retries; returns the successful response. ``deadline`` (a :func:`time.monotonic` instant) bounds the whole
        exchange, retries included: each attempt waits at most until then, and no retry starts past it."""
        import random

        import httpx

        url = self.url(path)
        delay = BASE_DELAY_S
        for attempt in range(RETRIES + 1):
            wait: float | None = None
            limit = timeout if deadline is None else min(timeout, deadline - time.monotonic())
            if limit <= 0:
                raise self._fail(f'no answer before the deadline ({attempt} attempts made)')
            try:
                response = self._client.request(method, url, timeout=limit, **kwargs)
            except httpx.TimeoutException as exc:
                raise self._fail(f'no answer within {limit:g} s ({type(exc).__name__})') from exc
            except httpx.TransportError as exc:
                error = self._fail(f'{type(exc).__name__}: {exc}')
                error.transport = True  # the connection broke (not an answer): a smaller request may get through
                retryable = True
            else:
                if response.is_success:
                    return response
                if 300 <= response.status_code < 400:
                    raise self._fail(
                        f'{response.status_code} redirect to {response.headers.get("location")!r} '
                        'refused (only the configured base URL is contacted)'
                    )
                message = f'{response.status_code} {response.text[:500]}'
                error = self._fail(message)
                error.status = response.status_code
                retryable = (
                    response.status_code == 429
                    or response.status_code >= 500
                    or bool(_RETRYABLE.search(response.text[:500]))
                )
                wait = _retry_after(response)
            if not retryable or attempt == RETRIES:
                raise error
            pause = min(MAX_DELAY_S, delay * (1 + random.random() * 0.2))
            if wait is not None:
                pause = max(pause, min(wait, MAX_RETRY_AFTER_S))
            if deadline is not None and time.monotonic() + pause >= deadline:
                raise error  # the retry could not even start in time
            _sleep(pause)
            delay *= 2
        raise AssertionError('unreachable')

    def json(self, response: httpx.Response) -> Any:
        try:
            return response.json()
        except ValueError as exc:
            raise self._fail(f'{response.status_code} with a body that is not JSON: {response.text[:200]!r}') from exc

    def post(
        self,
        path: str,
        body: Any,
        *,
        timeout: float,
        params: Mapping[str, str] | None = None,
        deadline: float | None = None,
    ) -> Any:
        """POST ``body`` as JSON and return the decoded JSON answer (``deadline`` as for :meth:`send`)."""
        return self.json(self.send('POST', path, timeout=timeout, deadline=deadline, json=body, params=params))

    def get(self, path: str, *, timeout: float) -> Any:
        """GET and decode JSON."""
        return self.json(self.send('GET', path, timeout=timeout))

    def close(self) -> None:
        self._client.close()
