"""Reranking (``query.rerank``): each hosted wire format against a real HTTP server on 127.0.0.1, the local ONNX
cross-encoder (a real tiny model built here), the deadline, and every way a reranker can fail (the search then
keeps the merged order and says why)."""

import json
import math
import threading
import time

import numpy as np
import pytest
from conftest import memory_config, write

import memsift
from memsift.config import RerankConfig, load_config
from memsift.errors import ConfigError, ProviderError
from memsift.providers.rerank import LocalReranker, create_reranker, parse_scores
from memsift.search.rerank import Rerank, normalize
from memsift.tools.agent import MemoryTools

KEY = 'rk-test-SECRET-0987654321'
QUERY = 'deploy key'
NOTES = {
    # BM25 order for "deploy key": a, then c, then b (the repeats win); only b says where the key is.
    'memory/a.md': 'Deploy key deploy key deploy key: rotate the deploy key monthly.\n',
    'memory/b.md': 'The deploy key lives in the team vault.\n',
    'memory/c.md': 'Deploy day checklist: key dates, deploy window, deploy owner.\n',
}


@pytest.fixture(autouse=True)
def no_rerank_keys(monkeypatch):
    for name in ('COHERE_API_KEY', 'CO_API_KEY', 'JINA_API_KEY'):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def ws(tmp_path):
    root = tmp_path / 'ws'
    for path, text in NOTES.items():
        write(root / path, text)
    return root


def search(tmp_path, ws, rerank=None, query=QUERY, **settings):
    """A keyword-only search (deterministic) with ``query.rerank`` set to ``rerank``."""
    query_settings = {'rerank': rerank} if rerank is not None else {}
    config = memory_config(tmp_path, provider='none', query=query_settings, **settings)
    with memsift.MemoryIndex(ws, config) as index:
        return index.search(query, min_score=0)


def paths(result):
    return [hit.path for hit in result.results]


def relevance(document):
    """What the fake rerankers believe: the note that says where the key is, then shorter notes."""
    return 0.97 if 'vault' in document else round(0.5 - len(document) / 1000, 6)


def answer(request, key='results', logits=False):
    documents = request['body']['documents']
    scores = [relevance(d) for d in documents]
    if logits:
        scores = [math.log(s / (1 - s)) * 2 for s in scores]  # outside [0, 1]: raw logits
    rows = sorted(
        ({'index': i, 'relevance_score': s} for i, s in enumerate(scores)), key=lambda r: -r['relevance_score']
    )
    return 200, {}, {key: rows, 'model': request['body'].get('model')}


# ---------------------------------------------------------------- off by default


def test_rerank_is_off_by_default_and_makes_no_request(tmp_path, ws, server):
    assert load_config(None).query.rerank == RerankConfig()
    assert RerankConfig().enabled is False
    merged = search(tmp_path, ws)
    assert paths(merged) == ['memory/a.md', 'memory/c.md', 'memory/b.md']
    disabled = {'enabled': False, 'provider': 'cohere', 'baseUrl': server.url + '/v2', 'apiKey': KEY}
    result = search(tmp_path, ws, disabled)
    assert paths(result) == paths(merged)
    assert server.requests == []
    assert not {'reranked', 'rerankMs', 'rerankSkipped'} & set(result.debug)


# ---------------------------------------------------------------- wire formats


