"""The ``local`` provider's GGUF path (``local.modelPath`` ending in ``.gguf``) run for real through llama-cpp-python.

No download: the module writes a tiny BERT-architecture sentence-embedding model (random seeded weights, hidden size
32, WordPiece vocabulary, mean pooling) with the ``gguf`` writer, laid out the way llama.cpp's ``bert`` architecture
loads it (``src/models/bert.cpp``, ``conversion/bert.py`` in llama.cpp). The vectors mean nothing; the tests check
the plumbing: load, dimensions, batching, determinism, normalization, a hybrid search, and failure handling.
"""

import string

import numpy as np
import pytest
from conftest import memory_config, write

pytest.importorskip(
    'llama_cpp',
    reason='llama-cpp-python is not installed (it compiles llama.cpp for minutes, so CI '
    'skips it): pip install llama-cpp-python',
)
gguf = pytest.importorskip('gguf', reason='the gguf writer is not installed: pip install gguf')

import memsift  # noqa: E402
from memsift.embedding import embed_documents, embed_query  # noqa: E402
from memsift.providers import create_provider, resolve_provider  # noqa: E402

N_EMBD, N_HEAD, N_LAYER, N_FF, N_CTX = 32, 2, 2, 64, 512
SPECIAL = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]']
WORDS = [
    'the',
    'deploy',
    'key',
    'lives',
    'in',
    'team',
    'vault',
    'prefers',
    'tabs',
    'over',
    'spaces',
    'car',
    'needs',
    'new',
    'tyres',
    'before',
    'winter',
    'doctor',
    'appointment',
    'memory',
    'search',
]
PIECES = ['##ing', '##ed', '##s', '##er', '##ly']


def vocabulary() -> list[str]:
    """BERT's WordPiece vocabulary shape: specials, whole words, ``##`` pieces, and every printable ASCII character
    as a word start and as a piece, so any ASCII text tokenizes without [UNK]. No duplicates: llama.cpp aborts on
    them."""
    chars = [c for c in string.printable if not c.isspace()]
    return list(dict.fromkeys(SPECIAL + WORDS + PIECES + chars + ['##' + c for c in chars]))


def write_tiny_bert(path, seed=0):
    """A BERT embedding model as GGUF: what llama.cpp's converter writes for a BertModel, at toy size."""
    rng = np.random.default_rng(seed)
    tokens = vocabulary()
    types = [gguf.TokenType.CONTROL if t in SPECIAL else gguf.TokenType.NORMAL for t in tokens]

    # llama.cpp's WPM tokenizer reads the "phantom space" form: word starts get U+2581, '##' pieces lose the '##'.
    def phantom(token, kind):
        if kind == gguf.TokenType.CONTROL:
            return token
        return token[2:] if token.startswith('##') else '\u2581' + token

    writer = gguf.GGUFWriter(str(path), 'bert')  # general.architecture = "bert"
    writer.add_name('memsift-tiny-bert')
    writer.add_context_length(N_CTX)
    writer.add_embedding_length(N_EMBD)
    writer.add_feed_forward_length(N_FF)
    writer.add_block_count(N_LAYER)
    writer.add_head_count(N_HEAD)
    writer.add_layer_norm_eps(1e-12)
    writer.add_causal_attention(False)
    writer.add_pooling_type(gguf.PoolingType.MEAN)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    writer.add_tokenizer_model('bert')
    writer.add_token_type_count(2)
    writer.add_token_list([phantom(t, k) for t, k in zip(tokens, types)])
    writer.add_token_types(types)
    writer.add_pad_token_id(SPECIAL.index('[PAD]'))
    writer.add_unk_token_id(SPECIAL.index('[UNK]'))
    writer.add_bos_token_id(SPECIAL.index('[CLS]'))  # [CLS] leads every sequence
    writer.add_sep_token_id(SPECIAL.index('[SEP]'))
    writer.add_mask_token_id(SPECIAL.index('[MASK]'))

    def tensor(kind, suffix, shape, bid=None, value=None):
        # numpy shapes are PyTorch's (out, in); GGUFWriter writes them reversed, as ggml's {in, out}.
        name = gguf.TENSOR_NAMES[kind].format(bid=bid) + '.' + suffix
        data = np.full(shape, value, np.float32) if value is not None else rng.normal(0, 0.2, shape).astype(np.float32)
        writer.add_tensor(name, data)

    t = gguf.MODEL_TENSOR
    tensor(t.TOKEN_EMBD, 'weight', (len(tokens), N_EMBD))
    tensor(t.TOKEN_TYPES, 'weight', (2, N_EMBD))
    tensor(t.POS_EMBD, 'weight', (N_CTX, N_EMBD))
    tensor(t.TOKEN_EMBD_NORM, 'weight', (N_EMBD,), value=1.0)
    tensor(t.TOKEN_EMBD_NORM, 'bias', (N_EMBD,), value=0.0)
    for bid in range(N_LAYER):
        for kind in (t.ATTN_Q, t.ATTN_K, t.ATTN_V, t.ATTN_OUT):
            tensor(kind, 'weight', (N_EMBD, N_EMBD), bid)
            tensor(kind, 'bias', (N_EMBD,), bid)
        for kind in (t.ATTN_OUT_NORM, t.LAYER_OUT_NORM):
            tensor(kind, 'weight', (N_EMBD,), bid, value=1.0)
            tensor(kind, 'bias', (N_EMBD,), bid, value=0.0)
        tensor(t.FFN_UP, 'weight', (N_FF, N_EMBD), bid)
        tensor(t.FFN_UP, 'bias', (N_FF,), bid)
        tensor(t.FFN_DOWN, 'weight', (N_EMBD, N_FF), bid)
        tensor(t.FFN_DOWN, 'bias', (N_EMBD,), bid)

    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


