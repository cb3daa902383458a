"""The layers and rooms of docs/architecture.md, read from the source with ``ast``.

Each rule that today's code does not yet keep is a ratchet: an explicit list of what exists,
which a change may shorten (and then must, in the same commit) but never lengthen. A new import
cycle, a new dependency between apps, or a new backend check outside the seams fails here.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

APPS = frozenset({"accounts", "forms_app", "submissions", "integrations", "pullapi", "files",
                  "dashboard", "operations", "audit", "teams"})
LOWER = frozenset({"core", "edge", "formflow"})  # shared code, below every app
PACKAGES = APPS | LOWER | {"config"}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def modules() -> dict[str, Path]:
    """Every module of the project's packages (migrations too), and manage.py."""
    found = {_module_name(path): path for package in PACKAGES
             for path in (ROOT / package).rglob("*.py")}
    found["manage"] = ROOT / "manage.py"
    return found


def _resolve(dotted: str) -> str | None:
    """The project's module ``dotted`` names (or an attribute of), None outside the project."""
    parts = dotted.split(".")
    for end in range(len(parts), 0, -1):
        candidate = ".".join(parts[:end])
        if candidate in modules():
            return candidate
    return None


def _imported_names(module: str, tree: ast.Module) -> Iterator[str]:
    """Every name imported anywhere in the module: at the top, inside functions, under
    TYPE_CHECKING. ``from a import b`` yields ``a.b`` (a module or an attribute of ``a``)."""
    is_package = modules()[module].name == "__init__.py"
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                here = module.split(".") if is_package else module.split(".")[:-1]
                here = here[:len(here) - (node.level - 1)]
                base = ".".join([*here, *([node.module] if node.module else [])])
            yield from (f"{base}.{alias.name}" for alias in node.names)


@cache
def import_graph() -> dict[str, frozenset[str]]:
    """Module -> the project's modules it imports. An edge to the module's own parent packages
    is left out: importing a package's child runs the package first anyway."""
    graph = {}
    for module, path in modules().items():
        tree = ast.parse(path.read_text(), filename=str(path))
        targets = {_resolve(name) for name in _imported_names(module, tree)}
        parts = module.split(".")
        parents = {".".join(parts[:end]) for end in range(1, len(parts))}
        graph[module] = frozenset(targets - parents - {module, None})
    return graph


def _top(module: str) -> str:
    return module.split(".")[0]


def _edges_into(importers: frozenset[str], imported: frozenset[str]) -> list[str]:
    return sorted(f"{source} -> {target}" for source, targets in import_graph().items()
                  for target in targets if _top(source) in importers and _top(target) in imported)


def test_the_graph_reads_imports_inside_functions_too():
    """The audit's cycles are held by function-level imports: the graph must see them (these
    two are imported only inside a function)."""
    assert "core.infra.dbtimeouts" in import_graph()["config.celery"]
    assert "core.metrics" in import_graph()["integrations.apps"]


# --- Layers ---------------------------------------------------------------------------------


def test_core_imports_no_app_no_edge_and_no_config():
    assert _edges_into(frozenset({"core"}), APPS | {"edge", "config"}) == []


def test_edge_imports_no_app_and_no_config():
    assert _edges_into(frozenset({"edge"}), APPS | {"config"}) == []


def test_formflow_imports_nothing_of_the_project():
    assert _edges_into(frozenset({"formflow"}), PACKAGES - {"formflow"}) == []


def test_apps_import_nothing_from_config():
    """config/ is wiring: it imports the apps, never the other way. Settings reach the apps
    through django.conf.settings; the Celery app through celery.current_app or shared_task.
    Only manage.py (outside every app) starts from config.boot."""
    assert _edges_into(APPS, frozenset({"config"})) == []


# integrations/delivery/'s modules, top to bottom (docs/architecture.md): each imports only
# modules below it. One below the tasks sends a task's message by name (delivery.messages).
DELIVERY_ORDER = ("tasks", "worker", "retry", "attempt", "record", "alerts", "transports",
                  "claim", "enqueue", "nudge", "messages", "backends")


