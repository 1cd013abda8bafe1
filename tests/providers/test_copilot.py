"""The github-copilot adapter against a real HTTP server on 127.0.0.1 playing both GitHub's token exchange and the
Copilot API (no network)."""

import time

import pytest

import memsift
from memsift.providers import MissingApiKey
from memsift.providers.copilot import CopilotEmbeddings, embedding_models

GITHUB_TOKEN = 'ghu_GITHUB-SECRET-1234567890'
TOKEN_PATH = '/copilot_internal/v2/token'
ENV_NAMES = ('COPILOT_GITHUB_TOKEN', 'GH_TOKEN', 'GITHUB_TOKEN', 'COPILOT_TOKEN_URL')
AGENT = f'memsift/{memsift.__version__}'


@pytest.fixture(autouse=True)
def no_token_env(monkeypatch):
    for name in ENV_NAMES:
        monkeypatch.delenv(name, raising=False)


def vec(text, dims=4):
    return [float(len(text) % 7 + 1)] + [float(i + 1) for i in range(dims - 1)]


MODELS = {
    'data': [
        {'id': 'gpt-4o', 'supported_endpoints': ['/chat/completions']},
        {'id': 'text-embedding-ada-002', 'supported_endpoints': ['/embeddings']},
        {'id': 'text-embedding-3-small', 'supported_endpoints': ['/embeddings']},
    ]
}


class Copilot:
    """A fake GitHub + Copilot API: hands out tokens ``cop-1``, ``cop-2``, ... and embeds with any of them
    except those in ``revoked``."""

    def __init__(self, server, models=MODELS, ttl=3600, api=None):
        self.server, self.models, self.ttl, self.api = server, models, ttl, api
        self.issued = 0
        self.revoked = set()
        self.embeddings = None  # override: request -> (status, headers, body)
        server.reply = self

    def __call__(self, request):
        path = request['path']
        if path == TOKEN_PATH:
            self.issued += 1
            answer = {'token': f'cop-{self.issued}', 'expires_at': int(time.time() + self.ttl)}
            if self.api:
                answer['endpoints'] = {'api': self.api}
            return 200, {}, answer
        token = request['headers'].get('authorization', '').removeprefix('Bearer ')
        if token in self.revoked:
            return 401, {}, {'error': 'token expired'}
        if path.endswith('/models'):
            return 200, {}, self.models
        if path.endswith('/embeddings'):
            if self.embeddings is not None:
                return self.embeddings(request)
            inputs = request['body']['input']
            data = [{'index': i, 'embedding': vec(t)} for i, t in enumerate(inputs)]
            return 200, {}, {'data': list(reversed(data)), 'model': request['body']['model']}
        return 404, {}, {'error': 'not found'}


def make(server, env=None, model=None, base='', **remote):
    search = {
        'provider': 'github-copilot',
        'remote': remote if base is None else {'baseUrl': server.url + base, **remote},
    }
    if model:
        search['model'] = model
    config = memsift.load_config({'agents': {'defaults': {'memorySearch': search}}})
    env = {'COPILOT_GITHUB_TOKEN': GITHUB_TOKEN, 'COPILOT_TOKEN_URL': server.url + TOKEN_PATH} if env is None else env
    return CopilotEmbeddings(config, env)


def exchanges(server):
    return [r for r in server.requests if r['path'] == TOKEN_PATH]


# ---------------------------------------------------------------- token exchange and wire format


def test_token_exchange_discovery_and_embeddings_requests(server):
    Copilot(server)
    provider = make(server, base='/v1')
    assert server.requests == []  # construction never touches the network
    assert provider.embed_documents(['one', 'three']) == [vec('one'), vec('three')]
    assert server.paths() == [('GET', TOKEN_PATH), ('GET', '/v1/models'), ('POST', '/v1/embeddings')]
    token, models, embed = server.requests
    ide = {
        'editor-version': AGENT,
        'editor-plugin-version': AGENT,
        'copilot-integration-id': 'vscode-chat',
        'user-agent': AGENT,
    }
    assert token['headers']['authorization'] == f'token {GITHUB_TOKEN}'
    assert token['headers']['accept'] == 'application/json' and ide.items() <= token['headers'].items()
    for request in (models, embed):
        assert request['headers']['authorization'] == 'Bearer cop-1' and ide.items() <= request['headers'].items()
        assert GITHUB_TOKEN not in str(request)  # the GitHub token only goes to the exchange
    assert embed['body'] == {'model': 'text-embedding-3-small', 'input': ['one', 'three']}
    assert provider.dims == 1536 and provider.model == 'text-embedding-3-small'
    assert len(server.requests) == 3  # a known model: no probe


