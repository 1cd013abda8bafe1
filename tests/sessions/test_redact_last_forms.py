"""The last secret forms of issue 41: none shows, and no search tells a right guess from a wrong one.

Two forms showed in ``sessions_search`` / ``sessions_history`` output (a Mailchimp key with its data-centre suffix, a
NuGet ``oy2…`` key after ``dotnet nuget push -k``); four were masked in output while a right guess still searched
differently from a wrong one (``sshpass -p``, a lower-case ``api_secret = "…"``, MongoDB and Redis URLs whose
password holds ``@``). The causes were general: a mask that stopped inside the secret (a quoted password with a
space, a URL password holding ``#`` before its last ``@``), key names after a markdown backtick or inside a
JSON-escaped command not seen as keys at all, and time words read from the raw question before it was redacted.

Unlike ``test_guess_oracle.py`` (which takes the masked runs from the redactor itself), each case here knows its true
secret: the wrong guesses replace exactly that secret by random text of the same shape (each letter by a letter of
the same case, each digit by a digit, punctuation kept), so a mask that covers only part of it fails.
"""

from __future__ import annotations

import random
import re
import string

import pytest
from conftest import both_search_modes

from memsift.redact import Redactor
from memsift.sessions import SessionStore

MAIN = 'agent:main:main'

# (family, template, secrets): the template's {s} is the secret, in several contexts a transcript holds.
FAMILIES = [
    (
        'mailchimp',
        [
            'curl --user anystring:{s} https://us14.api.mailchimp.com/3.0/',
            'MAILCHIMP_KEY {s}',
            'the mailchimp key is {s} for the newsletter',
            'client.setConfig({{apiKey: "{s}", server: "us14"}})',
        ],
        ['0123456789abcdef0123456789abcdef-us14', '8f2a9c4d1e7b3a6f0c5d2e9b4a7f1c3e-us6'],
    ),
    (
        'nuget',
        [
            'dotnet nuget push pkg.nupkg -k {s} -s https://api.nuget.example/v3/index.json',
            'dotnet nuget push bin/Release/app.1.0.0.nupkg --api-key {s} --source nuget',
            'nuget setapikey {s}',
            '`dotnet nuget push *.nupkg -k {s}`',
        ],
        ['oy2abcdefghijklmnopqrstuvwxyz0123456789abcdefg', 'oy2k3j9x0q7w2e5r8t1y4u6i3o9p2a5s8d1f4g7h0j3k6l'],
    ),
    (
        'sshpass',
        [
            "sshpass -p '{s}' ssh root@10.0.0.5 uptime",
            'sshpass -p "{s}" ssh -o StrictHostKeyChecking=no deploy@host',
            'sshpass -p {s} scp app.tar.gz deploy@host:/srv/',
            'sshpass -v -p {s} ssh admin@db.internal',
            '{{"command": "sshpass -p \\"{s}\\" ssh root@host"}}',
            "Run `sshpass -p '{s}' rsync -av ./ user@host:/srv`",
        ],
        ['sunshine', 'Summer2024!', 'p@ss w0rd', 'hunter2', 'Tr0ub4dor&3', 'today2026'],
    ),
    (
        'api_secret',
        [
            'api_secret = "{s}"',
            "api_secret = '{s}'",
            'client = Client(\n    api_key="pk_live",\n    api_secret = "{s}",\n)',
            'Set `api_secret = "{s}"` in settings.py',
            '{{"command": "echo api_secret = \\"{s}\\" >> config.py"}}',
            'self.api_secret = "{s}"',
            'cfg = dict(api_secret="{s}")',
        ],
        ['kd83hfq0zmx7', 'hunter2hunter2hunter2', 'yesterday-9fQ2', 'S3cr3t value', 'Xk9#mQ2$vL'],
    ),
    (
        'mongodb',
        [
            'mongodb://user:{s}@host:27017/db',
            'MONGO_URL=mongodb://admin:{s}@mongo.example.com:27017/app?authSource=admin',
            'mongodb+srv://user:{s}@cluster0.abcde.mongodb.net/db?retryWrites=true',
            'connect with `mongodb://app:{s}@db1:27017,db2:27017/prod` please',
        ],
        ['p@ss', 'p@ss@w0rd', 'M0ng0@DB#2024', 'zz@zz?zz', 'Xk9@mQ2#vL'],
    ),
    (
        'redis',
        [
            'redis://:{s}@host:6379',
            'redis://default:{s}@cache.example.com:6379/0',
            'rediss://:{s}@cache.example.com:6380/0',
            'REDIS_URL="redis://:{s}@10.0.0.7:6379/1"',
        ],
        ['pa@ss', 'R3d1s@Pass', 'a@b#c@d', 'pa@ss?1'],
    ),
]

CASES = [
    (f'{family} {i}.{j}', template, secret)
    for family, templates, secrets in FAMILIES
    for i, template in enumerate(templates)
    for j, secret in enumerate(secrets)
    if ' ' not in secret or re.search(r'[\x22\'`]\{s\}', template)  # unquoted, a space ends the argument
]