def test_delivery_modules_import_downward_only():
    rank = {f"integrations.delivery.{name}": place for place, name in enumerate(DELIVERY_ORDER)}
    assert set(rank) == {module for module in modules()
                         if module.startswith("integrations.delivery.")}
    upward = [f"{source} -> {target}" for source in rank for target in import_graph()[source]
              if target in rank and rank[target] <= rank[source]]
    assert upward == []


# --- Cycles ---------------------------------------------------------------------------------


def import_cycles(graph: dict[str, frozenset[str]] | None = None) -> set[frozenset[str]]:
    """The graph's strongly connected components of more than one module (Tarjan's, kept
    iterative so a deep import chain cannot overflow the stack)."""
    graph = import_graph() if graph is None else graph
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: set[frozenset[str]] = set()
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        cycles.add(frozenset(component))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph[child]))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return cycles


def _named(cycles) -> list[list[str]]:
    return sorted(sorted(cycle) for cycle in cycles)


def test_no_import_cycle():
    """Not even one held by an import inside a function: that hides a cycle, it does not
    remove it (docs/architecture.md, "Adding code")."""
    cycles = import_cycles()
    assert not cycles, f"import cycles (break them): {_named(cycles)}"


def test_the_cycle_finder_finds_a_cycle():
    graph = {"a.x": frozenset({"a.y"}), "a.y": frozenset({"a.z"}), "a.z": frozenset({"a.x"}),
             "a.w": frozenset({"a.x"})}
    assert import_cycles(graph) == {frozenset({"a.x", "a.y", "a.z"})}


# --- Dependencies between apps (a ratchet) --------------------------------------------------

# Which app imports which, today. Two go both ways (submissions <-> integrations,
# files <-> forms_app): debts of the restructuring (issue 33), to be removed. When an edge
# goes, delete it here; a new one is a design decision, not a line added to this list.
KNOWN_APP_EDGES = {
    # The audit log sits below every app that changes things: their services record in it.
    ("accounts", "audit"),
    ("dashboard", "audit"),
    ("files", "audit"),  # an operator's quota change and a file deleted in the admin
    ("forms_app", "audit"),
    ("integrations", "audit"),
    ("pullapi", "audit"),
    ("submissions", "audit"),
    ("teams", "audit"),
    ("dashboard", "accounts"),
    ("dashboard", "files"),
    ("dashboard", "forms_app"),
    ("dashboard", "integrations"),
    ("dashboard", "pullapi"),
    ("dashboard", "submissions"),
    ("files", "forms_app"),
    ("forms_app", "accounts"),
    ("integrations", "accounts"),
    ("integrations", "files"),
    ("integrations", "forms_app"),
    ("integrations", "pullapi"),
    ("integrations", "submissions"),
    ("operations", "integrations"),
    ("pullapi", "accounts"),
    ("pullapi", "files"),
    ("pullapi", "forms_app"),
    ("pullapi", "submissions"),
    ("submissions", "accounts"),
    ("submissions", "files"),
    ("submissions", "forms_app"),
    # Teams sit above accounts (their members, invitations that let an address sign up,
    # through accounts/hooks.py) and below every app that reaches a team's forms by a
    # member's role (teams/roles.py); integrations hears of a role changed through
    # teams/hooks.py.
    ("teams", "accounts"),
    ("dashboard", "teams"),
    ("forms_app", "teams"),
    ("integrations", "teams"),
    ("pullapi", "teams"),
    ("submissions", "teams"),
}


def test_the_audit_log_imports_no_app():
    """Services record in it; it knows none of them (docs/architecture.md, "The apps")."""
    assert _edges_into(frozenset({"audit"}), APPS - {"audit"}) == []


def app_edges() -> set[tuple[str, str]]:
    return {(_top(source), _top(target)) for source, targets in import_graph().items()
            for target in targets
            if _top(source) in APPS and _top(target) in APPS and _top(source) != _top(target)}