def test_api_base_comes_from_the_token_without_remote_base_url(server):
    Copilot(server, api=server.url + '/api')
    provider = make(server, base=None)
    assert provider.embed_query('q') == vec('q')
    assert server.paths() == [('GET', TOKEN_PATH), ('GET', '/api/models'), ('POST', '/api/embeddings')]
    assert provider.http.base_url == server.url + '/api'


def test_remote_base_url_wins_over_the_token_endpoint(server):
    Copilot(server, api='http://elsewhere.invalid')
    make(server, base='/mine').embed_query('q')
    assert server.paths()[1:] == [('GET', '/mine/models'), ('POST', '/mine/embeddings')]


def test_copilot_token_is_reused_until_near_expiry(server):
    fake = Copilot(server, ttl=3600)
    provider = make(server)
    for text in ('a', 'b', 'c'):
        provider.embed_query(text)
    assert len(exchanges(server)) == 1
    assert len([r for r in server.requests if r['path'] == '/models']) == 1  # discovery happens once
    fake.ttl = 30  # inside the 60 s refresh margin: every call exchanges again
    provider = make(server)
    provider.embed_query('a')
    provider.embed_query('b')
    assert len(exchanges(server)) == 3
    posts = [r for r in server.requests if r['method'] == 'POST']
    assert [r['headers']['authorization'] for r in posts[-2:]] == ['Bearer cop-2', 'Bearer cop-3']
    fake.ttl = -10  # already expired
    provider = make(server)
    provider.embed_query('a')
    provider.embed_query('b')
    assert len(exchanges(server)) == 5


def test_a_401_causes_exactly_one_new_exchange_then_success(server):
    fake = Copilot(server)
    provider = make(server)
    provider.embed_query('warm up')
    fake.revoked.add('cop-1')
    assert provider.embed_query('q') == vec('q')
    assert len(exchanges(server)) == 2
    assert [(r['method'], r['headers']['authorization']) for r in server.requests[-3:]] == [
        ('POST', 'Bearer cop-1'),
        ('GET', f'token {GITHUB_TOKEN}'),
        ('POST', 'Bearer cop-2'),
    ]
    fake.revoked.update({'cop-2', 'cop-3'})  # a second 401 is an error, not a loop
    before = len(server.requests)
    with pytest.raises(memsift.ProviderError, match='401'):
        provider.embed_query('q')
    assert len(server.requests) - before == 3 and len(exchanges(server)) == 3


def test_concurrent_401s_share_one_new_exchange(server):
    fake = Copilot(server)
    provider = make(server)
    provider.embed_query('warm up')
    fake.revoked.add('cop-1')
    texts = [f'{i:02d}' + 'x' * 3000 for i in range(12)]  # 12 requests, 4 in flight
    assert provider.embed_documents(texts) == [vec(t) for t in texts]
    assert len(exchanges(server)) == 2


# ---------------------------------------------------------------- model discovery and choice


def test_embedding_models_are_found_by_endpoint_or_by_id():
    answer = {
        'data': [
            {'id': 'gpt-4o', 'supported_endpoints': ['/chat/completions', '/responses']},
            {'id': 'house-vectors', 'supported_endpoints': ['/v1/embeddings']},
            {'id': 'Custom-Embedding-v2'},
            {'id': 'textembedding-nope'},
            {'id': 'text-embedding-3-large', 'supported_endpoints': []},
            {'supported_endpoints': ['/embeddings']},
            'junk',
        ]
    }
    assert embedding_models(answer) == ['house-vectors', 'Custom-Embedding-v2', 'text-embedding-3-large']
    assert embedding_models([{'id': 'text-embedding-ada-002'}]) == ['text-embedding-ada-002']  # a bare list
    assert embedding_models({'error': 'x'}) == [] and embedding_models(None) == []


