"""The Bedrock adapter: SigV4 against AWS's published vectors, and every model family against a real HTTP server on
127.0.0.1 that checks the signature of each request it receives."""

import json
import threading
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import memsift
from memsift.providers import ADAPTERS, MissingApiKey, resolve_provider
from memsift.providers.bedrock import BedrockEmbeddings, canonical_request, sign_v4, signing_key

ACCESS = 'AKIDEXAMPLE'
SECRET = 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY'
TOKEN = 'FQoGZXIvYXdzEXAMPLE-session-token-SECRET'
BEARER = 'ABSKQmVkcm9ja0FQSUtleS1BEARER-SECRET'
AWS_ENV = (
    'AWS_ACCESS_KEY_ID',
    'AWS_SECRET_ACCESS_KEY',
    'AWS_SESSION_TOKEN',
    'AWS_BEARER_TOKEN_BEDROCK',
    'AWS_REGION',
    'AWS_DEFAULT_REGION',
    'AWS_PROFILE',
)
SIGV4 = {'AWS_ACCESS_KEY_ID': ACCESS, 'AWS_SECRET_ACCESS_KEY': SECRET, 'AWS_REGION': 'eu-west-1'}
SUITE_TIME = datetime(2015, 8, 30, 12, 36, tzinfo=timezone.utc)


@pytest.fixture(autouse=True)
def no_aws_env(monkeypatch):
    """The developer's AWS settings never leak into a test."""
    for name in AWS_ENV:
        monkeypatch.delenv(name, raising=False)
    # botocore's chain (memsift[aws]) would otherwise read the developer's ~/.aws and ask the instance metadata
    # service, an address outside this machine.
    monkeypatch.setenv('AWS_EC2_METADATA_DISABLED', 'true')
    monkeypatch.setenv('AWS_CONFIG_FILE', '/nonexistent/aws-config')
    monkeypatch.setenv('AWS_SHARED_CREDENTIALS_FILE', '/nonexistent/aws-credentials')


# ---------------------------------------------------------------- SigV4 published vectors


def test_signing_key_derivation_matches_the_aws_example():
    key = signing_key(SECRET, '20150830', 'us-east-1', 'iam')
    assert key.hex() == 'c4afb1cc5771d871763a393e44b703571b55cc28424d1a5e86da6ed3c154a4b9'


def test_iam_list_users_example():
    headers = sign_v4(
        'GET',
        'https://iam.amazonaws.com/?Action=ListUsers&Version=2010-05-08',
        {'Content-Type': 'application/x-www-form-urlencoded; charset=utf-8'},
        b'',
        access_key=ACCESS,
        secret_key=SECRET,
        region='us-east-1',
        service='iam',
        now=SUITE_TIME,
    )
    assert headers == {
        'X-Amz-Date': '20150830T123600Z',
        'Authorization': 'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, '
        'SignedHeaders=content-type;host;x-amz-date, '
        'Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7',
    }


@pytest.mark.parametrize(
    ('method', 'url', 'signature'),
    [
        ('GET', 'https://example.amazonaws.com/', '5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31'),
        ('POST', 'https://example.amazonaws.com/', '5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b'),
        (
            'GET',
            'https://example.amazonaws.com/?Param2=value2&Param1=value1',
            'b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500',
        ),
    ],
    ids=['get-vanilla', 'post-vanilla', 'get-vanilla-query-order-key-case'],
)
def test_aws_sigv4_test_suite(method, url, signature):
    headers = sign_v4(
        method,
        url,
        {},
        b'',
        access_key=ACCESS,
        secret_key=SECRET,
        region='us-east-1',
        service='service',
        now=SUITE_TIME,
    )
    assert headers['Authorization'] == (
        'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/'
        f'aws4_request, SignedHeaders=host;x-amz-date, Signature={signature}'
    )


