"""Redaction by secret family, with cases from OpenClaw's own redaction tests (src/logging/redact.test.ts).

Each case is (input, expected output); fake secrets only.
"""

import pytest

from memsift.redact import Redactor, redact

E = '\u2026'

MASKED = {
    'mixed-case object keys': [
        ("x { Access_Token: 'ya29a0AfH6SMBxxxxxxxxxxxxxxxxxxxx1234' }", f"x {{ Access_Token: 'ya29a0{E}1234' }}"),
        ("Api_Key: 'abcdefghijklmnop1234567890'", f"Api_Key: 'abcdef{E}7890'"),
        ('Client_Secret: "cs-0123456789abcdefghij"', f'Client_Secret: "cs-012{E}ghij"'),
    ],
    'lower-case and diagnostic assignments': [
        ('matrix access_token=abcdef1234567890ghij next', f'matrix access_token=abcdef{E}ghij next'),
        (
            'Docker authentication failed (password=fixture-secret); install',
            'Docker authentication failed (password=*** install',
        ),
        ('failed [token=fixture-secret]; retry', 'failed [token=*** retry'),
        ('failed {client_secret=fixture-secret}; retry', 'failed {client_secret=*** retry'),
        ('failed (password="it\'s-a-secret"); retry', 'failed (password="***"); retry'),
        ("failed {secret=`has'quotes`}; retry", 'failed {secret=`***`}; retry'),
        ('db pass=opaque-pass-secret-1234567890 next', f'db pass=opaque{E}7890 next'),
        ('password = db-password-fixture-1234567890', f'password = db-pas{E}7890'),
        ('password= "db-password-fixture-1234567890"', f'password= "db-pas{E}7890"'),
        ('database_password: databa-password-fixture-1234567890', f'database_password: databa{E}7890'),
        ("api_secret: 'api-secret-fixture-1234567890'", f"api_secret: 'api-se{E}7890'"),
        ('jdbc.password=db-password-fixture-1234567890', f'jdbc.password=db-pas{E}7890'),
        ('secret_key = django-secret-key-1234567890', f'secret_key = django{E}7890'),
        ('tls.passphrase: tls-passphrase-fixture-1234567890', f'tls.passphrase: tls-pa{E}7890'),
        ('db_pass=db-pass-fixture-1234567890', f'db_pass=db-pas{E}7890'),
        ('jwt: jwt-fixture-1234567890', f'jwt: jwt-fi{E}7890'),
        ('access-token=access-token-fixture-1234567890', f'access-token=access{E}7890'),
        (
            'password=abc,def token=abc;def client_secret=abc]def pass=abc)def',
            'password=*** token=*** client_secret=*** pass=***',
        ),
        ('pass: hunter22', 'pass: ***'),
        ('login (pass: opaque-pass-secret-1234567890)', f'login (pass: opaque{E}7890)'),
        ('db (password: opaque-pass-secret-1234567890), retry', f'db (password: opaque{E}7890), retry'),
        (
            'smtp:\n  pass:\n    opaque-pass-secret-1234567890\n  user: bot',
            f'smtp:\n  pass:\n    opaque{E}7890\n  user: bot',
        ),
        ('db:\n  password:\n    hunter22\n', 'db:\n  password:\n    ***\n'),
    ],
    'form bodies and unquoted-quote values (issue 13, revision 3)': [
        ('body: code=oauth-code-123 Oops code=E1', 'body: code=*** Oops code=E1'),
        ('form_body=client_secret=oauth-secret&app_secret=app-secret', 'form_body=client_secret=***&app_secret=***'),
        ('client_id=visible&app_secret=opaque-app-secret&safe=value', 'client_id=visible&app_secret=***&safe=value'),
        (
            'body: client_id=visible&clientSecret=opaque-value-123&state=ok',
            'body: client_id=visible&clientSecret=***&state=ok',
        ),
        ('client%5Fsecret=single-secret', 'client%5Fsecret=***'),
        ('GET /cb?token="opaque-token-secret"&safe=1', f'GET /cb?token=opaque{E}cret&safe=1'),
        ('password= db-password-fixture-1234567890', f'password= db-pas{E}7890'),
        ('failed (token="unterminated retry', 'failed (token=*** retry'),
        ('sk_abcdefghijklmnopqrstuvwxyz', f'sk_abc{E}wxyz'),
        ('am_abcdefghijklmnopqrstuvwxyz', f'am_abc{E}wxyz'),
        ('glsa_' + 'Ab1' * 11 + 'A', f'glsa_A{E}Ab1A'),
        ('fw_' + 'aB3' * 9, f'fw_aB3{E}3aB3'),
        ('syt_deO63wbN_6sK3fhTePO0KI0rqIAdR2XosFXfWjAr', f'syt_de{E}WjAr'),
        ('tool run --token=-JjP7a8A_B1Oq6KEiw5ntNR --verbose', f'tool run --token=-JjP7a{E}ntNR --verbose'),
    ],
    'env assignments': [
        ('OPENAI_API_KEY=sk-1234567890abcdef', f'OPENAI_API_KEY=sk-123{E}cdef'),
        ('DISCORD_BOT_TOKEN=$SUPERSECRET123', 'DISCORD_BOT_TOKEN=***'),
        ('DISCORD_BOT_TOKEN="${DISCORD_BOT_TOKEN:-discordliteral1234567890}"', f'DISCORD_BOT_TOKEN="${{DISC{E}890}}"'),
        ('TOKEN=shortvalue', 'TOKEN=***'),
        ('LINK_CARD_NUMBER=4242424242424242 LINK_CVC=123', 'LINK_CARD_NUMBER=*** LINK_CVC=***'),
        ('SECRET_KEY_BASE=9f8e7d6c5b4a39281706f5e4d3c2b1a0ff', f'SECRET_KEY_BASE=9f8e7d{E}a0ff'),
        ('DB_PASS=hunter2hunter2', 'DB_PASS=***'),
    ],
    'vendor tokens': [
        ('sk-ant-abcdefghijklmnopqrstuvwxyz', f'sk-ant{E}wxyz'),
        ('xai-abcdefghijklmnopqrstuvwxyzABCDE', f'xai-ab{E}BCDE'),
        ('fw-' + 'C' * 40, f'fw-CCC{E}CCCC'),
        ('fc-abcdefghijklmnopqrstuvwxyz', f'fc-abc{E}wxyz'),
        ('glpat-abcdefghijklmnopqrstuvwxyz12.ab.abcdefghi', f'glpat-{E}fghi'),
        ('gloas-' + 'a' * 64, f'gloas-{E}aaaa'),
        ('glrt-2CR8_eVxiioB1QmzPZwa', f'glrt-2{E}PZwa'),
        ('glptt-' + 'A' * 40, f'glptt-{E}AAAA'),
        ('gldt-' + 'A' * 20, f'gldt-A{E}AAAA'),
        ('ATATT' + 'A' * 48 + '=ABCDEF12', f'ATATTA{E}EF12'),
        ('SecretId is AKIDZ8EXAMPLEFAKE01KEY99TEST', f'SecretId is AKIDZ8{E}TEST'),
        ('AccessKeyId=LTAI5tExampleFakeKeyXyz9', f'AccessKeyId=LTAI5t{E}Xyz9'),
        ('ya29.fake-access-token-with-enough-length', f'ya29.f{E}ngth'),
        ('1//0fake-refresh-token-with-enough-length', f'1//0fa{E}ngth'),
        ('dckr_pat_' + 'A' * 27, f'dckr_p{E}AAAA'),
        ('dop_v1_abcdefghijklmnopqrstuvwxyz', f'dop_v1{E}wxyz'),
        ('VAULT_ADDR=x hvs.CAESIJlWh0wMn3XFbkD4kKEXAMPLEtoken', f'VAULT_ADDR=x hvs.CA{E}oken'),
        ('dapi' + 'a' * 32 + '-1', f'dapiaa{E}aa-1'),
        ('pypi-abcdefghijklmnopqrstuvwxyz', f'pypi-a{E}wxyz'),
        ('shpat_' + 'ab12' * 8, f'shpat_{E}ab12'),
        ('r8_ABCDEFghijklmnopqrstuv', f'r8_ABC{E}stuv'),
        ('mailgun key-' + 'a1b2c3d4' * 4, f'mailgun key-a1{E}c3d4'),
        ('twilio SK' + '0123456789abcdef' * 2, f'twilio SK0123{E}cdef'),
        ('prefix-ghp_' + 'a' * 5000 + ' suffix', f'prefix-ghp_aa{E}aaaa suffix'),
        ('123456:ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef', f'123456{E}cdef'),
        ('AKIAABCDEFGHIJKLMNOP', f'AKIAAB{E}MNOP'),
        ('hf_ABCDEFghijklmnopqrstuv', f'hf_ABC{E}stuv'),
    ],
    'form bodies and query strings': [
        ('manual callback code=oauth-code-123&state=visible', 'manual callback code=***&state=visible'),
        (
            'body: client%5Fsecret=oauth-secret&app%2Dsecret=app-secret&safe=value',
            'body: client%5Fsecret=***&app%2Dsecret=***&safe=value',
        ),
        ('sig=short-sig-123&x-api-key=short-key-123&safe=value', 'sig=***&x-api-key=***&safe=value'),
        (
            'connect https://gateway.example/ws?Access-Token=short-token&ok=1',
            'connect https://gateway.example/ws?Access-Token=***&ok=1',
        ),
        ('https://example.test/callback?pass=opensesamevalue', 'https://example.test/callback?pass=***'),
        ('https://example.test/callback?security_code=123456', 'https://example.test/callback?security_code=***'),
        (
            'https://gitlab.example/api/v4/projects?private_token=glptt-short',
            'https://gitlab.example/api/v4/projects?private_token=***',
        ),
        (
            'GET /webhooks/sms?safe=value&__openclaw_mms_token_' + 'a' * 24 + '=' + 'b' * 48,
            f'GET /webhooks/sms?safe=value&__openclaw_mms_token_{"a" * 24}=bbbbbb{E}bbbb',
        ),
        (
            'GET https://example.test/cb?client%5Fse%E2%80%8Bcret=oauth-secret&safe=1',
            'GET https://example.test/cb?client%5Fse%E2%80%8Bcret=***&safe=1',
        ),
        (
            'code=oauth-code-123&hook_token=hook-token-123&jwt=jwt-secret-123&token_count=42',
            'code=***&hook_token=***&jwt=***&token_count=42',
        ),
        ('GET /cb?token=abc)def&safe=1', 'GET /cb?token=***&safe=1'),
    ],
    'authorization values': [
        (
            'Authorization: Digest username="digest-user-example", response="digest-response-1234567890abcdef"; status=401',
            'Authorization: Digest ***; status=401',
        ),
        (
            'Authorization: Hawk id="client", mac="hawk-credential-proof-1234567890abcdef"; status=401',
            'Authorization: Hawk ***; status=401',
        ),
        (
            '{Authorization: AWS4-HMAC-SHA256 Credential=scope/path, SignedHeaders=host, Signature=structural-aws-1234567890abcdef}',
            '{Authorization: AWS4-HMAC-SHA256 ***}',
        ),
        ('(Authorization: Negotiate cHJvb2YxMjM0NTY3ODkw)', f'(Authorization: Negotiate cHJvb2{E}ODkw)'),
        ('Authorization:\r\n Basic Zm9sZGVkOnNlY3JldA==', f'Authorization:\r\n Basic Zm9sZG{E}dA=='),
        ('Authorization: Bearer abcdefghijklmnopqrstuv', f'Authorization: Bearer abcdef{E}stuv'),
        ('Authorization: SSWS 00abcdefghijklmnopqrstuvwxyz', f'Authorization: SSWS 00abcd{E}wxyz'),
        ('Authorization: raw-header-value-1234567890   ', f'Authorization: raw-he{E}7890   '),
        ('Authorization: Basic dXNlcg==, status=401', 'Authorization: Basic ***, status=401'),
        (
            'curl -H \'Authorization: Digest username="example", response="quoted-header-response-1234567890abcdef"\'',
            "curl -H 'Authorization: Digest ***'",
        ),
        (
            'Authorization: Digest username="sample",\r\n response="later-response-value-1234567890"; status=408',
            'Authorization: Digest ***; status=408',
        ),
        (
            '{"Authorization":"Digest username=\\"example\\", response=\\"json-digest-response-1234567890abcdef\\""}',
            '{"Authorization":"***"}',
        ),
        (
            'Authorization: AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260101/us-east-1/s3/aws4_request, '
            'SignedHeaders=host;x-amz-date, Signature=fe5f80f77d5fa3beca038a248ff027d0445342fe2855ddc963176630326f1024'
            '; status=403',
            'Authorization: AWS4-HMAC-SHA256 ***; status=403',
        ),
        ('Authorization: Digest x=opaque-digest-value-1234;status=403', 'Authorization: Digest ***;status=403'),
        (
            'Authorization: Digest broken,, response="digest-response-value-1234567890"; status=401',
            'Authorization: Digest ***; status=401',
        ),
        ('Authorization: Token abc123, status=401', 'Authorization: Token ***, status=401'),
        (
            '"log\\nAuthorization: Digest response=\\"digest-response-value-1234567890\\""',
            '"log\\nAuthorization: Digest ***"',
        ),
        (
            '{"Authorization":"Digest response=\\"digest-response-value-1234567890\\\\\\\\\\""}',
            '{"Authorization":"***"}',
        ),
    ],
    'json and object keys': [
        ('payload: {"credential":"opaque_credential_1234567890"}', 'payload: {"credential":"***"}'),
        ('{"api_key": "opaque_credential_1234567890"}', '{"api_key": "***"}'),
        ("headers: { authorization: 'Bearer tenant_access_abcdef123456' }", "headers: { authorization: '***' }"),
        ("cfg: { access_token: 'opaque_credential_1234567890' }", "cfg: { access_token: '***' }"),
        ('const cfg = { apiKey: "opaque_credential_1234567890" };', f'const cfg = {{ apiKey: "opaque{E}7890" }};'),
        ('{"password":"opaque_credential_1234567890"}', f'{{"password":"opaque{E}7890"}}'),
        (
            '{"card_number":"4242424242424242","cvc":"123","amount":"4200"}',
            '{"card_number":"***","cvc":"***","amount":"4200"}',
        ),
        ("config: { appSecret: 'feishu_app_secret_1234567890' }", f"config: {{ appSecret: 'feishu{E}7890' }}"),
        ('{"github_token": "abcdefghijklmnopqrstuvwx1234567890"}', f'{{"github_token": "abcdef{E}7890"}}'),
        (
            '{"awsSecretAccessKey": "AbCdAbCdAbCdAbCdAbCdAbCdAbCdAbCdAbCdAbCd"}',
            f'{{"awsSecretAccessKey": "AbCdAb{E}AbCd"}}',
        ),
        ('{"token":"abcdef1234567890ghij"}', f'{{"token":"abcdef{E}ghij"}}'),
        ("headers: { cookie: 'session_cookie_value_abcdef123456' }", f"headers: {{ cookie: 'sessio{E}3456' }}"),
    ],
    'aws secrets': [
        ('bare ' + 'Wj7/' * 10, f'bare Wj7/Wj{E}Wj7/'),
        ('cmd --aws-secret-access-key=' + 'AbCd' * 10, f'cmd --aws-secret-access-key=AbCdAb{E}AbCd'),
        ('cmd --awsSecretAccessKey ' + 'AbCd' * 10, f'cmd --awsSecretAccessKey AbCdAb{E}AbCd'),
        ('aws_secret_access_key=wJalrXUtnFEMI%2FK7MDENG%2FbPxRfiCYEXAMPLEKEY', f'aws_secret_access_key=wJalrX{E}EKEY'),
    ],
    'headers': [
        ('x-access-token: sampleaccessvalue1234567890', f'x-access-token: sample{E}7890'),
        ('X-OpenClaw-Token: supersecretgatewaytoken1234567890', f'X-OpenClaw-Token: supers{E}7890'),
        ('X-Api-Key=shortsecret', 'X-Api-Key=***'),
        ('X-Api-Key: prefix&secret#suffix', f'X-Api-Key: prefix{E}ffix'),
        ('x-access-token=short-at-123&safe=value', 'x-access-token=***&safe=value'),
        ('api-key: samplekeyvalue1234567890, request_id=example', f'api-key: sample{E}7890, request_id=example'),
    ],
    'url passwords': [
        (
            'https://browser-user:browser-password-1234567890@api.example.test/v1',
            f'https://browser-user:browse{E}7890@api.example.test/v1',
        ),
        ('postgres://secret:secret@db.example.test/openclaw', 'postgres://secret:***@db.example.test/openclaw'),
        (
            'mongodb+srv://mongo:mongodb-password-1234567890@cluster.example.test/app',
            f'mongodb+srv://mongo:mongod{E}7890@cluster.example.test/app',
        ),
        ('redis://:p#ss/w@rd@cache.example.test/0', 'redis://:***@cache.example.test/0'),
        ('https://u:pw@host.example/path?email=a@b.example', 'https://u:***@host.example/path?email=a@b.example'),
    ],
    'connection strings': [
        (
            'DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA==;EndpointSuffix=core.windows.net',
            f'DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=Zm9vYm{E}MA==;EndpointSuffix=core.windows.net',
        ),
        (
            'jdbc:sqlserver://db:1433;user=sa;password=Sup3rSecret!;encrypt=true',
            'jdbc:sqlserver://db:1433;user=sa;password=***;encrypt=true',
        ),
        (
            'Driver={ODBC Driver 18};Server=db;Uid=sa;Pwd=Sup3rSecret!;',
            'Driver={ODBC Driver 18};Server=db;Uid=sa;Pwd=***;',
        ),
    ],
    'cli passwords': [
        ('curl -u admin:hunter2hunter2 https://ci.example', 'curl -u admin:*** https://ci.example'),
        ('mysql -h db -u root -pHunter2Secret app', 'mysql -h db -u root -p*** app'),
        ('sshpass -p Hunter2Secret ssh root@host', 'sshpass -p *** ssh root@host'),
        ('curl --token abcdef1234567890ghij https://api.test', f'curl --token abcdef{E}ghij https://api.test'),
        (
            '--payment-credential paycred_abcdefghijklmnopqrstuvwxyz --card-number 4000056655665556',
            f'--payment-credential paycre{E}wxyz --card-number ***',
        ),
    ],
    'pem': [
        (
            '-----BEGIN PRIVATE KEY-----\nABCDEF1234567890\nZYXWVUT987654321\n-----END PRIVATE KEY-----',
            f'-----BEGIN PRIVATE KEY-----\n{E}redacted{E}\n-----END PRIVATE KEY-----',
        ),
    ],
}