@pytest.mark.parametrize(
    ('provider', 'base', 'env', 'reply', 'expected_body'),
    [
        (
            'cohere',
            '/v2',
            'COHERE_API_KEY',
            answer,
            {'model': 'rerank-v3.5', 'query': QUERY, 'top_n': 3},
        ),
        (
            'voyage',
            '/v1',
            'VOYAGE_API_KEY',
            lambda r: answer(r, 'data'),
            {'model': 'rerank-2.5', 'query': QUERY, 'top_k': 3},
        ),
        (
            'jina',
            '/v1',
            'JINA_API_KEY',
            answer,
            {'model': 'jina-reranker-v2-base-multilingual', 'query': QUERY, 'top_n': 3, 'return_documents': False},
        ),
    ],
)
def test_hosted_wire_formats_reorder_the_results(
    tmp_path, ws, server, monkeypatch, provider, base, env, reply, expected_body
):
    server.reply = reply
    monkeypatch.setenv(env, KEY)
    result = search(tmp_path, ws, {'enabled': True, 'provider': provider, 'baseUrl': server.url + base})
    (request,) = server.requests
    assert request['path'] == f'{base}/rerank'
    assert request['headers']['authorization'] == f'Bearer {KEY}'
    body = request['body']
    assert {k: v for k, v in body.items() if k != 'documents'} == expected_body
    assert body['documents'] == [NOTES['memory/a.md'], NOTES['memory/c.md'], NOTES['memory/b.md']]
    assert paths(result) == ['memory/b.md', 'memory/c.md', 'memory/a.md']
    expected = [relevance(NOTES[path]) for path in paths(result)]
    assert [hit.score for hit in result.results] == pytest.approx(expected) and expected[0] == 0.97
    assert result.debug['reranked'] == 3 and result.debug['rerankMs'] >= 0
    assert 'rerankSkipped' not in result.debug
    out = result.to_dict()
    assert set(out['results'][0]) == {
        'path',
        'startLine',
        'endLine',
        'score',
        'snippet',
        'source',
        'corpus',
        'citation',
    }


def test_openai_compatible_logits_are_normalized_and_no_key_is_sent(tmp_path, ws, server):
    server.reply = lambda r: answer(r, 'data', logits=True)
    rerank = {'enabled': True, 'provider': 'openai-compatible', 'baseUrl': server.url + '/v1', 'model': 'bge-reranker'}
    result = search(tmp_path, ws, rerank)
    (request,) = server.requests
    assert request['path'] == '/v1/rerank' and 'authorization' not in request['headers']
    assert request['body']['model'] == 'bge-reranker' and request['body']['top_n'] == 3
    assert paths(result) == ['memory/b.md', 'memory/c.md', 'memory/a.md']
    scores = [hit.score for hit in result.results]
    assert all(0 < s < 1 for s in scores) and scores == sorted(scores, reverse=True)
    # logistic(2 * logit(p)): the logits were doubled, so the relevance moves away from 0.5 but keeps its side
    assert scores[0] == pytest.approx(0.97**2 / (0.97**2 + 0.03**2))


def test_openai_compatible_accepts_results_and_sends_no_model_unless_set(tmp_path, ws, server):
    server.reply = answer
    result = search(tmp_path, ws, {'enabled': True, 'provider': 'openai-compatible', 'baseUrl': server.url})
    assert server.requests[0]['path'] == '/rerank' and 'model' not in server.requests[0]['body']
    assert paths(result)[0] == 'memory/b.md'


def test_keys_and_endpoints_resolve_like_the_embedding_providers(server):
    base = {'enabled': True, 'provider': 'voyage'}

    def made(search_settings, **config):
        loaded = load_config(
            {'agents': {'defaults': {'memorySearch': {'query': {'rerank': {**base, **search_settings}}}}}, **config}
        )
        return create_reranker(loaded, env={'MY_KEY': 'from-env-ref', 'VOYAGE_API_KEY': 'from-env'})

    assert made({}).api_key == 'from-env'
    assert made({}).http.base_url == 'https://api.voyageai.com/v1'
    assert made({'apiKey': {'source': 'env', 'id': 'MY_KEY'}}).api_key == 'from-env-ref'
    entry = {'models': {'providers': {'voyage': {'baseUrl': server.url + '/proxy', 'apiKey': 'from-entry'}}}}
    via_entry = made({}, **entry)
    assert (via_entry.api_key, via_entry.http.base_url) == ('from-entry', server.url + '/proxy')
    same = load_config(
        {
            'agents': {
                'defaults': {
                    'memorySearch': {
                        'provider': 'voyage',
                        'remote': {'apiKey': 'from-remote'},
                        'query': {'rerank': base},
                    }
                }
            }
        }
    )
    assert create_reranker(same, env={}).api_key == 'from-remote'
    with pytest.raises(ProviderError, match='query.rerank.apiKey or VOYAGE_API_KEY'):
        create_reranker(load_config({'agents': {'defaults': {'memorySearch': {'query': {'rerank': base}}}}}), env={})
    with pytest.raises(ProviderError, match='needs query.rerank.baseUrl'):
        create_reranker(
            load_config(
                {'agents': {'defaults': {'memorySearch': {'query': {'rerank': {'provider': 'openai-compatible'}}}}}}
            )
        )
    with pytest.raises(ProviderError, match='provider is not set'):
        create_reranker(
            load_config({'agents': {'defaults': {'memorySearch': {'query': {'rerank': {'enabled': True}}}}}})
        )


