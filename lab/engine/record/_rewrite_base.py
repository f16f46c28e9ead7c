"""What every rewriting rule shares: the scope stack, how a name is told a global or a closure cell, and the pieces
the rules are built of (a value read whole, an iterable, a key, a store target).

The rules themselves are split by the syntax they rewrite: scopes (:mod:`lab.engine.record._rewrite_scopes`),
expressions (:mod:`lab.engine.record._rewrite_expressions`) and statements (:mod:`lab.engine.record._rewriter`), each
a subclass of the one before.
"""

from __future__ import annotations

import ast
import symtable
from collections.abc import Iterable
from dataclasses import dataclass, field

from lab.engine.record._syntax import always_bool, is_captured, stored_names, tables_by_position

RUNTIME_NAME = "__lab_runtime__"


KEEP_CALLS = frozenset({"super", "locals", "globals", "vars", "dir", "eval", "exec", "breakpoint", "__import__"})


OPS = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.Pow: "**",
    ast.LShift: "<<",
    ast.RShift: ">>",
    ast.BitAnd: "&",
    ast.BitOr: "|",
    ast.BitXor: "^",
    ast.MatMult: "@",
}


@dataclass
class Scope:
    """What the rewriter knows about the function it is inside."""

    table: symtable.SymbolTable | None
    path: str
    cells: dict[str, str] = field(default_factory=dict)  # variable -> label of its cell, for shared cells


