"""Generated secret samples for ``redact_conformance.py``: random bodies for each token shape, in several contexts.

Every sample is ``(family, context, text, secret)``. Bodies are random (seeded), so no sample is a real credential.
"""

from __future__ import annotations

import random
import string

ALNUM = string.ascii_letters + string.digits
UPPER_DIGITS = string.ascii_uppercase + string.digits
LOWER_DIGITS = string.ascii_lowercase + string.digits
HEX = '0123456789abcdef'
URLSAFE = ALNUM + '_-'
B64 = ALNUM + '+/'


def _rand(rng: random.Random, alphabet: str, low: int, high: int | None = None) -> str:
    return ''.join(rng.choice(alphabet) for _ in range(rng.randint(low, high or low)))


def _fixed(prefix: str, alphabet: str, low: int, high: int | None = None):
    return lambda rng: prefix + _rand(rng, alphabet, low, high)


def _jwt(rng):
    return (
        'eyJ' + _rand(rng, URLSAFE, 16, 40) + '.eyJ' + _rand(rng, URLSAFE, 20, 80) + '.' + _rand(rng, URLSAFE, 30, 43)
    )


def _discord_bot(rng):
    return (
        rng.choice('MNO') + _rand(rng, URLSAFE, 23) + '.' + _rand(rng, URLSAFE, 6) + '.' + _rand(rng, URLSAFE, 27, 38)
    )


def _telegram(rng):
    return _rand(rng, string.digits, 8, 10) + ':AA' + _rand(rng, URLSAFE, 33)


def _aws_secret(rng):
    while True:
        s = _rand(rng, B64, 40)
        if any(c.isupper() for c in s) and any(c.islower() for c in s) and any(c in '0123456789/+' for c in s):
            return s


def _sendgrid(rng):
    return 'SG.' + _rand(rng, URLSAFE, 22) + '.' + _rand(rng, URLSAFE, 43)


def _slack_webhook(rng):
    return (
        'https://hooks.slack.com/services/T'
        + _rand(rng, UPPER_DIGITS, 10)
        + '/B'
        + _rand(rng, UPPER_DIGITS, 10)
        + '/'
        + _rand(rng, ALNUM, 24)
    )


def _discord_webhook(rng):
    return 'https://discord.com/api/webhooks/' + _rand(rng, string.digits, 18) + '/' + _rand(rng, URLSAFE, 68)


def _hubspot(rng):
    return 'pat-na1-' + '-'.join(_rand(rng, HEX, n) for n in (8, 4, 4, 4, 12))


def _gitlab_runner(rng):
    return 'glrt-' + _rand(rng, URLSAFE, 27) + '.01.' + _rand(rng, LOWER_DIGITS, 9)


