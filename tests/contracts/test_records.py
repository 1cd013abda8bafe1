"""memsift's records (``memsift._record``): the behaviour its value classes had as dataclasses, kept."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import pytest

from memsift._record import FrozenInstanceError, field, fields, record, replace
from memsift.config import MemoryConfig, load_config
from memsift.index.records import ChunkRow
from memsift.search.results import SearchResult


@record
class Point:
    x: int
    y: int = 0
    note: str = field(default='', compare=False, repr=False)
    tags: list[str] = field(default_factory=list)


@record(frozen=False, slots=False)
class Tally:
    count: int = 0


def test_init_takes_fields_by_position_or_name_and_fills_defaults():
    assert Point(1) == Point(x=1) == Point(1, 0)
    p = Point(1, 2, 'hi', ['a'])
    assert (p.x, p.y, p.note, p.tags) == (1, 2, 'hi', ['a'])
    assert Point(1).tags == [] and Point(1).tags is not Point(1).tags  # a fresh list each time


@pytest.mark.parametrize(
    ('args', 'kwargs', 'message'),
    [
        ((), {}, "missing required argument: 'x'"),
        ((1, 2, '', [], 5), {}, 'takes 4 arguments but 5 were given'),
        ((1,), {'x': 2}, "got multiple values for argument 'x'"),
        ((1,), {'z': 2}, "got an unexpected keyword argument 'z'"),
    ],
)
def test_init_refuses_what_a_dataclass_refuses(args, kwargs, message):
    with pytest.raises(TypeError, match=message):
        Point(*args, **kwargs)


def test_frozen_records_refuse_assignment_and_hash_by_compared_fields():
    p = Point(1)
    with pytest.raises(FrozenInstanceError, match="cannot assign to field 'x' of Point"):
        p.x = 2
    with pytest.raises(AttributeError):
        del p.y
    assert hash(Point(1, note='a', tags=())) == hash(Point(1, note='b', tags=()))
    assert Point(1, note='a') == Point(1, note='b') and Point(1) != Point(2)
    assert Point(1) != (1, 0) and not hasattr(Point(1), '__dict__')  # slots


def test_mutable_records_assign_and_are_unhashable():
    tally = Tally()
    tally.count += 1
    assert tally == Tally(1) and Tally.__hash__ is None


def test_repr_shows_the_fields_that_ask_to_be_shown():
    assert repr(Point(1, note='secret')) == 'Point(x=1, y=0, tags=[])'


def test_declaration_errors_are_reported_when_the_class_is_made():
    with pytest.raises(TypeError, match='without a default follows'):

        @record
        class _Bad:
            a: int = 0
            b: int

    with pytest.raises(ValueError, match='mutable default list'):

        @record
        class _Shared:
            a: list[int] = []  # noqa: RUF012 - the mistake under test


def test_replace_fields_copy_and_pickle():
    p = Point(1, tags=['a'])
    assert replace(p, y=5) == Point(1, 5, tags=['a'])
    with pytest.raises(TypeError, match="no field 'z'"):
        replace(p, z=1)
    assert [f.name for f in fields(p)] == ['x', 'y', 'note', 'tags']
    assert copy.copy(p) == p and copy.deepcopy(p) == p and pickle.loads(pickle.dumps(p)) == p
    row = ChunkRow(1, 'memory/a.md', 'memory', 1, 2, 'h', 'text')
    assert pickle.loads(pickle.dumps(row)) == row


def test_the_dataclasses_functions_take_records_as_they_took_the_dataclasses(tmp_path):
    config = load_config({'agents': {'defaults': {'workspace': str(tmp_path)}}})
    assert isinstance(config, MemoryConfig) and dataclasses.is_dataclass(config)
    changed = dataclasses.replace(config, chunking=dataclasses.replace(config.chunking, tokens=50, overlap=0))
    assert (changed.chunking.tokens, changed.chunking.overlap, config.chunking.tokens) == (50, 0, 400)
    assert [f.name for f in dataclasses.fields(SearchResult)] == [f.name for f in fields(SearchResult)]
    assert dataclasses.asdict(Point(1, tags=['a'])) == {'x': 1, 'y': 0, 'note': '', 'tags': ['a']}


def test_a_class_made_often_gets_a_compiled_init_that_behaves_the_same():
    from memsift import _record

    @record
    class Hot:
        a: int
        b: str = 'b'
        tags: list[str] = field(default_factory=list)

        def __post_init__(self):
            object.__setattr__(self, 'b', self.b.upper())

    made = [Hot(i) if i % 2 else Hot(a=i, tags=['t']) for i in range(_record.HOT_AFTER + 10)]
    assert Hot.__init__ is not _record._init  # compiled
    assert made[-1] == Hot(made[-1].a, 'b', ['t'] if made[-1].tags else [])
    assert Hot(1).b == 'B' and Hot(1).tags is not Hot(1).tags
    with pytest.raises(TypeError, match="'a'"):
        Hot()
    with pytest.raises(TypeError, match="'z'"):
        Hot(1, z=2)