@pytest.mark.parametrize(
    ('offered', 'chosen'),
    [
        (['text-embedding-ada-002', 'text-embedding-3-large', 'text-embedding-3-small'], 'text-embedding-3-small'),
        (['text-embedding-ada-002', 'text-embedding-3-large'], 'text-embedding-3-large'),
        (['house-embedding', 'text-embedding-ada-002'], 'text-embedding-ada-002'),
        (['house-embedding', 'other-embedding'], 'house-embedding'),
    ],
)
def test_default_model_preference(server, offered, chosen):
    Copilot(server, models=[{'id': 'gpt-4o'}] + [{'id': m} for m in offered])
    provider = make(server)
    provider.embed_query('q')
    assert provider.model == chosen and server.requests[-1]['body']['model'] == chosen


def test_unknown_model_dims_come_from_one_probe(server):
    Copilot(server, models={'data': [{'id': 'house-vectors', 'supported_endpoints': ['/embeddings']}]})
    provider = make(server)
    assert provider.dims == 4
    assert server.paths() == [('GET', TOKEN_PATH), ('GET', '/models'), ('POST', '/embeddings')]
    assert server.requests[-1]['body'] == {'model': 'house-vectors', 'input': ['dimension probe']}


def test_configured_model_must_be_offered(server):
    Copilot(server)
    provider = make(server, model='text-embedding-3-large')
    with pytest.raises(memsift.ProviderError) as info:
        provider.embed_query('q')
    message = str(info.value)
    assert "'text-embedding-3-large' is not offered" in message
    assert 'text-embedding-ada-002, text-embedding-3-small' in message and 'gpt-4o' not in message
    assert ('POST', '/embeddings') not in server.paths()
    provider = make(server, model='text-embedding-ada-002')
    provider.embed_query('q')
    assert server.requests[-1]['body']['model'] == 'text-embedding-ada-002' and provider.dims == 1536


def test_no_embedding_model_offered_is_an_error(server):
    Copilot(server, models={'data': [{'id': 'gpt-4o', 'supported_endpoints': ['/chat/completions']}]})
    with pytest.raises(memsift.ProviderError, match='no embedding model'):
        make(server).embed_query('q')


# ---------------------------------------------------------------- strict answers


@pytest.mark.parametrize(
    ('body', 'match'),
    [
        ({'data': [{'index': 0, 'embedding': [1.0, 2.0]}]}, 'no embedding for index 1 of 2'),
        ({'data': [{'embedding': [1.0]}, {'index': 1, 'embedding': [1.0]}]}, r'data\[0\] has index None'),
        (
            {'data': [{'index': 0, 'embedding': [1.0]}, {'index': 0, 'embedding': [1.0]}]},
            'index 0 appears more than once',
        ),
        ({'data': [{'index': 0, 'embedding': [1.0]}, {'index': 2, 'embedding': [1.0]}]}, 'has index 2, expected 0..1'),
        ({'data': [{'index': 0, 'embedding': []}, {'index': 1, 'embedding': [1.0]}]}, 'index 0 is not a non-empty'),
        ({'data': [{'index': 0, 'embedding': [1.0]}, {'index': 1, 'embedding': ['1']}]}, 'index 1 is not a non-empty'),
        ({'data': [{'index': True, 'embedding': [1.0]}, {'index': 1, 'embedding': [1.0]}]}, 'has index True'),
        (
            b'{"data": [{"index": 0, "embedding": [NaN, 1.0]}, {"index": 1, "embedding": [1.0, 2.0]}]}',
            'index 0 is not a non-empty list of finite numbers',
        ),
        (b'{"data": [{"index": 0, "embedding": [1.0]}, {"index": 1, "embedding": [Infinity]}]}', 'index 1'),
        ({'object': 'list'}, 'no data list'),
    ],
)
def test_malformed_answers_are_clear_errors(server, body, match):
    fake = Copilot(server)
    fake.embeddings = lambda request: (200, {}, body)
    with pytest.raises(memsift.ProviderError, match=match):
        make(server).embed_documents(['a', 'b'])