# (family, generator): the token shapes OpenClaw's tests name, with random bodies.
SHAPES: list[tuple[str, object]] = [
    ('openai-project', _fixed('sk-proj-', URLSAFE, 40, 80)),
    ('openai-legacy', _fixed('sk-', ALNUM, 48)),
    ('openai-svcacct', _fixed('sk-svcacct-', URLSAFE, 40, 60)),
    ('anthropic', _fixed('sk-ant-api03-', URLSAFE, 80, 95)),
    ('github-ghp', _fixed('ghp_', ALNUM, 36)),
    ('github-gho', _fixed('gho_', ALNUM, 36)),
    ('github-ghu', _fixed('ghu_', ALNUM, 36)),
    ('github-ghs', _fixed('ghs_', ALNUM, 36)),
    ('github-ghr', _fixed('ghr_', ALNUM, 36)),
    ('github-pat', _fixed('github_pat_', ALNUM + '_', 82)),
    ('gitlab-pat', _fixed('glpat-', URLSAFE, 20)),
    ('gitlab-oauth', _fixed('gloas-', HEX, 64)),
    ('gitlab-deploy', _fixed('gldt-', URLSAFE, 20)),
    ('gitlab-runner', _gitlab_runner),
    ('gitlab-feed', _fixed('glft-', URLSAFE, 20)),
    ('gitlab-trigger', _fixed('glptt-', HEX, 40)),
    (
        'slack-bot',
        lambda r: 'xoxb-' + _rand(r, string.digits, 11) + '-' + _rand(r, string.digits, 12) + '-' + _rand(r, ALNUM, 24),
    ),
    (
        'slack-user',
        lambda r: 'xoxp-' + _rand(r, string.digits, 11) + '-' + _rand(r, string.digits, 12) + '-' + _rand(r, HEX, 32),
    ),
    (
        'slack-app',
        lambda r: 'xapp-1-' + _rand(r, UPPER_DIGITS, 11) + '-' + _rand(r, string.digits, 13) + '-' + _rand(r, HEX, 64),
    ),
    ('slack-webhook', _slack_webhook),
    ('discord-webhook', _discord_webhook),
    ('discord-bot', _discord_bot),
    ('telegram-bot', _telegram),
    ('google-api-key', _fixed('AIza', URLSAFE, 35)),
    ('google-oauth-access', _fixed('ya29.', URLSAFE, 60, 120)),
    ('google-oauth-refresh', _fixed('1//0', URLSAFE, 60, 100)),
    ('groq', _fixed('gsk_', ALNUM, 52)),
    ('perplexity', _fixed('pplx-', ALNUM, 48)),
    ('npm', _fixed('npm_', ALNUM, 36)),
    ('pypi', _fixed('pypi-AgEIcHlwaS5vcmc', URLSAFE, 60, 120)),
    ('huggingface', _fixed('hf_', ALNUM, 34)),
    ('huggingface-org', _fixed('api_org_', ALNUM, 34)),
    ('replicate', _fixed('r8_', ALNUM, 37)),
    ('stripe-secret', _fixed('sk_live_', ALNUM, 24, 99)),
    ('stripe-test', _fixed('sk_test_', ALNUM, 24, 99)),
    ('stripe-restricted', _fixed('rk_live_', ALNUM, 24, 99)),
    ('stripe-webhook', _fixed('whsec_', ALNUM, 32)),
    ('sendgrid', _sendgrid),
    ('jwt', _jwt),
    ('aws-access-key-id', _fixed('AKIA', UPPER_DIGITS, 16)),
    ('aws-session-key-id', _fixed('ASIA', UPPER_DIGITS, 16)),
    ('aws-secret-access-key', _aws_secret),
    ('tencent-secret-id', _fixed('AKID', ALNUM, 32)),
    ('alibaba-access-key', _fixed('LTAI', ALNUM, 20)),
    ('fal', _fixed('fal_', ALNUM, 32)),
    ('firecrawl', _fixed('fc-', HEX, 32)),
    ('browserbase', _fixed('bb_live_', URLSAFE, 27)),
    ('fernet', _fixed('gAAAAA', URLSAFE, 80, 120)),
    ('digitalocean', _fixed('dop_v1_', HEX, 64)),
    ('doppler', _fixed('dp.pt.', ALNUM, 43)),
    ('docker-pat', _fixed('dckr_pat_', URLSAFE, 27)),
    ('buildkite', _fixed('bkua_', HEX, 40)),
    ('supabase', _fixed('sbp_', HEX, 40)),
    ('databricks', lambda r: 'dapi' + _rand(r, HEX, 32) + '-2'),
    ('grafana-sa', _fixed('glsa_', ALNUM, 32)),
    ('netlify', _fixed('nfp_', ALNUM, 36)),
    ('cloudflare', _fixed('CFPAT-', URLSAFE, 43)),
    ('atlassian', lambda r: 'ATATT3xFfGF0' + _rand(r, URLSAFE, 180) + '=' + _rand(r, HEX.upper(), 8)),
    ('heroku', _fixed('HRKU-AA', URLSAFE, 58)),
    ('hubspot', _hubspot),
    ('apify', _fixed('apify_api_', ALNUM, 36)),
    ('tavily', _fixed('tvly-', ALNUM, 32)),
    ('exa', _fixed('exa_', ALNUM, 32)),
    ('xai', _fixed('xai-', ALNUM, 80)),
    ('fireworks', _fixed('fw_', ALNUM, 24, 40)),
    ('matrix', _fixed('syt_', URLSAFE, 40)),
    ('mem0', _fixed('m0-', ALNUM, 40)),
]

