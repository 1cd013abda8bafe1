"""The rerankers ``query.rerank`` can use (off by default): each reads a query with a list of results and scores
every pair together. Cohere (``POST /v2/rerank``), Voyage (``POST /v1/rerank``), Jina (``POST /v1/rerank``), an
OpenAI-compatible server (``POST {baseUrl}/rerank``), or an ONNX cross-encoder file run in process (``local``).
The search stage that calls them (bounds, fallbacks, reordering) is :mod:`memsift.search.rerank`.

>>> parse_scores({'results': [{'index': 1, 'relevance_score': 0.9}, {'index': 0, 'relevance_score': 0.2}]}, 2)
[0.2, 0.9]
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from memsift._text import scrub
from memsift.config import MemoryConfig
from memsift.errors import ProviderError
from memsift.providers._http import EmbeddingHttp
from memsift.providers.base import _resolve_secret

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    'RERANKERS',
    'CohereReranker',
    'HttpReranker',
    'JinaReranker',
    'LocalReranker',
    'OpenAICompatibleReranker',
    'Reranker',
    'VoyageReranker',
    'create_reranker',
    'is_score',
    'parse_scores',
    'sigmoid',
]

LOCAL_MAX_TOKENS = 512
"""The query/document pair is cut to this many tokens (the longest of the two first), as cross-encoders are trained."""
LOCAL_BATCH = 8


class Reranker(Protocol):
    """Scores each document's relevance to the query, in the documents' order."""

    id: str
    model: str

    def scores(self, query: str, documents: Sequence[str], deadline: float) -> list[float]:
        """One score per document (larger: more relevant), by ``deadline`` (a :func:`time.monotonic` instant)."""
        ...

    def close(self) -> None: ...


# ---------------------------------------------------------------- scores


def sigmoid(logit: float) -> float:
    """The logistic function: a raw logit as a relevance in (0, 1)."""
    # Written per sign so exp() never overflows for a large logit.
    if logit >= 0:
        return 1.0 / (1.0 + math.exp(-logit))
    small = math.exp(logit)
    return small / (1.0 + small)


def is_score(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def parse_scores(answer: Any, count: int, keys: Sequence[str] = ('results',)) -> list[float]:
    """The scores, in document order, from a rerank answer ``{<key>: [{index, relevance_score}, ...]}``: exactly
    one finite score for each of the ``count`` documents, at distinct indices in range.

    >>> parse_scores({'results': [{'index': 1, 'relevance_score': 0.9}, {'index': 0, 'relevance_score': 0.2}]}, 2)
    [0.2, 0.9]
    >>> parse_scores({'results': [{'index': 0, 'relevance_score': 0.9}, {'index': 0, 'relevance_score': 0.2}]}, 2)
    Traceback (most recent call last):
        ...
    memsift.errors.ProviderError: the reranker named result 0 twice

    Raises:
        ProviderError: the answer is anything else (the message says what, never quoting the answer).
    """
    rows = next((answer[key] for key in keys if isinstance(answer, Mapping) and key in answer), None)
    if not isinstance(rows, list):
        raise ProviderError(f'the reranker answered without a {" or ".join(map(repr, keys))} list')
    if len(rows) != count:
        raise ProviderError(f'the reranker scored {len(rows)} results, not the {count} sent')
    scores: list[float | None] = [None] * count
    for row in rows:
        index: Any = row.get('index') if isinstance(row, Mapping) else None
        score: Any = row.get('relevance_score') if isinstance(row, Mapping) else None
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < count:
            raise ProviderError(f'the reranker answered with an index that is not one of 0 to {count - 1}')
        if not is_score(score):
            raise ProviderError(f'the reranker gave result {index} no finite relevance_score')
        if scores[index] is not None:
            raise ProviderError(f'the reranker named result {index} twice')
        scores[index] = float(score)
    return [score for score in scores if score is not None]  # all set: count rows, distinct indices in range


# ---------------------------------------------------------------- HTTP rerankers


class _RerankHttp(EmbeddingHttp):
    """The shared HTTP layer (one host, no redirects, retries, keys scrubbed), its errors naming the rerank call."""

    def _fail(self, message: str) -> ProviderError:
        return ProviderError(self.redact(f'{self.provider_id} rerank failed: {message}'))


class HttpReranker:
    """Base of the hosted rerankers: endpoint, key and model resolution, one ``POST {baseUrl}/rerank`` per search.

    The base URL is ``query.rerank.baseUrl``, else ``models.providers.<id>.baseUrl``, else ``remote.baseUrl`` when
    the embedding provider is this same provider, else the vendor's; the key follows the same order
    (``query.rerank.apiKey``, ...), then the environment variables.
    """

    id: ClassVar[str]
    default_base_url: ClassVar[str | None] = None
    default_model: ClassVar[str | None] = None
    env_keys: ClassVar[tuple[str, ...]] = ()
    key_required: ClassVar[bool] = True
    answer_keys: ClassVar[tuple[str, ...]] = ('results',)

    def __init__(self, config: MemoryConfig, env: Mapping[str, str] | None = None) -> None:
        env = os.environ if env is None else env
        rerank = config.query.rerank
        entry = config.model_providers.get(self.id)
        same = config.provider == self.id  # the embedding provider's endpoint and key serve its reranker too
        base_url = (
            rerank.base_url
            or (entry.base_url if entry is not None else None)
            or (config.remote.base_url if same else None)
            or self.default_base_url
        )
        if base_url is None:
            raise ProviderError(f'reranker {self.id!r} needs query.rerank.baseUrl')
        secrets = (
            rerank.api_key,
            entry.api_key if entry is not None else None,
            config.remote.api_key if same else None,
        )
        key = next((key for value in secrets if (key := _resolve_secret(value, env))), None)
        key = key or next((env[name] for name in self.env_keys if env.get(name)), None)
        if not key and self.key_required:
            names = ' or '.join(('query.rerank.apiKey', *self.env_keys))
            raise ProviderError(f'no API key for reranker {self.id!r}: set {names}')
        self.api_key = key or ''
        self.model = rerank.model or self.default_model or ''
        headers = {'Authorization': f'Bearer {self.api_key}'} if self.api_key else {}
        self.http = _RerankHttp(self.id, base_url, headers, [self.api_key])

    def body(self, query: str, documents: list[str]) -> dict[str, Any]:
        raise NotImplementedError

    def scores(self, query: str, documents: Sequence[str], deadline: float) -> list[float]:
        # Every document is asked back (top_n = all of them): the answer must score each one for a full reorder.
        answer = self.http.post(
            'rerank', self.body(query, list(documents)), timeout=deadline - time.monotonic(), deadline=deadline
        )
        try:
            return parse_scores(answer, len(documents), self.answer_keys)
        except ProviderError as exc:
            raise ProviderError(f'{self.id} rerank failed: {exc}') from None

    def redact(self, text: str) -> str:
        return self.http.redact(text)

    def close(self) -> None:
        self.http.close()

    def __repr__(self) -> str:
        return f'{type(self).__name__}(model={self.model!r}, base_url={self.http.base_url!r})'


class CohereReranker(HttpReranker):
    """Cohere ``POST /v2/rerank``: ``{model, query, documents, top_n}`` -> ``{results: [{index, relevance_score}]}``."""

    id = 'cohere'
    default_base_url = 'https://api.cohere.com/v2'
    default_model = 'rerank-v3.5'
    env_keys = ('COHERE_API_KEY', 'CO_API_KEY')

    def body(self, query: str, documents: list[str]) -> dict[str, Any]:
        return {'model': self.model, 'query': query, 'documents': documents, 'top_n': len(documents)}


class VoyageReranker(HttpReranker):
    """Voyage ``POST /v1/rerank``: ``{query, documents, model, top_k}`` -> ``{data: [{index, relevance_score}]}``."""

    id = 'voyage'
    default_base_url = 'https://api.voyageai.com/v1'
    default_model = 'rerank-2.5'
    env_keys = ('VOYAGE_API_KEY',)
    answer_keys = ('data',)

    def body(self, query: str, documents: list[str]) -> dict[str, Any]:
        return {'query': query, 'documents': documents, 'model': self.model, 'top_k': len(documents)}


class JinaReranker(HttpReranker):
    """Jina ``POST /v1/rerank``: ``{model, query, documents, top_n, return_documents}`` -> ``{results: [...]}``."""

    id = 'jina'
    default_base_url = 'https://api.jina.ai/v1'
    default_model = 'jina-reranker-v2-base-multilingual'
    env_keys = ('JINA_API_KEY',)

    def body(self, query: str, documents: list[str]) -> dict[str, Any]:
        return {
            'model': self.model,
            'query': query,
            'documents': documents,
            'top_n': len(documents),
            'return_documents': False,  # the texts are ours already: do not pay for them twice
        }


class OpenAICompatibleReranker(HttpReranker):
    """A server's ``POST {baseUrl}/rerank`` in the Jina/Cohere shape (vLLM, llama.cpp, LocalAI, gateways): the
    answer's list may be ``results`` or ``data``; the key is optional, the base URL required."""

    id = 'openai-compatible'
    key_required = False
    answer_keys = ('results', 'data')

    def body(self, query: str, documents: list[str]) -> dict[str, Any]:
        body: dict[str, Any] = {'query': query, 'documents': documents, 'top_n': len(documents)}
        if self.model:  # a server with one model needs none, and some refuse a name they do not serve
            body['model'] = self.model
        return body


