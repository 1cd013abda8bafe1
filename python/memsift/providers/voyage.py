"""Voyage AI: OpenAI-style ``POST /embeddings`` with ``input_type`` ``query`` or ``document``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from memsift.providers.openai import OpenAIEmbeddings

__all__ = ['VoyageEmbeddings']


class VoyageEmbeddings(OpenAIEmbeddings):
    id = 'voyage'
    default_base_url = 'https://api.voyageai.com/v1'
    default_model = 'voyage-4-large'
    env_keys = ('VOYAGE_API_KEY',)
    known_dims: ClassVar[Mapping[str, int]] = {
        'voyage-4-large': 1024,
        'voyage-3-large': 1024,
        'voyage-3.5': 1024,
        'voyage-3.5-lite': 1024,
    }
    batch_window = '12h'

    def body(self, texts: list[str], kind: str) -> dict[str, Any]:
        body: dict[str, Any] = {'model': self.model, 'input': texts, 'input_type': kind}
        if self.config.output_dimensionality:
            body['output_dimension'] = self.config.output_dimensionality
        return body