# Keys an assignment, JSON field, header or flag may carry a secret under; each gets a random casing.
KEYS = [
    'api_key',
    'apiKey',
    'access_token',
    'auth_token',
    'secret',
    'client_secret',
    'password',
    'token',
    'private_key',
]


def random_casing(rng: random.Random, key: str) -> str:
    """``key`` as snake_case, camelCase, UPPER_CASE, kebab-case or as written, at random."""
    words = key.replace('-', '_').split('_') if '_' in key or '-' in key else _split_camel(key)
    style = rng.randrange(5)
    if style == 0:
        return '_'.join(w.lower() for w in words)
    if style == 1:
        return words[0].lower() + ''.join(w.capitalize() for w in words[1:])
    if style == 2:
        return '_'.join(w.upper() for w in words)
    if style == 3:
        return '-'.join(w.lower() for w in words)
    return key


def _split_camel(key: str) -> list[str]:
    words, cur = [], ''
    for ch in key:
        if ch.isupper() and cur:
            words.append(cur)
            cur = ch
        else:
            cur += ch
    return [*words, cur]


QUERY_KEYS = ['access_token', 'api_key', 'token', 'client_secret']
CONTEXTS = ['bare', 'env', 'json', 'form', 'header', 'cli', 'query']


def place(rng: random.Random, context: str, secret: str) -> str:
    """``secret`` put in a line of the given context (JSON, form body, HTTP header, CLI flag, ...)."""
    key = random_casing(rng, rng.choice(KEYS))
    if context == 'bare':
        return rng.choice(['found ', 'value: ', 'log: using ', '']) + secret + rng.choice(['', ' in config', '.'])
    if context == 'env':
        quote = rng.choice(['', '"'])
        return f'{rng.choice(["export ", ""])}{key.upper().replace("-", "_")}={quote}{secret}{quote}'
    if context == 'json':
        return '{"model": "x", "' + key + '": "' + secret + '", "n": 1}'
    if context == 'form':
        return f'body: client_id=visible&{key}={secret}&state=ok'
    if context == 'header':
        return rng.choice(
            [
                f'Authorization: Bearer {secret}',
                f'authorization: bearer {secret}',
                f'X-Api-Key: {secret}',
                f'curl -H "Authorization: Bearer {secret}" https://api.example.test',
            ]
        )
    if context == 'cli':
        flag = rng.choice(['--api-key', '--token', '--secret', '--password', '--access-token'])
        return f'tool run {flag}{rng.choice([" ", "="])}{secret} --verbose'
    if context == 'query':
        return f'GET https://api.example.test/v1/items?page=2&{rng.choice(QUERY_KEYS)}={secret}&sort=asc'
    raise ValueError(context)


def generate(seed: int = 13, per_shape: int = 160) -> list[tuple[str, str, str, str]]:
    """``per_shape`` random secrets for each token shape, each put in a random context."""
    rng = random.Random(seed)
    samples = []
    for family, make in SHAPES:
        for _ in range(per_shape):
            secret = make(rng)
            context = rng.choice(CONTEXTS)
            samples.append((family, context, place(rng, context, secret), secret))
    return samples


def generate_keyed(seed: int = 14, count: int = 2000) -> list[tuple[str, str, str, str]]:
    """Opaque values (no vendor prefix) under sensitive keys with random casing: only the key says it is secret."""
    rng = random.Random(seed)
    samples = []
    for _ in range(count):
        secret = _rand(rng, ALNUM + '-_', 12, 48)
        context = rng.choice(['env', 'json', 'form', 'header', 'cli', 'query'])
        samples.append(('keyed-opaque', context, place(rng, context, secret), secret))
    return samples
