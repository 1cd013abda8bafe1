"""Images and audio as memory (multimodal embeddings, Gemini Embedding 2 only; OpenClaw reference §1.6, §13).

Media files are indexed only from ``extraPaths``, one chunk per file whose text is a label (``Image file: <path>``
or ``Audio file: <path>``); the embedding input is that label plus the file's bytes inline. The MIME type is
sniffed from the content and must agree with the extension, so a renamed file is reported rather than sent.

>>> sniff_mime(b'\\x89PNG\\r\\n\\x1a\\n' + bytes(8))
'image/png'
>>> modality_of('photos/cat.JPG')
'image'
"""

from __future__ import annotations

from pathlib import Path

from memsift._files import read_bounded
from memsift._record import record
from memsift.errors import SkippedFile

__all__ = ['EXTENSIONS', 'MediaInput', 'modality_of', 'read_media_file', 'sniff_mime']

EXTENSIONS = {
    'image': ('.jpg', '.jpeg', '.png', '.webp', '.gif', '.heic', '.heif'),
    'audio': ('.mp3', '.wav', '.ogg', '.opus', '.m4a', '.aac', '.flac'),
}
_EXPECTED = {
    '.jpg': {'image/jpeg'},
    '.jpeg': {'image/jpeg'},
    '.png': {'image/png'},
    '.webp': {'image/webp'},
    '.gif': {'image/gif'},
    '.heic': {'image/heic', 'image/heif'},
    '.heif': {'image/heif', 'image/heic'},
    '.mp3': {'audio/mpeg'},
    '.wav': {'audio/wav'},
    '.ogg': {'audio/ogg'},
    '.opus': {'audio/ogg'},
    '.m4a': {'audio/mp4'},
    '.aac': {'audio/aac'},
    '.flac': {'audio/flac'},
}


@record(slots=False)
class MediaInput:
    """An embedding input made of a text label and inline bytes."""

    label: str
    mime: str
    data: bytes

    @property
    def sha256(self) -> str:
        """Identity for the chunk hash and the embedding cache (label, type and bytes)."""
        import hashlib  # OpenSSL loads in ~4 ms: not on the keyword-only path

        digest = hashlib.sha256(self.label.encode())
        digest.update(self.mime.encode())
        digest.update(self.data)
        return digest.hexdigest()


def modality_of(path: str | Path) -> str | None:
    suffix = Path(path).suffix.lower()
    return next((kind for kind, suffixes in EXTENSIONS.items() if suffix in suffixes), None)


def sniff_mime(head: bytes) -> str | None:
    """The media type the first bytes announce, for the formats memsift indexes; ``None`` if unknown."""
    if head.startswith(b'\x89PNG\r\n\x1a\n'):
        return 'image/png'
    if head.startswith(b'\xff\xd8\xff'):
        return 'image/jpeg'
    if head.startswith((b'GIF87a', b'GIF89a')):
        return 'image/gif'
    if head[:4] == b'RIFF' and head[8:12] == b'WEBP':
        return 'image/webp'
    if head[:4] == b'RIFF' and head[8:12] == b'WAVE':
        return 'audio/wav'
    if head[4:8] == b'ftyp':
        brand = head[8:12]
        if brand in (b'heic', b'heix', b'hevc', b'heim', b'heis'):
            return 'image/heic'
        if brand in (b'mif1', b'msf1', b'heif'):
            return 'image/heif'
        if brand in (b'M4A ', b'M4B ', b'mp42', b'isom'):
            return 'audio/mp4'
    if head.startswith(b'OggS'):
        return 'audio/ogg'
    if head.startswith(b'fLaC'):
        return 'audio/flac'
    if head.startswith(b'ID3') or head[:2] in (b'\xff\xfb', b'\xff\xf3', b'\xff\xf2'):
        return 'audio/mpeg'
    if head[:2] in (b'\xff\xf1', b'\xff\xf9'):
        return 'audio/aac'
    return None


def read_media_file(path: Path, label_path: str, max_bytes: int) -> MediaInput:
    """Read a media file for embedding.

    Raises:
        SkippedFile: too large, unreadable, or its content is not what its extension says.
    """
    kind = modality_of(path)
    data = read_bounded(path, max_bytes, f'multimodal.maxFileBytes {max_bytes})')
    mime = sniff_mime(data[:512])
    expected = _EXPECTED.get(path.suffix.lower(), set())
    if kind is None or mime not in expected:
        found = mime or 'unrecognized content'
        raise SkippedFile(path, f'content is {found}, not what the extension {path.suffix} says; rename or convert it')
    label = f'{"Image" if kind == "image" else "Audio"} file: {label_path}'
    return MediaInput(label, mime, data)
