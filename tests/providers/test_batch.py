"""Provider batch APIs (OpenAI, Voyage, Gemini) against loopback servers speaking each batch protocol."""

import json
import re
import threading
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import memsift
from memsift.providers import create_provider

KEY = 'sk-batch-SECRET-0000'


def vec(text):
    return [float(len(text) % 5 + 1), 1.0, 0.5]


class BatchServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, outcome='completed', polls=2):
        super().__init__(('127.0.0.1', 0), BatchHandler)
        self.url = f'http://127.0.0.1:{self.server_address[1]}'
        self.outcome, self.polls = outcome, polls
        self.files, self.batches, self.log = {}, {}, []


class BatchHandler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def reply(self, status, body, content_type='application/json'):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header('Content-Type', content_type)
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):  # noqa: N802
        srv = self.server
        raw = self.rfile.read(int(self.headers.get('content-length', 0)))
        srv.log.append(('POST', self.path, self.headers.get('authorization')))
        if self.path == '/v1/files':
            message = BytesParser(policy=HTTP).parsebytes(
                f'Content-Type: {self.headers["content-type"]}\r\n\r\n'.encode() + raw
            )
            parts = {
                p.get_param('name', header='content-disposition'): p.get_payload(decode=True)
                for p in message.iter_parts()
            }
            file_id = f'file-{len(srv.files)}'
            srv.files[file_id] = parts['file'].decode()
            srv.purpose = parts['purpose'].decode()
            return self.reply(200, {'id': file_id, 'object': 'file'})
        if self.path == '/v1/batches':
            body = json.loads(raw)
            batch_id = f'batch-{len(srv.batches)}'
            srv.batches[batch_id] = {'id': batch_id, 'status': 'validating', 'polls': 0, **body}
            return self.reply(200, {'id': batch_id, 'status': 'validating'})
        if self.path == '/v1/embeddings':  # inline fallback
            inputs = json.loads(raw)['input']
            return self.reply(200, {'data': [{'index': i, 'embedding': vec(t)} for i, t in enumerate(inputs)]})
        return self.reply(404, {'error': 'no such route'})

    def do_GET(self):  # noqa: N802
        srv = self.server
        srv.log.append(('GET', self.path, self.headers.get('authorization')))
        match = re.fullmatch(r'/v1/batches/(batch-\d+)', self.path)
        if match:
            batch = srv.batches[match[1]]
            batch['polls'] += 1
            if batch['polls'] >= srv.polls:
                batch['status'] = srv.outcome
                if srv.outcome == 'completed':
                    batch['output_file_id'] = f'out-{match[1]}'
                    lines = [json.loads(line) for line in srv.files[batch['input_file_id']].splitlines()]
                    srv.files[batch['output_file_id']] = '\n'.join(
                        json.dumps(
                            {
                                'custom_id': line['custom_id'],
                                'response': {
                                    'status_code': 200,
                                    'body': {
                                        'data': [
                                            {'index': i, 'embedding': vec(t)}
                                            for i, t in enumerate(line['body']['input'])
                                        ]
                                    },
                                },
                            }
                        )
                        for line in reversed(lines)
                    )
            else:
                batch['status'] = 'in_progress'
            return self.reply(200, {k: v for k, v in batch.items() if k != 'polls'})
        match = re.fullmatch(r'/v1/files/([\w-]+)/content', self.path)
        if match:
            return self.reply(200, srv.files[match[1]].encode(), 'application/jsonl')
        return self.reply(404, {'error': 'no such route'})