def test_top_n_bounds_the_documents_sent_and_max_results_cuts_after_reranking(tmp_path, ws, server, monkeypatch):
    server.reply = answer
    monkeypatch.setenv('COHERE_API_KEY', KEY)
    rerank = {'enabled': True, 'provider': 'cohere', 'baseUrl': server.url, 'topN': 2}
    result = search(tmp_path, ws, rerank)
    assert len(server.requests[0]['body']['documents']) == 2 and result.debug['reranked'] == 2
    assert paths(result) == ['memory/c.md', 'memory/a.md', 'memory/b.md']  # the third is past topN: left in place
    # maxResults 1 with topN 3: the reranker sees three and picks the one BM25 ranked last
    config = memory_config(tmp_path, provider='none', query={'rerank': {**rerank, 'topN': 3}, 'maxResults': 1})
    with memsift.MemoryIndex(ws, config) as index:
        top = index.search(QUERY, min_score=0)
    assert paths(top) == ['memory/b.md'] and len(server.requests[-1]['body']['documents']) == 3


def test_an_exact_path_hit_keeps_its_place(tmp_path, ws, server, monkeypatch):
    server.reply = answer
    monkeypatch.setenv('COHERE_API_KEY', KEY)
    write(ws / 'memory' / 'deploy.md', 'Deploy steps: build, tag, push.\n')
    result = search(tmp_path, ws, {'enabled': True, 'provider': 'cohere', 'baseUrl': server.url}, query='deploy.md')
    assert paths(result)[0] == 'memory/deploy.md' and result.results[0].score == 1.0
    assert 'Deploy steps: build, tag, push.' not in server.requests[0]['body']['documents']
    assert paths(result)[1] == 'memory/b.md'


def test_secrets_in_notes_are_masked_before_they_reach_the_reranker(tmp_path, ws, server, monkeypatch):
    server.reply = answer
    monkeypatch.setenv('COHERE_API_KEY', KEY)
    secret = 'sk-proj-' + 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6'
    write(ws / 'memory' / 'a.md', f'Deploy key deploy key: {secret}\n')
    search(tmp_path, ws, {'enabled': True, 'provider': 'cohere', 'baseUrl': server.url})
    assert secret not in json.dumps(server.requests[0]['body'])


# ---------------------------------------------------------------- failures keep the merged order


def body_reply(body, status=200, headers=None):
    return lambda request: (status, headers or {}, body)


