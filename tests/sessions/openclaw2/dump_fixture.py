"""Write this folder's fixture from a real OpenClaw 2.x agent database (read-only): the schema as its sqlite_master
holds it (``agent-schema-v23.sql``) and the rows of the transcript tables (``agent-main-rows.json``; blobs, the zstd
event rows and archives among them, as base64). README.md says how the database was made.

    python tests/sessions/openclaw2/dump_fixture.py <state>/agents/main/agent/openclaw-agent.sqlite [<folder>]

(into this folder, or ``<folder>``: a dump of the database the tests build from these files equals them).
"""

import base64
import json
import sqlite3
import sys
from pathlib import Path

HERE = Path(__file__).parent
TABLES = {  # table -> ORDER BY: each dumped in key order, so a dump of the same database is the same file
    'schema_meta': 'meta_key',
    'session_key_contract': 'id',
    'conversations': 'conversation_id',
    'session_nodes': 'session_key',
    'session_windows': 'session_id',
    'session_conversations': 'session_id, conversation_id, role',
    'transcript_events': 'session_id, seq',
    'transcript_event_identities': 'session_id, event_id',
    'transcript_rewrite_watermarks': 'session_id',
    'session_transcript_index_state': 'session_id',
    'session_transcript_active_events': 'session_id, active_position',
    'session_transcript_fts_rows': 'id',
    'session_transcript_archives': 'session_id, generation',
    'session_transcript_cold_archives': 'session_id',
    'session_canonical_validation_pending': 'session_key',
}
FTS = 'session_transcript_fts'  # virtual: dumped with its rowid
PRAGMAS = ('user_version', 'page_size', 'auto_vacuum', 'journal_mode', 'encoding')


def plain(value):
    return {'base64': base64.b64encode(value).decode()} if isinstance(value, bytes) else value


def main(db_path: str, out: Path = HERE) -> None:
    db = sqlite3.connect(f'file:{Path(db_path).resolve()}?mode=ro', uri=True)
    schema = db.execute(
        'SELECT sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY '
        "CASE type WHEN 'table' THEN 0 WHEN 'index' THEN 1 WHEN 'trigger' THEN 2 ELSE 3 END, name"
    ).fetchall()
    header = (
        '-- OpenClaw 2026.9.6 agent database schema 23: sqlite_master of a real openclaw-agent.sqlite (README.md)\n'
    )
    (out / 'agent-schema-v23.sql').write_text(header + ''.join(f'{sql.strip()};\n\n' for (sql,) in schema))
    dump = {'pragmas': {name: db.execute(f'PRAGMA {name}').fetchone()[0] for name in PRAGMAS}, 'tables': {}}
    for table, order in [*TABLES.items(), (FTS, 'rowid')]:
        columns = 'rowid, text, session_id, message_id, role, timestamp' if table == FTS else '*'
        cursor = db.execute(f'SELECT {columns} FROM {table} ORDER BY {order}')
        dump['tables'][table] = {
            'columns': [d[0] for d in cursor.description],
            'rows': [[plain(v) for v in row] for row in cursor],
        }
    (out / 'agent-main-rows.json').write_text(one_row_a_line(dump))


def one_row_a_line(dump: dict) -> str:
    """JSON with each table row on a line of its own (a readable diff when the fixture is made again)."""
    tables = []
    for name, table in dump['tables'].items():
        rows = ',\n      '.join(json.dumps(row, ensure_ascii=False) for row in table['rows'])
        tables.append(
            f'  {json.dumps(name)}: {{\n    "columns": {json.dumps(table["columns"])},\n'
            + (f'    "rows": [\n      {rows}\n    ]\n  }}' if rows else '    "rows": []\n  }')
        )
    return f'{{\n "pragmas": {json.dumps(dump["pragmas"])},\n "tables": {{\n' + ',\n'.join(tables) + '\n }\n}\n'


if __name__ == '__main__':
    main(sys.argv[1], *(Path(a) for a in sys.argv[2:3]))
