"""Google Gemini: ``models/{m}:embedContent`` for queries (``RETRIEVAL_QUERY``) and ``models/{m}:batchEmbedContents``
for chunks (``RETRIEVAL_DOCUMENT``), key in ``x-goog-api-key``, optional ``outputDimensionality``; with
``remote.batch.enabled``, chunks go through ``asyncBatchEmbedContent`` (:mod:`memsift.providers.batch`)."""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any, ClassVar

from memsift.errors import ProviderError
from memsift.media import MediaInput
from memsift.providers.base import RemoteEmbeddings
from memsift.providers.batch import run_gemini_batch

__all__ = ['GeminiEmbeddings']


class GeminiEmbeddings(RemoteEmbeddings):
    id = 'gemini'
    default_base_url = 'https://generativelanguage.googleapis.com/v1beta'
    default_model = 'gemini-embedding-001'
    env_keys = ('GEMINI_API_KEY', 'GOOGLE_API_KEY')
    known_dims: ClassVar[Mapping[str, int]] = {
        'gemini-embedding-001': 3072,
        'gemini-embedding-2-preview': 3072,
        'text-embedding-004': 768,
    }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        base = self.http.base_url
        if base.endswith('/openai'):  # an OpenAI-compatibility base URL: the native API lives one level up
            self.http.base_url = base.removesuffix('/openai')
        self.model = self.model.removeprefix('models/')

    def auth_headers(self, key: str) -> dict[str, str]:
        return {'x-goog-api-key': key} if key else {}

    def _request(self, item: str | MediaInput, task: str) -> dict[str, Any]:
        if isinstance(item, MediaInput):  # Gemini Embedding 2: the label and the bytes inline, in one content
            parts: list[dict[str, Any]] = [
                {'text': item.label},
                {'inlineData': {'mimeType': item.mime, 'data': base64.b64encode(item.data).decode('ascii')}},
            ]
        else:
            parts = [{'text': item}]
        request: dict[str, Any] = {'content': {'parts': parts}, 'taskType': task}
        if self.config.output_dimensionality:
            request['outputDimensionality'] = self.config.output_dimensionality
        return request

    has_batch_api = True

    def _document(self, item: str | MediaInput) -> dict[str, Any]:
        return {'model': f'models/{self.model}', **self._request(item, 'RETRIEVAL_DOCUMENT')}

    def batch_embed(self, texts: list[Any]) -> list[list[float]]:
        return run_gemini_batch(
            self.http, [self._document(t) for t in texts], model=self.model, settings=self.config.remote.batch
        )

    def embed(self, texts: list[Any], kind: str, timeout: float) -> list[list[float]]:
        if kind == 'query' and len(texts) == 1:
            answer = self.http.post(
                f'models/{self.model}:embedContent', self._request(texts[0], 'RETRIEVAL_QUERY'), timeout=timeout
            )
            values = answer.get('embedding', {}).get('values') if isinstance(answer, dict) else None
            return self.vectors([values], 1, 'embedding.values')
        answer = self.http.post(
            f'models/{self.model}:batchEmbedContents', {'requests': [self._document(t) for t in texts]}, timeout=timeout
        )
        embeddings = answer.get('embeddings') if isinstance(answer, dict) else None
        if not isinstance(embeddings, list) or not all(isinstance(e, dict) for e in embeddings):
            raise ProviderError('gemini embeddings failed: the answer has no embeddings[].values list')
        return self.vectors([e.get('values') for e in embeddings], len(texts), 'embeddings[].values')