@pytest.mark.parametrize(
    ('reply', 'reason'),
    [
        (body_reply(b'<html>gateway</html>'), 'not JSON'),
        (body_reply({'results': 'none'}), "without a 'results' list"),
        (body_reply({'data': []}), "without a 'results' list"),  # cohere answers `results`
        (body_reply({'results': [{'index': 0, 'relevance_score': 0.5}]}), 'scored 1 results, not the 3 sent'),
        (
            body_reply({'results': [{'index': i, 'relevance_score': 0.5} for i in (0, 1, 3)]}),
            'not one of 0 to 2',
        ),
        (
            body_reply({'results': [{'index': i, 'relevance_score': 0.5} for i in (0, 1, -1)]}),
            'not one of 0 to 2',
        ),
        (
            body_reply({'results': [{'index': i, 'relevance_score': 0.5} for i in (0, 1, 1)]}),
            'named result 1 twice',
        ),
        (
            body_reply({'results': [{'index': True, 'relevance_score': 0.5}, {'index': 1}, {'index': 2}]}),
            'not one of 0 to 2',
        ),
        (
            body_reply(
                b'{"results": [{"index": 0, "relevance_score": NaN}, {"index": 1, "relevance_score": 1},'
                b' {"index": 2, "relevance_score": 1}]}'
            ),
            'no finite relevance_score',
        ),
        (
            body_reply({'results': [{'index': i, 'relevance_score': '0.9'} for i in range(3)]}),
            'no finite relevance_score',
        ),
        (body_reply({'message': f'invalid api token {KEY}'}, status=401), '401'),
        (body_reply({'message': 'overloaded'}, status=503), '503'),
        (lambda request: (None, {}, b''), 'rerank failed'),  # the connection drops, every time
    ],
)
def test_a_failing_reranker_keeps_the_merged_order_and_says_why(
    tmp_path, ws, server, pauses, monkeypatch, reply, reason
):
    monkeypatch.setenv('COHERE_API_KEY', KEY)
    merged = search(tmp_path, ws)
    server.reply = reply
    result = search(tmp_path, ws, {'enabled': True, 'provider': 'cohere', 'baseUrl': server.url})
    assert paths(result) == paths(merged)
    assert [hit.score for hit in result.results] == [hit.score for hit in merged.results]
    skipped = result.debug['rerankSkipped']
    assert reason in skipped and skipped.startswith('cohere rerank failed')
    assert 'reranked' not in result.debug and result.debug['rerankMs'] >= 0
    assert KEY not in json.dumps(result.to_dict())


def test_a_500_then_success_is_retried(tmp_path, ws, server, pauses, monkeypatch):
    monkeypatch.setenv('COHERE_API_KEY', KEY)
    replies = [(500, {}, {'message': 'try again'})]
    server.reply = lambda request: replies.pop() if replies else answer(request)
    result = search(tmp_path, ws, {'enabled': True, 'provider': 'cohere', 'baseUrl': server.url})
    assert len(server.requests) == 2 and len(pauses) == 1
    assert paths(result)[0] == 'memory/b.md' and result.debug['reranked'] == 3


def test_a_retry_that_would_end_past_the_timeout_is_not_made(tmp_path, ws, server, pauses, monkeypatch):
    monkeypatch.setenv('COHERE_API_KEY', KEY)
    server.reply = body_reply({'message': 'slow down'}, status=429, headers={'Retry-After': '30'})
    result = search(tmp_path, ws, {'enabled': True, 'provider': 'cohere', 'baseUrl': server.url, 'timeoutMs': 1000})
    assert len(server.requests) == 1 and pauses == []
    assert '429' in result.debug['rerankSkipped'] and paths(result)[0] == 'memory/a.md'


@pytest.fixture
def slow(server):
    """The reranker answers only when the test ends (or after 30 s, a hang guard); ``server.answered`` counts its
    answers, so a search that returned while it is 0 did not wait for the reranker (no clock involved)."""
    release = threading.Event()
    server.answered = 0

    def reply(request):
        release.wait(30)
        server.answered += 1
        return answer(request)

    server.reply = reply
    yield server
    release.set()


def test_a_slow_reranker_is_cut_off_at_timeout_ms(tmp_path, ws, slow, monkeypatch):
    monkeypatch.setenv('COHERE_API_KEY', KEY)
    result = search(tmp_path, ws, {'enabled': True, 'provider': 'cohere', 'baseUrl': slow.url, 'timeoutMs': 300})
    assert slow.requests and slow.answered == 0  # the search did not wait for the reranker's answer
    assert 'no answer within' in result.debug['rerankSkipped']
    assert result.debug['rerankMs'] >= 250  # it waited for timeoutMs first
    assert paths(result) == ['memory/a.md', 'memory/c.md', 'memory/b.md']