def same_shape(secret: str, seed: int) -> str:
    """Random text of ``secret``'s shape: each letter a letter of its case, each digit a digit, the rest kept."""
    rng = random.Random(seed)
    out = []
    for c in secret:
        if c.isdigit():
            out.append(rng.choice(string.digits))
        elif c.islower() and c in string.ascii_lowercase[:6] and all(x in string.hexdigits for x in secret[:32]):
            out.append(rng.choice('abcdef'))  # a hex key stays hex
        elif c.islower():
            out.append(rng.choice(string.ascii_lowercase))
        elif c.isupper():
            out.append(rng.choice(string.ascii_uppercase))
        else:
            out.append(c)
    guess = ''.join(out)
    if secret.startswith('oy2'):  # the vendor prefix is not the secret
        guess = 'oy2' + guess[3:]
    if secret.endswith(('-us14', '-us6')):  # the data centre is not the secret
        guess = guess[: secret.rindex('-')] + secret[secret.rindex('-') :]
    return guess if guess != secret else same_shape(secret, seed + 1000)


def guesses(secret: str) -> list[str]:
    return [same_shape(secret, seed) for seed in range(3)]


@pytest.mark.parametrize(('case_id', 'template', 'secret'), CASES, ids=[c[0] for c in CASES])
def test_the_secret_is_masked_and_a_wrong_guess_reads_as_the_true_one(case_id, template, secret):
    redactor = Redactor()
    text = template.format(s=secret)
    shown = redactor.redact(text)
    search = redactor.redact_for_search(text)
    for part in [secret, *secret.split(' ')]:
        if len(part) >= 4:
            assert part not in shown, (case_id, shown)
            assert part not in search, (case_id, search)
    for guess in guesses(secret):
        assert redactor.redact_for_search(template.format(s=guess)) == search, (case_id, guess)
    assert redactor.redact_for_search(search) == search


@pytest.fixture(scope='module')
def stores(tmp_path_factory):
    """Both search modes over every case's message, the ranked one with a vector leg."""
    ranked, terms = both_search_modes(
        tmp_path_factory.mktemp('last-forms'), [template.format(s=secret) for _, template, secret in CASES]
    )
    yield ranked, terms
    ranked.close()
    terms.close()
    terms.close()


def _answer(store: SessionStore, query: str) -> list[tuple]:
    return [tuple(sorted(hit.items())) for hit in store.search(query, caller=MAIN, limit=25)['results']]


@pytest.mark.parametrize(('case_id', 'template', 'secret'), CASES, ids=[c[0] for c in CASES])
def test_sessions_search_answers_a_wrong_guess_as_the_true_secret(stores, case_id, template, secret):
    text = template.format(s=secret)
    for store in stores:
        right = _answer(store, text)
        if store.search_mode == 'ranked':
            assert right, case_id  # the message is found by its context
        for guess in guesses(secret)[:1]:
            assert _answer(store, template.format(s=guess)) == right, (store.search_mode, case_id, guess)


def test_history_shows_no_secret(tmp_path):
    store = SessionStore(tmp_path / 'sessions.sqlite', visibility='agent')
    for i, (_, template, secret) in enumerate(CASES):
        content = template.format(s=secret)
        store.append(MAIN, {'type': 'message', 'id': f'm{i}', 'message': {'role': 'user', 'content': content}})
    history = store.history(MAIN, caller=MAIN, limit=1000)
    shown = '\n'.join(m['content'] for m in history['messages'])
    found = store.search('mailchimp nuget sshpass api_secret mongodb redis', caller=MAIN, limit=25)
    hits = ' '.join(h['snippet'] for h in found['results'])
    for _, _, secret in CASES:
        for part in [secret, *secret.split(' ')]:
            if len(part) >= 4:
                assert part not in shown and part not in hits, part
    store.close()


def test_a_time_word_inside_a_secret_is_not_read_as_one(tmp_path):
    """The question is redacted before its time words are read: "yesterday" inside a guessed secret names no day."""
    store = SessionStore(tmp_path / 'sessions.sqlite', visibility='agent')
    store.append('agent:main:a', {'type': 'message', 'id': 'a', 'timestamp': 1767225600000,
                                  'message': {'role': 'user', 'content': 'api_secret = "yesterday-9fQ2"'}})  # fmt: skip
    store.append('agent:main:b', {'type': 'message', 'id': 'b', 'timestamp': 1767225600000 - 86400000 * 30,
                                  'message': {'role': 'user', 'content': 'api_secret = "kd83hfq0zmx7"'}})  # fmt: skip
    right = store.search('api_secret = "yesterday-9fQ2"', caller=MAIN, limit=25)
    wrong = store.search('api_secret = "qwertyuiw-3kZ8"', caller=MAIN, limit=25)
    assert right == wrong
    assert 'time' not in right.get('debug', {})
    store.close()