def test_no_new_dependency_between_apps():
    new = app_edges() - KNOWN_APP_EDGES
    where = [edge for edge in _edges_into(APPS, APPS)
             if tuple(_top(part) for part in edge.split(" -> ")) in new]
    assert not new, f"new dependencies between apps: {sorted(new)}, from {where}"


def mutual_apps(edges: set[tuple[str, str]]) -> set[frozenset[str]]:
    return {frozenset(edge) for edge in edges if (edge[1], edge[0]) in edges}


def test_no_two_apps_import_each_other():
    """An import circle between apps: each app's arrows point one way, to the apps it uses;
    an app that must hear of another's events offers a hook (docs/architecture.md, "Hooks")."""
    new = mutual_apps(app_edges())
    assert not new, (f"apps that import each other: {sorted(sorted(pair) for pair in new)}; "
                     "point the arrow one way, with a hook in the app that is called")


def test_a_pair_in_both_directions_is_mutual():
    edges = {("a", "b"), ("b", "a"), ("a", "c")}
    assert mutual_apps(edges) == {frozenset({"a", "b"})}


def test_submissions_store_and_services_hear_integrations_only_through_the_hooks():
    """Storing, rescuing, marking and deleting submissions reach integrations through
    submissions/hooks.py, which integrations fills at start: never by import."""
    writers = ("submissions.intake", "submissions.services", "submissions.hooks")
    edges = _edges_into(frozenset({"submissions"}), frozenset({"integrations"}))
    assert [edge for edge in edges if edge.startswith(writers)] == []


def test_every_known_dependency_between_apps_still_exists():
    gone = KNOWN_APP_EDGES - app_edges()
    assert not gone, f"these are gone: delete them from KNOWN_APP_EDGES: {sorted(gone)}"


# --- Backend checks outside the seams (a ratchet) -------------------------------------------

# Where choosing between backends belongs: the adapters of core/infra/, the migrations (which
# run once per database), the wiring of config/, and each concern's chooser in an app: the
# module that picks the concern's implementation for this database once, beside which the
# implementations sit (docs/architecture.md, "Seams between backends").
SEAMS = (
    "core/infra/",
    "config/",
    "integrations/delivery/backends.py",
    "submissions/intake/admission/__init__.py",  # admission in Redis or in the database
    "submissions/intake/store/__init__.py",  # the one statement (pg.py) or the ORM (orm.py)
    "submissions/intake/fingerprints.py",  # the duplicate check's notes: Redis or the cache
    "operations/backup.py",  # picks the database's dump: SQLite's backup API or COPY
    "operations/readiness.py",  # probes each backend the settings name
    "pullapi/pages/backends.py",
    "submissions/export/backends.py",
    "submissions/feed/backends.py",
    "submissions/search/backends.py",
)

# Each file's count of backend checks, today. Each is a branch between two implementations
# (PostgreSQL or SQLite; Redis or the database) inside code that should hold one: to be moved
# behind an interface chosen at start (docs/architecture.md, "Seams"). Lower a count in the
# same commit that removes a check; never raise one, never add a file.
KNOWN_BACKEND_CHECKS: dict[str, int] = {}

REDIS_MODULE = "core.infra.redis"
REDIS_CHECKS = frozenset({"available", "Unavailable"})


def _redis_names(tree: ast.Module) -> tuple[set[str], dict[str, str]]:
    """The names this file gives the Redis module, and those it gives the module's own names
    (``from core.infra.redis import client as redis_client``: {"redis_client": "client"})."""
    modules_as: set[str] = set()
    members_as: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "core.infra":
            modules_as |= {alias.asname or alias.name for alias in node.names
                           if alias.name == "redis"}
        elif isinstance(node, ast.ImportFrom) and node.module == REDIS_MODULE:
            members_as |= {alias.asname or alias.name: alias.name for alias in node.names}
        elif isinstance(node, ast.Import):
            modules_as |= {alias.asname or alias.name for alias in node.names
                           if alias.name == REDIS_MODULE}
    return modules_as, members_as


