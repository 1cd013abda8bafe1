"""Property tests for memsift.chunk_markdown / memsift.estimate_chars against a plain Python reference.

The reference follows OpenClaw's ``chunkMarkdown`` as specified for memsift: lengths and slices are in
UTF-16 code units, CJK / full-width characters weigh 4, astral characters are never split.
"""

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

import memsift

# ---------------------------------------------------------------- reference

NON_LATIN = [
    (0x2E80, 0x9FFF),
    (0xA000, 0xA4FF),
    (0xAC00, 0xD7AF),
    (0xF900, 0xFAFF),
    (0xFF01, 0xFF60),
    (0xFFE0, 0xFFE6),
    (0x20000, 0x2FA1F),
]

# Unicode White_Space, i.e. Rust's char::is_whitespace (not Python's str.isspace).
RUST_WHITESPACE = frozenset(
    [chr(c) for c in range(0x09, 0x0E)]
    + ['\u0020', '\u0085', '\u00a0', '\u1680']
    + [chr(c) for c in range(0x2000, 0x200B)]
    + ['\u2028', '\u2029', '\u202f', '\u205f', '\u3000']
)


def utf16_len(s):
    return sum(2 if ord(ch) > 0xFFFF else 1 for ch in s)


def weighted(s):
    total = utf16_len(s)
    for ch in s:
        cp = ord(ch)
        if 0x20000 <= cp <= 0x2FA1F:
            total -= 1
        if any(lo <= cp <= hi for lo, hi in NON_LATIN):
            total += 3
    return total


def is_blank(text):
    return all(ch in RUST_WHITESPACE for ch in text)


def line_segments(line, tokens, max_chars):
    if line == '':
        return ['']
    data = line.encode('utf-16-le')
    n = len(data) // 2

    def unit(i):
        return int.from_bytes(data[2 * i : 2 * i + 2], 'little')

    def inside_astral(i):
        # True when offset i falls between the high and low surrogate of one astral char.
        return 0 < i < n and 0xD800 <= unit(i - 1) <= 0xDBFF

    def cut(a, b):
        return data[2 * a : 2 * b].decode('utf-16-le')

    segments = []
    start = 0
    while start < n:
        end = min(start + max_chars, n)
        if inside_astral(end):
            end -= 1
        coarse = cut(start, end)
        if weighted(coarse) > max_chars:
            step = max(1, tokens)
            j = start
            while j < end:
                k = min(j + step, end)
                if inside_astral(k):
                    k += 1
                segments.append(cut(j, k))
                j = k
        else:
            segments.append(coarse)
        start = end
    return segments


def reference_chunks(text, tokens, overlap):
    """List of (start_line, end_line, text, hash)."""
    max_chars = max(32, tokens * 4)
    overlap_chars = overlap * 4
    chunks = []
    current = []  # (segment, line_no)
    current_chars = 0

    def flush():
        if not current:
            return
        body = '\n'.join(seg for seg, _ in current)
        chunks.append((current[0][1], current[-1][1], body, hashlib.sha256(body.encode()).hexdigest()))

    for line_no, line in enumerate(text.split('\n'), start=1):
        for seg in line_segments(line, tokens, max_chars):
            cost = weighted(seg) + 1
            if current_chars + cost > max_chars and current:
                flush()
                if overlap_chars <= 0:
                    current = []
                else:
                    kept = []
                    acc = 0
                    for entry in reversed(current):
                        acc += weighted(entry[0]) + 1
                        kept.insert(0, entry)
                        if acc >= overlap_chars:
                            break
                    current = kept
                current_chars = sum(weighted(s) + 1 for s, _ in current)
                # memsift's one departure from OpenClaw: trim the carried overlap from the front
                # until the next segment fits, so no chunk exceeds the budget.
                while current and current_chars + cost > max_chars:
                    current_chars -= weighted(current[0][0]) + 1
                    current.pop(0)
            current.append((seg, line_no))
            current_chars += cost
    flush()
    return [c for c in chunks if not is_blank(c[2])]


def as_tuples(chunks):
    return [(c.start_line, c.end_line, c.text, c.hash) for c in chunks]


# ---------------------------------------------------------------- strategies

