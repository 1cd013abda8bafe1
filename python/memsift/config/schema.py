"""Validation of OpenClaw config values: the leaf validators, the schema walk and the error messages.

A leaf validator returns the value it accepts (possibly converted) or raises :class:`_Expected` saying what it
wanted; :func:`_check` turns that into a :class:`ConfigError` that names the dotted key path and shows the value,
bounded and with secrets masked.

>>> _check(_integer(1), 3.0, 'query.maxResults')
3
>>> _check(_integer(1), 0, 'query.maxResults')
Traceback (most recent call last):
    ...
memsift.errors.ConfigError: query.maxResults: got 0; expected an integer from 1 to 9007199254740991
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Callable, Mapping
from typing import Any, Union

from memsift._record import record
from memsift.errors import ConfigError, ConfigWarning

_MASKED_KEYS = frozenset({'apikey', 'token', 'password', 'secret', 'authorization', 'headers', 'dsn', 'readdsn'})
_MAX_REPR = 80

MAX_INTEGER = 2**53 - 1
"""The largest integer a setting may take (JavaScript's largest exact integer, so OpenClaw reads it the same)."""


# ---------------------------------------------------------------- error messages


def _is_masked(key: object) -> bool:
    return isinstance(key, str) and key.lower() in _MASKED_KEYS


def _redact(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {key: '***' if _is_masked(key) else _redact(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_redact(item) for item in value]
    return value


def _show(path: str, value: Any) -> str:
    masked = any(_is_masked(part) for part in re.split(r'[.\[\]]', path))
    try:
        text = repr('***' if masked else _redact(value))
    except (RecursionError, ValueError):  # nested too deeply; an int past Python's digit limit
        text = f'<{type(value).__name__}>'
    return text if len(text) <= _MAX_REPR else text[: _MAX_REPR - 3] + '...'


def _invalid(path: str, value: Any, expected: str) -> ConfigError:
    return ConfigError(f'{path}: got {_show(path, value)}; expected {expected}', key_path=path)


# ---------------------------------------------------------------- leaf validators


class _Expected(Exception):
    """A leaf value did not validate; the argument says what was expected."""


Leaf = Callable[[Any], Any]


def _is_number(value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an int beyond a float's range (10**400) is no usable setting
        return False


def _boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    raise _Expected('a boolean (true or false)')


def _number(value: Any) -> float:
    if _is_number(value):
        return value
    raise _Expected('a finite number')


def _integer(minimum: int | None = None) -> Leaf:
    low = -MAX_INTEGER if minimum is None else minimum
    expected = f'an integer from {low} to {MAX_INTEGER}'

    def check(value: Any) -> int:
        integral = _is_number(value) and (isinstance(value, int) or value.is_integer())
        if integral and low <= value <= MAX_INTEGER:
            return int(value)
        raise _Expected(expected)

    return check


def _string(*choices: str) -> Leaf:
    expected = 'one of ' + ', '.join(map(repr, choices)) if choices else 'a string'

    def check(value: Any) -> str:
        if isinstance(value, str) and (not choices or value in choices):
            return value
        raise _Expected(expected)

    return check


_positive_integer = _integer(1)


def _context_size(value: Any) -> int | str:
    if value == 'auto':
        return value
    try:
        return _positive_integer(value)
    except _Expected:
        raise _Expected("'auto' or an integer >= 1") from None


def _secret(value: Any) -> str | Mapping[str, Any]:
    if isinstance(value, (str, Mapping)):
        return value
    raise _Expected('a string or a secret reference object')


def _strings(value: Any) -> tuple[str, ...]:
    """A string or a list of strings, as a tuple (a DSN or several: ``store.readDsn``).

    >>> _strings('postgresql://replica/memory'), _strings(['a', 'b'])
    (('postgresql://replica/memory',), ('a', 'b'))
    """
    if isinstance(value, str):
        return (value,)
    if isinstance(value, (list, tuple)) and all(isinstance(item, str) for item in value):
        return tuple(value)
    raise _Expected('a string or a list of strings')


def _headers(value: Any) -> dict[str, str]:
    if isinstance(value, Mapping) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        return dict(value)
    raise _Expected('an object mapping header names to string values')


def _patterns(value: Any) -> tuple[str, ...]:
    """A list of strings, kept as given (order and repeats: each is a regular expression compiled later)."""
    if isinstance(value, (list, tuple)) and all(isinstance(item, str) for item in value):
        return tuple(value)
    raise _Expected('a list of regular expression strings')


# ---------------------------------------------------------------- schema walk (types, unknown keys)


@record
class _Each:
    """Schema node: a list whose items are checked by ``item``; the result is a de-duplicated tuple (without the
    items ``item`` turns into None)."""

    item: Leaf


Schema = Union[Mapping[str, 'Schema'], _Each, Leaf]  # noqa: UP007 - recursive: the forward reference needs Union


def _check(schema: Schema, value: Any, path: str) -> Any:
    if isinstance(schema, Mapping):
        return _check_object(schema, value, path)
    if isinstance(schema, _Each):
        if not isinstance(value, (list, tuple)):
            raise _invalid(path, value, 'a list')
        items = (_check(schema.item, item, f'{path}[{i}]') for i, item in enumerate(value))
        return tuple(dict.fromkeys(item for item in items if item is not None))  # None: an item that is dropped
    try:
        return schema(value)
    except _Expected as exc:
        raise _invalid(path, value, str(exc)) from None


def _check_object(schema: Mapping[str, Schema], value: Any, path: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise _invalid(path, value, 'an object')
    checked = {}
    for key, item in value.items():
        if key not in schema:
            warnings.warn(f'{path}.{key}: unknown key, ignored', ConfigWarning, stacklevel=2)
        elif item is not None:
            checked[key] = _check(schema[key], item, f'{path}.{key}')
    return checked


def _section(parent: Mapping[str, Any], parent_path: str, key: str) -> Mapping[str, Any]:
    """The object at ``parent[key]`` (``{}`` when absent or null); anything else is an error naming its path."""
    path = f'{parent_path}.{key}' if parent_path else key
    value = parent.get(key)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise _invalid(path, value, 'an object')
    return value
