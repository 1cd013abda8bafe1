"""The layout's rules, checked on the source: memsift's modules import each other without cycles (lazy imports
inside functions and ``TYPE_CHECKING`` blocks count too), and the exception tree has one home.

A cycle means two modules cannot be understood (or changed) one at a time; a lazy import that dodges one at run
time still leaves it in the design, so every import statement counts.
"""

import ast
import inspect
from pathlib import Path

import memsift
import memsift.errors

PACKAGE = Path(memsift.__file__).parent


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix('').parts
    return '.'.join(parts[:-1] if parts[-1] == '__init__' else parts)


def import_graph() -> dict[str, set[str]]:
    """Module -> the memsift modules it imports anywhere in its source (``memsift._core`` is native: a leaf)."""
    modules = {module_name(path): path for path in PACKAGE.rglob('*.py')}
    known = set(modules) | {'memsift._core'}

    def resolve(name: str) -> str | None:
        while name and name not in known:
            name = name.rpartition('.')[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == '__init__.py' else name.rpartition('.')[0]
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding='utf-8'))):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ''
                if node.level:  # relative: from the package, up level - 1
                    anchor = package.split('.')[: len(package.split('.')) - node.level + 1]
                    base = '.'.join([*anchor, *([node.module] if node.module else [])])
                targets.update([base, *(f'{base}.{alias.name}' for alias in node.names)])
        resolved = {t for t in map(resolve, targets) if t is not None}
        graph[name] = {t for t in resolved | packages_run(resolved, name) if t != name}
    return graph


def packages_run(targets: set[str], importer: str) -> set[str]:
    """Importing ``memsift.a.b`` from outside ``memsift.a`` runs ``memsift/a/__init__.py`` first: that counts as an
    import of ``memsift.a`` (a package's own modules import their siblings while it is already loading)."""
    run = set()
    for target in targets:
        parts = target.split('.')
        for depth in range(2, len(parts)):
            package = '.'.join(parts[:depth])
            if not (importer == package or importer.startswith(package + '.')):
                run.add(package)
    return run


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_graph_sees_lazy_and_type_only_imports():
    graph = import_graph()
    assert (
        'memsift.index.watch' in graph['memsift.index.freshness']
    )  # imported inside Freshness.start_watching and under TYPE_CHECKING
    assert 'memsift._core' in graph['memsift.index.memory_index']
    assert cycles({'a': {'b'}, 'b': {'c'}, 'c': {'a'}, 'd': {'a'}}) == [['a', 'b', 'c']]
    assert packages_run({'memsift.index.store'}, 'memsift.media') == {'memsift.index'}
    assert packages_run({'memsift.index.store'}, 'memsift.index.sync') == set()


def test_no_import_cycles():
    found = cycles(import_graph())
    assert found == [], f'import cycles (break each by moving the shared piece into its own module): {found}'


def test_the_package_root_is_imported_by_no_module():
    """Modules import what they use from its home module; only users import ``memsift`` itself."""
    importers = sorted(name for name, targets in import_graph().items() if 'memsift' in targets)
    assert importers == []


def test_every_exception_lives_in_errors_and_is_exported():
    classes = {
        name: obj
        for name, obj in vars(memsift.errors).items()
        if inspect.isclass(obj) and issubclass(obj, (memsift.MemsiftError, Warning))
    }
    assert set(classes) == set(memsift.errors.__all__)
    for name, cls in classes.items():
        assert getattr(memsift, name) is cls, f'memsift.{name} is not exported'
    public = {name for name, obj in vars(memsift).items() if inspect.isclass(obj) and issubclass(obj, Exception)}
    assert public <= set(classes), f'exceptions exported from elsewhere than memsift.errors: {public - set(classes)}'
