"""AWS Bedrock Runtime embeddings (``InvokeModel``) without the AWS SDK.

``POST https://bedrock-runtime.{region}.amazonaws.com/model/{modelId}/invoke`` with the model id URL-encoded as one
path segment. The region comes from a ``bedrock-runtime.<region>.`` ``remote.baseUrl``, else ``AWS_REGION``, else
``AWS_DEFAULT_REGION``, else ``us-east-1``. Auth is a Bedrock API key (``remote.apiKey`` or
``AWS_BEARER_TOKEN_BEDROCK``, sent as ``Authorization: Bearer``), else AWS Signature Version 4 with
``AWS_ACCESS_KEY_ID`` / ``AWS_SECRET_ACCESS_KEY`` (and ``AWS_SESSION_TOKEN``), computed by :func:`sign_v4` for every
attempt, retries included. Without those keys, and with the ``memsift[aws]`` extra installed, botocore's credential
chain supplies them (``AWS_PROFILE``, SSO, ``credential_process``, assumed roles, container and instance roles),
refreshed before they expire; the signer stays memsift's.

Each model family has its own body and answer: Titan v1/v2 and Nova embed one text per call (calls run in parallel,
``remote.nonBatchConcurrency``); Cohere v3/v4 take up to 96 texts per call with a query/document ``input_type``.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import quote, unquote, urlsplit

from memsift._record import record, replace
from memsift.config import MemoryConfig
from memsift.errors import ProviderError
from memsift.providers._http import map_concurrently
from memsift.providers.base import MissingApiKey, RemoteEmbeddings

if TYPE_CHECKING:
    import httpx

__all__ = ['BedrockEmbeddings', 'canonical_request', 'sign_v4', 'signing_key']

COHERE_MAX_TEXTS = 96
"""Cohere on Bedrock accepts at most 96 texts per call."""
_REGION_IN_URL = re.compile(r'bedrock-runtime(?:-fips)?\.([a-z0-9-]+)\.', re.I)


# ---------------------------------------------------------------- AWS Signature Version 4


def signing_key(secret_key: str, date: str, region: str, service: str) -> bytes:
    """The SigV4 signing key: HMAC-SHA256 chained over ``date`` (YYYYMMDD), region, service and ``aws4_request``."""
    key = f'AWS4{secret_key}'.encode()
    for part in (date, region, service, 'aws4_request'):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    return key


def _canonical_query(query: str) -> str:
    pairs = [pair.partition('=') for pair in query.split('&') if pair]
    encoded = sorted((quote(unquote(k), safe=''), quote(unquote(v), safe='')) for k, _, v in pairs)
    return '&'.join(f'{k}={v}' for k, v in encoded)


def canonical_request(method: str, url: str, headers: Mapping[str, str], body: bytes) -> tuple[str, str]:
    """SigV4's canonical request for ``headers`` (all signed; ``host`` taken from ``url`` when absent) and the
    ``SignedHeaders`` list."""
    parts = urlsplit(url)
    signed = {name.lower(): ' '.join(str(value).split()) for name, value in headers.items()}
    if 'host' not in signed:
        default_port = {'http': 80, 'https': 443}.get(parts.scheme)
        host = (parts.hostname or '').lower()
        signed['host'] = host if parts.port in (None, default_port) else f'{host}:{parts.port}'
    names = sorted(signed)
    # Every service but S3 encodes the (already encoded) path once more: the sent ``%3A`` is signed as ``%253A``.
    path = quote(parts.path or '/', safe='/')
    lines = [
        method.upper(),
        path,
        _canonical_query(parts.query),
        ''.join(f'{n}:{signed[n]}\n' for n in names),
        ';'.join(names),
        hashlib.sha256(body).hexdigest(),
    ]
    return '\n'.join(lines), ';'.join(names)


def sign_v4(
    method: str,
    url: str,
    headers: Mapping[str, str],
    body: bytes | str,
    *,
    access_key: str,
    secret_key: str,
    region: str,
    service: str,
    now: datetime,
    session_token: str | None = None,
) -> dict[str, str]:
    """Sign a request with AWS Signature Version 4 and return the headers to add: ``X-Amz-Date``,
    ``Authorization`` and, with a session token, ``X-Amz-Security-Token``.

    ``headers`` are the request headers to sign (``host`` is added from ``url`` unless given); ``now`` is the
    signing time (a naive datetime is taken as UTC).
    """
    if now.tzinfo is not None:
        now = now.astimezone(timezone.utc)
    amz_date = now.strftime('%Y%m%dT%H%M%SZ')
    added = {'X-Amz-Date': amz_date}
    if session_token:
        added['X-Amz-Security-Token'] = session_token
    payload = body.encode() if isinstance(body, str) else body
    canonical, signed_headers = canonical_request(method, url, {**headers, **added}, payload)
    scope = f'{amz_date[:8]}/{region}/{service}/aws4_request'
    to_sign = '\n'.join(['AWS4-HMAC-SHA256', amz_date, scope, hashlib.sha256(canonical.encode()).hexdigest()])
    key = signing_key(secret_key, amz_date[:8], region, service)
    signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    added['Authorization'] = (
        f'AWS4-HMAC-SHA256 Credential={access_key}/{scope}, SignedHeaders={signed_headers}, Signature={signature}'
    )
    return added


# ---------------------------------------------------------------- model families


@record(slots=False)
class Family:
    name: str
    markers: tuple[str, ...]
    """Substrings of the model id (so region-prefixed inference profiles and ARNs are recognised too)."""
    dims: int
    sizes: tuple[int, ...]
    """Dimensions ``outputDimensionality`` may ask for."""
    batched: bool
    """Many texts per call (Cohere) rather than one."""


FAMILIES = (
    Family('titan-v2', ('amazon.titan-embed-text-v2',), 1024, (256, 512, 1024), False),
    Family('titan-v1', ('amazon.titan-embed-text-v1', 'amazon.titan-embed-g1-text-02'), 1536, (1536,), False),
    Family('cohere-v4', ('cohere.embed-v4',), 1536, (256, 512, 1024, 1536), True),
    Family('cohere-v3', ('cohere.embed-english-v3', 'cohere.embed-multilingual-v3'), 1024, (1024,), True),
    Family('nova', ('amazon.nova-2-multimodal-embeddings',), 1024, (256, 384, 1024, 3072), False),
)


def _botocore_credentials(env: Mapping[str, str]) -> Any:
    """AWS credentials from botocore's chain (the ``memsift[aws]`` extra): ``AWS_PROFILE``'s profile in the
    config and credentials files, SSO, ``credential_process``, assumed roles, container and instance roles, each
    refreshed before it expires. ``None`` without botocore, or when the chain finds nothing."""
    try:
        import botocore.exceptions
        import botocore.session
    except ImportError:
        return None
    try:
        session = botocore.session.Session(profile=env.get('AWS_PROFILE') or None)
        return session.get_credentials()
    except botocore.exceptions.BotoCoreError as exc:  # a broken profile: say which, without its secrets
        raise MissingApiKey(f'bedrock: AWS credentials from botocore failed: {type(exc).__name__}: {exc}') from exc


def family_of(model: str) -> Family:
    for family in FAMILIES:
        if any(marker in model for marker in family.markers):
            return family
    known = ', '.join(m for f in FAMILIES for m in f.markers)
    raise ProviderError(f'bedrock: no known request format for model {model!r} (supported: {known})')


def resolve_region(base_url: str | None, env: Mapping[str, str]) -> str:
    """The region of a ``bedrock-runtime.<region>.`` base URL, else ``AWS_REGION``, ``AWS_DEFAULT_REGION``,
    ``us-east-1``."""
    match = _REGION_IN_URL.search(base_url or '')
    if match:
        return match.group(1).lower()
    return env.get('AWS_REGION') or env.get('AWS_DEFAULT_REGION') or 'us-east-1'


class BedrockEmbeddings(RemoteEmbeddings):
    id = 'bedrock'
    default_base_url = 'https://bedrock-runtime.us-east-1.amazonaws.com'  # replaced by the resolved region's
    default_model = 'amazon.titan-embed-text-v2:0'
    env_keys = ('AWS_BEARER_TOKEN_BEDROCK',)
    key_required = False  # SigV4 credentials are the other way in, checked below
    known_dims: ClassVar[Mapping[str, int]] = {
        'amazon.titan-embed-text-v2:0': 1024,
        'amazon.titan-embed-text-v1': 1536,
        'amazon.titan-embed-g1-text-02': 1536,
        'cohere.embed-english-v3': 1024,
        'cohere.embed-multilingual-v3': 1024,
        'cohere.embed-v4:0': 1536,
        'amazon.nova-2-multimodal-embeddings-v1:0': 1024,
    }

    def __init__(self, config: MemoryConfig, env: Mapping[str, str] | None = None) -> None:
        env = os.environ if env is None else env
        self.family = family_of(config.model or self.default_model)
        wanted = config.output_dimensionality
        if wanted is not None and wanted not in self.family.sizes:
            raise ProviderError(
                f'bedrock: outputDimensionality {wanted} is not available for '
                f'{config.model or self.default_model} (one of {list(self.family.sizes)})'
            )
        self.region = resolve_region(config.remote.base_url, env)
        remote = replace(
            config.remote,
            base_url=config.remote.base_url or f'https://bedrock-runtime.{self.region}.amazonaws.com',
            headers={'Accept': 'application/json', **config.remote.headers},
        )
        super().__init__(replace(config, remote=remote), env)
        if self._dims is None:  # an inference profile or ARN of a known family
            self._dims = self.family.dims
        if self.api_key:  # a Bedrock API key: Bearer auth (set by the base class), nothing to sign
            return
        self.access_key = env.get('AWS_ACCESS_KEY_ID', '')
        self.secret_key = env.get('AWS_SECRET_ACCESS_KEY', '')
        self.session_token = env.get('AWS_SESSION_TOKEN') or None
        self._chain: Any = None  # botocore's credentials when the environment has no keys
        if not (self.access_key and self.secret_key):
            self._chain = _botocore_credentials(env)
            if self._chain is None:
                self.http.close()
                raise MissingApiKey(
                    'No AWS credentials found for provider bedrock: set AWS_BEARER_TOKEN_BEDROCK (or '
                    'remote.apiKey), or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or pip install '
                    '"memsift[aws]" to use AWS profiles, SSO, credential_process and instance roles'
                )
        # EmbeddingHttp sends fixed headers; a request hook signs each attempt (retries get a fresh X-Amz-Date),
        # and the secrets join the strings scrubbed from errors.
        self.http.add_secrets(self.secret_key, self.session_token)
        self.http.on_request(self._sign)

    def _sign(self, request: httpx.Request) -> None:
        if self._chain is not None:
            # botocore refreshes temporary credentials (SSO, assumed roles, credential_process, instance roles)
            # shortly before they expire; each request is signed with the current ones.
            frozen = self._chain.get_frozen_credentials()
            self.access_key, self.secret_key, self.session_token = frozen.access_key, frozen.secret_key, frozen.token
            self.http.add_secrets(self.secret_key, self.session_token)  # scrubbed from errors, each new one
        headers = {'Host': request.headers['host'], 'Content-Type': request.headers['content-type']}
        request.headers.update(
            sign_v4(
                request.method,
                str(request.url),
                headers,
                request.content,
                access_key=self.access_key,
                secret_key=self.secret_key,
                region=self.region,
                service='bedrock',
                now=datetime.now(timezone.utc),
                session_token=self.session_token,
            )
        )

    def _path(self) -> str:
        return f'model/{quote(self.model, safe="")}/invoke'

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        if self.family.batched:
            return super().embed_documents(texts)
        return self.embed(list(texts), 'document', self.batch_timeout)

    def embed(self, texts: list[str], kind: str, timeout: float) -> list[list[float]]:
        if not self.family.batched:
            return map_concurrently(lambda text: self._embed_one(text, timeout), texts, self.concurrency)
        return [
            vector
            for start in range(0, len(texts), COHERE_MAX_TEXTS)
            for vector in self._embed_cohere(texts[start : start + COHERE_MAX_TEXTS], kind, timeout)
        ]

    def _embed_one(self, text: str, timeout: float) -> list[float]:
        name = self.family.name
        if name == 'nova':
            params = {
                'embeddingPurpose': 'GENERIC_INDEX',
                'embeddingDimension': self.dims,
                'text': {'truncationMode': 'END', 'value': text},
            }
            answer = self.http.post(
                self._path(), {'taskType': 'SINGLE_EMBEDDING', 'singleEmbeddingParams': params}, timeout=timeout
            )
            rows = answer.get('embeddings') if isinstance(answer, dict) else None
            rows = [r.get('embedding') if isinstance(r, dict) else r for r in rows] if isinstance(rows, list) else rows
            return self.vectors(rows, 1, 'embeddings[].embedding')[0]
        body: dict[str, Any] = {'inputText': text}
        if name == 'titan-v2':
            body.update(dimensions=self.dims, normalize=True)
        answer = self.http.post(self._path(), body, timeout=timeout)
        return self.vectors([answer.get('embedding') if isinstance(answer, dict) else None], 1, 'embedding')[0]

    def _embed_cohere(self, texts: list[str], kind: str, timeout: float) -> list[list[float]]:
        body: dict[str, Any] = {
            'texts': texts,
            'input_type': 'search_query' if kind == 'query' else 'search_document',
            'truncate': 'END',
        }
        if self.family.name == 'cohere-v4':
            body['embedding_types'] = ['float']
            if self.config.output_dimensionality:
                body['output_dimension'] = self.config.output_dimensionality
        answer = self.http.post(self._path(), body, timeout=timeout)
        rows = answer.get('embeddings') if isinstance(answer, dict) else None
        if isinstance(rows, dict):  # v4 (and v3 asked for embedding_types) answers {"float": [...]}
            return self.vectors(rows.get('float'), len(texts), 'embeddings.float')
        return self.vectors(rows, len(texts), 'embeddings')
