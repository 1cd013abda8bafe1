"""Optional second-stage reranking of ``memory_search`` results (``query.rerank``, off by default).

After the merge (decay, path tiers, MMR), the ``topN`` best results go to a reranker that reads each query/result
pair together: Cohere (``POST /v2/rerank``), Voyage (``POST /v1/rerank``), Jina (``POST /v1/rerank``), an
OpenAI-compatible server (``POST {baseUrl}/rerank``), or an ONNX cross-encoder file run in process (``local``).
Results that name the file the query names (the exact path tiers) keep their place above the rest.

The stage is bounded: it ends within ``timeoutMs``, retries included, and before the call's deadline. Any failure
(no answer in time, an HTTP error, an answer that is not one finite score for each result at distinct indices) keeps
the merged order and says why in ``debug.rerankSkipped``; a search never fails because of its reranker.

Scores stay in [0, 1] and keep their meaning across queries: the hosted rerankers' ``relevance_score`` already is a
relevance in [0, 1] and is kept as it is; a batch with any score outside [0, 1] holds raw logits (an
OpenAI-compatible server running a cross-encoder) and each goes through the logistic function, as the local
cross-encoder's logits do. Min-max scaling within the batch is not used: it would report 1.0 for the best of ten
irrelevant results.

>>> normalize([0.25, 0.75])
[0.25, 0.75]
>>> [round(score, 3) for score in normalize([2.0, -1.0])]
[0.881, 0.269]
>>> reorder([('MEMORY.md', 1.0), ('a.md', 0.9), ('b.md', 0.8), ('c.md', 0.7)], [0.1, 0.95], pinned=1)
[('MEMORY.md', 1.0), ('b.md', 0.95), ('a.md', 0.1), ('c.md', 0.7)]
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar

from memsift._text import scrub
from memsift.config import MemoryConfig
from memsift.errors import ProviderError
from memsift.providers._http import EmbeddingHttp
from memsift.providers.base import _resolve_secret

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    'DEADLINE_MARGIN_S',
    'RERANKERS',
    'CohereReranker',
    'HttpReranker',
    'JinaReranker',
    'LocalReranker',
    'OpenAICompatibleReranker',
    'Rerank',
    'Reranker',
    'VoyageReranker',
    'create_reranker',
    'normalize',
    'parse_scores',
    'reorder',
]

DEADLINE_MARGIN_S = 0.25
"""Kept back from the call's deadline for what follows the reranker (building the hits, answering)."""
MIN_BUDGET_S = 0.05
"""Less time than this left for the stage: it is skipped rather than started with no chance to answer."""
MAX_REASON_CHARS = 300
LOCAL_MAX_TOKENS = 512
"""The query/document pair is cut to this many tokens (the longest of the two first), as cross-encoders are trained."""
LOCAL_BATCH = 8
T = TypeVar('T')


class Reranker(Protocol):
    """Scores each document's relevance to the query, in the documents' order."""

    id: str
    model: str

    def scores(self, query: str, documents: Sequence[str], deadline: float) -> list[float]:
        """One score per document (larger: more relevant), by ``deadline`` (a :func:`time.monotonic` instant)."""
        ...

    def close(self) -> None: ...


# ---------------------------------------------------------------- scores


def normalize(scores: Sequence[float]) -> list[float]:
    """Scores as relevance in [0, 1]: kept when all already lie there, else each through the logistic function
    (raw logits), which keeps their order and their meaning across queries."""
    if all(0.0 <= score <= 1.0 for score in scores):
        return [float(score) for score in scores]
    return [_sigmoid(score) for score in scores]


def _sigmoid(logit: float) -> float:
    # Written per sign so exp() never overflows for a large logit.
    if logit >= 0:
        return 1.0 / (1.0 + math.exp(-logit))
    small = math.exp(logit)
    return small / (1.0 + small)


def reorder(ranked: Sequence[tuple[T, float]], scores: Sequence[float], pinned: int = 0) -> list[tuple[T, float]]:
    """``ranked`` with the ``len(scores)`` entries after the first ``pinned`` sorted by ``scores`` (which become their
    scores; ties keep the merged order); the pinned head and the tail beyond stay as they were."""
    end = pinned + len(scores)
    head = ranked[pinned:end]
    order = sorted(range(len(scores)), key=lambda i: -scores[i])  # stable: equal scores keep the merged order
    return [*ranked[:pinned], *((head[i][0], scores[i]) for i in order), *ranked[end:]]


