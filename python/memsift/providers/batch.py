"""Provider batch APIs for indexing (``remote.batch.enabled``): OpenAI, Voyage and Gemini (OpenClaw reference §1.2,
§8, §8.1).

Each submits one batch of at most 50,000 requests, polls it every ``pollIntervalMs`` until it is done or
``timeoutMinutes`` pass (with ``wait: false`` a batch still running is a failure), fetches the output and matches its
lines back to the requests by id. The adapter counts each failure; after 2 it embeds inline for good, as OpenClaw
does, and a Gemini endpoint without the batch method (404) disables batching at once. Queries are always inline.

- OpenAI / Voyage: JSONL of ``{custom_id, method, url, body}`` uploaded to ``/files`` (purpose ``batch``), submitted
  to ``/batches`` (endpoint ``/v1/embeddings``, window ``24h`` / ``12h``), output from ``/files/{id}/content``.
- Gemini: JSONL of ``{key, request}`` (an ``EmbedContentRequest``) uploaded as ``multipart/related`` to
  ``/upload/v1beta/files``, submitted to ``models/{m}:asyncBatchEmbedContent``, polled at ``batches/{id}``, output
  from ``/download/v1beta/{responsesFile}:download?alt=media``.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from typing import Any

from memsift.config import BatchConfig
from memsift.errors import ProviderError
from memsift.providers._http import EmbeddingHttp, batches

__all__ = ['FAILURE_LIMIT', 'MAX_REQUESTS', 'BatchUnavailable', 'run_gemini_batch', 'run_openai_batch']

FAILURE_LIMIT = 2
MAX_REQUESTS = 50_000
_REQUEST_TIMEOUT_S = 120.0
_SUCCEEDED = {'completed', 'succeeded', 'done'}
_FAILED = {'failed', 'expired', 'cancelled', 'canceled'}

Sleep = Callable[[float], None]


class BatchUnavailable(ProviderError):
    """The endpoint has no batch API for this model: embed inline from now on."""


def _await(
    job: Any, state: Callable[[Any], str], fetch: Callable[[], Any], *, label: str, settings: BatchConfig, sleep: Sleep
) -> Any:
    """Poll ``fetch()`` until ``state(job)`` is ``done`` or ``failed``; returns the final job."""
    deadline = time.monotonic() + settings.timeout_minutes * 60
    while (current := state(job)) == 'running':
        if not settings.wait:
            raise ProviderError(f'{label} is still running and remote.batch.wait is false; embedding inline')
        if time.monotonic() > deadline:
            raise ProviderError(f'{label}: not done after {settings.timeout_minutes} min (remote.batch.timeoutMinutes)')
        sleep(settings.poll_interval_ms / 1000)
        job = fetch()
    if current == 'failed':
        raise ProviderError(f'{label} failed: {json.dumps(job)[:300]}')
    return job


def _check_size(http: EmbeddingHttp, count: int) -> None:
    if count > MAX_REQUESTS:
        raise ProviderError(f'{http.provider_id} batch: {count} requests exceed {MAX_REQUESTS} per batch')


def _in_order(http: EmbeddingHttp, results: dict[str, list[Any]], sizes: list[int]) -> list[Any]:
    """The vectors of requests ``0..n-1`` (request ``n`` embeds ``sizes[n]`` inputs), checking each is answered."""
    vectors: list[Any] = []
    for n, size in enumerate(sizes):
        found = results.get(str(n))
        if found is None or len(found) != size:
            raise ProviderError(f'{http.provider_id} batch: no complete answer for request {n}')
        vectors.extend(found)
    return vectors


def _jsonl(http: EmbeddingHttp, text: str) -> list[dict[str, Any]]:
    try:
        lines = [json.loads(line) for line in text.splitlines() if line.strip()]
    except ValueError as exc:
        raise ProviderError(f'{http.provider_id} batch: unreadable output line ({exc})') from exc
    if not all(isinstance(line, dict) for line in lines):
        raise ProviderError(f'{http.provider_id} batch: an output line is not a JSON object')
    return lines


def _openai_state(job: Any) -> str:
    if not isinstance(job, dict) or not isinstance(job.get('id'), str):
        raise ProviderError(f'batch: the batch answer has no id: {json.dumps(job)[:200]}')
    status = job.get('status')
    return 'done' if status in _SUCCEEDED else 'failed' if status in _FAILED else 'running'


def run_openai_batch(
    http: EmbeddingHttp,
    texts: list[str],
    body: Callable[[list[str]], dict[str, Any]],
    *,
    window: str,
    settings: BatchConfig,
    sleep: Sleep = time.sleep,
) -> list[Any]:
    """Embed ``texts`` through the OpenAI-style batch API (OpenAI, Voyage); one vector per text, in order.

    Raises:
        ProviderError: upload, submission, a failed/expired batch, a timeout, or output that does not cover every
            request (the caller counts it as a batch failure and embeds inline).
    """
    groups = batches(texts)
    _check_size(http, len(groups))
    lines = '\n'.join(
        json.dumps(
            {'custom_id': str(n), 'method': 'POST', 'url': '/v1/embeddings', 'body': body([texts[i] for i in group])}
        )
        for n, group in enumerate(groups)
    )
    upload = http.json(
        http.send(
            'POST',
            'files',
            timeout=_REQUEST_TIMEOUT_S,
            data={'purpose': 'batch'},
            files={'file': ('memsift-batch.jsonl', lines.encode('utf-8'), 'application/jsonl')},
        )
    )
    file_id = upload.get('id') if isinstance(upload, dict) else None
    if not isinstance(file_id, str):
        raise ProviderError(f'{http.provider_id} batch: the file upload answered no id')
    job = http.post(
        'batches',
        {'input_file_id': file_id, 'endpoint': '/v1/embeddings', 'completion_window': window},
        timeout=_REQUEST_TIMEOUT_S,
    )
    _openai_state(job)
    job = _await(
        job,
        _openai_state,
        lambda: http.get(f'batches/{job["id"]}', timeout=_REQUEST_TIMEOUT_S),
        label=f'{http.provider_id} batch {job["id"]}',
        settings=settings,
        sleep=sleep,
    )
    if not isinstance(job.get('output_file_id'), str):
        raise ProviderError(f'{http.provider_id} batch {job["id"]}: completed without an output file')
    output = http.send('GET', f'files/{job["output_file_id"]}/content', timeout=_REQUEST_TIMEOUT_S).text
    results: dict[str, list[Any]] = {}
    for item in _jsonl(http, output):
        response = item.get('response')
        try:
            data = sorted(response['body']['data'], key=lambda d: d.get('index', 0))  # type: ignore[index]
        except (KeyError, TypeError, AttributeError) as exc:
            raise ProviderError(
                f'{http.provider_id} batch: request {item.get("custom_id")} answered no data ({json.dumps(item)[:200]})'
            ) from exc
        status = response.get('status_code', 200)  # type: ignore[union-attr]
        if status != 200:
            raise ProviderError(f'{http.provider_id} batch: request {item.get("custom_id")} answered {status}')
        results[str(item.get('custom_id'))] = [d.get('embedding') for d in data]
    return _in_order(http, results, [len(group) for group in groups])


def _gemini_state(job: Any) -> str:
    """State of a Gemini batch: the long-running operation (``done``, ``error``, ``metadata.state``) or the batch
    itself (``state``, ``BATCH_STATE_*`` or plain)."""
    if not isinstance(job, dict) or not isinstance(job.get('name'), str):
        raise ProviderError(f'gemini batch: the batch answer has no name: {json.dumps(job)[:200]}')
    found = [job.get('state'), _dig(job, 'metadata', 'state'), _dig(job, 'response', 'state')]
    state = next((s for s in found if isinstance(s, str)), '').lower().removeprefix('batch_state_')
    if job.get('error') or state in _FAILED:
        return 'failed'
    return 'done' if state in _SUCCEEDED or job.get('done') is True else 'running'


def _dig(value: Any, *keys: str) -> Any:
    """``value[k1][k2]...``, or ``None`` where a level is missing or not an object."""
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def _gemini_sibling(base_url: str, kind: str) -> str:
    """Google's upload and download roots sit beside the API version: ``/v1beta`` -> ``/upload/v1beta``."""
    sibling, found = re.subn(r'/(v1beta|v1)$', rf'/{kind}/\1', base_url)
    return sibling if found else f'{base_url}/{kind}'


