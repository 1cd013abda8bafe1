"""Statements written once per dialect: the seam both stores (memory, sessions) use to run one logic on SQLite and on
PostgreSQL. A statement is a :class:`Sql` pair with named parameters (``:name``) in both texts; PostgreSQL's text is
turned into psycopg's form by :func:`pyformat`.

>>> Sql('SELECT :a', 'SELECT :a::int').format()
Sql(sqlite='SELECT :a', postgres='SELECT :a::int')
>>> pyformat("SELECT x FROM t WHERE agent = :agent AND y::text LIKE '5%'")
"SELECT x FROM t WHERE agent = %(agent)s AND y::text LIKE '5%%'"
"""

from __future__ import annotations

import re
from typing import NamedTuple

__all__ = ['Sql', 'pyformat']

_PARAMETER = re.compile(r'(?<![:\w]):([A-Za-z_]\w*)')


class Sql(NamedTuple):
    """One statement in both dialects."""

    sqlite: str
    postgres: str

    def format(self, **parts: Sql) -> Sql:
        """Each dialect's text with ``{name}`` replaced by that dialect's text of ``parts[name]``."""
        return Sql(
            self.sqlite.format(**{k: v.sqlite for k, v in parts.items()}),
            self.postgres.format(**{k: v.postgres for k, v in parts.items()}),
        )


def pyformat(source: str) -> str:
    """A PostgreSQL statement in psycopg's form: ``:name`` -> ``%(name)s``, a literal ``%`` doubled (so a PostgreSQL
    text holds no ``:word`` inside a string literal; ``::type`` casts are left alone)."""
    return _PARAMETER.sub(r'%(\1)s', source.replace('%', '%%'))
