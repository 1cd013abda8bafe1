"""Provider batch APIs for indexing (``remote.batch.enabled``): OpenAI and Voyage (OpenClaw reference §1.2, §8.1).

The chunks of a sync are written as JSONL requests (``custom_id`` + an embeddings request body, at most 50,000 per
file), uploaded to ``/files`` (purpose ``batch``), submitted to ``/batches`` (endpoint ``/v1/embeddings``, window
``24h`` for OpenAI and ``12h`` for Voyage), polled every ``pollIntervalMs`` until done or ``timeoutMinutes``, and
the output file's lines are matched back by ``custom_id``. A batch that fails (or times out) counts one failure;
after 2 failures the provider embeds inline for good, as OpenClaw does. Queries are always embedded inline.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from memsift.config import BatchConfig
from memsift.embedding import ProviderError
from memsift.providers._http import EmbeddingHttp, batches

__all__ = ['FAILURE_LIMIT', 'MAX_REQUESTS', 'run_batch']

FAILURE_LIMIT = 2
MAX_REQUESTS = 50_000
_DONE = {'completed', 'failed', 'expired', 'cancelled', 'canceled'}
_REQUEST_TIMEOUT_S = 120.0


def run_batch(http: EmbeddingHttp, texts: list[str], body: Callable[[list[str]], dict[str, Any]], *,
              window: str, settings: BatchConfig, sleep: Callable[[float], None] = time.sleep) -> list[list[float]]:
    """Embed ``texts`` through the provider's batch API; one vector per text, in order.

    Raises:
        ProviderError: upload, submission, a failed/expired batch, a timeout, or output that does not cover every
            request (the caller counts it as a batch failure and embeds inline).
    """
    groups = batches(texts)
    if len(groups) > MAX_REQUESTS:
        raise ProviderError(f'{http.provider_id} batch: {len(groups)} requests exceed {MAX_REQUESTS} per batch')
    lines = '\n'.join(
        json.dumps({'custom_id': str(n), 'method': 'POST', 'url': '/v1/embeddings',
                    'body': body([texts[i] for i in group])})
        for n, group in enumerate(groups)
    )
    upload = http.json(http.send('POST', 'files', timeout=_REQUEST_TIMEOUT_S, data={'purpose': 'batch'},
                                 files={'file': ('memsift-batch.jsonl', lines.encode('utf-8'), 'application/jsonl')}))
    file_id = upload.get('id') if isinstance(upload, dict) else None
    if not isinstance(file_id, str):
        raise ProviderError(f'{http.provider_id} batch: the file upload answered no id')
    job = http.post('batches', {'input_file_id': file_id, 'endpoint': '/v1/embeddings', 'completion_window': window},
                    timeout=_REQUEST_TIMEOUT_S)
    deadline = time.monotonic() + settings.timeout_minutes * 60
    while not (isinstance(job, dict) and job.get('status') in _DONE):
        if not isinstance(job, dict) or not isinstance(job.get('id'), str):
            raise ProviderError(f'{http.provider_id} batch: the batch answer has no id')
        if time.monotonic() > deadline:
            raise ProviderError(f'{http.provider_id} batch {job["id"]}: not done after {settings.timeout_minutes} min')
        sleep(settings.poll_interval_ms / 1000)
        job = http.get(f'batches/{job["id"]}', timeout=_REQUEST_TIMEOUT_S)
    if job.get('status') != 'completed' or not isinstance(job.get('output_file_id'), str):
        raise ProviderError(f'{http.provider_id} batch {job.get("id")}: {job.get("status")} '
                            f'({json.dumps(job.get("errors"))[:200]})')
    output = http.send('GET', f'files/{job["output_file_id"]}/content', timeout=_REQUEST_TIMEOUT_S).text
    results: dict[str, list[list[float]]] = {}
    for line in output.splitlines():
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            response = item['response']
            data = sorted(response['body']['data'], key=lambda d: d.get('index', 0))
        except (ValueError, KeyError, TypeError) as exc:
            raise ProviderError(f'{http.provider_id} batch: unreadable output line ({exc})') from exc
        if response.get('status_code', 200) != 200:
            raise ProviderError(f'{http.provider_id} batch: request {item.get("custom_id")} answered '
                                f'{response.get("status_code")}')
        results[str(item.get('custom_id'))] = [d.get('embedding') for d in data]
    vectors: list[list[float]] = []
    for n, group in enumerate(groups):
        found = results.get(str(n))
        if found is None or len(found) != len(group):
            raise ProviderError(f'{http.provider_id} batch: no complete answer for request {n}')
        vectors.extend(found)
    return vectors