# ---------------------------------------------------------------- credentials and secrecy


def test_github_token_precedence(server):
    Copilot(server)
    url = server.url + TOKEN_PATH
    env = {'GITHUB_TOKEN': 'gh-three', 'GH_TOKEN': 'gh-two', 'COPILOT_GITHUB_TOKEN': 'gh-one', 'COPILOT_TOKEN_URL': url}
    for drop, expected in ((None, 'gh-one'), ('COPILOT_GITHUB_TOKEN', 'gh-two'), ('GH_TOKEN', 'gh-three')):
        env.pop(drop, None)
        make(server, env=dict(env)).embed_query('q')
        assert exchanges(server)[-1]['headers']['authorization'] == f'token {expected}'
    make(server, env=dict(env), apiKey='gh-config').embed_query('q')  # remote.apiKey comes first
    assert exchanges(server)[-1]['headers']['authorization'] == 'token gh-config'


def test_process_environment_is_used_only_without_an_env_mapping(server, monkeypatch):
    Copilot(server)
    monkeypatch.setenv('GH_TOKEN', 'gh-process')
    with pytest.raises(MissingApiKey):
        make(server, env={'COPILOT_TOKEN_URL': server.url + TOKEN_PATH})
    provider = make(server, env={'GH_TOKEN': 'gh-mapping'})
    assert provider.api_key == 'gh-mapping' and provider.token_url.startswith('https://api.github.com/')


def test_missing_github_token_is_missing_api_key(server):
    with pytest.raises(MissingApiKey) as info:
        make(server, env={'COPILOT_TOKEN_URL': server.url + TOKEN_PATH})
    for name in ('COPILOT_GITHUB_TOKEN', 'GH_TOKEN', 'GITHUB_TOKEN', 'remote.apiKey'):
        assert name in str(info.value)
    assert server.requests == []


def test_tokens_never_appear_in_errors(server):
    fake = Copilot(server)
    server.reply = lambda r: (403, {}, {'message': f'token {GITHUB_TOKEN} has no Copilot seat'})
    with pytest.raises(memsift.ProviderError) as info:
        make(server).embed_query('q')
    message = str(info.value)
    assert 'token exchange: 403' in message and GITHUB_TOKEN not in message and '***' in message
    assert 'Copilot access' in message

    def echo(request):  # the API echoes whatever credentials it was sent
        if request['path'] == TOKEN_PATH:
            return fake(request)
        return 403, {}, {'message': f'bad credentials {request["headers"]["authorization"]} / {GITHUB_TOKEN}'}

    server.reply = echo
    with pytest.raises(memsift.ProviderError) as info:
        make(server).embed_query('q')  # fails at GET /models
    assert 'model discovery: 403' in str(info.value)
    assert 'cop-' not in str(info.value) and GITHUB_TOKEN not in str(info.value)
    server.reply = fake
    fake.embeddings = echo
    with pytest.raises(memsift.ProviderError) as info:
        make(server).embed_query('q')  # fails at POST /embeddings
    assert '403' in str(info.value) and 'cop-' not in str(info.value) and GITHUB_TOKEN not in str(info.value)


def test_exchange_failures_are_provider_errors(server):
    server.reply = lambda r: (302, {'Location': 'http://example.com/'}, b'')
    with pytest.raises(memsift.ProviderError, match='token exchange: 302 redirect refused'):
        make(server).embed_query('q')
    server.reply = lambda r: (200, {}, {'expires_at': 1})
    with pytest.raises(memsift.ProviderError, match='the answer has no token'):
        make(server).embed_query('q')
    server.reply = lambda r: (200, {}, b'<html>')
    with pytest.raises(memsift.ProviderError, match='not JSON'):
        make(server).embed_query('q')
    server.reply = lambda r: (None, {}, b'')
    with pytest.raises(memsift.ProviderError, match='token exchange'):
        make(server).embed_query('q')
