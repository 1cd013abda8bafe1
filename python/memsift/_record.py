"""Records: what ``@dataclass`` gives memsift's value classes, built from plain functions instead of generated code.

``dataclasses`` compiles each class's ``__init__``, ``__repr__``, ``__eq__`` … from source text when the class is
defined, about 0.1 ms a method, and imports ``inspect``: together about 25 ms of every ``memsift search`` process,
a quarter of it. :func:`record` makes the same classes (fields from the annotations, defaults, frozen, slots) with
shared methods that read the field list, at no cost per class; type checkers see it as a dataclass
(``dataclass_transform``), and ``dataclasses.replace``, ``fields`` and ``asdict`` take records as before.

>>> @record
... class Point:
...     x: int
...     y: int = 0
...     tags: list[str] = field(default_factory=list, repr=False)
>>> p = Point(1)
>>> p
Point(x=1, y=0)
>>> replace(p, y=2) == Point(1, 2), [f.name for f in fields(Point)]
(True, ['x', 'y', 'tags'])
>>> p.x = 3
Traceback (most recent call last):
...
memsift._record.FrozenInstanceError: cannot assign to field 'x' of Point
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeVar, overload

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform
else:

    def dataclass_transform(**_: Any) -> Callable[[Any], Any]:
        return lambda decorated: decorated


__all__ = ['MISSING', 'Field', 'FrozenInstanceError', 'field', 'fields', 'record', 'replace']

T = TypeVar('T')


class _Missing:
    def __repr__(self) -> str:
        return 'MISSING'


MISSING: Any = _Missing()
"""No default."""

_EMPTY: Mapping[str, Any] = MappingProxyType({})


class FrozenInstanceError(AttributeError):
    """An assignment to a field of a frozen record."""


class Field:
    """One field of a record: its name, default (or factory), and whether ``repr`` and ``==`` show it."""

    __slots__ = ('compare', 'default', 'default_factory', 'metadata', 'name', 'repr')

    def __init__(
        self, default: Any, default_factory: Any, repr: bool, compare: bool, metadata: Mapping[str, Any] | None
    ) -> None:
        self.name = ''
        self.default, self.default_factory = default, default_factory
        self.repr, self.compare = repr, compare
        self.metadata = MappingProxyType(dict(metadata)) if metadata else _EMPTY

    def __repr__(self) -> str:
        return f'Field(name={self.name!r}, default={self.default!r})'


def field(
    *,
    default: Any = MISSING,
    default_factory: Callable[[], Any] = MISSING,
    repr: bool = True,
    compare: bool = True,
    metadata: Mapping[str, Any] | None = None,
) -> Any:
    """Declare a field with more than a default: a factory for a mutable default, left out of ``repr`` or ``==``,
    or ``metadata`` for readers such as :mod:`memsift.config.keys`."""
    if default is not MISSING and default_factory is not MISSING:
        raise ValueError('a field takes default or default_factory, not both')
    return Field(default, default_factory, repr, compare, metadata)


def fields(record_or_class: Any) -> tuple[Field, ...]:
    """The fields of a record class (or of a record), in declaration order."""
    found = getattr(record_or_class, '__record_fields__', None)
    if found is None:
        raise TypeError(f'{record_or_class!r} is not a record (a class made by memsift._record.record)')
    return found  # type: ignore[no-any-return]


def replace(obj: T, /, **changes: Any) -> T:
    """A copy of the record ``obj`` with ``changes`` to some fields, checked by its ``__init__``."""
    values = {item.name: getattr(obj, item.name) for item in fields(obj)}
    unknown = set(changes) - set(values)
    if unknown:
        raise TypeError(f'{type(obj).__name__} has no field {sorted(unknown)[0]!r}')
    return type(obj)(**{**values, **changes})


# ---------------------------------------------------------------- the shared methods (they read __record_fields__)


HOT_AFTER = 256
"""Instances of a record class made through the shared ``__init__``, after which the class gets one compiled for its
fields (as ``dataclasses`` writes it): a class made once per process (the config) never pays the compilation, one
made per file or chunk (a sync's records) pays it once and then builds each instance at a dataclass's speed."""


def _init(self: Any, *args: Any, **kwargs: Any) -> None:
    cls = type(self)
    made = cls.__dict__.get('_record_made', 0) + 1
    if made >= HOT_AFTER and '__init__' in cls.__dict__ and cls.__dict__['__init__'] is _init:
        cls.__init__ = _compiled_init(cls)
        cls.__init__(self, *args, **kwargs)
        return
    type.__setattr__(cls, '_record_made', made)
    declared = self.__record_fields__
    if len(args) > len(declared):
        raise TypeError(f'{cls.__name__}() takes {len(declared)} arguments but {len(args)} were given')
    put = object.__setattr__
    for item, value in zip(declared, args):
        put(self, item.name, value)
    for item in declared[len(args) :]:
        if item.name in kwargs:
            value = kwargs.pop(item.name)
        elif item.default is not MISSING:
            value = item.default
        elif item.default_factory is not MISSING:
            value = item.default_factory()
        else:
            raise TypeError(f'{cls.__name__}() missing required argument: {item.name!r}')
        put(self, item.name, value)
    if kwargs:
        name = next(iter(kwargs))
        how = 'got multiple values for' if name in {f.name for f in declared} else 'got an unexpected keyword'
        raise TypeError(f'{cls.__name__}() {how} argument {name!r}')
    post_init = getattr(self, '__post_init__', None)
    if post_init is not None:
        post_init()


def _compiled_init(cls: type[Any]) -> Callable[..., None]:
    """``__init__`` for ``cls``'s fields as source compiled once: positional or by name, defaults and factories."""
    names: dict[str, Any] = {'_put': object.__setattr__, '_MISSING': MISSING}
    params, body = [], []
    for i, item in enumerate(cls.__record_fields__):
        value = item.name
        if item.default is not MISSING:
            names[f'_d{i}'] = item.default
            params.append(f'{item.name}=_d{i}')
        elif item.default_factory is not MISSING:
            names[f'_f{i}'] = item.default_factory
            params.append(f'{item.name}=_MISSING')
            value = f'_f{i}() if {item.name} is _MISSING else {item.name}'
        else:
            params.append(item.name)
        body.append(f'    _put(self, {item.name!r}, {value})')
    if hasattr(cls, '__post_init__'):
        body.append('    self.__post_init__()')
    source = f'def __init__(self, {", ".join(params)}):\n' + ('\n'.join(body) or '    pass') + '\n'
    exec(source, names)  # noqa: S102 - our own source, from the field names the class declares
    init: Callable[..., None] = names['__init__']
    init.__qualname__ = f'{cls.__qualname__}.__init__'
    return init


def _repr(self: Any) -> str:
    shown = ', '.join(f'{item.name}={getattr(self, item.name)!r}' for item in self.__record_fields__ if item.repr)
    return f'{type(self).__qualname__}({shown})'


def _compared(self: Any) -> tuple[Any, ...]:
    return tuple(getattr(self, item.name) for item in self.__record_fields__ if item.compare)


def _eq(self: Any, other: object) -> Any:
    if other.__class__ is not self.__class__:
        return NotImplemented
    return _compared(self) == _compared(other)


def _hash(self: Any) -> int:
    return hash(_compared(self))


def _frozen_setattr(self: Any, name: str, value: Any) -> None:
    raise FrozenInstanceError(f'cannot assign to field {name!r} of {type(self).__name__}')


def _frozen_delattr(self: Any, name: str) -> None:
    raise FrozenInstanceError(f'cannot delete field {name!r} of {type(self).__name__}')


def _getstate(self: Any) -> tuple[Any, ...]:
    return tuple(getattr(self, item.name) for item in self.__record_fields__)


def _setstate(self: Any, state: tuple[Any, ...]) -> None:  # copy and pickle, past a frozen __setattr__
    for item, value in zip(self.__record_fields__, state):
        object.__setattr__(self, item.name, value)


class _AsDataclass:
    """``__dataclass_fields__``, made when asked for: ``dataclasses.replace``, ``fields``, ``asdict`` and
    ``is_dataclass`` take records as they took the dataclasses these classes were (importing ``dataclasses`` then)."""

    def __get__(self, obj: object, owner: type[Any]) -> dict[str, Any]:
        import dataclasses

        made = {}
        for item in owner.__record_fields__:
            default: Any = dataclasses.MISSING if item.default is MISSING else item.default
            factory: Any = dataclasses.MISSING if item.default_factory is MISSING else item.default_factory
            as_field: Any = dataclasses.field(
                default=default, default_factory=factory, repr=item.repr, compare=item.compare, metadata=item.metadata
            )
            as_field.name = item.name
            as_field._field_type = dataclasses._FIELD  # type: ignore[attr-defined]  # what fields() and replace() keep
            made[item.name] = as_field
        return made


def _declare(cls: type[Any]) -> tuple[list[Field], list[Field]]:
    """The fields a class inherits from records, and those its own annotations declare."""
    inherited = {
        item.name: item for base in reversed(cls.__mro__[1:]) for item in getattr(base, '__record_fields__', ())
    }
    own = []
    # The class's own annotations, as strings under `from __future__ import annotations` (inspect costs 6 ms).
    for name, annotation in cls.__dict__.get('__annotations__', {}).items():  # noqa: RUF063
        if 'ClassVar' in str(annotation):
            continue
        value = cls.__dict__.get(name, MISSING)
        item = value if isinstance(value, Field) else Field(value, MISSING, True, True, None)
        if isinstance(item.default, (list, dict, set)):
            raise ValueError(f'mutable default {type(item.default).__name__} for field {name!r}: use default_factory')
        item.name = name
        inherited.pop(name, None)
        own.append(item)
    return list(inherited.values()), own


def _make(cls: type[Any], frozen: bool, slots: bool) -> type[Any]:
    inherited, own = _declare(cls)
    declared = (*inherited, *own)
    required_after = False
    for item in reversed(declared):
        has_default = item.default is not MISSING or item.default_factory is not MISSING
        required_after |= not has_default
        if has_default and not required_after:
            continue
        if has_default:
            raise TypeError(f'{cls.__name__}: a field without a default follows {item.name!r}, which has one')
    body = {name: value for name, value in cls.__dict__.items() if name not in ('__dict__', '__weakref__')}
    for item in own:
        body.pop(item.name, None)
    if slots:
        body['__slots__'] = tuple(item.name for item in own)
    body.update(
        __record_fields__=declared,
        __match_args__=tuple(item.name for item in declared),
        __init__=_init,
        __repr__=_repr,
        __eq__=_eq,
        __hash__=_hash if frozen else None,
        __replace__=replace,  # copy.replace (Python 3.13)
        __dataclass_fields__=_AsDataclass(),
    )
    if frozen:
        body.update(__setattr__=_frozen_setattr, __delattr__=_frozen_delattr)
    if slots:
        body.update(__getstate__=_getstate, __setstate__=_setstate)
    metaclass: Any = type(cls)
    made: type[Any] = metaclass(cls.__name__, cls.__bases__, body)
    made.__qualname__ = cls.__qualname__
    return made


@overload
def record(cls: type[T], /) -> type[T]: ...
@overload
def record(*, frozen: bool = True, slots: bool = True) -> Callable[[type[T]], type[T]]: ...


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def record(cls: type[T] | None = None, /, *, frozen: bool = True, slots: bool = True) -> Any:
    """Make ``cls`` a record: ``__init__`` (positional or by name, in declaration order), ``__repr__``, ``__eq__``
    and, when ``frozen``, ``__hash__`` and no assignment; ``slots`` gives it ``__slots__`` (no ``__dict__``)."""
    if cls is None:
        return lambda decorated: _make(decorated, frozen, slots)
    return _make(cls, frozen, slots)
