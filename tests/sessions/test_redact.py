"""Secret redaction (memsift.redact): OpenClaw's redactToolPayloadText "tools" mode.

Fake secrets are assembled from a prefix and a body so that no scanner mistakes this file for a leak.
"""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memsift.errors import ConfigError, RedactPatternError
from memsift.redact import Redactor, mask, redact

B36 = 'Xq7TmP2vLk9RsW4nZb8YcH3jDf6GaE1uKo5i'  # a 36-character token body
B24 = 'mF9xQ2wE7rT4yU1iO8pA3sD6'
B40 = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY'


def expected_mask(secret):
    """The masking rule, restated independently of memsift.redact.mask."""
    return '***' if len(secret) < 18 else f'{secret[:6]}\u2026{secret[-4:]}'


# (case id, text, the secret value, text that must stay visible)
SECRETS = [
    # ENV-style assignments
    (
        'env-openai',
        'export OPENAI_API_KEY=' + 'sk-proj-' + B36 + ' && python agent.py',
        'sk-proj-' + B36,
        'export OPENAI_API_KEY=',
    ),
    ('env-yaml-password', 'services:\n  db:\n    DB_PASSWORD: hunter2hunter2\n', 'hunter2hunter2', 'DB_PASSWORD: '),
    ('env-export-quoted', 'export GITHUB_TOKEN="' + 'ghp_' + B36 + '"', 'ghp_' + B36, 'export GITHUB_TOKEN="'),
    (
        'env-single-quoted-spaces',
        "SMTP_PASSWORD='correct horse battery staple'\n",
        'correct horse battery staple',
        "SMTP_PASSWORD='",
    ),
    (
        'env-dotenv',
        'JWT_SECRET=9f8e7d6c5b4a39281706f5e4d3c2b1a0\nPORT=8080',
        '9f8e7d6c5b4a39281706f5e4d3c2b1a0',
        'JWT_SECRET=',
    ),
    (
        'env-compose-list',
        '    environment:\n      - POSTGRES_PASSWORD=pg-Sup3r-S3cret!\n',
        'pg-Sup3r-S3cret!',
        '- POSTGRES_PASSWORD=',
    ),
    ('env-aws-secret', 'AWS_SECRET_ACCESS_KEY=' + B40 + ' aws s3 ls', B40, 'AWS_SECRET_ACCESS_KEY='),
    (
        'env-json-upper',
        '{"ANTHROPIC_API_KEY": "' + 'sk-ant-api03-' + B36 + '"}',
        'sk-ant-api03-' + B36,
        '{"ANTHROPIC_API_KEY": "',
    ),
    (
        'aws-credentials-file',
        '[default]\nregion = us-east-1\naws_secret_access_key = ' + B40,
        B40,
        'aws_secret_access_key = ',
    ),
    (
        'aws-access-key-id',
        '[default]\naws_access_key_id = ' + 'AKIA' + 'IOSFODNN7EXAMPLE' + '\nregion = eu-west-1',
        'AKIA' + 'IOSFODNN7EXAMPLE',
        'aws_access_key_id = ',
    ),
    (
        'aws-session-key-id',
        'assumed role, temporary key ' + 'ASIA' + 'ZX3Q5NPRT7LMK2WD' + ' expires at 12:00',
        'ASIA' + 'ZX3Q5NPRT7LMK2WD',
        'temporary key ',
    ),
    # JSON fields
    (
        'json-apikey',
        '{"provider": "openai", "apiKey": "AbCdEf0123456789GhIjKl", "model": "gpt-4o"}',
        'AbCdEf0123456789GhIjKl',
        '"apiKey": "',
    ),
    (
        'json-client-secret',
        '{"client_id": "1234.apps", "client_secret": "GOCSPX-' + B24 + '"}',
        'GOCSPX-' + B24,
        '"client_secret": "',
    ),
    (
        'json-access-token',
        '{"access_token":"ya29.a0AfB_' + B36 + '","token_type":"Bearer","expires_in":3599}',
        'ya29.a0AfB_' + B36,
        '"access_token":"',
    ),
    (
        'json-refresh-token',
        '{"refresh_token": "1//0gLq' + B24 + '", "scope": "email"}',
        '1//0gLq' + B24,
        '"refresh_token": "',
    ),
    ('json-password-short', '{"user": "admin", "password": "s3cr3t!"}', 's3cr3t!', '"password": "'),
    (
        'json-escaped-in-string',
        '{"tool": "write", "content": "{\\"token\\": \\"' + B24 + '\\"}"}',
        B24,
        '{\\"token\\": \\"',
    ),
    # CLI flags
    (
        'cli-token-space',
        'openclaw gateway run --token 8f3a9c2e1b7d4f6a0e5c --port 18789',
        '8f3a9c2e1b7d4f6a0e5c',
        'openclaw gateway run --token ',
    ),
    (
        'cli-api-key-equals',
        'memsift index --api-key=' + 'sk-ant-api03-' + B24 + ' notes/',
        'sk-ant-api03-' + B24,
        'memsift index --api-key=',
    ),
    (
        'cli-hook-token-quoted',
        'openclaw hooks add --hook-token "hk_' + B24 + '" --url /wake',
        'hk_' + B24,
        '--hook-token "',
    ),
    ('cli-password', 'mysql -h db -u root --password hunter22 app', 'hunter22', 'mysql -h db -u root --password '),
    ('cli-secret', 'vault kv put --secret=Zq81' + B24 + ' kv/app', 'Zq81' + B24, '--secret='),
    # Authorization headers
    (
        'curl-bearer',
        "curl -H 'Authorization: Bearer " + B36 + "' https://api.openai.com/v1/models",
        B36,
        "curl -H 'Authorization: Bearer ",
    ),
    (
        'curl-basic',
        'curl -H "Authorization: Basic dXNlcjpwYXNzd29yZA==" https://ci.example.com/api/json',
        'dXNlcjpwYXNzd29yZA==',
        '"Authorization: Basic ',
    ),
    (
        'json-authorization',
        '"headers": {"Authorization": "Bearer ' + B24 + '", "Accept": "*/*"}',
        B24,
        '"Authorization": "',
    ),
    ('bare-bearer', 'the gateway replied 401 for Bearer ' + B24 + ' (expired)', B24, 'for Bearer '),
    (
        'x-api-key-header',
        "curl https://api.anthropic.com/v1/messages -H 'x-api-key: " + 'sk-ant-api03-' + B36 + "'",
        'sk-ant-api03-' + B36,
        "-H 'x-api-key: ",
    ),
    (
        'gitlab-private-token',
        'curl --header "PRIVATE-TOKEN: ' + 'glpat-' + 'Ab3dE6gH9jK2mN5pQ8sT' + '" https://gitlab.com',
        'glpat-' + 'Ab3dE6gH9jK2mN5pQ8sT',
        '"PRIVATE-TOKEN: ',
    ),
    # vendor prefixes
    ('openai-legacy', 'openai.api_key = "' + 'sk-' + B36 + '"', 'sk-' + B36, 'openai.api_key = "'),
    (
        'anthropic',
        'client = Anthropic(api_key="' + 'sk-ant-api03-' + B36 + '")',
        'sk-ant-api03-' + B36,
        'client = Anthropic(api_key="',
    ),
    (
        'github-ghp-in-url',
        'git clone https://' + 'ghp_' + B36 + '@github.com/acme/infra.git',
        'ghp_' + B36,
        '@github.com/acme/infra.git',
    ),
    ('github-gho', 'oauth token for the app: ' + 'gho_' + B36, 'gho_' + B36, 'oauth token for the app: '),
    ('github-ghu', 'user-to-server token ' + 'ghu_' + B36 + ' was revoked', 'ghu_' + B36, ' was revoked'),
    ('github-ghs', 'GITHUB_APP_INSTALLATION=' + 'ghs_' + B36, 'ghs_' + B36, 'GITHUB_APP_INSTALLATION='),
    ('github-ghr', 'refresh with ' + 'ghr_' + B36 + '.', 'ghr_' + B36, 'refresh with '),
    (
        'github-pat',
        'gh auth login --with-token <<< ' + 'github_pat_' + '11ABCDEFG0' + B36,
        'github_pat_11ABCDEFG0' + B36,
        'gh auth login --with-token <<< ',
    ),
    (
        'slack-bot',
        'slack bot token is ' + 'xoxb-' + '2048-4096-' + B24 + ', channel #ops',
        'xoxb-2048-4096-' + B24,
        'slack bot token is ',
    ),
    ('slack-user', 'userToken: ' + 'xoxp-' + '1234567890-' + B24, 'xoxp-1234567890-' + B24, 'userToken: '),
    ('slack-app', 'appToken: ' + 'xapp-' + '1-A0123-' + B24, 'xapp-1-A0123-' + B24, 'appToken: '),
    (
        'slack-webhook',
        'curl -X POST https://hooks.slack.com/services/' + 'T0ABC1234/B0DEF5678/' + B24 + " -d '{}'",
        'T0ABC1234/B0DEF5678/' + B24,
        'https://hooks.slack.com/services/',
    ),
    (
        'discord-webhook',
        'post to https://discord.com/api/webhooks/' + '112233445566778899/' + B36 + ' when done',
        '112233445566778899/' + B36,
        'https://discord.com/api/webhooks/',
    ),
    (
        'discord-bot-token',
        'client.run("' + 'MTA5ODc2NTQzMjEwOTg3NjU0' + '.GhIjKl.' + 'Q' + B36[:30] + '")',
        'MTA5ODc2NTQzMjEwOTg3NjU0.GhIjKl.Q' + B36[:30],
        'client.run("',
    ),
    ('groq', 'llm = Groq(api_key="' + 'gsk_' + B36 + '")', 'gsk_' + B36, 'llm = Groq(api_key="'),
    (
        'google-maps-query',
        'GET https://maps.googleapis.com/maps/api/geocode/json?address=Paris&key=' + 'AIza' + B36[:35],
        'AIza' + B36[:35],
        '?address=Paris&key=',
    ),
    (
        'google-firebase',
        'const firebaseConfig = { apiKey: "' + 'AIza' + B36[:35] + '", projectId: "demo" };',
        'AIza' + B36[:35],
        'apiKey: "',
    ),
    ('perplexity', 'using pplx key ' + 'pplx-' + B36 + ' for search', 'pplx-' + B36, 'using pplx key '),
    ('npm', '//registry.npmjs.org/:_authToken=' + 'npm_' + B36, 'npm_' + B36, '//registry.npmjs.org/:_authToken='),
    (
        'gitlab-in-url',
        'git remote add origin https://oauth2:' + 'glpat-' + 'Ab3dE6gH9jK2mN5pQ8sT' + '@gitlab.com/g/p.git',
        'glpat-Ab3dE6gH9jK2mN5pQ8sT',
        'https://oauth2:',
    ),
    (
        'jwt',
        'id_token: '
        + 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9'
        + '.eyJzdWIiOiIxMjM0NTY3ODkwIn0'
        + '.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
        'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
        'id_token: ',
    ),
    ('stripe-sk-live', 'stripe.api_key = "' + 'sk_live_' + B24 + '"', 'sk_live_' + B24, 'stripe.api_key = "'),
    ('stripe-sk-test', 'test mode key ' + 'sk_test_' + B24, 'sk_test_' + B24, 'test mode key '),
    (
        'stripe-rk-live',
        'restricted key ' + 'rk_live_' + B24 + ' for the reporting job',
        'rk_live_' + B24,
        'restricted key ',
    ),
    ('stripe-pk-live', 'publishable: ' + 'pk_live_' + B24, 'pk_live_' + B24, 'publishable: '),
    ('stripe-whsec', 'STRIPE_WEBHOOK=' + 'whsec_' + B36, 'whsec_' + B36, 'STRIPE_WEBHOOK='),
    ('huggingface-cli', 'huggingface-cli login --token ' + 'hf_' + B36, 'hf_' + B36, 'huggingface-cli login --token '),
    (
        'huggingface-code',
        'AutoModel.from_pretrained("org/model", token="' + 'hf_' + B36 + '")',
        'hf_' + B36,
        'from_pretrained("org/model", token="',
    ),
    (
        'telegram',
        'GET https://api.telegram.org/bot' + '123456789:' + 'AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw' + '/getMe',
        '123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw',
        'https://api.telegram.org/bot',
    ),
    (
        'sendgrid',
        'sg = SendGridAPIClient("'
        + 'SG.'
        + 'ngeVfQFYQlKU0ufo8x5d1A'
        + '.'
        + 'TwL2iGABf9DHoTf-09kqeF8tAmbihYzrnopKc-1s5cr'
        + '")',
        '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',
        'SendGridAPIClient("',
    ),
    # URL user-info
    (
        'url-userinfo-short',
        'DATABASE_URL=postgres://app:s3cretpass@db.internal:5432/app',
        's3cretpass',
        'postgres://app:',
    ),
    ('url-userinfo-long', 'redis://:Zx8' + B24 + '@cache.internal:6379/0', 'Zx8' + B24, 'redis://:'),
    ('url-userinfo-https', 'open https://admin:hunter2@example.com/dashboard to check', 'hunter2', 'https://admin:'),
    # sensitive query / form keys
    (
        'query-token',
        'GET /api/export?token=abcdef1234567890abcdef&format=csv 200',
        'abcdef1234567890abcdef',
        '/api/export?token=',
    ),
    (
        'query-access-token',
        'https://graph.example.com/me?fields=id&access_token=EAAB' + B36,
        'EAAB' + B36,
        '&access_token=',
    ),
    (
        'query-sig',
        'https://acct.blob.core.windows.net/c/f.txt?sv=2022-11-02&sp=r&sig=Ab%2BcD' + B24 + '%3D',
        'Ab%2BcD' + B24 + '%3D',
        '&sp=r&sig=',
    ),
    (
        'query-amz-signature',
        'https://bucket.s3.amazonaws.com/k?X-Amz-Expires=900&X-Amz-Signature=' + '9c1f' * 16,
        '9c1f' * 16,
        '&X-Amz-Signature=',
    ),
    (
        # Form-body values are always '***' (OpenClaw); a short secret keeps the shape rule above true.
        'form-client-secret',
        "curl -d 'grant_type=client_credentials&client_secret=" + B24[:16] + "' https://auth/token",
        B24[:16],
        '&client_secret=',
    ),
    ('query-password', 'POST /login?user=bob&password=letmein123 HTTP/1.1', 'letmein123', '&password='),
    ('query-auth', 'wss://relay.example.net/socket?auth=' + B36 + '&v=2', B36, '?auth='),
]