def _is_score(value: Any) -> bool:
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
        if not _is_score(score):
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
        return [_sigmoid(logit) for logit in logits]

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


# ---------------------------------------------------------------- the search stage


class Rerank:
    """The rerank stage of one index: its reranker, made on first use (a failure to make it is kept and reported
    by every search), and :meth:`apply`. Thread-safe.

    Args:
        config: The agent's config; ``query.rerank`` says what to do.
        env: Where API keys are looked up (default: the environment).
    """

    def __init__(self, config: MemoryConfig, env: Mapping[str, str] | None = None) -> None:
        self.config = config
        self.settings = config.query.rerank
        self.top_n = self.settings.top_n
        self._env = os.environ if env is None else env
        self._reranker: HttpReranker | LocalReranker | None = None
        self._error: str | None = None
        self._lock = threading.Lock()

    @property
    def error(self) -> str | None:
        """Why the reranker could not be made (key-free), or ``None``: not tried yet, or made."""
        return self._error

    def reranker(self) -> HttpReranker | LocalReranker:
        """The reranker, made on the first call.

        Raises:
            ProviderError: it cannot be made (the same error on every call).
        """
        with self._lock:
            if self._reranker is None and self._error is None:
                try:
                    self._reranker = create_reranker(self.config, self._env)
                except Exception as exc:  # a broken model file raises whatever its runtime raises
                    self._error = _reason(exc)
            if self._reranker is None:
                raise ProviderError(self._error or 'no reranker')
            return self._reranker

    def apply(
        self,
        query: str,
        ranked: Sequence[tuple[T, float]],
        text: Callable[[T], str],
        debug: dict[str, Any],
        *,
        deadline: float | None = None,
        pinned: int = 0,
    ) -> list[tuple[T, float]]:
        """``ranked`` with its best ``topN`` entries after the first ``pinned`` reordered by the reranker, their
        scores its normalized scores (see :func:`normalize`); on any failure ``ranked`` as it was, with the reason in
        ``debug['rerankSkipped']``. Never raises.

        Args:
            query: The query as the search read it.
            ranked: The merged results, best first, with their scores.
            text: The text sent for an entry.
            debug: The search's debug dict: ``rerankMs`` and ``reranked`` (how many), or ``rerankSkipped``.
            deadline: A :func:`time.monotonic` instant the search must answer by; the stage ends
                :data:`DEADLINE_MARGIN_S` before it (and within ``timeoutMs`` in any case).
            pinned: Leading entries kept in place (the exact path hits).
        """
        head = ranked[pinned : pinned + self.top_n]
        if not head:
            return list(ranked)
        started = time.monotonic()
        end = started + self.settings.timeout_ms / 1000
        if deadline is not None:
            end = min(end, deadline - DEADLINE_MARGIN_S)
        reranker: HttpReranker | LocalReranker | None = None
        try:
            reranker = self.reranker()
            if end - time.monotonic() < MIN_BUDGET_S:
                raise ProviderError('no time left before the search deadline')
            scores = reranker.scores(query, [text(item) for item, _ in head], end)
            if len(scores) != len(head) or not all(_is_score(score) for score in scores):
                raise ProviderError(f'the reranker gave {len(scores)} scores for {len(head)} results, or a bad one')
        except Exception as exc:  # whatever the reranker does, the search answers with the merged order
            reason = _reason(exc)
            debug['rerankSkipped'] = reranker.redact(reason) if reranker is not None else reason
            return list(ranked)
        finally:
            debug['rerankMs'] = round((time.monotonic() - started) * 1000, 3)
        debug['reranked'] = len(head)
        return reorder(ranked, normalize(scores), pinned)

    def close(self) -> None:
        with self._lock:
            if self._reranker is not None:
                self._reranker.close()
            self._reranker, self._error = None, 'the index is closed'


def _reason(exc: BaseException) -> str:
    """A failure as ``debug`` shows it: our own messages as they are (already scrubbed of keys), others with their
    type; bounded."""
    text = str(exc) if isinstance(exc, ProviderError) else f'{type(exc).__name__}: {exc}'
    return text if len(text) <= MAX_REASON_CHARS else text[: MAX_REASON_CHARS - 3] + '...'
