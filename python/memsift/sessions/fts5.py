r"""What SQLite's FTS5 sees of a full-text row: the PostgreSQL backend matches and ranks transcripts the way the SQLite
backend's ``message_fts`` table does, so it needs the same tokens.

A full-text row holds memsift's analyzer tokens joined by spaces, and FTS5's ``unicode61`` tokenizer (``tokenchars
'-_./:@+#'``, ``remove_diacritics 0``) splits them once more wherever a character is not a token character to it:
the analyzer keeps combining marks and ``\`` inside words (``नमस्ते``, ``a\b``), where FTS5 cuts. Both the rows and
the query phrases are cut the same way, so matches follow FTS5's cuts, not the analyzer's tokens.

>>> fts5_terms('err_conn_reset err conn reset')
['err_conn_reset', 'err', 'conn', 'reset']
>>> fts5_terms('c:\\users\\ana नमस्ते')
['c:', 'users', 'ana', 'नमस', 'त']
"""

from __future__ import annotations

import functools
import re

__all__ = ['fts5_terms']

_TOKEN_CHARS = '-_./:@+#'

# The non-ASCII characters unicode61 treats as separators, as ranges of code points (hex): read from SQLite 3.40's
# FTS5 by tokenizing each code point between two letters (tests/sessions/test_sessions_postgres.py checks a sample
# against the SQLite at hand). Not Python's Unicode categories: SQLite's tables are of an older Unicode, and count
# the characters assigned since as letters.
_SEPARATORS = (
    '80-a9 ab-b1 b4 b6-b8 bb bf d7 f7 2c2-2c5 2d2-2df 2e5-2eb 2ed 2ef-2ff 305 30d-30e 310 312-31a 31c-322 '
    '329-32c 32f 332-36f 375 37e 384-385 387 3f6 482-489 55a-55f 589-58a 58f 591-5c7 5f3-5f4 600-604 606-61b '
    '61e-61f 64b-65f 66a-66d 670 6d4 6d6-6e4 6e7-6ed 6fd-6fe 700-70d 70f 711 730-74a 7a6-7b0 7eb-7f3 7f6-7f9 '
    '816-819 81b-823 825-827 829-82d 830-83e 859-85b 85e 8e4-8fe 900-903 93a-93c 93e-94f 951-957 962-965 970 '
    '981-983 9bc 9be-9c4 9c7-9c8 9cb-9cd 9d7 9e2-9e3 9f2-9f3 9fa-9fb a01-a03 a3c a3e-a42 a47-a48 a4b-a4d a51 '
    'a70-a71 a75 a81-a83 abc abe-ac5 ac7-ac9 acb-acd ae2-ae3 af0-af1 b01-b03 b3c b3e-b44 b47-b48 b4b-b4d '
    'b56-b57 b62-b63 b70 b82 bbe-bc2 bc6-bc8 bca-bcd bd7 bf3-bfa c01-c03 c3e-c44 c46-c48 c4a-c4d c55-c56 '
    'c62-c63 c7f c82-c83 cbc cbe-cc4 cc6-cc8 cca-ccd cd5-cd6 ce2-ce3 d02-d03 d3e-d44 d46-d48 d4a-d4d d57 '
    'd62-d63 d79 d82-d83 dca dcf-dd4 dd6 dd8-ddf df2-df4 e31 e34-e3a e3f e47-e4f e5a-e5b eb1 eb4-eb9 ebb-ebc '
    'ec8-ecd f01-f1f f34-f3f f71-f87 f8d-f97 f99-fbc fbe-fcc fce-fda 102b-103e 104a-104f 1056-1059 105e-1060 '
    '1062-1064 1067-106d 1071-1074 1082-108d 108f 109a-109f 10fb 135d-1368 1390-1399 1400 166d-166e 1680 '
    '169b-169c 16eb-16ed 1712-1714 1732-1736 1752-1753 1772-1773 17b4-17d6 17d8-17db 17dd 1800-180e 18a9 '
    '1920-192b 1930-193b 1940 1944-1945 19b0-19c0 19c8-19c9 19de-19ff 1a17-1a1b 1a1e-1a1f 1a55-1a5e 1a60-1a7c '
    '1a7f 1aa0-1aa6 1aa8-1aad 1b00-1b04 1b34-1b44 1b5a-1b7c 1b80-1b82 1ba1-1bad 1be6-1bf3 1bfc-1bff 1c24-1c37 '
    '1c3b-1c3f 1c7e-1c7f 1cc0-1cc7 1cd0-1ce8 1ced 1cf2-1cf4 1dc0-1de6 1dfc-1dff 1fbd 1fbf-1fc1 1fcd-1fcf '
    '1fdd-1fdf 1fed-1fef 1ffd-1ffe 2000-2064 206a-206f 207a-207e 208a-208e 20a0-20b9 20d0-20f0 2100-2101 '
    '2103-2106 2108-2109 2114 2116-2118 211e-2123 2125 2127 2129 212e 213a-213b 2140-2144 214a-214d 214f '
    '2190-23f3 2400-2426 2440-244a 249c-24e9 2500-26ff 2701-2775 2794-2b4c 2b50-2b59 2ce5-2cea 2cef-2cf1 '
    '2cf9-2cfc 2cfe-2cff 2d70 2d7f 2de0-2e2e 2e30-2e3b 2e80-2e99 2e9b-2ef3 2f00-2fd5 2ff0-2ffb 3000-3004 '
    '3008-3020 302a-3030 3036-3037 303d-303f 3099-309c 30a0 30fb 3190-3191 3196-319f 31c0-31e3 3200-321e '
    '322a-3247 3250 3260-327f 328a-32b0 32c0-32fe 3300-33ff 4dc0-4dff a490-a4c6 a4fe-a4ff a60d-a60f a66f-a67e '
    'a69f a6f0-a6f7 a700-a716 a720-a721 a789-a78a a802 a806 a80b a823-a82b a836-a839 a874-a877 a880-a881 '
    'a8b4-a8c4 a8ce-a8cf a8e0-a8f1 a8f8-a8fa a926-a92f a947-a953 a95f a980-a983 a9b3-a9cd a9de-a9df aa29-aa36 '
    'aa43 aa4c-aa4d aa5c-aa5f aa77-aa79 aa7b aab0 aab2-aab4 aab7-aab8 aabe-aabf aac1 aade-aadf aaeb-aaf1 '
    'aaf5-aaf6 abe3-abed fb1e fb29 fbb2-fbc1 fd3e-fd3f fdfc-fdfd fe00-fe19 fe20-fe26 fe30-fe52 fe54-fe66 '
    'fe68-fe6b feff ff01-ff0f ff1a-ff20 ff3b-ff40 ff5b-ff65 ffe0-ffe6 ffe8-ffee fff9-ffff 10100-10102 '
    '10137-1013f 10179-10189 10190-1019b 101d0-101fd 1039f 103d0 10857 1091f 1093f 10a01-10a03 10a05-10a06 '
    '10a0c-10a0f 10a38-10a3a 10a3f 10a50-10a58 10a7f 10b39-10b3f 11000-11002 11038-1104d 11080-11082 '
    '110b0-110c1 11100-11102 11127-11134 11140-11143 11180-11182 111b3-111c0 111c5-111c8 116ab-116b7 '
    '12470-12473 16f51-16f7e 16f8f-16f92 1d000-1d0f5 1d100-1d126 1d129-1d1dd 1d200-1d245 1d300-1d356 1d6c1 '
    '1d6db 1d6fb 1d715 1d735 1d74f 1d76f 1d789 1d7a9 1d7c3 1eef0-1eef1 1f000-1f02b 1f030-1f093 1f0a0-1f0ae '
    '1f0b1-1f0be 1f0c1-1f0cf 1f0d1-1f0df 1f110-1f12e 1f130-1f16b 1f170-1f19a 1f1e6-1f202 1f210-1f23a '
    '1f240-1f248 1f250-1f251 1f300-1f320 1f330-1f335 1f337-1f37c 1f380-1f393 1f3a0-1f3c4 1f3c6-1f3ca '
    '1f3e0-1f3f0 1f400-1f43e 1f440 1f442-1f4f7 1f4f9-1f4fc 1f500-1f53d 1f540-1f543 1f550-1f567 1f5fb-1f640 '
    '1f645-1f64f 1f680-1f6c5 1f700-1f773 e0001 e0020-e007f e0100-e01ef '
)


@functools.cache
def _separators() -> re.Pattern[str]:
    """A run of characters FTS5 splits at (ASCII: all but letters, digits and the token characters)."""
    ascii_chars = ''.join(re.escape(chr(c)) for c in range(128) if not (chr(c).isalnum() or chr(c) in _TOKEN_CHARS))
    ranges = []
    for item in ''.join(_SEPARATORS).split():
        low, _, high = item.partition('-')
        ranges.append(f'\\U{int(low, 16):08x}-\\U{int(high or low, 16):08x}')
    return re.compile(f'[{ascii_chars}{"".join(ranges)}]+')


def fts5_terms(tokens: str) -> list[str]:
    """The terms FTS5 indexes for a full-text row (analyzer tokens joined by spaces), in order."""
    return [term for term in _separators().split(tokens) if term]
