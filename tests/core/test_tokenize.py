"""Behaviour of memsift's analyzer: ``memsift.tokenize`` and ``memsift.Analyzer``."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

import memsift

PLAIN = memsift.Analyzer(stem=False)

# Precomposed characters only (no combining marks or conjoining jamo), so that any substring is NFKC-stable.
CJK_CHARS = st.one_of(
    st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF),  # CJK unified ideographs (Han)
    st.characters(min_codepoint=0x3041, max_codepoint=0x3096),  # Hiragana
    st.characters(min_codepoint=0x30A1, max_codepoint=0x30FA),  # Katakana
    st.characters(min_codepoint=0xAC00, max_codepoint=0xD7A3),  # Hangul syllables
)
CJK_TEXT = st.text(alphabet=CJK_CHARS, min_size=1, max_size=40)


# ---------------------------------------------------------------- normalization


def test_lower_cases_words():
    assert memsift.tokenize('Hello WORLD') == ['hello', 'world']


@pytest.mark.parametrize(
    ('text', 'expected'),
    [
        ('Café', ['cafe']),
        ('naïve', ['naive']),
        ('Ångström', ['angstrom']),
        ('Αθήνα', ['αθηνα']),  # Greek
        ('Ёлка', ['елка']),  # Cyrillic
    ],
)
def test_folds_diacritics(text, expected):
    assert PLAIN.tokenize(text) == expected


def test_greek_sigma_forms_are_equal():
    # Upper-case Σ lower-cases to σ or, word-finally, ς; all spellings of a word must give the same token.
    assert memsift.tokenize('ΟΔΟΣ') == memsift.tokenize('Οδος') == memsift.tokenize('οδος') == memsift.tokenize('οδός')


def test_diacritic_folding_makes_accented_and_plain_spellings_equal():
    assert memsift.tokenize('Café naïve résumé') == memsift.tokenize('cafe naive resume')


def test_nfkc_folds_full_width_latin_and_digits():
    assert memsift.tokenize('ＡＢＣ１２３') == ['abc123']


def test_nfkc_folds_half_width_katakana_to_full_width():
    assert memsift.tokenize('ｶﾀｶﾅ') == memsift.tokenize('カタカナ') == ['カ', 'カタ', 'タ', 'タカ', 'カ', 'カナ', 'ナ']


def test_nfkc_composes_half_width_voiced_katakana():
    assert memsift.tokenize('ｶﾞｲﾄﾞ') == memsift.tokenize('ガイド')


# ---------------------------------------------------------------- identifier compounds


@pytest.mark.parametrize(
    ('text', 'expected'),
    [
        ('snake_case_name', ['snake_case_name', 'snake', 'case', 'name']),
        ('ERR_CONN_RESET', ['err_conn_reset', 'err', 'conn', 'reset']),
        ('v2.3.1', ['v2.3.1', 'v2', '3', '1']),
        ('sk-abc123', ['sk-abc123', 'sk', 'abc123']),
        ('notes.md', ['notes.md', 'notes', 'md']),
        ('src/lib.rs', ['src/lib.rs', 'src', 'lib', 'rs']),
        ('C:\\Users\\lin', ['c:\\users\\lin', 'c', 'users', 'lin']),
        ('ops@example.com', ['ops@example.com', 'ops', 'example', 'com']),
        ('kebab-case', ['kebab-case', 'kebab', 'case']),
    ],
)
def test_identifier_compound_is_emitted_whole_then_by_parts(text, expected):
    assert PLAIN.tokenize(text) == expected


def test_compound_inside_a_sentence():
    assert memsift.tokenize('ERR_CONN_RESET in v2.3.1') == [
        'err_conn_reset',
        'err',
        'conn',
        'reset',
        'in',
        'v2.3.1',
        'v2',
        '3',
        '1',
    ]


@pytest.mark.parametrize(
    ('text', 'expected'),
    [
        ('done.', ['done']),
        ('It is done. Next', ['it', 'is', 'done', 'next']),
        ('see notes.md.', ['see', 'notes.md', 'notes', 'md']),
        ('--verbose', ['verbose']),
        ('_private_', ['private']),
        ('/usr/bin/', ['usr/bin', 'usr', 'bin']),
    ],
)
def test_leading_and_trailing_connectors_are_trimmed(text, expected):
    assert PLAIN.tokenize(text) == expected


def test_single_part_word_is_not_repeated():
    assert PLAIN.tokenize('hello') == ['hello']
    assert PLAIN.tokenize('abc123') == ['abc123']


# ---------------------------------------------------------------- stemming


def test_default_analyzer_stems_plain_words():
    assert memsift.tokenize('running') == ['run']
    assert memsift.Analyzer().tokenize('running') == ['run']
    assert memsift.Analyzer(stem=True).tokenize('tests') == ['test']


def test_stemming_can_be_disabled():
    assert memsift.Analyzer(stem=False).tokenize('running') == ['running']


def test_stem_property():
    assert memsift.Analyzer().stem is True
    assert memsift.Analyzer(stem=False).stem is False


def test_stemming_skips_whole_compounds_but_stems_their_parts():
    assert memsift.tokenize('running_tests') == ['running_tests', 'run', 'test']


def test_stemming_skips_words_with_digits():
    assert memsift.tokenize('tests123') == ['tests123']


def test_default_tokenize_matches_default_analyzer():
    text = 'Running the ERR_CONN_RESET fixes in v2.3.1 视频下载'
    assert memsift.tokenize(text) == memsift.Analyzer().tokenize(text)


# ---------------------------------------------------------------- CJK


def test_chinese_run_split_from_latin_into_unigrams_and_bigrams():
    assert memsift.tokenize('BBDown视频下载') == ['bbdown', '视', '视频', '频', '频下', '下', '下载', '载']


def test_latin_after_cjk_run_is_split_at_script_boundary():
    assert memsift.tokenize('视频abc') == ['视', '视频', '频', 'abc']


def test_single_cjk_char_is_one_unigram():
    assert memsift.tokenize('字') == ['字']


def test_japanese_kanji_and_kana_form_one_run():
    assert memsift.tokenize('東京に行く') == ['東', '東京', '京', '京に', 'に', 'に行', '行', '行く', 'く']


def test_korean_hangul_runs():
    assert memsift.tokenize('한국어') == ['한', '한국', '국', '국어', '어']


def test_whitespace_separates_cjk_runs():
    assert memsift.tokenize('안녕 세계') == ['안', '안녕', '녕', '세', '세계', '계']


def test_cjk_punctuation_separates_runs():
    assert memsift.tokenize('视频。下载') == ['视', '视频', '频', '下', '下载', '载']


def test_mixed_sentence_keeps_every_script():
    tokens = memsift.tokenize('BBDown视频下载工具的配置 uses v2.3.1')
    assert tokens[0] == 'bbdown'
    assert {'视频', '下载', '配置', 'v2.3.1', 'use'} <= set(tokens)


@given(text=CJK_TEXT, data=st.data())
def test_any_cjk_substring_tokens_are_contained_in_the_text_tokens(text, data):
    start = data.draw(st.integers(min_value=0, max_value=len(text) - 1), label='start')
    end = data.draw(st.integers(min_value=start + 1, max_value=len(text)), label='end')
    query = text[start:end]
    assert set(memsift.tokenize(query)) <= set(memsift.tokenize(text))


@given(text=CJK_TEXT)
def test_cjk_run_yields_one_unigram_and_one_bigram_per_char(text):
    tokens = memsift.tokenize(text)
    assert len(tokens) == 2 * len(text) - 1
    assert tokens[0::2] == list(text)
    assert tokens[1::2] == [text[i : i + 2] for i in range(len(text) - 1)]


# ---------------------------------------------------------------- batch, counts, edge cases


def test_tokenize_batch_equals_tokenize_each():
    texts = ['Hello World', '', 'ERR_CONN_RESET', 'BBDown视频下载', '東京に行く', '한국어', 'running tests']
    for analyzer in (memsift.Analyzer(), PLAIN):
        assert analyzer.tokenize_batch(texts) == [analyzer.tokenize(t) for t in texts]


def test_tokenize_batch_of_nothing():
    assert memsift.Analyzer().tokenize_batch([]) == []


@given(texts=st.lists(st.text(max_size=60), max_size=8))
def test_tokenize_batch_equals_tokenize_each_for_any_text(texts):
    analyzer = memsift.Analyzer()
    assert analyzer.tokenize_batch(texts) == [analyzer.tokenize(t) for t in texts]


@given(text=st.text(max_size=200))
def test_count_tokens_equals_number_of_tokens_for_any_text(text):
    for analyzer in (memsift.Analyzer(), PLAIN):
        assert analyzer.count_tokens(text) == len(analyzer.tokenize(text))


@given(text=st.text(max_size=200))
def test_tokens_are_non_empty_and_contain_no_whitespace(text):
    for token in memsift.tokenize(text):
        assert token
        assert not any(ch.isspace() for ch in token)


@pytest.mark.parametrize('text', ['', ' ', '   \n\t  ', '!!! ... ---', '。、！？', '___', '...', '@:/\\', '()[]{}'])
def test_blank_or_punctuation_only_text_has_no_tokens(text):
    assert memsift.tokenize(text) == []
    assert memsift.Analyzer().count_tokens(text) == 0


def test_very_long_input_is_tokenized():
    text = 'word ' * 200_000
    tokens = memsift.tokenize(text)
    assert len(tokens) == 200_000
    assert set(tokens) == {'word'}
    assert memsift.Analyzer().count_tokens(text) == 200_000


@pytest.mark.parametrize('text', ['x' * 100_000, '视' * 100_000, 'a_' * 50_000, '.' * 100_000])
def test_very_long_single_runs_never_raise(text):
    assert isinstance(memsift.tokenize(text), list)


@pytest.mark.parametrize('odd', ['🙂', '\x00', '\x07', '\x1b', '\ufffd', '\u200b', '\ufeff', '\U0010ffff', '\u0301'])
def test_lone_odd_characters_never_raise(odd):
    assert isinstance(memsift.tokenize(odd), list)
    assert isinstance(memsift.Analyzer(stem=False).tokenize_batch([odd]), list)


def test_odd_characters_separate_words():
    assert memsift.tokenize('hello🙂world') == ['hello', 'world']
    assert memsift.tokenize('alpha\x00beta\x1bgamma') == ['alpha', 'beta', 'gamma']
