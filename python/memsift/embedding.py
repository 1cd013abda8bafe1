"""The embedding provider interface: what :class:`memsift.MemoryIndex` needs to run the vector leg of a search.

Any object with ``id``, ``model``, ``dims``, ``embed_query`` and ``embed_documents`` is a provider; HTTP adapters
(OpenAI, Gemini, Ollama, ...) implement it, and so can a test's deterministic embedder. Whatever a provider
returns is checked here once (count, dimension, finite values) and L2-normalized, so a provider that answers
garbage gives a clear :class:`ProviderError` instead of a corrupted index.

>>> class Letters:
...     id, model, dims = 'letters', 'abc-v1', 3
...     def embed_query(self, text):
...         return [text.count('a'), text.count('b'), text.count('c')]
...     def embed_documents(self, texts):
...         return [self.embed_query(t) for t in texts]
>>> isinstance(Letters(), EmbeddingProvider)
True
>>> [[round(float(x), 3) for x in row] for row in embed_documents(Letters(), ['aab', 'c'])]
[[0.894, 0.447, 0.0], [0.0, 0.0, 1.0]]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from memsift.errors import ProviderError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ['EmbeddingProvider', 'embed_documents', 'embed_query']


@runtime_checkable
class EmbeddingProvider(Protocol):
    """Turns text into vectors of ``dims`` floats.

    Attributes:
        id: Provider id as in OpenClaw's config (``"openai"``, ``"ollama"``, ...).
        model: Model name; part of the index identity, so changing it re-embeds.
        dims: Vector dimension.
    """

    @property
    def id(self) -> str: ...

    @property
    def model(self) -> str: ...

    @property
    def dims(self) -> int: ...

    def embed_query(self, text: str) -> Sequence[float] | npt.NDArray[Any]:
        """One vector for a search query."""
        ...

    def embed_documents(self, texts: Sequence[str]) -> Sequence[Sequence[float]] | npt.NDArray[Any]:
        """One vector per indexed chunk, in order."""
        ...


def _name(provider: EmbeddingProvider) -> str:
    return f'embedding provider {provider.id!r} (model {provider.model!r})'


def _call(provider: EmbeddingProvider, method: str, arg: object) -> object:
    try:
        return getattr(provider, method)(arg)
    except ProviderError:
        raise
    except Exception as exc:
        raise ProviderError(f'{_name(provider)} failed: {type(exc).__name__}: {exc}') from exc


def _checked(provider: EmbeddingProvider, raw: object, rows: int) -> npt.NDArray[np.float32]:
    import numpy as np

    name = _name(provider)
    try:
        matrix = np.asarray(raw, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise ProviderError(f'{name} returned something that is not a list of vectors: {exc}') from exc
    if matrix.ndim != 2 or matrix.shape[0] != rows:
        got = matrix.shape[0] if matrix.ndim == 2 else f'an array of shape {matrix.shape}'
        raise ProviderError(f'{name} returned {got} vectors for {rows} inputs')
    if matrix.shape[1] != provider.dims:
        raise ProviderError(
            f'{name} returned vectors of dimension {matrix.shape[1]}, expected {provider.dims}; '
            'check the model name or outputDimensionality'
        )
    matrix = np.nan_to_num(matrix, nan=0.0, posinf=0.0, neginf=0.0)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.ascontiguousarray(matrix / np.where(norms > 0, norms, 1.0), dtype=np.float32)


def embed_documents(provider: EmbeddingProvider, texts: Sequence[Any]) -> npt.NDArray[np.float32]:
    """``provider.embed_documents(texts)`` checked and L2-normalized: a C-contiguous ``(len(texts), dims)`` array.

    ``texts`` are strings, or :class:`~memsift.media.MediaInput` for a multimodal provider."""
    import numpy as np

    if not texts:
        return np.zeros((0, provider.dims), dtype=np.float32)
    return _checked(provider, _call(provider, 'embed_documents', list(texts)), len(texts))


def embed_query(provider: EmbeddingProvider, text: str) -> npt.NDArray[np.float32]:
    """``provider.embed_query(text)`` checked and L2-normalized (all zeros stays all zeros)."""
    return _checked(provider, [_call(provider, 'embed_query', text)], 1)[0]