def test_a_slow_reranker_gives_up_before_the_tool_deadline(tmp_path, ws, slow, monkeypatch):
    monkeypatch.setenv('COHERE_API_KEY', KEY)
    rerank = {'enabled': True, 'provider': 'cohere', 'baseUrl': slow.url, 'timeoutMs': 60_000}
    config = memory_config(tmp_path, provider='none', query={'rerank': rerank})
    with MemoryTools.open(ws, config, sessions_path=tmp_path / 'sessions.sqlite', sync=False, deadline_s=2.5) as tools:
        tools.index.sync()
        data = tools.memory_search(QUERY, minScore=0)
    assert slow.requests and slow.answered == 0  # the answer did not wait for the reranker (60 s timeoutMs)
    assert 'partial' not in data  # the full answer, before the deadline: only the reranker gave up
    assert 'rerankSkipped' in data['debug'] and data['debug']['rerankMs'] < 2500  # its wait fit in the deadline
    assert [hit['path'] for hit in data['results']] == ['memory/a.md', 'memory/c.md', 'memory/b.md']


def test_no_time_left_skips_the_reranker_without_a_request(tmp_path, ws, server, monkeypatch):
    monkeypatch.setenv('COHERE_API_KEY', KEY)
    config = memory_config(
        tmp_path, provider='none', query={'rerank': {'enabled': True, 'provider': 'cohere', 'baseUrl': server.url}}
    )
    with memsift.MemoryIndex(ws, config) as index:
        result = index.search(QUERY, min_score=0, deadline=time.monotonic())
        keyword_only = index.search(QUERY, min_score=0, keyword_only=True)
    assert result.debug['rerankSkipped'] == 'no time left before the search deadline'
    assert server.requests == [] and paths(result) == ['memory/a.md', 'memory/c.md', 'memory/b.md']
    assert not {'rerankSkipped', 'reranked'} & set(keyword_only.debug)  # the immediate answer skips the stage


def test_a_reranker_that_cannot_be_made_is_reported_by_every_search(tmp_path, ws, server):
    config = memory_config(tmp_path, provider='none', query={'rerank': {'enabled': True, 'provider': 'jina'}})
    with memsift.MemoryIndex(ws, config) as index:
        assert index.status()['rerank'] == {
            'enabled': True,
            'provider': 'jina',
            'model': None,
            'topN': 20,
            'error': None,
        }
        first, second = index.search(QUERY, min_score=0), index.search(QUERY, min_score=0)
        assert index.status()['rerank']['error'] == first.debug['rerankSkipped']  # status says why, too
    for result in (first, second):
        assert (
            result.debug['rerankSkipped'] == "no API key for reranker 'jina': set query.rerank.apiKey or JINA_API_KEY"
        )
        assert paths(result) == ['memory/a.md', 'memory/c.md', 'memory/b.md']


def test_a_reranker_that_raises_anything_never_fails_the_search(tmp_path, ws):
    class Broken:
        def scores(self, query, documents, deadline):
            raise RuntimeError('kaboom')

        def redact(self, text):
            return text

    stage = Rerank(
        load_config(
            {'agents': {'defaults': {'memorySearch': {'query': {'rerank': {'enabled': True, 'provider': 'local'}}}}}}
        )
    )
    stage._reranker = Broken()
    debug = {}
    ranked = [('a', 0.9), ('b', 0.5)]
    assert stage.apply(QUERY, ranked, str, debug) == ranked
    assert debug['rerankSkipped'] == 'RuntimeError: kaboom'


# ---------------------------------------------------------------- scores


def test_parse_scores_and_normalize():
    rows = [
        {'index': 2, 'relevance_score': 0.1},
        {'index': 0, 'relevance_score': 0.7},
        {'index': 1, 'relevance_score': 0},
    ]
    assert parse_scores({'data': rows}, 3, ('results', 'data')) == [0.7, 0.0, 0.1]
    assert normalize([0.0, 1.0, 0.5]) == [0.0, 1.0, 0.5]
    assert normalize([1000.0, -1000.0, 1.5]) == pytest.approx([1.0, 0.0, 1 / (1 + math.exp(-1.5))])
    with pytest.raises(ProviderError, match='not the 2 sent'):
        parse_scores({'results': rows}, 2)


# ---------------------------------------------------------------- the local ONNX cross-encoder

VOCAB = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', 'deploy', 'key', 'vault', 'kept', 'team', 'the', 'rotate', 'dates']
WEIGHTS = {'vault': 3.0}
SYNONYMS = {'kept': 'vault'}
"""What makes the model a little semantic: ``kept`` and ``vault`` are one dimension (the logit: query/document words
in common, 1 each and ``vault`` 3, minus 1.5)."""