# ---------------------------------------------------------------- the local cross-encoder


class LocalReranker:
    """An ONNX cross-encoder run in process: ``query.rerank.modelPath``, its ``tokenizer.json`` beside it.

    The graph takes ``input_ids`` (and, where it declares them, ``attention_mask`` and ``token_type_ids``) of the
    tokenized query/document pair, and gives a ``[batch, 1]`` relevance logit, or ``[batch, 2]`` class logits whose
    difference (positive minus negative: the logit of softmax's positive probability) is the relevance logit. The
    scores are the logits through the logistic function. Nothing is downloaded.
    """

    id = 'local'

    def __init__(self, config: MemoryConfig) -> None:
        path = config.query.rerank.model_path
        if not path:
            raise ProviderError('reranker local needs query.rerank.modelPath (an ONNX cross-encoder file)')
        model = Path(path).expanduser()
        tokenizer_file = model.with_name('tokenizer.json')
        if not model.is_file():
            raise ProviderError(f'query.rerank.modelPath {path!r} is not a file (downloads are never made)')
        if not tokenizer_file.is_file():
            raise ProviderError(f'no tokenizer.json beside the rerank model {model}')
        try:
            import onnxruntime
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise ProviderError(f'the local reranker needs {exc.name}: pip install "memsift[local]"') from exc
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = max(1, min(4, os.cpu_count() or 1))
        # Idle threads sleep instead of spinning: the search shares the machine with the agent and its tools.
        options.add_session_config_entry('session.intra_op.allow_spinning', '0')
        try:
            self.session = onnxruntime.InferenceSession(str(model), options, providers=['CPUExecutionProvider'])
            self.tokenizer = Tokenizer.from_file(str(tokenizer_file))
        except Exception as exc:  # onnxruntime and tokenizers raise their own exception types
            raise ProviderError(f'cannot load the rerank model {model}: {exc}') from exc
        self.inputs = {item.name: item.type for item in self.session.get_inputs()}
        unknown = set(self.inputs) - {'input_ids', 'attention_mask', 'token_type_ids'}
        if 'input_ids' not in self.inputs or unknown:
            raise ProviderError(
                f'the rerank model {model} must take input_ids (attention_mask, token_type_ids optional), '
                f'not {sorted(self.inputs)}'
            )
        self.tokenizer.enable_truncation(LOCAL_MAX_TOKENS)
        self.tokenizer.enable_padding()
        self.model = model.name
        self._lock = threading.Lock()  # one inference at a time: the runtime already uses the cores it may

    def _logits(self, query: str, documents: Sequence[str]) -> npt.NDArray[np.float64]:
        import numpy as np

        encodings = self.tokenizer.encode_batch([(query, document) for document in documents])
        columns = {
            'input_ids': [e.ids for e in encodings],
            'attention_mask': [e.attention_mask for e in encodings],
            'token_type_ids': [e.type_ids for e in encodings],
        }
        feed = {
            name: np.array(columns[name], dtype=np.int32 if kind == 'tensor(int32)' else np.int64)
            for name, kind in self.inputs.items()
        }
        with self._lock:
            out = np.asarray(self.session.run(None, feed)[0], dtype=np.float64).reshape(len(documents), -1)
        if out.shape[1] == 1:
            return out[:, 0]
        if out.shape[1] == 2:
            return out[:, 1] - out[:, 0]
        raise ProviderError(f'local rerank failed: the model gives {out.shape[1]} values per pair, not 1 or 2')

    def scores(self, query: str, documents: Sequence[str], deadline: float) -> list[float]:
        query = scrub(query)  # a lone surrogate (cut mid-emoji) is not text to a tokenizer
        logits: list[float] = []
        for start in range(0, len(documents), LOCAL_BATCH):
            # A batch cannot be interrupted once it runs: the deadline is checked before each one.
            if time.monotonic() >= deadline:
                raise ProviderError(f'local rerank failed: out of time after {start} of {len(documents)} results')
            batch = [scrub(document) for document in documents[start : start + LOCAL_BATCH]]
            logits.extend(self._logits(query, batch).tolist())
        if not all(math.isfinite(logit) for logit in logits):
            raise ProviderError('local rerank failed: the model gave a non-finite score')
        return [sigmoid(logit) for logit in logits]

    def redact(self, text: str) -> str:
        return text

    def close(self) -> None:
        pass

    def __repr__(self) -> str:
        return f'LocalReranker(model={self.model!r})'


RERANKERS: Mapping[str, type[HttpReranker]] = {
    'cohere': CohereReranker,
    'voyage': VoyageReranker,
    'jina': JinaReranker,
    'openai-compatible': OpenAICompatibleReranker,
}
"""Provider id -> hosted reranker class (``local`` is :class:`LocalReranker`)."""


def create_reranker(config: MemoryConfig, env: Mapping[str, str] | None = None) -> HttpReranker | LocalReranker:
    """The reranker ``query.rerank`` describes.

    Raises:
        ProviderError: no provider set, a missing key or base URL, or a local model that cannot load.
    """
    provider = config.query.rerank.provider
    if provider == 'local':
        return LocalReranker(config)
    if provider is None:
        known = ', '.join([*RERANKERS, 'local'])
        raise ProviderError(f'query.rerank.provider is not set (one of {known}, or set query.rerank.modelPath)')
    return RERANKERS[provider](config, env)