def test_the_secret_table_is_big_enough():
    assert len(SECRETS) >= 45
    assert len({case[0] for case in SECRETS}) == len(SECRETS)


# JSON fields that OpenClaw masks twice (its structured JSON field rule, then an ambiguous quoted-field or header
# rule): the second mask of the shortened value is '***', so the whole quoted value after ``visible`` is '***'.
DOUBLE_MASKED = frozenset(
    {'json-apikey', 'json-client-secret', 'json-access-token', 'json-refresh-token', 'json-authorization'}
)


@pytest.mark.parametrize(('case_id', 'text', 'secret', 'visible'), SECRETS, ids=[case[0] for case in SECRETS])
def test_secret_is_masked_and_context_kept(case_id, text, secret, visible):
    assert secret in text and visible in text  # the case itself is well formed
    out = redact(text)
    assert secret not in out
    assert visible in out
    if case_id in DOUBLE_MASKED:
        value = text.split(visible, 1)[1].split('"', 1)[0]
        assert out == text.replace(f'{visible}{value}"', f'{visible}***"')
    else:
        assert out == text.replace(secret, expected_mask(secret))  # only the value changed, to the right shape


ORDINARY = [
    'Remember to rotate the password every 90 days.',
    'The API key is in the vault; ask ops for the secret key if you need it.',
    'ids = tokenizer.encode(text)',
    'hashed = password_hash($pw, PASSWORD_DEFAULT);',
    'from sklearn import svm  # a.k.a. sk-learn, scikit-learn',
    'request 550e8400-e29b-41d4-a716-446655440000 failed',
    'fixed in commit 9fceb02d0ae598e95dc970b74767f19372d61af8 (see 9fceb02)',
    'edit /home/alice/.config/openclaw/secrets/README.md and ~/.ssh/config',
    'docs: https://docs.openclaw.ai/gateway/config?section=logging&lang=en#redaction',
    'standup at 12:30, retro at 14:45, deploy window 23:00-01:00',
    '请不要把密码和令牌写进日志。',
    'パスワードとトークンはログに書かないでください。',
    "if token is None:\n    raise ValueError('missing token')",
    'Bearer tokens expire after one hour; refresh them with the refresh token.',
    'export PATH=/usr/local/bin:$PATH',
    "API_KEY = os.environ['OPENAI_API_KEY']",
    'GITHUB_TOKEN=$GITHUB_TOKEN gh pr list --state open',
    'docker login --password-stdin < token.txt',
    'const token = await getToken(); // never log the token',
    'CREATE TABLE t (id INT, PRIMARY KEY (id), FOREIGN KEY (u) REFERENCES users(id));',
    'sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
    'ssh git@github.com:acme/infra.git; mail alice@example.com',
    'The monkey ate 12 bananas; MAX_TOKENS is 4096 and the secret sauce is love.',
    'Set `logging.redactPatterns` to hide internal codenames.',
    "log.info(f'token={token_id}')",
    'Use `--token-file ~/.config/gh/token` instead of passing a secret on the command line.',
]