def build_cross_encoder(folder, two_outputs=False):
    """A real ONNX cross-encoder: one-hot token embeddings, the query's and the document's bags of words (by
    token_type_ids), their weighted overlap as the logit; and its WordLevel tokenizer.json."""
    from onnx import TensorProto, helper, numpy_helper
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    vocab = {word: i for i, word in enumerate(VOCAB)}
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token='[UNK]'))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.post_processor = processors.TemplateProcessing(
        single='[CLS] $A [SEP]', pair='[CLS] $A [SEP] $B:1 [SEP]:1', special_tokens=[('[CLS]', 2), ('[SEP]', 3)]
    )
    tokenizer.save(str(folder / 'tokenizer.json'))

    embedding = np.eye(len(VOCAB), dtype=np.float32)
    embedding[:4] = 0  # special tokens and unknown words count for nothing
    for word, same in SYNONYMS.items():
        embedding[vocab[word]] = embedding[vocab[same]]
    weights = np.array([WEIGHTS.get(word, 1.0) for word in VOCAB], dtype=np.float32)
    nodes = [
        helper.make_node('Gather', ['embedding', 'input_ids'], ['x']),  # [B, L, V]
        helper.make_node('Cast', ['token_type_ids'], ['types'], to=TensorProto.FLOAT),
        helper.make_node('Cast', ['attention_mask'], ['mask'], to=TensorProto.FLOAT),
        helper.make_node('Mul', ['types', 'mask'], ['doc_mask']),
        helper.make_node('Sub', ['mask', 'doc_mask'], ['query_mask']),
        helper.make_node('Unsqueeze', ['doc_mask', 'last'], ['doc_mask3']),
        helper.make_node('Unsqueeze', ['query_mask', 'last'], ['query_mask3']),
        helper.make_node('Mul', ['x', 'doc_mask3'], ['doc_x']),
        helper.make_node('Mul', ['x', 'query_mask3'], ['query_x']),
        helper.make_node('ReduceMax', ['doc_x'], ['doc_bag'], axes=[1], keepdims=0),  # [B, V]: word present
        helper.make_node('ReduceMax', ['query_x'], ['query_bag'], axes=[1], keepdims=0),
        helper.make_node('Mul', ['doc_bag', 'query_bag'], ['common']),
        helper.make_node('Mul', ['common', 'weights'], ['weighted']),
        helper.make_node('ReduceSum', ['weighted', 'last'], ['overlap'], keepdims=1),  # [B, 1]
        helper.make_node('Sub', ['overlap', 'bias'], ['logit']),
    ]
    if two_outputs:  # [negative, positive] class logits whose difference is 2 x logit
        nodes += [
            helper.make_node('Neg', ['logit'], ['negative']),
            helper.make_node('Concat', ['negative', 'logit'], ['logits'], axis=1),
        ]
    initializers = [
        numpy_helper.from_array(embedding, 'embedding'),
        numpy_helper.from_array(weights, 'weights'),
        numpy_helper.from_array(np.array([1.5], dtype=np.float32), 'bias'),
        numpy_helper.from_array(np.array([-1], dtype=np.int64), 'last'),
    ]
    inputs = [
        helper.make_tensor_value_info(name, TensorProto.INT64, ['batch', 'tokens'])
        for name in ('input_ids', 'attention_mask', 'token_type_ids')
    ]
    output = helper.make_tensor_value_info('logits', TensorProto.FLOAT, ['batch', 2 if two_outputs else 1])
    if not two_outputs:
        nodes[-1] = helper.make_node('Sub', ['overlap', 'bias'], ['logits'])
    graph = helper.make_graph(nodes, 'cross-encoder', inputs, [output], initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 17)])
    model.ir_version = 8
    path = folder / 'cross-encoder.onnx'
    path.write_bytes(model.SerializeToString())
    return path


def sigmoid(x):
    return 1 / (1 + math.exp(-x))


