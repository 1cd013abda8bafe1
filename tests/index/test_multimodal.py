"""Multimodal memory: images and audio from extraPaths, embedded inline by a Gemini Embedding 2 server on 127.0.0.1."""

import base64

import pytest
from conftest import memory_config, write

import memsift
from memsift.media import sniff_mime

KEY = 'sk-test-SECRET-1234567890'

PNG = b'\x89PNG\r\n\x1a\n' + b'\x00' * 64
JPEG = b'\xff\xd8\xff\xe0' + b'\x00' * 64
MP3 = b'ID3\x03\x00' + b'\x00' * 64


def gemini_reply(request):
    """Images point one way, audio another, text about cats or songs toward them (768 dims, as configured)."""

    def vector(content):
        parts = content['parts']
        media = [p['inlineData'] for p in parts if 'inlineData' in p]
        text = ' '.join(p.get('text', '') for p in parts)
        if media:
            head = [1.0, 0.0, 0.0] if media[0]['mimeType'].startswith('image/') else [0.0, 1.0, 0.0]
        else:
            head = [float('cat' in text), float('song' in text), float('cat' not in text and 'song' not in text)]
        return head + [0.0] * 765

    if request['path'].endswith(':embedContent'):
        return 200, {}, {'embedding': {'values': vector(request['body']['content'])}}
    return 200, {}, {'embeddings': [{'values': vector(r['content'])} for r in request['body']['requests']]}


@pytest.fixture
def media_ws(tmp_path):
    ws = tmp_path / 'ws'
    write(ws / 'MEMORY.md', 'Notes about the garden.')
    media = ws / 'media'
    media.mkdir()
    (media / 'cat.png').write_bytes(PNG)
    (media / 'song.MP3').write_bytes(MP3)
    (media / 'fake.png').write_bytes(JPEG)  # a JPEG under a .png name
    (media / 'big.png').write_bytes(PNG + b'\x00' * 5000)
    (ws / 'memory').mkdir()
    (ws / 'memory' / 'inline.png').write_bytes(PNG)  # default memory roots never index media
    return ws


def settings(server, **extra):
    return dict(
        provider='gemini',
        model='gemini-embedding-2-preview',
        outputDimensionality=768,
        multimodal={'enabled': True, 'maxFileBytes': 2000},
        extraPaths=['media'],
        remote={'baseUrl': server.url + '/v1beta', 'apiKey': KEY},
        **extra,
    )


def test_images_and_audio_are_indexed_inline_and_found_by_text(server, tmp_path, media_ws):
    server.reply = gemini_reply
    with memsift.MemoryIndex(media_ws, memory_config(tmp_path, **settings(server))) as index:
        report = index.sync()
        assert sorted(report.added) == ['MEMORY.md', 'media/cat.png', 'media/song.MP3']
        assert 'not what the extension .png says' in report.skipped['media/fake.png']
        assert 'maxFileBytes' in report.skipped['media/big.png']
        sent = [
            r
            for request in server.requests
            if request['path'].endswith(':batchEmbedContents')
            for r in request['body']['requests']
        ]
        inline = {
            r['content']['parts'][0]['text']: r['content']['parts'][1]['inlineData']
            for r in sent
            if len(r['content']['parts']) == 2
        }
        assert inline['Image file: media/cat.png'] == {'mimeType': 'image/png', 'data': base64.b64encode(PNG).decode()}
        assert inline['Audio file: media/song.MP3']['mimeType'] == 'audio/mpeg'
        hit = index.search('a photo of the cat', min_score=0.3).results[0]
        assert (hit.path, hit.snippet, hit.start_line, hit.end_line) == (
            'media/cat.png',
            'Image file: media/cat.png',
            1,
            1,
        )
        assert index.search('that song we liked', min_score=0.3).results[0].path == 'media/song.MP3'
        assert 'memory/inline.png' not in index.status()['skipped'] and index.status()['files'] == 3


def test_media_is_not_indexed_without_multimodal(server, tmp_path, media_ws):
    with memsift.MemoryIndex(media_ws, memory_config(tmp_path, extraPaths=['media'])) as index:
        assert index.sync().added == ['MEMORY.md']


def test_multimodal_needs_gemini_embedding_2_and_no_fallback(tmp_path):
    for bad in (
        {'provider': 'openai'},
        {'provider': 'gemini', 'model': 'gemini-embedding-2-preview', 'fallback': 'openai'},
    ):
        with pytest.raises(memsift.ConfigError, match='multimodal'):
            memsift.load_config({'agents': {'defaults': {'memorySearch': {'multimodal': {'enabled': True}, **bad}}}})


@pytest.mark.parametrize(
    ('head', 'mime'),
    [
        (b'GIF89a', 'image/gif'),
        (b'RIFF\x00\x00\x00\x00WEBPVP8 ', 'image/webp'),
        (b'RIFF\x00\x00\x00\x00WAVEfmt ', 'audio/wav'),
        (b'\x00\x00\x00\x18ftypheic', 'image/heic'),
        (b'\x00\x00\x00\x18ftypM4A ', 'audio/mp4'),
        (b'OggS', 'audio/ogg'),
        (b'fLaC', 'audio/flac'),
        (b'\xff\xf1\x50', 'audio/aac'),
        (b'hello', None),
    ],
)
def test_mime_sniffing(head, mime):
    assert sniff_mime(head + b'\x00' * 16) == mime