def test_the_ordinary_table_is_big_enough():
    assert len(ORDINARY) >= 15


@pytest.mark.parametrize('text', ORDINARY)
def test_ordinary_text_is_unchanged(text):
    assert redact(text) == text


# ---------------------------------------------------------------- PEM private keys

PEM_BODY = 'MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\nVTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n'


def test_pem_block_keeps_begin_and_end_lines():
    text = f'key.pem:\n-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}-----END RSA PRIVATE KEY-----\nnext line'
    assert redact(text) == (
        'key.pem:\n-----BEGIN RSA PRIVATE KEY-----\n\u2026redacted\u2026\n-----END RSA PRIVATE KEY-----\nnext line'
    )


def test_openssh_and_encrypted_pem_blocks():
    for kind in ('OPENSSH PRIVATE KEY', 'ENCRYPTED PRIVATE KEY', 'EC PRIVATE KEY', 'PRIVATE KEY'):
        text = f'-----BEGIN {kind}-----\nProc-Type: 4,ENCRYPTED\n{PEM_BODY}-----END {kind}-----'
        out = redact(text)
        assert 'u1SU1LfV' not in out and 'Proc-Type' not in out
        assert out.startswith(f'-----BEGIN {kind}-----') and out.endswith(f'-----END {kind}-----')