@pytest.mark.parametrize('two_outputs', [False, True])
def test_the_local_onnx_cross_encoder(tmp_path, two_outputs):
    pytest.importorskip('onnxruntime')
    pytest.importorskip('onnx')
    model = build_cross_encoder(tmp_path, two_outputs)
    config = load_config(
        {'agents': {'defaults': {'memorySearch': {'query': {'rerank': {'enabled': True, 'modelPath': str(model)}}}}}}
    )
    assert config.query.rerank.provider == 'local'  # modelPath alone says local
    reranker = create_reranker(config)
    assert isinstance(reranker, LocalReranker) and reranker.model == 'cross-encoder.onnx'
    documents = ['The deploy key lives in the team vault.', 'Rotate the deploy key', 'Key dates', 'nothing here']
    scale = 2 if two_outputs else 1
    # common words with "where is the deploy key vault": the(1) deploy(1) key(1) vault(3) team? no (not in the query)
    expected = [sigmoid(scale * (w - 1.5)) for w in (6.0, 3.0, 1.0, 0.0)]
    scores = reranker.scores('where is the deploy key vault', documents * 3, time.monotonic() + 30)  # 12: 2 batches
    assert scores == pytest.approx(expected * 3, rel=1e-5)
    with pytest.raises(ProviderError, match='out of time after 0 of 4'):
        reranker.scores('deploy', documents, time.monotonic() - 1)


def test_the_local_cross_encoder_reorders_a_search(tmp_path, ws):
    pytest.importorskip('onnxruntime')
    pytest.importorskip('onnx')
    model = build_cross_encoder(tmp_path)
    query = 'where is the deploy key kept'
    assert paths(search(tmp_path, ws, query=query)) == ['memory/a.md', 'memory/c.md', 'memory/b.md']
    result = search(tmp_path, ws, {'enabled': True, 'provider': 'local', 'modelPath': str(model)}, query=query)
    assert paths(result) == ['memory/b.md', 'memory/a.md', 'memory/c.md']
    # b: the, deploy, key, vault = kept (3) -> 6 - 1.5; a: the, deploy, key -> 1.5; c: deploy, key -> 0.5
    assert [hit.score for hit in result.results] == pytest.approx([sigmoid(4.5), sigmoid(1.5), sigmoid(0.5)], rel=1e-5)
    assert result.debug['reranked'] == 3


def test_a_broken_local_model_is_skipped_with_its_reason(tmp_path, ws):
    (tmp_path / 'model.onnx').write_bytes(b'not a model')
    (tmp_path / 'tokenizer.json').write_text('{}')
    result = search(tmp_path, ws, {'enabled': True, 'modelPath': str(tmp_path / 'model.onnx')})
    assert result.debug['rerankSkipped'].startswith('cannot load the rerank model')
    missing = search(tmp_path, ws, {'enabled': True, 'modelPath': str(tmp_path / 'none.onnx')})
    assert 'is not a file' in missing.debug['rerankSkipped']
    assert paths(result) == paths(missing) == ['memory/a.md', 'memory/c.md', 'memory/b.md']


# ---------------------------------------------------------------- config


def test_rerank_config_keys():
    def rerank(**settings):
        return load_config({'agents': {'defaults': {'memorySearch': {'query': {'rerank': settings}}}}}).query.rerank

    assert rerank(topN=500).top_n == 100 and rerank(topN=5).top_n == 5
    assert rerank(provider='jina', timeoutMs=800, model='m').timeout_ms == 800
    with pytest.raises(ConfigError, match=r'memorySearch\.query\.rerank\.provider: got .bing.'):
        rerank(provider='bing')
    with pytest.raises(ConfigError, match=r'query\.rerank\.topN'):
        rerank(topN=0)
    with pytest.raises(ConfigError) as caught:
        rerank(apiKey=12345678)
    assert '12345678' not in str(caught.value)
    assert KEY not in repr(rerank(apiKey=KEY))
    layered = load_config(
        {
            'agents': {
                'defaults': {'memorySearch': {'query': {'rerank': {'enabled': True, 'provider': 'cohere'}}}},
                'list': [{'id': 'main', 'memorySearch': {'query': {'rerank': {'topN': 7}}}}],
            }
        }
    ).query.rerank
    assert (layered.enabled, layered.provider, layered.top_n) == (True, 'cohere', 7)