CJK = st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF)
HANGUL = st.characters(min_codepoint=0xAC00, max_codepoint=0xD7AF)
FULLWIDTH = st.characters(min_codepoint=0xFF01, max_codepoint=0xFF60)
EMOJI = st.characters(min_codepoint=0x1F300, max_codepoint=0x1FAFF)
ASTRAL_CJK = st.characters(min_codepoint=0x20000, max_codepoint=0x2FA1F)
RANGE_EDGES = st.sampled_from(
    [
        chr(c)
        for c in (
            0x2E7F, 0x2E80, 0x9FFF, 0xA000, 0xA4FF, 0xA500, 0xABFF, 0xAC00, 0xD7AF, 0xD7B0, 0xF8FF, 0xF900,
            0xFAFF, 0xFB00, 0xFF00, 0xFF01, 0xFF60, 0xFF61, 0xFFDF, 0xFFE0, 0xFFE6, 0xFFE7, 0x10000, 0x1FFFF,
            0x20000, 0x2FA1F, 0x2FA20, 0x10FFFF,
        )
    ]
)  # fmt: skip
WHITESPACE = st.sampled_from(sorted(RUST_WHITESPACE) + ['\x1c', '\x1d', '\x1e', '\x1f', '\u200b', '\ufeff'])
ANY_CHAR = st.characters(codec='utf-8')  # every code point except surrogates

WORD = st.text('abcdefghijklmnopqrstuvwxyz#-*`.', min_size=1, max_size=8)
ASCII_LINE = st.lists(WORD, max_size=12).map(' '.join)
LONG_ASCII_LINE = st.builds(lambda w, n: (w + ' ') * n, WORD, st.integers(5, 60))
MIXED_LINE = st.text(
    st.one_of(
        st.sampled_from('abc xyz.#-'), CJK, HANGUL, FULLWIDTH, EMOJI, ASTRAL_CJK, RANGE_EDGES, WHITESPACE, st.just('\r')
    ),
    max_size=120,
)
WIDE_LONG_LINE = st.text(st.one_of(CJK, HANGUL, FULLWIDTH, ASTRAL_CJK, EMOJI, st.just('a')), min_size=20, max_size=300)
BLANK_LINE = st.text(WHITESPACE, max_size=4)
LINE = st.one_of(
    st.just(''),
    ASCII_LINE,
    LONG_ASCII_LINE,
    MIXED_LINE,
    WIDE_LONG_LINE,
    BLANK_LINE,
    st.text(ANY_CHAR, max_size=40),
)
MARKDOWN = st.builds(lambda lines, sep: sep.join(lines), st.lists(LINE, max_size=25), st.sampled_from(['\n', '\r\n']))


@st.composite
def chunk_params(draw):
    tokens = draw(st.one_of(st.integers(1, 60), st.sampled_from([100, 400])))
    overlap = draw(st.one_of(st.just(0), st.integers(0, tokens - 1)))
    return tokens, overlap


# ---------------------------------------------------------------- estimate_chars


@given(st.text(st.one_of(ANY_CHAR, CJK, HANGUL, FULLWIDTH, ASTRAL_CJK, EMOJI, RANGE_EDGES), max_size=60))
def test_estimate_chars_matches_reference(text):
    assert memsift.estimate_chars(text) == weighted(text)


def test_estimate_chars_examples():
    assert memsift.estimate_chars('') == 0
    assert memsift.estimate_chars('abc') == 3
    assert memsift.estimate_chars('视频') == 8
    assert memsift.estimate_chars('한') == 4
    assert memsift.estimate_chars('\uff21') == 4  # full-width A
    assert memsift.estimate_chars('\U0001f600') == 2  # emoji: two UTF-16 units, not CJK
    assert memsift.estimate_chars('\U00020000') == 4  # astral CJK: counted once, weighted 4
    assert memsift.estimate_chars('\U0002fa20') == 2  # just past the astral CJK range


@pytest.mark.parametrize(
    ('lo', 'hi'), NON_LATIN + [(0x1F300, 0x1F300), (0x10000, 0x10000), (0x10FFFF, 0x10FFFF), (0x7F, 0x7F)]
)
def test_estimate_chars_range_edges(lo, hi):
    for cp in (lo - 1, lo, hi, hi + 1):
        if not 0 <= cp <= 0x10FFFF or 0xD800 <= cp <= 0xDFFF:
            continue
        ch = chr(cp)
        assert memsift.estimate_chars(ch) == weighted(ch), hex(cp)
        assert memsift.estimate_chars('ab' + ch * 3) == weighted('ab' + ch * 3), hex(cp)