def test_pem_block_cut_off_by_a_snippet_edge_is_still_hidden():
    out = redact('-----BEGIN PRIVATE KEY-----\n' + PEM_BODY)
    assert 'u1SU1LfV' not in out and out.startswith('-----BEGIN PRIVATE KEY-----')


def test_public_keys_and_certificates_are_not_private():
    text = '-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----'
    assert redact(text) == text


# ---------------------------------------------------------------- mask


def test_mask_shapes():
    assert mask('') == '***'
    assert mask('a' * 17) == '***'
    assert mask('abcdef' + 'x' * 8 + 'wxyz') == 'abcdef\u2026wxyz'  # exactly 18
    assert mask('sk-proj-' + B36) == 'sk-pro\u2026Ko5i'


def test_several_secrets_in_one_transcript():
    text = (
        f"user: here's my config\nOPENAI_API_KEY=sk-proj-{B36}\n"
        f"assistant: I ran curl -H 'Authorization: Bearer {B24}' and git push https://ghp_{B36}@github.com/x/y\n"
    )
    out = redact(text)
    for secret in (f'sk-proj-{B36}', B24, f'ghp_{B36}'):
        assert secret not in out
    assert "user: here's my config" in out and 'assistant: I ran curl' in out


# ---------------------------------------------------------------- user patterns