def _redis_member(node: ast.AST, modules_as: set[str], members_as: dict[str, str]) -> str:
    """Which member of the Redis module ``node`` names ("" for none)."""
    if isinstance(node, ast.Attribute):
        owner = ast.unparse(node.value)
        if owner in modules_as or owner == REDIS_MODULE:
            return node.attr
    if isinstance(node, ast.Name):
        return members_as.get(node.id, "")
    return ""


def backend_checks(tree: ast.Module) -> int:
    """How many places choose a backend: ``<connection>.vendor``, ``settings.REDIS_URL``, and
    the Redis module's availability API: ``available()``, ``except Unavailable`` (or any use
    of it), and a test of ``client()`` against None, directly or through a name it was
    assigned to. core/infra/redis.py's client() is None without REDIS_URL."""
    modules_as, members_as = _redis_names(tree)

    def member(node: ast.AST) -> str:
        return _redis_member(node, modules_as, members_as)

    def is_client_call(node: ast.AST) -> bool:
        return isinstance(node, ast.Call) and member(node.func) == "client"

    clients = {target.id for node in ast.walk(tree) if isinstance(node, ast.Assign)
               and is_client_call(node.value)
               for target in node.targets if isinstance(target, ast.Name)}
    def is_check(node: ast.AST) -> bool:
        if isinstance(node, ast.Attribute) and node.attr in ("vendor", "REDIS_URL"):
            return True
        if member(node) in REDIS_CHECKS:
            return True
        if isinstance(node, ast.Compare) and any(isinstance(op, ast.Is | ast.IsNot)
                                                 for op in node.ops):
            return any(is_client_call(operand)
                       or (isinstance(operand, ast.Name) and operand.id in clients)
                       for operand in [node.left, *node.comparators])
        return False

    return sum(is_check(node) for node in ast.walk(tree))


def _outside_the_seams() -> Iterator[tuple[str, Path]]:
    for path in modules().values():
        name = path.relative_to(ROOT).as_posix()
        if not name.startswith(SEAMS) and "/migrations/" not in name:
            yield name, path


def backend_checks_by_file() -> dict[str, int]:
    counts = {}
    for name, path in _outside_the_seams():
        count = backend_checks(ast.parse(path.read_text(), filename=str(path)))
        if count:
            counts[name] = count
    return counts


def test_the_counter_sees_each_kind_of_check():
    source = (
        "from core.infra import redis\n"
        "from core.infra.redis import client as shared\n"
        "if connection.vendor == 'postgresql': pass\n"
        "if settings.REDIS_URL: pass\n"
        "if redis.available(): pass\n"
        "if redis.client() is None: pass\n"
        "c = shared()\n"
        "if c is not None: pass\n"
        "try: pass\n"
        "except redis.Unavailable: pass\n"
        "x = other() is None\n"
    )
    assert backend_checks(ast.parse(source)) == 6


def test_no_new_backend_check_outside_the_seams():
    counts = backend_checks_by_file()
    grown = {name: (KNOWN_BACKEND_CHECKS.get(name, 0), count) for name, count in counts.items()
             if count > KNOWN_BACKEND_CHECKS.get(name, 0)}
    assert not grown, (
        f"backend checks added outside the seams (file: (known, now)): {grown}; put the "
        "choice behind one interface chosen at start (docs/architecture.md)")


def test_each_named_seam_still_exists():
    """A seam that moved or went away must leave the list, or it would let a new file of that
    name choose inline unseen."""
    assert [seam for seam in SEAMS if not (ROOT / seam).exists()] == []


def test_each_known_count_is_still_exact():
    counts = backend_checks_by_file()
    shrunk = {name: (known, counts.get(name, 0)) for name, known in KNOWN_BACKEND_CHECKS.items()
              if counts.get(name, 0) < known}
    assert not shrunk, f"fewer checks than listed (file: (known, now)); lower the list: {shrunk}"