# ---------------------------------------------------------------- chunk_markdown properties


@given(MARKDOWN, chunk_params())
def test_chunks_match_reference(text, params):
    tokens, overlap = params
    assert as_tuples(memsift.chunk_markdown(text, tokens, overlap)) == reference_chunks(text, tokens, overlap)


@given(MARKDOWN, chunk_params())
def test_every_non_blank_line_is_covered(text, params):
    tokens, overlap = params
    chunks = memsift.chunk_markdown(text, tokens=tokens, overlap=overlap)
    for line_no, line in enumerate(text.split('\n'), start=1):
        if not is_blank(line):
            assert any(c.start_line <= line_no <= c.end_line for c in chunks), (line_no, line)


@given(MARKDOWN, chunk_params())
def test_line_ranges_are_ordered(text, params):
    tokens, overlap = params
    chunks = memsift.chunk_markdown(text, tokens=tokens, overlap=overlap)
    n_lines = len(text.split('\n'))
    for c in chunks:
        assert 1 <= c.start_line <= c.end_line <= n_lines
    for prev, nxt in zip(chunks, chunks[1:]):
        assert prev.start_line <= nxt.start_line
        assert prev.end_line <= nxt.end_line


@given(MARKDOWN, chunk_params())
def test_no_chunk_exceeds_the_budget(text, params):
    # Holds with overlap too: memsift trims the carried overlap where OpenClaw would overrun.
    tokens, overlap = params
    max_chars = max(32, tokens * 4)
    for c in memsift.chunk_markdown(text, tokens=tokens, overlap=overlap):
        assert memsift.estimate_chars(c.text) <= max_chars


@given(MARKDOWN, chunk_params())
def test_hash_is_sha256_of_text_and_text_is_not_blank(text, params):
    tokens, overlap = params
    for c in memsift.chunk_markdown(text, tokens=tokens, overlap=overlap):
        assert c.hash == hashlib.sha256(c.text.encode('utf-8')).hexdigest()
        assert not is_blank(c.text)


@given(MARKDOWN, st.integers(1, 60))
def test_chunks_without_overlap_keep_all_content_in_order(text, tokens):
    # overlap=0: chunks are disjoint runs of segments and only whitespace-only chunks are dropped, so the
    # non-whitespace characters of all chunks, in order, are exactly those of the input.
    chunks = memsift.chunk_markdown(text, tokens=tokens, overlap=0)
    rebuilt = ''.join(c.text for c in chunks)
    assert [ch for ch in rebuilt if ch not in RUST_WHITESPACE] == [ch for ch in text if ch not in RUST_WHITESPACE]


@given(MARKDOWN)
def test_default_parameters(text):
    assert as_tuples(memsift.chunk_markdown(text)) == reference_chunks(text, 400, 80)


# ---------------------------------------------------------------- explicit examples


def test_small_document_is_one_chunk_with_all_lines():
    doc = '# Title\n\nSome text about rust.\n\n- item one\n- item two\n'
    chunks = memsift.chunk_markdown(doc)
    assert len(chunks) == 1
    assert (chunks[0].start_line, chunks[0].end_line) == (1, 7)
    assert chunks[0].text == doc
    assert chunks[0].hash == hashlib.sha256(doc.encode()).hexdigest()


def test_empty_and_blank_documents_give_no_chunks():
    assert memsift.chunk_markdown('') == []
    assert memsift.chunk_markdown('\n\n\n') == []
    assert memsift.chunk_markdown(' \t\n\u3000\n\u00a0\r') == []


def test_rust_whitespace_definition_is_used():
    # U+001C is whitespace for Python's str.isspace but not for Unicode White_Space: the chunk is kept.
    chunks = memsift.chunk_markdown('\x1c')
    assert as_tuples(chunks) == [(1, 1, '\x1c', hashlib.sha256(b'\x1c').hexdigest())]


def test_carriage_return_stays_in_the_line():
    chunks = memsift.chunk_markdown('a\r\nb\r\n')
    assert [c.text for c in chunks] == ['a\r\nb\r\n']
    assert (chunks[0].start_line, chunks[0].end_line) == (1, 3)