def test_canonical_request_double_encodes_the_model_path_and_signs_the_session_token():
    url = 'https://bedrock-runtime.us-east-1.amazonaws.com/model/amazon.titan-embed-text-v2%3A0/invoke'
    text, signed = canonical_request('POST', url, {'Content-Type': 'application/json'}, b'{}')
    lines = text.split('\n')
    assert lines[1] == '/model/amazon.titan-embed-text-v2%253A0/invoke'  # non-S3 services encode twice
    assert lines[3] == 'content-type:application/json' and lines[4] == 'host:bedrock-runtime.us-east-1.amazonaws.com'
    assert signed == 'content-type;host' and lines[-1] == (
        '44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a'
    )  # sha256(b'{}')
    headers = sign_v4(
        'POST',
        url,
        {},
        '{}',
        access_key=ACCESS,
        secret_key=SECRET,
        region='us-east-1',
        service='bedrock',
        now=SUITE_TIME,
        session_token=TOKEN,
    )
    assert headers['X-Amz-Security-Token'] == TOKEN
    assert 'SignedHeaders=host;x-amz-date;x-amz-security-token,' in headers['Authorization']


# ---------------------------------------------------------------- a Bedrock Runtime on 127.0.0.1


class Bedrock(ThreadingHTTPServer):
    """Records each request, checks its SigV4 signature with ``secret`` (unless it carries a Bearer token) and
    answers with ``self.reply(request) -> (status, body)``."""

    daemon_threads = True

    def __init__(self):
        super().__init__(('127.0.0.1', 0), Handler)
        self.requests = []
        self.reply = None
        self.secret = SECRET
        self.url = f'http://127.0.0.1:{self.server_address[1]}'


