"""How a config record declares its OpenClaw keys, and the generic readers that walk those declarations.

A field is declared once, with its default: :func:`key` for a ``memorySearch`` setting (validated in every layer,
merged, then built), :func:`section` for a nested ``memorySearch`` object with a record class of its own, and
:func:`direct` for a key read where it stands (from the config root or from an entry such as
``models.providers.<id>``). The field's ``metadata`` carries a :class:`Key`; from those the package derives the
``memorySearch`` validation schema (:func:`schema_of`), builds sections (:func:`build`) and reads direct keys
(:func:`read`). Rules that involve more than one key (clamps against a sibling, derived defaults) are *finishers*:
a function registered with :func:`finisher` that gets the built section and the fields the config set.

>>> from memsift._record import record
>>> from memsift.config.schema import _integer
>>> @record(slots=False)
... class Paging:
...     size: int = key('pageSize', _integer(1), 20)
...     pages: int = key('limits.pages', _integer(1), 5)
>>> schema_of(Paging)
{'pageSize': <function ...>, 'limits': {'pages': <function ...>}}
>>> build(Paging, {'limits': {'pages': 2}})
Paging(size=20, pages=2)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar

from memsift._record import Field, field, fields, record
from memsift.config.schema import Schema, _check, _Expected, _invalid, _section

__all__ = [
    'Key',
    'build',
    'concatenated',
    'direct',
    'finisher',
    'is_set',
    'key',
    'key_path',
    'read',
    'schema_of',
    'section',
]

_KEY = 'openclaw'
"""The ``metadata`` entry of a declared field."""


@record
class Key:
    """How one record field is read from an OpenClaw config."""

    name: str
    """The OpenClaw key (camelCase), dotted where OpenClaw nests it in an object of its own (``fts.tokenizer``)."""
    check: Schema
    """The validator: a leaf function, a list node (``_Each``) or, for a section, the section's schema."""
    section: type[Any] | None = None
    """For a nested object: the record class that declares its keys."""
    convert: Callable[[Any], Any] | None = None
    """Applied to a value the config set, after validation (clamps); a default is already in its final form."""
    secret: bool = False
    """Left out of ``repr`` (API keys, headers)."""
    layered: bool = True
    """A ``memorySearch`` setting: validated in each layer and merged; ``False`` for a key read where it stands."""
    concat: bool = False
    """Lists from all layers are concatenated (de-duplicated) instead of the last layer winning."""


def key(
    name: str,
    check: Schema,
    default: Any = None,
    *,
    factory: Callable[[], Any] | None = None,
    convert: Callable[[Any], Any] | None = None,
    secret: bool = False,
    concat: bool = False,
) -> Any:
    """Declare a ``memorySearch`` setting: its OpenClaw key, validator and default (``factory`` for a mutable one)."""
    declared = Key(name, check, convert=convert, secret=secret, concat=concat)
    return _field(declared, default, factory)


def section(name: str, cls: type[Any]) -> Any:
    """Declare a nested ``memorySearch`` object whose keys ``cls`` declares (its default is ``cls()``)."""
    return _field(Key(name, schema_of(cls), section=cls), None, cls)


def direct(
    name: str, check: Schema, default: Any = None, *, factory: Callable[[], Any] | None = None, secret: bool = False
) -> Any:
    """Declare a key read where it stands, not merged across layers (see :func:`read`)."""
    return _field(Key(name, check, secret=secret, layered=False), default, factory)


def _field(declared: Key, default: Any, factory: Callable[[], Any] | None) -> Any:
    metadata = {_KEY: declared}
    if factory is not None:
        return field(default_factory=factory, repr=not declared.secret, metadata=metadata)
    return field(default=default, repr=not declared.secret, metadata=metadata)


# ---------------------------------------------------------------- walking the declarations


T = TypeVar('T')

Given = frozenset[str]
"""The fields a config set, by attribute name, dotted into nested sections (``remote.non_batch_concurrency``)."""

_FINISHERS: dict[type[Any], Callable[[Any, Given], Any]] = {}


def finisher(cls: type[T]) -> Callable[[Callable[[T, Given], T]], Callable[[T, Given], T]]:
    """Register the decorated function to finish each built ``cls``: ``(built, given) -> built``."""

    def register(finish: Callable[[T, Given], T]) -> Callable[[T, Given], T]:
        _FINISHERS[cls] = finish
        return finish

    return register


