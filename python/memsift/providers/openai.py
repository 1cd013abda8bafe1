"""OpenAI's embeddings wire format and the providers that speak it.

``POST {baseUrl}/embeddings`` with ``{model, input: [...]}``, answer ``data[].embedding`` (ordered by ``index``),
``Authorization: Bearer``. ``openai-compatible`` adds ``input_type`` from ``queryInputType`` /
``documentInputType`` / ``inputType``; Mistral, DeepInfra and LM Studio differ only in defaults.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from memsift.providers.base import RemoteEmbeddings
from memsift.providers.batch import run_openai_batch

__all__ = [
    'DeepInfraEmbeddings',
    'LmStudioEmbeddings',
    'MistralEmbeddings',
    'OpenAICompatibleEmbeddings',
    'OpenAIEmbeddings',
]


class OpenAIEmbeddings(RemoteEmbeddings):
    id = 'openai'
    default_base_url = 'https://api.openai.com/v1'
    default_model = 'text-embedding-3-small'
    env_keys: ClassVar[tuple[str, ...]] = ('OPENAI_API_KEY',)
    known_dims: ClassVar[Mapping[str, int]] = {
        'text-embedding-3-small': 1536,
        'text-embedding-3-large': 3072,
        'text-embedding-ada-002': 1536,
    }
    has_batch_api = True
    batch_window: ClassVar[str] = '24h'
    """Completion window of the provider's batch API."""

    def batch_embed(self, texts: list[Any]) -> list[list[float]]:
        return run_openai_batch(
            self.http,
            texts,
            lambda group: self.body(group, 'document'),
            window=self.batch_window,
            settings=self.config.remote.batch,
        )

    def body(self, texts: list[str], kind: str) -> dict[str, Any]:
        body: dict[str, Any] = {'model': self.model, 'input': texts}
        if self.config.output_dimensionality and self.model.startswith('text-embedding-3'):
            body['dimensions'] = self.config.output_dimensionality
        return body

    def embed(self, texts: list[str], kind: str, timeout: float) -> list[list[float]]:
        answer = self.http.post('embeddings', self.body(texts, kind), timeout=timeout)
        data = answer.get('data') if isinstance(answer, dict) else None
        if isinstance(data, list) and all(isinstance(d, dict) for d in data):
            data = sorted(data, key=lambda d: d.get('index', 0) if isinstance(d.get('index'), int) else 0)
            return self.vectors([d.get('embedding') for d in data], len(texts), 'data[].embedding')
        return self.vectors(data, len(texts), 'data[].embedding')


class OpenAICompatibleEmbeddings(OpenAIEmbeddings):
    id = 'openai-compatible'
    default_base_url = 'http://127.0.0.1:8080/v1'
    default_model = 'text-embedding'
    env_keys = ()
    key_required = False  # self-hosted servers often need none; it never inherits OpenAI's key
    known_dims: ClassVar[Mapping[str, int]] = {}
    has_batch_api = False

    def body(self, texts: list[str], kind: str) -> dict[str, Any]:
        body = super().body(texts, kind)
        config = self.config
        input_type = (config.query_input_type if kind == 'query' else config.document_input_type) or config.input_type
        if input_type:
            body['input_type'] = input_type
        return body


class MistralEmbeddings(OpenAIEmbeddings):
    id = 'mistral'
    default_base_url = 'https://api.mistral.ai/v1'
    default_model = 'mistral-embed'
    env_keys = ('MISTRAL_API_KEY',)
    has_batch_api = False
    known_dims: ClassVar[Mapping[str, int]] = {'mistral-embed': 1024}


class DeepInfraEmbeddings(OpenAIEmbeddings):
    id = 'deepinfra'
    default_base_url = 'https://api.deepinfra.com/v1/openai'
    default_model = 'BAAI/bge-m3'
    env_keys = ('DEEPINFRA_API_KEY',)
    has_batch_api = False
    known_dims: ClassVar[Mapping[str, int]] = {'BAAI/bge-m3': 1024}


class LmStudioEmbeddings(OpenAIEmbeddings):
    id = 'lmstudio'
    default_base_url = 'http://localhost:1234/v1'
    default_model = 'text-embedding-nomic-embed-text-v1.5'
    env_keys = ('LM_API_TOKEN',)
    key_required = False
    local_server = True
    known_dims: ClassVar[Mapping[str, int]] = {'text-embedding-nomic-embed-text-v1.5': 768}
    has_batch_api = False
