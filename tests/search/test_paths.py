"""The path catalogue moved along by other processes' writes answers exactly as one built from all the files."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from memsift.search.paths import Catalogue

NAMES = [f'{folder}{name}{ext}' for folder in ('', 'memory/', 'notes/x/') for name in ('a', 'B', 'day') for ext in
         ('.md', '.MD', '')]  # fmt: skip
QUERIES = ['a', 'a.md', 'memory/a.md', 'B', 'b.md', 'day', 'notes/x/day', './memory/day.md', 'missing']


@settings(max_examples=200, deadline=None)
@given(
    start=st.sets(st.sampled_from(NAMES)),
    writes=st.lists(st.tuples(st.sets(st.sampled_from(NAMES)), st.sets(st.sampled_from(NAMES))), max_size=8),
    rebuild_from=st.sampled_from([0, 2, 1_000]),
)
def test_a_moved_catalogue_answers_as_a_fresh_one(start, writes, rebuild_from):
    Catalogue.REBUILD_FROM = rebuild_from
    try:
        catalogue, files = Catalogue(0, sorted(start)), set(start)
        for generation, (written, deleted) in enumerate(writes, 1):
            files = (files - deleted) | (written - deleted)
            catalogue = catalogue.moved_to(generation, sorted(written - deleted), sorted(deleted))
            fresh = Catalogue(generation, sorted(files))
            assert len(catalogue) == len(fresh) == len(files)
            assert all((name in catalogue) == (name in files) for name in NAMES)
            for query in QUERIES:
                assert list(catalogue.exact(query).items()) == list(fresh.exact(query).items()), query
    finally:
        Catalogue.REBUILD_FROM = 1_000
