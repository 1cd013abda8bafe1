"""Ollama: ``POST {baseUrl}/api/embed`` with ``{model, input: [...]}``, answer ``embeddings``; one request at a time;
query instruction prefixes for the models that were trained with them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from memsift.config import MemoryConfig
from memsift.providers.base import RemoteEmbeddings

__all__ = ['OllamaEmbeddings']

QUERY_PREFIXES = {
    'nomic-embed-text': 'search_query: ',
    'qwen3-embedding': 'Instruct: Given a user query, retrieve relevant memory notes and documents\nQuery:',
    'mxbai-embed-large': 'Represent this sentence for searching relevant passages: ',
}


class OllamaEmbeddings(RemoteEmbeddings):
    id = 'ollama'
    default_base_url = 'http://127.0.0.1:11434'
    default_model = 'nomic-embed-text'
    env_keys = ('OLLAMA_API_KEY',)
    key_required = False
    local_server = True
    known_dims: ClassVar[Mapping[str, int]] = {'nomic-embed-text': 768, 'mxbai-embed-large': 1024, 'all-minilm': 384}

    def __init__(self, config: MemoryConfig, env: Mapping[str, str] | None = None) -> None:
        super().__init__(config, env)
        self.concurrency = 1  # a local server embeds one request at a time anyway (OpenClaw: concurrency 1)

    def embed(self, texts: list[str], kind: str, timeout: float) -> list[list[float]]:
        if kind == 'query':
            prefix = QUERY_PREFIXES.get(self.model.split(':', 1)[0], '')
            texts = [prefix + t for t in texts]
        answer = self.http.post('api/embed', {'model': self.model, 'input': texts}, timeout=timeout)
        return self.vectors(answer.get('embeddings') if isinstance(answer, dict) else None, len(texts), 'embeddings')