def test_user_pattern_with_a_group_masks_group_one_only():
    r = Redactor([r'codename (\w+)'])
    assert r.redact('the codename nightingale ships friday') == 'the codename *** ships friday'


def test_user_pattern_without_a_group_masks_the_whole_match():
    r = Redactor([r'ACME-[0-9]{6}'])
    assert r.redact('ticket ACME-004211 is open') == 'ticket *** is open'
    assert r.redact('ticket acme-004211 is open') == 'ticket *** is open'  # case-insensitive, as in OpenClaw


def test_user_pattern_whose_group_did_not_take_part_masks_the_whole_match():
    r = Redactor([r'(?:emp=(\d+))|EMP-\w+'])
    assert r.redact('emp=4242 and EMP-X77') == 'emp=*** and ***'


def test_user_patterns_run_before_the_defaults():
    text = 'Authorization: Bearer ' + B24
    # First, the user pattern sees the raw header and masks "Bearer <token>" as one value; the defaults then
    # leave the already-masked value alone. (Defaults first would give "Bearer mF9xQ2…sD6".)
    assert Redactor([r'Bearer \S+']).redact(text) == 'Authorization: ' + expected_mask('Bearer ' + B24)
    assert redact(text) == 'Authorization: Bearer ' + expected_mask(B24)


