"""The MCP server over streamable HTTP: :func:`serve_http` and its ASGI app :func:`http_app`, with DNS-rebinding
protection (Host and Origin checks, localhost by default) and an optional bearer token (``Authorization: Bearer``).

>>> 'http://localhost:*' in LOCAL_ORIGINS, DEFAULT_PORT
(True, 8765)
"""

from __future__ import annotations

import hmac
import sys
from collections.abc import Sequence

from mcp.server.transport_security import TransportSecuritySettings
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from memsift.tools.agent import MemoryTools
from memsift.tools.mcp.server import build_server

__all__ = ['DEFAULT_PORT', 'LOCAL_HOSTS', 'LOCAL_ORIGINS', 'http_app', 'serve_http']

DEFAULT_PORT = 8765
LOCAL_HOSTS = ('127.0.0.1', 'localhost', '[::1]')
"""Host header values :func:`http_app` accepts by default (with or without a port): DNS-rebinding protection."""
LOCAL_ORIGINS = tuple(f'{scheme}://{host}:*' for scheme in ('http', 'https') for host in LOCAL_HOSTS) + tuple(
    f'{scheme}://{host}' for scheme in ('http', 'https') for host in LOCAL_HOSTS
)
"""Origin header values accepted by default; a request without an Origin (not from a browser) is accepted too."""


def http_app(
    tools: MemoryTools,
    *,
    host: str = '127.0.0.1',
    token: str | None = None,
    allowed_hosts: Sequence[str] = (),
    allowed_origins: Sequence[str] = LOCAL_ORIGINS,
    path: str = '/mcp',
    allow_write: bool = False,
) -> ASGIApp:
    """The streamable HTTP app (ASGI) serving the tools at ``path``.

    Args:
        host: The address it will be bound to; a specific one is also accepted in the Host header.
        token: Require ``Authorization: Bearer <token>`` (else HTTP 401 with ``WWW-Authenticate``).
        allowed_hosts: Host header values accepted besides :data:`LOCAL_HOSTS` (``name:*`` allows any port).
        allowed_origins: Origin header values accepted (default :data:`LOCAL_ORIGINS`); requests from any other
            web page are refused with 403, so a browser page cannot reach the server (DNS rebinding).
        allow_write: Also serve ``memory_write`` (see :func:`~memsift.tools.mcp.server.build_server`).

    >>> import anyio, httpx, tempfile, pathlib
    >>> from memsift.tools import MemoryTools
    >>> ws = pathlib.Path(tempfile.mkdtemp())
    >>> search = {'provider': 'none', 'store': {'path': str(ws / 'index.sqlite')}}
    >>> config = {'agents': {'defaults': {'memorySearch': search}}}
    >>> async def post(app, **headers):
    ...     async with httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url='http://127.0.0.1') as client:
    ...         response = await client.post('/mcp', headers=headers)
    ...         return response.status_code, response.headers.get('www-authenticate')
    >>> with MemoryTools.open(ws, config, sessions_path=ws / 'sessions.sqlite', sync=False) as tools:
    ...     app = http_app(tools, token='s3cret')
    ...     anyio.run(post, app), anyio.run(lambda: post(app, authorization='Bearer nope'))
    ((401, 'Bearer realm="memsift"'), (401, 'Bearer realm="memsift", error="invalid_token"'))
    """
    hosts = [*LOCAL_HOSTS, *allowed_hosts]
    if host not in ('0.0.0.0', '::', ''):
        hosts.append(f'[{host}]' if ':' in host else host)
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[*hosts, *(f'{h}:*' for h in hosts if not h.endswith(':*'))],
        allowed_origins=list(allowed_origins),
    )
    app: ASGIApp = build_server(tools, allow_write=allow_write).streamable_http_app(
        streamable_http_path=path, transport_security=security, host=host
    )
    return _BearerAuth(app, token) if token else app


def serve_http(
    tools: MemoryTools,
    host: str = '127.0.0.1',
    port: int = DEFAULT_PORT,
    *,
    token: str | None = None,
    allowed_hosts: Sequence[str] = (),
    allowed_origins: Sequence[str] = LOCAL_ORIGINS,
    allow_write: bool = False,
) -> None:
    """Serve the tools over streamable HTTP at ``http://{host}:{port}/mcp`` until interrupted (see :func:`http_app`).

    Raises:
        KeyboardInterrupt: on Ctrl-C, after a graceful shutdown.
    """
    import uvicorn

    if token is None and host not in ('127.0.0.1', 'localhost', '::1'):
        print(
            f'memsift mcp: warning: serving on {host} without a token; anyone who can reach it can read this memory',
            file=sys.stderr,
        )
    app = http_app(
        tools,
        host=host,
        token=token,
        allowed_hosts=allowed_hosts,
        allowed_origins=allowed_origins,
        allow_write=allow_write,
    )
    uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level='warning', lifespan='on')).run()


class _BearerAuth:
    """ASGI middleware: HTTP requests need ``Authorization: Bearer <token>`` (the SDK's own auth is OAuth)."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope['type'] != 'http':  # the lifespan (which starts the SDK's session manager) passes through
            await self.app(scope, receive, send)
            return
        header = Headers(scope=scope).get('authorization', '')
        scheme, _, given = header.partition(' ')
        # compare_digest: the time taken does not reveal how much of the token matched
        if scheme.lower() == 'bearer' and hmac.compare_digest(given.strip().encode(), self.token):
            await self.app(scope, receive, send)
            return
        challenge = 'Bearer realm="memsift"' + (', error="invalid_token"' if header else '')
        message = 'invalid bearer token' if header else 'missing bearer token: send Authorization: Bearer <token>'
        await JSONResponse(
            {'error': 'unauthorized', 'error_description': message},
            status_code=401,
            headers={'WWW-Authenticate': challenge},
        )(scope, receive, send)