@pytest.fixture
def batch_server(request):
    srv = BatchServer(**getattr(request, 'param', {}))
    thread = threading.Thread(target=srv.serve_forever, kwargs={'poll_interval': 0.05}, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def provider(server, provider_id='openai'):
    return create_provider(
        provider_id,
        memsift.load_config(
            {
                'agents': {
                    'defaults': {
                        'memorySearch': {
                            'provider': provider_id,
                            'model': 'm',
                            'remote': {
                                'baseUrl': server.url + '/v1',
                                'apiKey': KEY,
                                'batch': {'enabled': True, 'pollIntervalMs': 1},
                            },
                        }
                    }
                }
            }
        ),
    )


TEXTS = [f'chunk {i} ' + 'x' * (i * 900) for i in range(12)]  # several 8000-byte requests


def test_openai_batch_upload_submit_poll_fetch(batch_server):
    out = provider(batch_server).embed_documents(TEXTS)
    assert out == [vec(t) for t in TEXTS]
    assert batch_server.purpose == 'batch'
    lines = [json.loads(line) for line in batch_server.files['file-0'].splitlines()]
    assert [line['custom_id'] for line in lines] == [str(n) for n in range(len(lines))] and len(lines) > 1
    assert all(line['url'] == '/v1/embeddings' and line['body']['model'] == 'm' for line in lines)
    batch = batch_server.batches['batch-0']
    assert (batch['endpoint'], batch['completion_window'], batch['polls']) == ('/v1/embeddings', '24h', 2)
    assert not any(path == '/v1/embeddings' for _, path, _ in batch_server.log)  # nothing inline
    assert all(auth == f'Bearer {KEY}' for _, _, auth in batch_server.log)


def test_voyage_batch_window_and_document_input_type(batch_server):
    provider(batch_server, 'voyage').embed_documents(TEXTS[:3])
    assert batch_server.batches['batch-0']['completion_window'] == '12h'
    line = json.loads(batch_server.files['file-0'].splitlines()[0])
    assert line['body']['input_type'] == 'document'


@pytest.mark.parametrize('batch_server', [{'outcome': 'failed', 'polls': 1}], indirect=True)
def test_two_batch_failures_fall_back_to_inline_for_good(batch_server):
    adapter = provider(batch_server)
    for _ in range(3):
        assert adapter.embed_documents(TEXTS[:2]) == [vec(t) for t in TEXTS[:2]]  # inline after each failure
    assert adapter.batch_failures == 2 and 'failed' in adapter.batch_error
    assert sum(1 for method, path, _ in batch_server.log if path == '/v1/batches') == 2  # no third batch
    assert adapter.embed_query('q') == vec('q')


def test_openai_batch_still_running_without_wait_embeds_inline(batch_server):
    adapter = create_provider(
        'openai',
        memsift.load_config(
            {
                'agents': {
                    'defaults': {
                        'memorySearch': {
                            'provider': 'openai',
                            'model': 'm',
                            'remote': {
                                'baseUrl': batch_server.url + '/v1',
                                'apiKey': KEY,
                                'batch': {'enabled': True, 'wait': False},
                            },
                        }
                    }
                }
            }
        ),
    )
    assert adapter.embed_documents(TEXTS[:2]) == [vec(t) for t in TEXTS[:2]]
    assert adapter.batch_failures == 1 and 'remote.batch.wait is false' in adapter.batch_error
    assert not any(path.startswith('/v1/batches/') for _, path, _ in batch_server.log)  # never polled


# ---------------------------------------------------------------- Gemini: files upload + asyncBatchEmbedContent

GEMINI_KEY = 'AIza-gemini-SECRET-1234'


def gemini_service(state='BATCH_STATE_SUCCEEDED', polls=2, create_status=200, line_error=None):
    """A reply function for the conftest ``server`` speaking Gemini's file upload, batch and download protocol."""
    files, batches = {}, {}

    def reply(request):
        path, body = request['path'], request['body']
        if path == '/upload/v1beta/files?uploadType=multipart':
            message = BytesParser(policy=HTTP).parsebytes(
                f'Content-Type: {request["headers"]["content-type"]}\r\n\r\n'.encode() + request['raw']
            )
            metadata, jsonl = (part.get_payload(decode=True).decode() for part in message.iter_parts())
            assert json.loads(metadata)['file']['mimeType'] == 'application/jsonl'
            files['files/in-0'] = jsonl
            return 200, {}, {'file': {'name': 'files/in-0', 'mimeType': 'application/jsonl'}}
        if path == '/v1beta/models/gemini-embedding-001:asyncBatchEmbedContent':
            if create_status != 200:
                return create_status, {}, {'error': {'code': create_status, 'message': 'method not found'}}
            batches['batches/b0'] = {'file': body['batch']['inputConfig']['fileName'], 'polls': 0}
            return 200, {}, {'name': 'batches/b0', 'metadata': {'state': 'BATCH_STATE_PENDING'}}
        if path == '/v1beta/batches/b0':
            batch = batches['batches/b0']
            batch['polls'] += 1
            if batch['polls'] < polls:
                return 200, {}, {'name': 'batches/b0', 'metadata': {'state': 'BATCH_STATE_RUNNING'}}
            lines = [json.loads(line) for line in files[batch['file']].splitlines()]
            files['files/out-0'] = '\n'.join(
                json.dumps(
                    {'key': line['key'], 'error': line_error}
                    if line_error
                    else {
                        'key': line['key'],
                        'response': {'embedding': {'values': vec(line['request']['content']['parts'][0]['text'])}},
                    }
                )
                for line in reversed(lines)
            )
            return (
                200,
                {},
                {
                    'name': 'batches/b0',
                    'done': True,
                    'metadata': {'state': state, 'output': {'responsesFile': 'files/out-0'}},
                },
            )
        if path == '/download/v1beta/files/out-0:download?alt=media':
            return 200, {'Content-Type': 'application/jsonl'}, files['files/out-0'].encode()
        if path == '/v1beta/models/gemini-embedding-001:batchEmbedContents':  # inline
            return (
                200,
                {},
                {'embeddings': [{'values': vec(r['content']['parts'][0]['text'])} for r in body['requests']]},
            )
        return 404, {}, {'error': {'message': f'no route {path}'}}

    reply.files = files
    return reply


def gemini(server, **batch):
    return create_provider(
        'gemini',
        memsift.load_config(
            {
                'agents': {
                    'defaults': {
                        'memorySearch': {
                            'provider': 'gemini',
                            'remote': {
                                'baseUrl': server.url + '/v1beta',
                                'apiKey': GEMINI_KEY,
                                'batch': {'enabled': True, 'pollIntervalMs': 1, **batch},
                            },
                        }
                    }
                }
            }
        ),
    )


def test_gemini_async_batch_upload_create_poll_download(server):
    server.reply = gemini_service()
    out = gemini(server).embed_documents(TEXTS[:5])
    assert out == [vec(t) for t in TEXTS[:5]]  # output lines came back reversed: matched by key
    lines = [json.loads(line) for line in server.reply.files['files/in-0'].splitlines()]
    assert [line['key'] for line in lines] == ['0', '1', '2', '3', '4']  # one request per input
    assert all(
        line['request']['taskType'] == 'RETRIEVAL_DOCUMENT'
        and line['request']['model'] == 'models/gemini-embedding-001'
        for line in lines
    )
    assert [p.split('?')[0] for _, p in server.paths()] == [
        '/upload/v1beta/files',
        '/v1beta/models/gemini-embedding-001:asyncBatchEmbedContent',
        '/v1beta/batches/b0',
        '/v1beta/batches/b0',
        '/download/v1beta/files/out-0:download',
    ]
    assert all(r['headers']['x-goog-api-key'] == GEMINI_KEY for r in server.requests)


def test_gemini_without_batch_method_embeds_inline_at_once(server):
    server.reply = gemini_service(create_status=404)
    adapter = gemini(server)
    assert adapter.embed_documents(TEXTS[:3]) == [vec(t) for t in TEXTS[:3]]
    assert adapter.batch_failures == 2 and 'not available' in adapter.batch_error
    assert GEMINI_KEY not in adapter.batch_error
    server.requests.clear()
    adapter.embed_documents(TEXTS[:3])
    assert [p for _, p in server.paths()] == ['/v1beta/models/gemini-embedding-001:batchEmbedContents']


@pytest.mark.parametrize(
    ('service', 'batch', 'reason'),
    [
        ({'state': 'BATCH_STATE_FAILED'}, {}, 'failed'),
        ({'line_error': {'code': 400, 'message': 'bad content'}}, {}, 'bad content'),
        ({'polls': 3}, {'wait': False}, 'remote.batch.wait is false'),
    ],
)
def test_gemini_batch_failure_counts_once_and_embeds_inline(server, service, batch, reason):
    server.reply = gemini_service(**service)
    adapter = gemini(server, **batch)
    assert adapter.embed_documents(TEXTS[:2]) == [vec(t) for t in TEXTS[:2]]
    assert adapter.batch_failures == 1 and reason in adapter.batch_error
    assert server.paths()[-1] == ('POST', '/v1beta/models/gemini-embedding-001:batchEmbedContents')