class RewriterBase(ast.NodeTransformer):
    """The rewriter's state (the scopes it is inside, the names it tracks) and the pieces every rule uses."""

    def __init__(self, module_table: symtable.SymbolTable, tracked_globals: set[str], rebound: set[str]) -> None:
        self._tables = tables_by_position(module_table)
        self._globals = tracked_globals
        self._rebound = rebound  # names that some scope stores other than as a parameter
        self._scopes: list[Scope] = []
        self._temp = 0

    def _rt(self, method: str, node: ast.AST, *args: ast.expr) -> ast.Call:
        func = ast.Attribute(ast.Name(RUNTIME_NAME, ast.Load()), method, ast.Load())
        return ast.copy_location(ast.Call(func, list(args), []), node)

    def _line(self, node: ast.AST) -> ast.Constant:
        return ast.Constant(getattr(node, "lineno", 0))

    def _temp_name(self) -> str:
        self._temp += 1
        return f"__lab_t{self._temp}"

    @property
    def _inside(self) -> bool:
        return bool(self._scopes)

    def _name_kind(self, name: str) -> tuple[str, str]:
        """``("global", name)``, ``("cell", label)`` or ``("", "")`` for a name read or written in the scope."""
        if not self._scopes:
            return "", ""
        scope = self._scopes[-1]
        if scope.table is None:
            return "", ""
        try:
            symbol = scope.table.lookup(name)
        except KeyError:
            return "", ""
        if symbol.is_global() and not symbol.is_local():
            return ("global", name) if name in self._globals else ("", "")
        if symbol.is_free() or (symbol.is_local() and name in scope.cells):
            label = self._cell_label(name)
            return ("cell", label) if label else ("", "")
        return "", ""

    def _cell_label(self, name: str) -> str:
        for scope in reversed(self._scopes):
            if name in scope.cells:
                return scope.cells[name]
        return ""

    def _has_table(self, node: ast.AST, name: str) -> bool:
        return ("function", name, getattr(node, "lineno", 0)) in self._tables

    def _enter(self, node: ast.AST, kind: str, name: str) -> None:
        table = self._tables.get((kind, name, getattr(node, "lineno", 0)))
        parent = self._scopes[-1].path + "." if self._scopes else ""
        scope = Scope(table, parent + name)
        if table is not None:
            for symbol in table.get_symbols():
                symbol_name = symbol.get_name()
                if symbol.is_local() and is_captured(table, symbol_name) and symbol_name in self._rebound:
                    scope.cells[symbol_name] = f"{scope.path}.{symbol_name}"
        self._scopes.append(scope)

    def _statements(self, body: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for statement in body:
            result = self.visit(statement)
            if isinstance(result, list):
                out.extend(result)
            elif result is not None:
                out.append(result)
        return out

    def generic_visit(self, node: ast.AST) -> ast.AST:
        for name, value in ast.iter_fields(node):
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                setattr(node, name, self._statements(value))
            elif isinstance(value, list):
                setattr(node, name, [self.visit(v) if isinstance(v, ast.AST) else v for v in value])
            elif isinstance(value, ast.AST):
                setattr(node, name, self.visit(value))
        return node

    def _whole(self, node: ast.expr, *, deep: bool = False) -> ast.expr:
        """``node``'s value read whole (``rt.rv``), or with ``deep`` with everything it holds (``rt.rd``)."""
        if not self._inside or isinstance(node, ast.Constant | ast.JoinedStr) or always_bool(node):
            return node
        if isinstance(node, ast.Tuple | ast.List | ast.Set) and all(isinstance(e, ast.Constant) for e in node.elts):
            deep = False  # ``x in ("a", "b")``: constants hold nothing that changes
        return self._rt("rd" if deep else "rv", node, node, self._line(node))

    def _iterated(self, node: ast.expr, is_async: bool) -> ast.expr:
        """The iterable of a ``for``: ``rt.it``, which records every step of the loop, not only its start (an ``async
        for`` iterates through ``__aiter__``, which ``iter`` cannot stand for: read whole once, as before)."""
        if is_async or not self._inside or isinstance(node, ast.Constant):
            return self._whole(node)
        return self._rt("it", node, node, self._line(node))

    def _key(self, node: ast.expr) -> ast.expr:
        if isinstance(node, ast.Slice):
            bounds = (node.lower, node.upper, node.step)
            parts = [self.visit(p) if p is not None else ast.Constant(None) for p in bounds]
            func = ast.Attribute(ast.Name(RUNTIME_NAME, ast.Load()), "slice", ast.Load())
            return ast.copy_location(ast.Call(func, parts, []), node)
        return self.visit(node)  # type: ignore[no-any-return]

    def _read_name(self, node: ast.Name, where: ast.AST) -> ast.expr:
        kind, label = self._name_kind(node.id)
        if kind == "global":
            record = self._rt("rg", where, ast.Constant(node.id), self._line(where))
        elif kind == "cell":
            record = self._rt("rc", where, ast.Constant(label), self._line(where))
        else:
            return node
        return ast.copy_location(ast.BoolOp(ast.Or(), [record, node]), where)  # record (returns None), then read

    def _wrap_name_store(self, target: ast.Name, value: ast.expr) -> ast.expr:
        kind, label = self._name_kind(target.id)
        if kind == "global":
            return self._rt("wg", target, value, ast.Constant(target.id), self._line(target))
        if kind == "cell":
            return self._rt("wc", target, value, ast.Constant(label), self._line(target))
        return value

    def _target(self, node: ast.expr, *, deleted: bool = False) -> ast.expr:
        """Rewrite an assignment or deletion target so its object and key are recorded right before the store
        (``deleted``: a ``del`` target, whose subscript goes through ``rt.sd``: deleting moves a list's items)."""
        line = self._line(node)
        if isinstance(node, ast.Attribute):
            node.value = self._rt("sa", node, self.visit(node.value), ast.Constant(node.attr), line)
            return node
        if isinstance(node, ast.Subscript):
            holder = self._temp_name()
            obj = ast.NamedExpr(ast.Name(holder, ast.Store()), self.visit(node.value))
            node.value = ast.copy_location(obj, node)
            store = "sd" if deleted else "si"
            node.slice = self._rt(store, node, ast.Name(holder, ast.Load()), self._key(node.slice), line)
            return node
        if isinstance(node, ast.Tuple | ast.List):
            node.elts = [self._target(e, deleted=deleted) for e in node.elts]
            return node
        if isinstance(node, ast.Starred):
            node.value = self._target(node.value, deleted=deleted)
            return node
        return node

    def _binds_shared_name(self, *targets: ast.expr) -> bool:
        """True when storing to ``targets`` stores a module global or a shared closure variable (one recorded)."""
        return any(self._name_kind(name)[0] for name in stored_names(targets))

    def _store_from(self, target: ast.expr, temp: str) -> list[ast.stmt]:
        """``target = temp``, rewritten like any assignment: for a binding form (``for``, ``with``, ``except``)
        whose target stores a global or shared cell, the form binds ``temp`` and this statement, right after, does
        the store, recorded as a plain assignment's is."""
        store = ast.copy_location(ast.Assign([target], ast.Name(temp, ast.Load())), target)
        return self._statements([store])

    def _complex_name_stores(self, targets: Iterable[ast.expr], where: ast.stmt) -> list[ast.stmt]:
        """Record stores of globals and cells made through tuple or chained targets, right after the statement."""
        return self._name_touches(stored_names(targets), where)

    def _name_touches(self, names: Iterable[str], where: ast.AST) -> list[ast.stmt]:
        """One recording statement, to run right after the store, for each of ``names`` that is a global or a
        shared cell (at ``where``'s line: no line boundary falls between the store and its record)."""
        return [ast.copy_location(ast.Expr(call), where) for call in self._name_records(names, where)]

    def _name_records(self, names: Iterable[str], where: ast.AST) -> list[ast.expr]:
        """The calls that record, with no scheduling point, a store just made to each of ``names`` that is a global
        or a shared cell."""
        out: list[ast.expr] = []
        for name in names:
            kind, label = self._name_kind(name)
            if kind == "global":
                out.append(self._rt("touch_global", where, ast.Constant(name), self._line(where)))
            elif kind == "cell":
                out.append(self._rt("touch_cell", where, ast.Constant(label), self._line(where)))
        return out
