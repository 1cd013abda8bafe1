"""Provider batch APIs (OpenAI, Voyage) against a loopback server speaking the files + batches protocol."""

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
                f'Content-Type: {self.headers["content-type"]}\r\n\r\n'.encode() + raw)
            parts = {p.get_param('name', header='content-disposition'): p.get_payload(decode=True)
                     for p in message.iter_parts()}
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
                    srv.files[batch['output_file_id']] = '\n'.join(json.dumps({
                        'custom_id': line['custom_id'],
                        'response': {'status_code': 200, 'body': {'data': [
                            {'index': i, 'embedding': vec(t)} for i, t in enumerate(line['body']['input'])]}},
                    }) for line in reversed(lines))
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
    return create_provider(provider_id, memsift.load_config({'memory': {'search': {
        'provider': provider_id, 'model': 'm',
        'remote': {'baseUrl': server.url + '/v1', 'apiKey': KEY, 'batch': {'enabled': True, 'pollIntervalMs': 1}},
    }}}))


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
