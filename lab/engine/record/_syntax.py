"""What the rewriter reads from a syntax tree or symbol table without changing it: names a statement stores, names a
module re-binds, which scope captures what, and which expressions always give a new bool.

Plain functions over ``ast`` and ``symtable`` nodes, kept apart from the rewriting rules so that each rule reads as
what it emits, not as how it finds out.
"""

from __future__ import annotations

import ast
import symtable
from collections.abc import Iterable, Iterator


def flat_targets(targets: Iterable[ast.expr]) -> Iterator[ast.expr]:
    """``del`` targets, tuples and lists opened (``del (a, b)`` deletes ``a`` then ``b``)."""
    for target in targets:
        if isinstance(target, ast.Tuple | ast.List):
            yield from flat_targets(target.elts)
        else:
            yield target


def imported_name(alias: ast.alias) -> str:
    """The name an import binds: ``import a.b`` binds ``a``."""
    return alias.asname or alias.name.split(".")[0]


def captured_names(pattern: ast.pattern) -> Iterator[str]:
    """The names a ``case`` pattern stores when it matches."""
    for node in ast.walk(pattern):
        if isinstance(node, ast.MatchAs | ast.MatchStar) and node.name is not None:
            yield node.name
        elif isinstance(node, ast.MatchMapping) and node.rest is not None:
            yield node.rest


def stored_names(targets: Iterable[ast.expr]) -> Iterator[str]:
    for target in targets:
        if isinstance(target, ast.Name):
            yield target.id
        elif isinstance(target, ast.Tuple | ast.List):
            yield from stored_names(target.elts)
        elif isinstance(target, ast.Starred):
            yield from stored_names([target.value])


def tables_by_position(table: symtable.SymbolTable) -> dict[tuple[str, str, int], symtable.SymbolTable]:
    found: dict[tuple[str, str, int], symtable.SymbolTable] = {}
    for child in table.get_children():
        kind = (
            "function"
            if child.get_type()
            in ("function", symtable.SymbolTableType.FUNCTION if hasattr(symtable, "SymbolTableType") else "function")
            else "class"
        )
        found.setdefault((kind, child.get_name(), child.get_lineno()), child)
        found.update({k: v for k, v in tables_by_position(child).items() if k not in found})
    return found


def is_captured(table: symtable.SymbolTable, name: str) -> bool:
    """True when a scope nested in ``table`` reads ``name`` as a closure variable."""
    for child in table.get_children():
        try:
            if child.lookup(name).is_free():
                return True
        except KeyError:
            pass
        if is_captured(child, name):
            return True
    return False


def module_level_assigned(tree: ast.Module) -> set[str]:
    """Names the module binds by assignment at its top level (data, not functions, classes or imports)."""
    names: set[str] = set()
    for statement in tree.body:
        for node in ast.walk(statement) if isinstance(statement, ast.If | ast.Try) else [statement]:
            if isinstance(node, ast.Assign):
                names.update(stored_names(node.targets))
            elif isinstance(node, ast.AnnAssign | ast.AugAssign) and isinstance(node.target, ast.Name):
                names.add(node.target.id)
    return names


def rebound_names(tree: ast.Module) -> tuple[set[str], set[str]]:
    """(names declared ``global`` somewhere, names stored anywhere other than as a parameter: by assignment, by
    ``del``, and by the binding forms that name no ``ast.Name``: ``except ... as``, ``import``, ``def``, ``class``
    and ``case`` captures)."""
    declared: set[str] = set()
    stored: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Global | ast.Nonlocal):
            declared.update(node.names)
            stored.update(node.names)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            stored.add(node.id)
        elif isinstance(node, ast.ExceptHandler) and node.name is not None:
            stored.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            stored.update(imported_name(alias) for alias in node.names)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            stored.add(node.name)
        elif isinstance(node, ast.match_case):
            stored.update(captured_names(node.pattern))
    return declared, stored


_BOOL_COMPARISONS = (ast.Is, ast.IsNot, ast.In, ast.NotIn)


def always_bool(node: ast.expr) -> bool:
    """True for an expression whose value is a new ``True`` or ``False`` whatever its operands: ``not x``, a chain of
    ``is``/``in`` tests, and ``and``/``or`` of such. Read whole, such a value touches nothing (``rv`` would return at
    once), so the call is left out: a tenth of all the calls an explored run makes into the runtime."""
    if isinstance(node, ast.UnaryOp):
        return isinstance(node.op, ast.Not)
    if isinstance(node, ast.Compare):
        return all(isinstance(op, _BOOL_COMPARISONS) for op in node.ops)
    if isinstance(node, ast.BoolOp):
        return all(always_bool(value) for value in node.values)
    return False