def test_user_patterns_add_to_the_defaults():
    r = Redactor([r'project (\w+)'])
    out = r.redact('project nightingale uses OPENAI_API_KEY=sk-proj-' + B36)
    assert out == 'project *** uses OPENAI_API_KEY=' + expected_mask('sk-proj-' + B36)


def test_user_pattern_literal_form_takes_its_own_flags():
    assert Redactor(['/acme-[0-9]+/']).redact('ACME-123 acme-456') == 'ACME-123 ***'
    assert Redactor(['/acme-[0-9]+/i']).redact('ACME-123 acme-456') == '*** ***'


def test_blank_user_patterns_change_nothing():
    assert Redactor(['', '   ']).redact('plain text') == 'plain text'


def test_a_user_pattern_that_can_match_nothing_is_refused():
    # An empty match hides nothing, and one at every position of a 1 MB text made redaction take seconds.
    for pattern in ('z*', '(' * 200 + ')' * 200, r'\b'):
        with pytest.raises(RedactPatternError, match=r'logging\.redactPatterns\[1\]: .* empty string.*a\+'):
            Redactor(['ok', pattern])


def test_invalid_user_pattern_names_the_entry_and_the_fix():
    with pytest.raises(RedactPatternError) as info:
        Redactor([r'ok-\d+', '(unclosed'])
    err = info.value
    assert isinstance(err, ConfigError) and isinstance(err, ValueError)
    assert err.key_path == 'logging.redactPatterns[1]'
    message = str(err)
    assert message.startswith('logging.redactPatterns[1]: ')
    assert "'(unclosed'" in message and 'backslash' in message and 'remove it' in message


def test_javascript_named_group_works():
    # Was: a JavaScript named group (?<id>...) raised RedactPatternError with a hint to write (?P<name>...).
    # OpenClaw compiles redactPatterns as JavaScript regexes, where (?<id>...) is the native syntax, and the Rust
    # regex engine accepts it too, so one config now works for both tools.
    assert Redactor([r'id=(?<id>\d+)']).redact('user id=4242 logged in') == 'user id=*** logged in'


def test_look_around_and_back_references_are_refused_with_a_rewrite_hint():
    for index, pattern in ((0, r'(?<=token=)\w+'), (0, r'(\w+)-\1')):
        with pytest.raises(RedactPatternError) as info:
            Redactor([pattern])
        assert info.value.key_path == f'logging.redactPatterns[{index}]'
        assert 'not supported' in str(info.value) and 'remove it' in str(info.value)


def test_huge_repetition_counts_are_refused_quickly():
    with pytest.raises(RedactPatternError, match=r'redactPatterns\[1\].*too big'):
        Redactor(['ok', 'a{100000}{100000}'])