def run_gemini_batch(
    http: EmbeddingHttp, requests: list[dict[str, Any]], *, model: str, settings: BatchConfig, sleep: Sleep = time.sleep
) -> list[Any]:
    """Embed one ``EmbedContentRequest`` per input through Gemini's ``asyncBatchEmbedContent``; vectors in order.

    Raises:
        BatchUnavailable: the endpoint has no batch method for ``model`` (404).
        ProviderError: any other failure (counted by the caller, which then embeds inline).
    """
    _check_size(http, len(requests))
    lines = '\n'.join(json.dumps({'key': str(n), 'request': request}) for n, request in enumerate(requests))
    import uuid

    boundary = f'memsift-{uuid.uuid4().hex}'
    metadata = json.dumps({'file': {'displayName': 'memsift-embeddings', 'mimeType': 'application/jsonl'}})
    body = (
        f'--{boundary}\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n{metadata}\r\n'
        f'--{boundary}\r\nContent-Type: application/jsonl; charset=UTF-8\r\n\r\n{lines}\r\n'
        f'--{boundary}--\r\n'
    ).encode()
    upload = http.json(
        http.send(
            'POST',
            f'{_gemini_sibling(http.base_url, "upload")}/files',
            timeout=_REQUEST_TIMEOUT_S,
            params={'uploadType': 'multipart'},
            content=body,
            headers={'Content-Type': f'multipart/related; boundary={boundary}'},
        )
    )
    file = upload.get('file') if isinstance(upload, dict) else None
    file_name = (file if isinstance(file, dict) else upload if isinstance(upload, dict) else {}).get('name')
    if not isinstance(file_name, str):
        raise ProviderError('gemini batch: the file upload answered no file name')
    try:
        job = http.post(
            f'models/{model}:asyncBatchEmbedContent',
            {'batch': {'displayName': 'memsift-embeddings', 'inputConfig': {'fileName': file_name}}},
            timeout=_REQUEST_TIMEOUT_S,
        )
    except ProviderError as exc:
        if exc.status == 404:
            raise BatchUnavailable(
                f'gemini batch: asyncBatchEmbedContent is not available for {model} at this '
                'base URL (404); embedding inline (set remote.batch.enabled to false to skip '
                'the attempt)'
            ) from exc
        raise
    _gemini_state(job)
    name = job['name'] if job['name'].startswith('batches/') else f'batches/{job["name"]}'
    job = _await(
        job,
        _gemini_state,
        lambda: http.get(name, timeout=_REQUEST_TIMEOUT_S),
        label=f'gemini batch {name}',
        settings=settings,
        sleep=sleep,
    )
    output_files = [
        _dig(job, 'metadata', 'output', 'responsesFile'),
        _dig(job, 'response', 'output', 'responsesFile'),
        _dig(job, 'outputConfig', 'file'),
        _dig(job, 'outputConfig', 'fileId'),
    ]
    output_file = next((f for f in output_files if isinstance(f, str)), None)
    if output_file is None:
        raise ProviderError(f'gemini batch {name}: completed without a responses file')
    if not output_file.startswith('files/'):
        output_file = f'files/{output_file}'
    output = http.send(
        'GET',
        f'{_gemini_sibling(http.base_url, "download")}/{output_file}:download',
        params={'alt': 'media'},
        timeout=_REQUEST_TIMEOUT_S,
    ).text
    results: dict[str, list[Any]] = {}
    for line in _jsonl(http, output):
        key = next((line[k] for k in ('key', 'custom_id', 'request_id') if k in line), None)
        error = line.get('error') or _dig(line, 'response', 'error')
        if error:
            raise ProviderError(f'gemini batch: request {key} failed: {json.dumps(error)[:200]}')
        results[str(key)] = [_dig(line, 'embedding', 'values') or _dig(line, 'response', 'embedding', 'values')]
    return _in_order(http, results, [1] * len(requests))