def test_long_cjk_line_is_split_without_overlap():
    line = '视频' * 300  # 600 UTF-16 units, weight 2400 > 1600
    chunks = memsift.chunk_markdown(line, tokens=400, overlap=0)
    assert [c.text for c in chunks] == ['视频' * 200, '视频' * 100]
    assert all((c.start_line, c.end_line) == (1, 1) for c in chunks)
    assert all(memsift.estimate_chars(c.text) <= 1600 for c in chunks)


def test_long_cjk_line_with_default_overlap_stays_within_budget():
    # OpenClaw would emit '视频'*200 + '\n' + '视频'*100 (weight 2401) as the second chunk; memsift drops
    # the carried segment because it cannot fit beside the next one.
    line = '视频' * 300
    chunks = memsift.chunk_markdown(line)
    assert [c.text for c in chunks] == ['视频' * 200, '视频' * 100]
    assert as_tuples(chunks) == reference_chunks(line, 400, 80)


def test_long_ascii_line_is_cut_at_max_chars():
    line = 'x' * 100
    chunks = memsift.chunk_markdown(line, tokens=8, overlap=0)  # max_chars = 32
    assert [c.text for c in chunks] == ['x' * 32, 'x' * 32, 'x' * 32, 'x' * 4]


def test_astral_char_is_never_split():
    line = 'a' * 31 + '\U0001f600' + 'b' * 10  # the emoji straddles unit 32
    chunks = memsift.chunk_markdown(line, tokens=8, overlap=0)
    assert [c.text for c in chunks] == ['a' * 31, '\U0001f600' + 'b' * 10]


def test_fine_cut_includes_whole_astral_char():
    line = '\U00020000' * 20  # 40 units, weight 80 > 32: re-cut in pieces of 3 units
    chunks = memsift.chunk_markdown(line, tokens=3, overlap=0)
    assert all(utf16_len(c.text.replace('\n', '')) % 2 == 0 for c in chunks)
    assert ''.join(c.text.replace('\n', '') for c in chunks) == line
    assert as_tuples(chunks) == reference_chunks(line, 3, 0)


def test_overlap_carries_whole_lines():
    lines = [f'line-{i:03d}' for i in range(1, 6)]  # 8 chars each, cost 9
    doc = '\n'.join(lines)
    chunks = memsift.chunk_markdown(doc, tokens=10, overlap=2)  # max_chars 40, overlap_chars 8
    assert [(c.start_line, c.end_line) for c in chunks] == [(1, 4), (4, 5)]
    assert chunks[0].text == '\n'.join(lines[:4])
    assert chunks[1].text == '\n'.join(lines[3:])


def test_overlap_accumulates_until_threshold():
    lines = ['aaa', 'bbb', 'ccc', 'ddd', 'eee', 'fff', 'ggg', 'hhh', 'iii']  # cost 4 each
    doc = '\n'.join(lines)
    chunks = memsift.chunk_markdown(doc, tokens=8, overlap=2)  # max_chars 32, overlap_chars 8
    assert [(c.start_line, c.end_line) for c in chunks] == [(1, 8), (7, 9)]
    assert chunks[1].text == 'ggg\nhhh\niii'


def test_no_overlap_means_disjoint_chunks():
    doc = '\n'.join(f'line-{i:03d}' for i in range(1, 6))
    chunks = memsift.chunk_markdown(doc, tokens=10, overlap=0)
    assert [(c.start_line, c.end_line) for c in chunks] == [(1, 4), (5, 5)]


def test_chunk_equality():
    h = hashlib.sha256(b'a').hexdigest()
    assert memsift.Chunk(1, 2, 'a', h) == memsift.Chunk(1, 2, 'a', h)
    assert memsift.Chunk(1, 2, 'a', h) != memsift.Chunk(1, 3, 'a', h)
    assert memsift.chunk_markdown('a') == [memsift.Chunk(1, 1, 'a', h)]


@pytest.mark.parametrize(
    ('tokens', 'overlap'),
    [(0, 0), (-1, 0), (10, -1), (10, 10), (10, 11), (1, 1)],
)
def test_invalid_parameters_raise(tokens, overlap):
    with pytest.raises(memsift.InvalidInputError):
        memsift.chunk_markdown('hello', tokens=tokens, overlap=overlap)


def test_invalid_input_error_is_a_memsift_error():
    with pytest.raises(memsift.MemsiftError):
        memsift.chunk_markdown('hello', tokens=0)