def test_catastrophic_backtracking_pattern_is_linear():
    # (a+)+$ hangs a backtracking engine for hours on this input; the Rust regex engine is linear by construction.
    text = 'a' * 1_000_000 + '!'
    assert Redactor(['(a+)+$']).redact(text) == text
    assert Redactor(['(a+)+$']).redact('x ' + 'a' * 30) == 'x ' + mask('a' * 30)


def test_patterns_must_be_a_list_of_strings():
    with pytest.raises(RedactPatternError, match='expected a list'):
        Redactor('codename (\\w+)')
    with pytest.raises(RedactPatternError, match=r'redactPatterns\[0\].*expected a regular expression string'):
        Redactor([42])  # type: ignore[list-item]


# ---------------------------------------------------------------- idempotence and robustness


@pytest.mark.parametrize('text', [case[1] for case in SECRETS] + ORDINARY, ids=lambda t: t[:30])
def test_redacting_twice_equals_once(text):
    once = redact(text)
    assert redact(once) == once


def test_redacting_an_excerpt_of_redacted_text_changes_nothing():
    # sessions.py redacts a message, collapses whitespace and cuts an excerpt, then redacts the excerpt again.
    text = (
        f'OPENAI_API_KEY=sk-proj-{B36}\n-----BEGIN PRIVATE KEY-----\n{PEM_BODY}-----END PRIVATE KEY-----\n'
        f'curl -H "Authorization: Bearer {B24}" "https://x.io/?token={B36}"'
    )
    once = ' '.join(redact(text).split())
    for cut in range(0, len(once), 7):
        excerpt = '\u2026' + once[cut : cut + 60] + '\u2026'
        assert redact(excerpt) == excerpt


def test_user_pattern_redaction_is_idempotent():
    r = Redactor([r'codename (\w+)', r'ACME-[0-9]{6}'])
    text = 'codename nightingale, ticket ACME-004211, DB_PASSWORD=hunter2hunter2, token ghp_' + B36
    once = r.redact(text)
    assert r.redact(once) == once


LINES = [case[1] for case in SECRETS] + ORDINARY


@given(st.lists(st.sampled_from(LINES), min_size=1, max_size=6), st.sampled_from([' ', '\n', '; ', '\n\n']))
def test_any_mix_of_lines_is_redacted_idempotently(lines, separator):
    text = separator.join(lines)
    once = redact(text)
    assert redact(once) == once
    for _, line, secret, _ in SECRETS:
        if line in lines:
            assert secret not in once


@given(st.text())
def test_any_text_is_accepted(text):
    assert isinstance(redact(text), str)


def test_lone_surrogates_are_fine():
    text = '\ud800 broken utf-16 \udfff then OPENAI_API_KEY=sk-proj-' + B36 + ' \udbff'
    assert redact(text) == text.replace('sk-proj-' + B36, expected_mask('sk-proj-' + B36))
    assert redact('\ud800' * 1000) == '\ud800' * 1000


@pytest.mark.parametrize(
    'text',
    [
        'a=' * 500_000,
        '"' * 1_000_000,
        'sk-' * 333_333,
        'KEY=' + 'a.' * 500_000,
        '-----BEGIN RSA PRIVATE KEY-----' * 33_000,
        'https://a:' * 100_000,
        '1234567:' * 125_000,
        'Bearer ' + 'a' * 1_000_000,
        '"token":"' + 'a\\' * 500_000,
        '?token=' * 140_000,
    ],
    ids=lambda t: repr(t[:12]),
)
def test_large_hostile_input_completes(text):
    # No timing assert: a catastrophic-backtracking pattern would hang here for hours, not seconds.
    assert len(redact(text)) > 0


def test_user_patterns_keep_form_body_protection():
    """OpenClaw: custom patterns replace the string list, form bodies stay protected (``&safe=1`` kept)."""
    redactor = Redactor([r'custom-secret-([A-Za-z0-9]+)'])
    assert redactor.redact('password=value&safe=1') == 'password=***&safe=1'
    assert redactor.redact('Password=value&safe=1 custom-secret-abc') == 'Password=***&safe=1 custom-secret-***'
    assert redactor.redact('Server=db;Password=p4ss&word;Encrypt=true') == 'Server=db;Password=***;Encrypt=true'