UNCHANGED = [
    'DISCORD_BOT_TOKEN="${DISCORD_BOT_TOKEN:-}"',
    'OPENAI_API_KEY=$OPENAI_API_KEY\nTOKEN=${TOKEN}\nPASSWORD=${PASSWORD:-}',
    '{"MONKEY":"banana"}',
    'Use either --password or --password-file.',
    'the password is in the vault',
    'password_hash(x)',
    'smtp:\n  pass:\nnext: value',
    'auth:\n  token:\n    required\n',
    '(token_count=42) [password_hint=visible] {mytoken=visible}',
    'Oops: failed: code=E1 status=500',
    'agents.defaults: Unrecognized key: "llm"',
    'the authorization model is open',
    'GET https://example.test/cb?signal=visible&sigmoid=visible&signature_algorithm=v4&x-api-version=1&x-request-id=req-123',
    'npm_telegram_package_spec ask_openclaw_query_patterns team_management risk_assessment glpat-docs gloas-docs',
    'fw-tooshort fw_tooshort fpk_tooshort fixturefw-' + 'C' * 40,
    'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR4nGNgYAAAAAMAASsJTYQAAAAASUVORK5CYII=',
    'data:application/octet-stream;base64,AAAA+gAAAA' + 'B' * 24,
    'const token = await getToken(); // never log the token',
    'token = timeObserverToken',
    'main-test-case-name',
    'safe_option = visible',
    'compass=visible',
    # Code identifiers that share a vendor prefix, and flags after a secret flag (issue 13, revision 3).
    'sk_write_queue sk_buff_head sk_ipv6only am_i_right_here',
    'tool --token -v --verbose',
    'token_count=42&session_id=visible&lang=en',
]


@pytest.mark.parametrize(
    ('text', 'expected'),
    [case for cases in MASKED.values() for case in cases],
    ids=[f'{family}-{i}' for family, cases in MASKED.items() for i in range(len(cases))],
)
def test_family_is_masked(text, expected):
    assert redact(text) == expected
    assert redact(expected) == expected  # idempotent


@pytest.mark.parametrize('text', UNCHANGED)
def test_not_a_secret(text):
    assert redact(text) == text


def test_redact_many_matches_redact():
    texts = [case[0] for cases in MASKED.values() for case in cases] + UNCHANGED
    assert Redactor().redact_many(texts) == [redact(t) for t in texts]


def test_user_pattern_literal_with_flags():
    assert Redactor(['/token=([A-Za-z0-9]+)/i']).redact('token=abcdef1234567890ghij') == f'token=abcdef{E}ghij'
    assert Redactor([r'internal-\d+']).redact('ticket internal-12345 should hide') == 'ticket *** should hide'