def verify_sigv4(request, secret):
    """Recompute the signature of a received request; return the credential scope it claims."""
    headers = request['headers']
    auth = dict(part.split('=', 1) for part in headers['authorization'].removeprefix('AWS4-HMAC-SHA256 ').split(', '))
    access, date, region, service, _ = auth['Credential'].split('/')
    if isinstance(secret, dict):  # keys that rotate (temporary credentials)
        secret = secret[access]
    names = auth['SignedHeaders'].split(';')
    assert {'host', 'content-type', 'x-amz-date'} <= set(names)
    assert ('x-amz-security-token' in names) == ('x-amz-security-token' in headers)
    stamp = datetime.strptime(headers['x-amz-date'], '%Y%m%dT%H%M%SZ')
    assert stamp.strftime('%Y%m%d') == date
    others = {n: headers[n] for n in names if n not in ('x-amz-date', 'x-amz-security-token')}
    expected = sign_v4(
        'POST',
        f'http://{headers["host"]}{request["path"]}',
        others,
        request['raw'],
        access_key=access,
        secret_key=secret,
        region=region,
        service=service,
        now=stamp,
        session_token=headers.get('x-amz-security-token'),
    )
    assert headers['authorization'] == expected['Authorization'], 'signature mismatch'
    return region, service


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):  # noqa: N802 - http.server's naming
        raw = self.rfile.read(int(self.headers.get('content-length', 0)))
        request = {
            'path': self.path,
            'headers': {k.lower(): v for k, v in self.headers.items()},
            'raw': raw,
            'body': json.loads(raw),
        }
        if not request['headers'].get('authorization', '').startswith('Bearer '):
            try:
                request['scope'] = verify_sigv4(request, self.server.secret)
                request['access'] = request['headers']['authorization'].split('Credential=')[1].split('/')[0]
            except AssertionError as exc:
                request['error'] = str(exc)
        self.server.requests.append(request)
        status, body = (
            (403, {'message': 'The request signature we calculated does not match'})
            if 'error' in request
            else self.server.reply(request)
        )
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def server():
    srv = Bedrock()
    thread = threading.Thread(target=srv.serve_forever, kwargs={'poll_interval': 0.05}, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def vec(text, dims=4):
    return [float(len(text) % 7 + 1)] + [float(i + 1) for i in range(dims - 1)]


def reply(request):
    """A Bedrock model's answer, in the format of the family the body belongs to."""
    body = request['body']
    if 'inputText' in body:
        return 200, {'embedding': vec(body['inputText']), 'inputTextTokenCount': 1}
    if 'singleEmbeddingParams' in body:
        text = body['singleEmbeddingParams']['text']['value']
        return 200, {'embeddings': [{'embeddingType': 'TEXT', 'embedding': vec(text)}]}
    vectors = [vec(t) for t in body['texts']]
    return 200, {'embeddings': {'float': vectors} if 'embedding_types' in body else vectors}


def bedrock(server, env, model=None, **search):
    search = {'provider': 'bedrock', 'remote': {'baseUrl': server.url, **search.pop('remote', {})}, **search}
    if model:
        search['model'] = model
    return BedrockEmbeddings(memsift.load_config({'agents': {'defaults': {'memorySearch': search}}}), env)


# ---------------------------------------------------------------- model families, signed end to end


def test_titan_v2_default_model_signed_path_and_body(server):
    server.reply = reply
    provider = bedrock(server, SIGV4)
    assert provider.model == 'amazon.titan-embed-text-v2:0' and provider.dims == 1024
    assert provider.embed_query('where') == vec('where')
    request = server.requests[0]
    assert 'error' not in request and request['scope'] == ('eu-west-1', 'bedrock')
    assert request['path'] == '/model/amazon.titan-embed-text-v2%3A0/invoke'
    assert request['body'] == {'inputText': 'where', 'dimensions': 1024, 'normalize': True}
    assert request['headers']['content-type'] == 'application/json'
    assert request['headers']['accept'] == 'application/json'
    assert 'x-amz-security-token' not in request['headers']


def test_titan_v2_dimensions_and_one_parallel_call_per_text(server):
    server.reply = reply
    provider = bedrock(server, SIGV4, outputDimensionality=256)
    texts = ['a', 'bb', 'ccc', 'dddd', 'eeeee']
    assert provider.embed_documents(texts) == [vec(t) for t in texts]  # order kept across parallel calls
    assert len(server.requests) == 5 and not any('error' in r for r in server.requests)
    assert sorted(r['body']['inputText'] for r in server.requests) == texts
    assert {r['body']['dimensions'] for r in server.requests} == {256} and provider.dims == 256


@pytest.mark.parametrize('model', ['amazon.titan-embed-text-v1', 'amazon.titan-embed-g1-text-02'])
def test_titan_v1_body(server, model):
    server.reply = reply
    provider = bedrock(server, SIGV4, model)
    assert provider.embed_documents(['doc']) == [vec('doc')]
    assert server.requests[0]['body'] == {'inputText': 'doc'} and provider.dims == 1536
    assert server.requests[0]['path'] == f'/model/{model}/invoke'


@pytest.mark.parametrize('model', ['cohere.embed-english-v3', 'cohere.embed-multilingual-v3'])
def test_cohere_v3_query_and_document_input_types(server, model):
    server.reply = reply
    provider = bedrock(server, SIGV4, model)
    assert provider.embed_query('q') == vec('q')
    assert provider.embed_documents(['one', 'three']) == [vec('one'), vec('three')]
    query, docs = server.requests
    assert query['body'] == {'texts': ['q'], 'input_type': 'search_query', 'truncate': 'END'}
    assert docs['body'] == {'texts': ['one', 'three'], 'input_type': 'search_document', 'truncate': 'END'}
    assert provider.dims == 1024 and not any('error' in r for r in server.requests)


def test_cohere_sends_at_most_96_texts_per_call(server):
    server.reply = reply
    texts = [f't{i}' for i in range(200)]
    assert bedrock(server, SIGV4, 'cohere.embed-english-v3').embed_documents(texts) == [vec(t) for t in texts]
    assert sorted(len(r['body']['texts']) for r in server.requests) == [8, 96, 96]


def test_cohere_v4_embedding_types_and_output_dimension(server):
    server.reply = reply
    provider = bedrock(server, SIGV4, 'cohere.embed-v4:0')
    assert provider.dims == 1536
    provider.embed_query('q')
    assert server.requests[0]['path'] == '/model/cohere.embed-v4%3A0/invoke'
    assert server.requests[0]['body'] == {
        'texts': ['q'],
        'input_type': 'search_query',
        'truncate': 'END',
        'embedding_types': ['float'],
    }
    sized = bedrock(server, SIGV4, 'cohere.embed-v4:0', outputDimensionality=512)
    assert sized.embed_documents(['d']) == [vec('d')] and sized.dims == 512
    assert server.requests[1]['body'] == {
        'texts': ['d'],
        'input_type': 'search_document',
        'truncate': 'END',
        'embedding_types': ['float'],
        'output_dimension': 512,
    }


def test_nova_single_embedding_body(server):
    server.reply = reply
    provider = bedrock(server, SIGV4, 'amazon.nova-2-multimodal-embeddings-v1:0', outputDimensionality=384)
    assert provider.embed_documents(['note']) == [vec('note')]
    assert server.requests[0]['path'] == '/model/amazon.nova-2-multimodal-embeddings-v1%3A0/invoke'
    assert server.requests[0]['body'] == {
        'taskType': 'SINGLE_EMBEDDING',
        'singleEmbeddingParams': {
            'embeddingPurpose': 'GENERIC_INDEX',
            'embeddingDimension': 384,
            'text': {'truncationMode': 'END', 'value': 'note'},
        },
    }
    assert bedrock(server, SIGV4, 'amazon.nova-2-multimodal-embeddings-v1:0').dims == 1024


def test_inference_profile_ids_are_one_encoded_path_segment(server):
    server.reply = reply
    arn = 'arn:aws:bedrock:eu-west-1:123456789012:inference-profile/eu.cohere.embed-v4:0'
    provider = bedrock(server, SIGV4, arn)
    assert provider.dims == 1536  # the family is recognised inside the ARN: no probe
    provider.embed_query('q')
    request = server.requests[0]
    assert request['path'] == (
        '/model/arn%3Aaws%3Abedrock%3Aeu-west-1%3A123456789012%3Ainference-profile%2Feu.cohere.embed-v4%3A0/invoke'
    )
    assert 'error' not in request and request['body']['embedding_types'] == ['float']


# ---------------------------------------------------------------- credentials and region


def test_session_token_is_sent_and_signed(server):
    server.reply = reply
    bedrock(server, {**SIGV4, 'AWS_SESSION_TOKEN': TOKEN}).embed_query('q')
    request = server.requests[0]
    assert request['headers']['x-amz-security-token'] == TOKEN and 'error' not in request
    assert 'x-amz-security-token' in request['headers']['authorization']


def test_bearer_token_from_env_or_api_key_is_not_signed(server):
    server.reply = reply
    bedrock(server, {**SIGV4, 'AWS_BEARER_TOKEN_BEDROCK': BEARER}).embed_query('q')
    bedrock(server, {}, remote={'apiKey': BEARER}).embed_query('q')
    for request in server.requests:
        assert request['headers']['authorization'] == f'Bearer {BEARER}'
        assert 'x-amz-date' not in request['headers'] and 'scope' not in request


def test_missing_credentials(server):
    for env in ({}, {'AWS_ACCESS_KEY_ID': ACCESS}, {'AWS_SECRET_ACCESS_KEY': SECRET, 'AWS_REGION': 'us-west-2'}):
        with pytest.raises(MissingApiKey, match='AWS_BEARER_TOKEN_BEDROCK.*AWS_ACCESS_KEY_ID and AWS_SECRET_ACC'):
            bedrock(server, env)
    assert server.requests == []


def test_missing_credentials_through_provider_resolution(monkeypatch):
    monkeypatch.setitem(ADAPTERS, 'bedrock', BedrockEmbeddings)  # until the package registers it
    resolution = resolve_provider(
        memsift.load_config({'agents': {'defaults': {'memorySearch': {'provider': 'bedrock'}}}}), {}
    )
    assert resolution.provider is None and 'AWS_ACCESS_KEY_ID' in resolution.error


@pytest.mark.parametrize(
    ('env', 'region'),
    [
        ({'AWS_REGION': 'ap-south-1', 'AWS_DEFAULT_REGION': 'ca-central-1'}, 'ap-south-1'),
        ({'AWS_DEFAULT_REGION': 'ca-central-1'}, 'ca-central-1'),
        ({}, 'us-east-1'),
    ],
)
def test_region_resolution_order(server, env, region):
    server.reply = reply
    provider = bedrock(server, {'AWS_ACCESS_KEY_ID': ACCESS, 'AWS_SECRET_ACCESS_KEY': SECRET, **env})
    provider.embed_query('q')
    assert provider.region == region and server.requests[0]['scope'] == (region, 'bedrock')
    assert provider.http.base_url == server.url  # a base URL without a region is still the endpoint


def test_region_and_endpoint_from_the_base_url_or_the_environment():
    env = {**SIGV4, 'AWS_REGION': 'us-west-2'}
    config = memsift.load_config(
        {
            'agents': {
                'defaults': {
                    'memorySearch': {
                        'provider': 'bedrock',
                        'remote': {'baseUrl': 'https://bedrock-runtime.eu-central-1.amazonaws.com'},
                    }
                }
            }
        }
    )
    provider = BedrockEmbeddings(config, env)
    assert provider.region == 'eu-central-1'  # the base URL beats AWS_REGION
    assert provider.http.base_url == 'https://bedrock-runtime.eu-central-1.amazonaws.com'
    default = BedrockEmbeddings(
        memsift.load_config({'agents': {'defaults': {'memorySearch': {'provider': 'bedrock'}}}}), env
    )
    assert default.region == 'us-west-2'
    assert default.http.base_url == 'https://bedrock-runtime.us-west-2.amazonaws.com'
    assert default.http.url(default._path()).endswith('/model/amazon.titan-embed-text-v2%3A0/invoke')


# ---------------------------------------------------------------- failures


def test_403_is_a_provider_error_without_secrets(server):
    server.reply = lambda r: (403, {'message': f'signature mismatch for {SECRET} and {TOKEN}'})
    provider = bedrock(server, {**SIGV4, 'AWS_SESSION_TOKEN': TOKEN})
    with pytest.raises(memsift.ProviderError) as info:
        provider.embed_query('q')
    message = str(info.value)
    assert 'bedrock embeddings failed: 403' in message and '***' in message
    assert SECRET not in message and TOKEN not in message
    assert len(server.requests) == 1  # a 403 is not retried


def test_a_wrong_secret_fails_the_servers_signature_check(server):
    server.reply = reply
    server.secret = 'another-secret'
    with pytest.raises(memsift.ProviderError, match='403'):
        bedrock(server, SIGV4).embed_query('q')
    assert server.requests[0]['error'].startswith('signature mismatch')


def test_retries_are_signed_afresh(server, pauses):
    answers = iter([(503, {'message': 'ServiceUnavailable'}), (429, {'message': 'ThrottlingException'})])
    server.reply = lambda r: next(answers, None) or reply(r)
    assert bedrock(server, SIGV4).embed_query('q') == vec('q')
    assert len(server.requests) == 3 and len(pauses) == 2
    assert not any('error' in r for r in server.requests)


@pytest.mark.parametrize(
    ('model', 'answer', 'match'),
    [
        ('cohere.embed-english-v3', {'embeddings': [[1.0, 2.0]]}, 'expected 2 vectors in embeddings, got 1'),
        ('cohere.embed-v4:0', {'embeddings': {'float': [[1.0]] * 3}}, 'expected 2 vectors in embeddings.float, got 3'),
        ('amazon.titan-embed-text-v2:0', {'unexpected': True}, 'expected 1 vectors in embedding'),
        ('amazon.nova-2-multimodal-embeddings-v1:0', {'embeddings': []}, 'expected 1 vectors'),
    ],
)
def test_wrong_vector_counts_are_provider_errors(server, model, answer, match):
    server.reply = lambda r: (200, answer)
    with pytest.raises(memsift.ProviderError, match=match):
        bedrock(server, SIGV4, model).embed_documents(['a', 'b'])


def test_unknown_models_and_unsupported_dimensions_are_clear_errors(server):
    with pytest.raises(memsift.ProviderError, match="no known request format for model 'meta.llama3'"):
        bedrock(server, SIGV4, 'meta.llama3')
    with pytest.raises(memsift.ProviderError, match=r'outputDimensionality 768 .* \[256, 512, 1024\]'):
        bedrock(server, SIGV4, outputDimensionality=768)
    with pytest.raises(memsift.ProviderError, match='outputDimensionality 512'):
        bedrock(server, SIGV4, 'cohere.embed-english-v3', outputDimensionality=512)


# ---------------------------------------------------------------- botocore's credential chain (memsift[aws])

CREDENTIAL_PROCESS = """\
import json, pathlib, sys, datetime
counter = pathlib.Path(sys.argv[1])
n = int(counter.read_text()) + 1 if counter.exists() else 1
counter.write_text(str(n))
expires = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=int(sys.argv[2]))
print(json.dumps({'Version': 1, 'AccessKeyId': f'ASIAROTATE{n}', 'SecretAccessKey': f'rotating-secret-{n}-SECRET',
                  'SessionToken': f'rotating-token-{n}-SECRET', 'Expiration': expires.isoformat()}))
"""


def test_a_profile_with_credential_process_signs_and_refreshes_expiring_keys(server, tmp_path, monkeypatch):
    pytest.importorskip('botocore', reason='memsift[aws] is not installed')
    import os
    import sys

    script, counter = tmp_path / 'creds.py', tmp_path / 'calls'
    script.write_text(CREDENTIAL_PROCESS)
    config = tmp_path / 'config'
    # Keys valid for 2 s: botocore refreshes them before each use once they are that close to expiring.
    config.write_text(f'[profile agents]\ncredential_process = {sys.executable} {script} {counter} 2\n')
    monkeypatch.setenv('AWS_CONFIG_FILE', str(config))
    monkeypatch.setenv('AWS_PROFILE', 'agents')
    server.reply = reply
    server.secret = {f'ASIAROTATE{n}': f'rotating-secret-{n}-SECRET' for n in range(1, 10)}
    provider = bedrock(server, {**os.environ, 'AWS_REGION': 'eu-west-1'})
    assert provider.embed_query('first') == vec('first')
    assert provider.embed_query('second') == vec('second')
    first, second = server.requests
    assert 'error' not in first and 'error' not in second and first['scope'] == ('eu-west-1', 'bedrock')
    assert first['headers']['x-amz-security-token'].startswith('rotating-token-')
    assert int(counter.read_text()) >= 2  # the keys were fetched again as they expired
    assert first['access'] != second['access']
    server.reply = lambda request: (500, {'message': 'echo ' + request['headers']['x-amz-security-token']})
    with pytest.raises(memsift.ProviderError) as failure:
        provider.embed_query('third')
    assert 'rotating-token' not in str(failure.value) and 'rotating-secret' not in str(failure.value)


def test_a_broken_profile_is_named_without_botocore_guessing_further(server, tmp_path, monkeypatch):
    pytest.importorskip('botocore', reason='memsift[aws] is not installed')
    monkeypatch.setenv('AWS_PROFILE', 'missing-profile')
    with pytest.raises(MissingApiKey, match='missing-profile'):
        bedrock(server, {'AWS_PROFILE': 'missing-profile', 'AWS_REGION': 'eu-west-1'})