def _declared(cls: type[Any]) -> Iterator[tuple[Field, Key]]:
    for item in fields(cls):
        declared = item.metadata.get(_KEY)
        if declared is not None:
            yield item, declared


def schema_of(cls: type[Any]) -> dict[str, Schema]:
    """The validation schema of the layered keys ``cls`` declares, nested as OpenClaw nests them."""
    schema: dict[str, Any] = {}
    for _, declared in _declared(cls):
        if not declared.layered:
            continue
        *parents, leaf = declared.name.split('.')
        node = schema
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = declared.check
    return schema


def concatenated(cls: type[Any]) -> tuple[str, ...]:
    """The OpenClaw keys of ``cls`` whose lists add up across layers."""
    return tuple(declared.name for _, declared in _declared(cls) if declared.concat)


def key_path(cls: type[Any], attributes: str) -> str:
    """The OpenClaw key path of a dotted attribute path: ``key_path(MemoryConfig, 'store.fts_tokenizer')`` is
    ``'store.fts.tokenizer'``."""
    names: list[str] = []
    owner: Any = cls  # then each attribute's section
    for attribute in attributes.split('.'):
        declared = {item.name: declared for item, declared in _declared(owner)}[attribute]
        names.append(declared.name)
        owner = declared.section
    return '.'.join(names)


_MISSING = object()


def _lookup(raw: Mapping[str, Any], name: str) -> Any:
    value: Any = raw
    for part in name.split('.'):
        if not isinstance(value, Mapping) or part not in value:
            return _MISSING
        value = value[part]
    return value


def is_set(raw: Mapping[str, Any], name: str) -> bool:
    """Whether the dotted OpenClaw key ``name`` is present in ``raw``."""
    return _lookup(raw, name) is not _MISSING


def build(cls: type[T], raw: Mapping[str, Any], **fixed: Any) -> T:
    """``cls`` from ``raw``, the merged and already validated ``memorySearch`` object (or one of its sections):
    each layered key takes the value set there, converted, or its default; then the finishers run, innermost
    first. ``fixed`` gives the fields that are no ``memorySearch`` keys."""
    return _build(cls, raw, fixed)[0]


def _build(cls: type[T], raw: Mapping[str, Any], fixed: Mapping[str, Any]) -> tuple[T, Given]:
    values = dict(fixed)
    found: set[str] = set()
    for item, declared in _declared(cls):
        if not declared.layered:
            continue
        value = _lookup(raw, declared.name)
        if declared.section is not None:
            values[item.name], inner = _build(declared.section, {} if value is _MISSING else value, {})
            found.update(f'{item.name}.{name}' for name in inner)
        elif value is not _MISSING:
            values[item.name] = value if declared.convert is None else declared.convert(value)
            found.add(item.name)
    built, finish, given = cls(**values), _FINISHERS.get(cls), frozenset(found)
    return (built if finish is None else finish(built, given)), given


def read(cls: type[Any], source: Mapping[str, Any], path: str = '') -> dict[str, Any]:
    """The values of the direct keys ``cls`` declares, read from ``source`` (at ``path``), by attribute name.

    First every key's enclosing objects are located (a null one counts as empty, anything but an object is an
    error), then each value found is validated in declaration order. A null value means the default where that is
    null, and is validated (and refused) otherwise. An invalid secret is reported without its value, at the path
    of all the object's secrets (``models.providers.x.headers/apiKey``), so the message does not say which it was.
    """
    places = []
    for item, declared in _declared(cls):
        if declared.layered:
            continue
        *parents, leaf = declared.name.split('.')
        where, parent = path, source
        for part in parents:
            parent = _section(parent, where, part)
            where = f'{where}.{part}' if where else part
        places.append((item, declared, parent, f'{where}.{leaf}' if where else leaf))
    secrets = '/'.join(declared.name for _, declared, _, _ in places if declared.secret)
    secrets_path = f'{path}.{secrets}' if path else secrets
    values = {}
    for item, declared, parent, where in places:
        leaf = declared.name.rpartition('.')[2]
        if leaf not in parent or (parent[leaf] is None and item.default is None):
            continue
        value = parent[leaf]
        if declared.secret and callable(declared.check):
            try:
                values[item.name] = declared.check(value)
            except _Expected as exc:
                raise _invalid(secrets_path, '…', str(exc)) from None
        else:
            values[item.name] = _check(declared.check, value, where)
    return values
