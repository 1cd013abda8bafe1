"""The docstrings in ``_core.pyi`` are the ones the Rust extension has at runtime.

The stub's docstrings are hand-copied from the ``///`` doc comments in ``src/python/``, which PyO3 turns into the
runtime ``__doc__``. stubtest checks the stub's names and signatures but not its docs, so they drift silently; this
test catches that. The Rust doc comments are the source of truth.

Rule: for every public (no leading underscore) function and class of ``memsift._core`` and every public method and
property defined on such a class, the stub's docstring equals the runtime ``__doc__`` after ``inspect.cleandoc`` and
stripping trailing whitespace. A runtime ``__doc__`` of ``None`` means "no docstring", and then the stub must have none
either: documentation that exists only in the stub has no source of truth and cannot be checked, so put it in the Rust
doc comment first. PyO3 keeps the text signature out of ``__doc__`` (it is ``__text_signature__``), so nothing is cut.
"""

import ast
import inspect
from pathlib import Path

import pytest

import memsift
import memsift._core

STUB = Path(memsift.__file__).resolve().parent / '_core.pyi'
FIX = (
    'the Rust doc comments in src/python/ are the source of truth: copy the /// comment of each object listed '
    'below into its docstring in python/memsift/_core.pyi (no docstring in the stub where the Rust item has none)'
)


def normalize(doc: str | None) -> str | None:
    if doc is None:
        return None
    return '\n'.join(line.rstrip() for line in inspect.cleandoc(doc).splitlines()).strip() or None


def stub_docs() -> dict[str, str | None]:
    """Docstrings of the stub's module-level functions and classes (``name``) and class members (``Class.member``)."""
    docs: dict[str, str | None] = {}

    def define(name: str, node: ast.AST) -> None:
        doc = ast.get_docstring(node) if isinstance(node, ast.FunctionDef | ast.ClassDef) else None
        if docs.get(name) is None:  # overloads: whichever definition carries the docstring
            docs[name] = doc

    for node in ast.parse(STUB.read_text(encoding='utf-8')).body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            define(node.name, node)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            define(node.target.id, node)
        if isinstance(node, ast.ClassDef):
            for member in node.body:
                if isinstance(member, ast.FunctionDef):
                    define(f'{node.name}.{member.name}', member)
                elif isinstance(member, ast.AnnAssign) and isinstance(member.target, ast.Name):
                    define(f'{node.name}.{member.target.id}', member)
    return docs


def runtime_docs() -> dict[str, str | None]:
    """Runtime ``__doc__`` of the public names of ``memsift._core`` and the public members their classes define."""
    docs: dict[str, str | None] = {}
    for name, obj in vars(memsift._core).items():
        if name.startswith('_'):
            continue
        docs[name] = obj.__doc__
        if isinstance(obj, type):
            for member, value in vars(obj).items():  # own members only: not Exception.args and the like
                if not member.startswith('_'):
                    value = value.__func__ if isinstance(value, staticmethod) else value  # not staticmethod's own doc
                    docs[f'{name}.{member}'] = value.__doc__
    return docs


def short(doc: str | None) -> str:
    if doc is None:
        return '(no docstring)'
    return repr(doc if len(doc) <= 200 else doc[:200] + '...')


def test_every_public_runtime_name_is_in_the_stub():
    missing = sorted(name for name in runtime_docs() if '.' not in name and name not in stub_docs())
    assert missing == [], f'public names of memsift._core missing from {STUB}: {missing}'


def test_stub_docstrings_match_the_runtime_docstrings():
    stub = stub_docs()
    differing = []
    for name, runtime_doc in sorted(runtime_docs().items()):
        expected, actual = normalize(runtime_doc), normalize(stub.get(name))
        if expected != actual:
            differing.append(f'{name}:\n    runtime: {short(expected)}\n    stub:    {short(actual)}')
    if differing:
        pytest.fail(f'{len(differing)} docstring(s) in _core.pyi differ from runtime; {FIX}.\n' + '\n'.join(differing))


def test_the_docs_do_not_carry_the_text_signature():
    # If a PyO3 upgrade put "name(sig)\n--\n\n" back on the first line of __doc__, the rule above would need to cut it.
    assert memsift._core.chunk_markdown.__text_signature__ == '(text, tokens=400, overlap=80)'
    assert memsift._core.Bm25Index.search.__text_signature__ == '($self, query, k=10, *, sources=None)'
    for doc in (memsift._core.chunk_markdown.__doc__, memsift._core.Bm25Index.search.__doc__):
        assert doc is not None
        assert '--\n' not in doc
        assert not doc.startswith(('chunk_markdown(', 'search('))
