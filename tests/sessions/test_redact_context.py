"""memsift's context rules (issue 32): keys without a fixed prefix, known by where they stand, and cloud client
secrets OpenClaw's list does not know. Each form is masked and its context kept; names, paths, versions, UUIDs and
prose near the same words stay as they are; and a wrong guess of a masked key reads, where search looks, exactly as
the true one does."""

from __future__ import annotations

import pytest
from test_guess_oracle import guessed

from memsift.redact import Redactor, redact

KEY = 'q8Xv2LmN4pR7tZ1wK9sD3fH6'
HEX = 'd241a60d5e8f04cc1b2b3e9ef7a4921b'
LOWER = 'x7k2m9p4q1w8e3r6t5y0u2i4'

# (form, line, the secret in it)
FORMS = [
    ('constructor argument', f'client = OpenAI("{KEY}")', KEY),
    ('constructor argument, single quotes', f"stripe = new Stripe('{KEY}')", KEY),
    ('second constructor argument', f'tw = Twilio("AC1234", "{HEX}")', HEX),
    ('dotted constructor', f'c = anthropic.Anthropic("{KEY}")', KEY),
    ('factory call', f'supabase = create_client("https://x.supabase.co", "{LOWER}")', LOWER),
    ('redis-cli -a', f'redis-cli -h cache -a {KEY} ping', KEY),
    ('-k flag', f'tool -k {HEX} upload', HEX),
    ('--key flag', f'deploy --key {KEY} --region eu', KEY),
    ('--key= flag', f'deploy --key={LOWER}', LOWER),
    ('--auth flag', f'cli --auth {KEY}', KEY),
    ('credential word, then is', f'my api key is {KEY}', KEY),
    ('credential word, then words', f'use the token {HEX} for staging', HEX),
    ('bare token word', f'token {KEY}', KEY),
    ('session id', f'sessionid: {KEY}', KEY),
    ('client secret in prose', f'the client secret: {LOWER}', LOWER),
    ('password in prose', f'password for the vpn is {KEY}', KEY),
    ('x-api-key header', f'curl -H "X-API-Key: {KEY}" https://api.example.com', KEY),
    ('authorization without a scheme', f'Authorization: {KEY}', KEY),
    ('google oauth client secret', 'GOCSPX-' + KEY[:22] + 'abcdef', 'GOCSPX-' + KEY[:22] + 'abcdef'),
    (
        'entra client secret',
        'AZURE_SECRET abc8Q~' + 'a1B2c3D4e5f6G7h8I9j0K1l2M3n4O5p6q7',
        'a1B2c3D4e5f6G7h8I9j0K1l2M3n4',
    ),
    (
        'url password with @',
        'git clone https://deploy:p@ss-Kq81zLmN0pRt7Uv@git.example.com/r.git',
        'ss-Kq81zLmN0pRt7Uv',
    ),
    ('url password with :', 'ftp://bob:se:cr3t-Kq81zLmN0pRt7Uv@files.example.org', 'cr3t-Kq81zLmN0pRt7Uv'),
]

# Lines that hold the same words or shapes and no secret.
ORDINARY = [
    "row('all-MiniLM-L6-v2', 'int8, batch 8', rate)",
    'name = create_node_name("Slice", "GatherLastToken_0_")',
    'adapters.register_dumper("ipaddress.IPv4Address", InterfaceDumper)',
    "tools.sessions_history('01234567-89ab-4def-8123-456789abcdef')",
    'self.top_1_tokens = Gpt2Tester.predict_next_token(self.logits)',
    'open("memory/2026-11-28.md")',
    "NumpyVersion('1.9.0a2.dev-f16acvda') < '1.9.0a2'",
    'the token is valid for another hour',
    'my api key is in the vault, ask ops',
    'tar -k archive-2026-backup.tar.gz',
    'use claude-3-5-sonnet-20241022 for this',
    'git commit -a -m "fix the session timeout handling"',
    "model = SentenceTransformer('paraphrase-multilingual-mpnet')",
    'Token limits: 128000 tokens per request',
]


@pytest.mark.parametrize(('form', 'line', 'secret'), FORMS, ids=[f[0] for f in FORMS])
def test_the_form_is_masked_and_its_context_kept(form, line, secret):
    out = redact(line)
    assert secret not in out, (form, out)
    assert out.split()[0] == line.split()[0] or out.startswith(line[:6]), (form, out)


@pytest.mark.parametrize('line', ORDINARY)
def test_ordinary_lines_stay(line):
    assert redact(line) == line


@pytest.mark.parametrize(('form', 'line', 'secret'), FORMS, ids=[f[0] for f in FORMS])
def test_a_wrong_guess_reads_as_the_true_key_where_search_looks(form, line, secret):
    redactor = Redactor()
    guess = guessed(line, [secret])
    assert guess is not None and guess != line
    assert redactor.redact_for_search(guess) == redactor.redact_for_search(line), form