@pytest.fixture(scope='module')
def gguf_path(tmp_path_factory):
    return write_tiny_bert(tmp_path_factory.mktemp('gguf') / 'tiny-bert.gguf')


def local_config(model_path, **search):
    return memsift.load_config(
        {
            'agents': {
                'defaults': {'memorySearch': {'provider': 'local', 'local': {'modelPath': str(model_path)}, **search}}
            }
        }
    )


def test_gguf_model_embeds_through_llama_cpp(gguf_path):
    assert gguf_path.stat().st_size < 1_000_000
    provider = create_provider('local', local_config(gguf_path))
    assert (provider.id, provider.model, provider.dims) == ('local', 'tiny-bert.gguf', N_EMBD)
    assert provider.handles('视频下载')  # only the embedded English model declines CJK queries

    texts = [
        'The deploy key lives in the team vault.',
        'Prefers tabs over spaces.',
        'The deploy key lives in the team vault.',
        'zebra QUARTZ 42 !?',
        'x',
    ] + [f'note number {i} about memory search' for i in range(7)]
    raw = np.asarray(provider.embed_documents(texts))
    assert raw.shape == (len(texts), N_EMBD) and raw.dtype == np.float32 and np.isfinite(raw).all()
    # The same text gives the same vector (to float rounding: llama.cpp's batched kernels are not bit-exact).
    assert np.allclose(raw[0], raw[2], atol=1e-4)
    assert np.linalg.matrix_rank(raw[[0, 1, 3, 4]]) == 4  # different texts give different vectors
    assert not np.allclose(raw[5], raw[6])  # the texts beyond the first batch of 8 are embedded too
    one = np.asarray(provider.embed_query(texts[1]))
    assert one.shape == (N_EMBD,) and np.allclose(one, raw[1], atol=1e-5)  # alone or batched: the same vector

    rows = embed_documents(provider, texts)
    assert rows.shape == (len(texts), N_EMBD) and rows.flags.c_contiguous
    assert np.allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-5)
    query = embed_query(provider, texts[0])
    assert np.isclose(np.linalg.norm(query), 1.0, atol=1e-5) and np.allclose(query, rows[0], atol=1e-5)


def test_gguf_model_drives_a_hybrid_memory_search(tmp_path, gguf_path):
    ws = tmp_path / 'ws'
    write(ws / 'MEMORY.md', '# Facts\n\nPrefers tabs over spaces.\nThe deploy key lives in the team vault.\n')
    write(ws / 'memory' / 'car.md', 'The car needs new tyres before winter.\n')
    config = memory_config(tmp_path, provider='local', local={'modelPath': str(gguf_path)})
    with memsift.MemoryIndex(ws, config) as index:
        assert (index.provider.id, index.provider.model, index.provider.dims) == ('local', 'tiny-bert.gguf', N_EMBD)
        synced = index.sync()
        assert sorted(synced.added) == ['MEMORY.md', 'memory/car.md']
        result = index.search('deploy key vault')
        assert result.mode == 'hybrid' and not result.unavailable
        assert result.results[0].path == 'MEMORY.md'
        data = result.to_dict()
        assert (data['provider'], data['model'], data['mode']) == ('local', 'tiny-bert.gguf', 'hybrid')
        assert index.status()['files'] == 2
    assert any((tmp_path / 'state').iterdir())  # the store lives where the config put it


@pytest.mark.parametrize('kind', ['missing', 'corrupt'])
def test_unusable_gguf_degrades_to_keyword_search_naming_the_file(tmp_path, kind):
    model = tmp_path / f'{kind}.gguf'
    if kind == 'corrupt':
        model.write_bytes(b'GGUF' + bytes(range(256)) * 4)  # the magic, then garbage
    with pytest.raises(memsift.ProviderError, match=f'{kind}.gguf'):
        create_provider('local', local_config(model))
    resolution = resolve_provider(local_config(model))  # local failing is silent, with the reason recorded
    assert resolution.provider is None and resolution.error is None
    assert 'local embeddings unavailable' in resolution.reason and f'{kind}.gguf' in resolution.reason
    # As another provider's fallback, an unusable GGUF is a ProviderError too: reported, never raised.
    fallback = resolve_provider(local_config(model, provider='openai', fallback='local'), env={})
    assert fallback.provider is None and "fallback 'local'" in fallback.error and f'{kind}.gguf' in fallback.error

    ws = tmp_path / 'ws'
    write(ws / 'MEMORY.md', 'The deploy key lives in the team vault.\n')
    with memsift.MemoryIndex(ws, memory_config(tmp_path, provider='local', local={'modelPath': str(model)})) as index:
        result = index.search('deploy key')
        assert result.mode == 'fts-only' and not result.unavailable
        assert [hit.path for hit in result.results] == ['MEMORY.md']
        assert result.debug['embeddingBootstrap'] == index.status()['providerReason']
        assert f'{kind}.gguf' in result.debug['embeddingBootstrap']
