# size: one AST rewriter must cover every access form (attribute, subscript, global, cell, call)
"""Rewrite the modules under test so that every access to shared state is recorded as it happens.

Why rewriting, and not tracing: a trace hook (``sys.settrace`` line or opcode events, ``sys.monitoring``) says
*where* the code is, not *which object* an instruction touches -- the operands live on the value stack, which
Python does not expose. Guessing them from the source text (``self.<name>``) is what made the old footprints blind
to globals, closures, containers passed as arguments, nested objects and helpers in other modules. So the lab does
what pytest does for ``assert``: it parses each module under test, rewrites the bodies of its functions so that
attribute and subscript accesses, global and closure-variable accesses and calls go through
:class:`lab.engine.record._accesses.ModuleRuntime`, compiles the result with the module's own file name and line
numbers,
and swaps the new code objects into the module's existing functions (``function.__code__``) for the duration of a
run. Classes, instances and imports stay exactly the ones the program already holds; only the bodies change, and
outside a recorded run the rewritten code behaves like the original.

What is rewritten, inside function bodies (module and class bodies have already run):

- ``x.a`` -> ``rt.ga(x, "a", line)``; ``x.a = v`` / ``del x.a`` -> the target's object passes through ``rt.sa``;
- ``x[k]`` -> ``rt.gi(x, k, line)``; ``x[k] = v`` / ``del x[k]`` -> the key passes through ``rt.si``;
- ``x op= v`` -> a plain store of ``rt.iop(op, x, v, line)`` (in place for lists and dicts: a write of ``x``);
- a module global the module ever assigns, and closure variables that are ever re-bound: read through
  ``rt.rg``/``rt.rc``, written through ``rt.wg``/``rt.wc``;
- ``f(...)`` -> ``rt.call(line, f, ...)`` (except ``super``, ``locals`` and the like, which need their own frame);
- the iterable of a ``for`` loop or comprehension clause -> ``rt.it(x, line)``, an iterator that records each
  iteration (the container is read at every step of the loop, not once);
- values used whole -- tested for truth, compared, combined, formatted -- pass through ``rt.rv``;
- ``with m:`` -> ``rt.cm(m)``.

Every recording function runs *immediately before* the access it describes, after the operands were evaluated, so
at instruction granularity the scheduling point falls right before the access and the access is charged to the
step that performs it.

Over 300 lines: one syntax-tree rewriter, one method per kind of node, and the code swap that installs its output.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import os
import symtable
import sys
import types
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from lab.engine.record._accesses import ModuleRuntime
from lab.errors import ScenarioError

RUNTIME_NAME = "__lab_runtime__"
_KEEP_CALLS = frozenset({"super", "locals", "globals", "vars", "dir", "eval", "exec", "breakpoint", "__import__"})
_OPS = {
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


class InstrumentError(ScenarioError):
    """A module under test could not be rewritten (its source is missing or does not parse)."""


@dataclass
class _Scope:
    """What the rewriter knows about the function it is inside."""

    table: symtable.SymbolTable | None
    path: str
    cells: dict[str, str] = field(default_factory=dict)  # variable -> label of its cell, for shared cells


class _Rewriter(ast.NodeTransformer):
    def __init__(self, module_table: symtable.SymbolTable, tracked_globals: set[str], rebound: set[str]) -> None:
        self._tables = _tables_by_position(module_table)
        self._globals = tracked_globals
        self._rebound = rebound  # names that some scope stores other than as a parameter
        self._scopes: list[_Scope] = []
        self._temp = 0

    # -- helpers ---------------------------------------------------------------------------------------------------

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

    # -- scopes ----------------------------------------------------------------------------------------------------

    def _has_table(self, node: ast.AST, name: str) -> bool:
        return ("function", name, getattr(node, "lineno", 0)) in self._tables

    def _enter(self, node: ast.AST, kind: str, name: str) -> None:
        table = self._tables.get((kind, name, getattr(node, "lineno", 0)))
        parent = self._scopes[-1].path + "." if self._scopes else ""
        scope = _Scope(table, parent + name)
        if table is not None:
            for symbol in table.get_symbols():
                symbol_name = symbol.get_name()
                if symbol.is_local() and _is_captured(table, symbol_name) and symbol_name in self._rebound:
                    scope.cells[symbol_name] = f"{scope.path}.{symbol_name}"
        self._scopes.append(scope)

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.AST | list[ast.stmt]:
        node.decorator_list = [self.visit(d) for d in node.decorator_list]
        node.args = self.visit(node.args)
        if node.returns is not None:
            node.returns = node.returns  # annotations are not executed code worth recording
        binding = self._name_touches([node.name], node)  # a ``def`` in a function stores a global or cell too
        self._enter(node, "function", node.name)
        try:
            node.body = self._statements(node.body)
        finally:
            self._scopes.pop()
        return [node, *binding] if binding else node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST | list[ast.stmt]:
        return self._function(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> ast.AST | list[ast.stmt]:
        return self._function(node)

    def visit_Lambda(self, node: ast.Lambda) -> ast.AST:
        node.args = self.visit(node.args)
        self._enter(node, "function", "lambda")
        try:
            node.body = self.visit(node.body)
        finally:
            self._scopes.pop()
        return node

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST | list[ast.stmt]:
        binding = self._name_touches([node.name], node)  # a ``class`` in a function stores a global or cell too
        saved, self._scopes = self._scopes, []  # a class body is its own scope; its methods start afresh
        try:
            node.body = self._statements(node.body)
        finally:
            self._scopes = saved
        return [node, *binding] if binding else node

    def visit_arguments(self, node: ast.arguments) -> ast.AST:
        node.defaults = [self.visit(d) for d in node.defaults]
        node.kw_defaults = [self.visit(d) if d is not None else None for d in node.kw_defaults]
        return node

    def _comprehension_scope(
        self, node: ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp, kind: str
    ) -> ast.AST:
        first, *rest = node.generators
        first.iter = self._iterated(self.visit(first.iter), bool(first.is_async))  # evaluated in the enclosing scope
        # Python 3.12 inlines list, set and dict comprehensions (PEP 709): they have no symbol table of their own, and
        # their names are the enclosing function's (a global read or a walrus store inside is the function's)
        inlined = bool(self._scopes) and kind != "genexpr" and not self._has_table(node, kind)
        if inlined:
            self._scopes.append(self._scopes[-1])
        else:
            self._enter(node, "function", kind)
        try:
            for target in node.generators:
                target.target = self._target(target.target)
                target.ifs = [self._whole(self.visit(test)) for test in target.ifs]
            for generator in rest:
                generator.iter = self._iterated(self.visit(generator.iter), bool(generator.is_async))
            for name in ("elt", "key", "value"):
                if hasattr(node, name):
                    setattr(node, name, self.visit(getattr(node, name)))
        finally:
            self._scopes.pop()
        return node

    def visit_ListComp(self, node: ast.ListComp) -> ast.AST:
        return self._comprehension_scope(node, "listcomp")

    def visit_SetComp(self, node: ast.SetComp) -> ast.AST:
        return self._comprehension_scope(node, "setcomp")

    def visit_DictComp(self, node: ast.DictComp) -> ast.AST:
        return self._comprehension_scope(node, "dictcomp")

    def visit_GeneratorExp(self, node: ast.GeneratorExp) -> ast.AST:
        return self._comprehension_scope(node, "genexpr")

    # -- statements ------------------------------------------------------------------------------------------------

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

    def visit_Assign(self, node: ast.Assign) -> ast.AST | list[ast.stmt]:
        if not self._inside:
            return self.generic_visit(node)
        node.value = self.visit(node.value)
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            node.value = self._wrap_name_store(node.targets[0], node.value)
            return node
        node.targets = [self._target(t) for t in node.targets]
        return [node, *self._complex_name_stores(node.targets, node)]

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST:
        if not self._inside or node.value is None:
            return node
        node.value = self.visit(node.value)
        if isinstance(node.target, ast.Name):
            node.value = self._wrap_name_store(node.target, node.value)
        else:
            node.target = self._target(node.target)  # type: ignore[assignment]
        return node

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.AST | list[ast.stmt]:
        if not self._inside:
            return self.generic_visit(node)
        op = ast.Constant(_OPS[type(node.op)])
        line = self._line(node)
        value = self.visit(node.value)
        target = node.target
        if isinstance(target, ast.Name):
            current = self._read_name(ast.Name(target.id, ast.Load()), target)
            result = self._rt("iop", node, op, current, value, line)
            store = ast.Assign([ast.Name(target.id, ast.Store())], self._wrap_name_store(target, result))
            return [ast.copy_location(store, node)]
        if isinstance(target, ast.Attribute):
            holder = self._temp_name()
            first = ast.Assign([ast.Name(holder, ast.Store())], self.visit(target.value))
            current = self._rt("ga", node, ast.Name(holder, ast.Load()), ast.Constant(target.attr), line)
            stored = ast.Attribute(
                self._rt("sa", node, ast.Name(holder, ast.Load()), ast.Constant(target.attr), line),
                target.attr,
                ast.Store(),
            )
            second = ast.Assign([stored], self._rt("iop", node, op, current, value, line))
            return [ast.copy_location(first, node), ast.copy_location(second, node)]
        if isinstance(target, ast.Subscript):
            holder, key = self._temp_name(), self._temp_name()
            first = ast.Assign([ast.Name(holder, ast.Store())], self.visit(target.value))
            second = ast.Assign([ast.Name(key, ast.Store())], self._key(target.slice))
            current = self._rt("gi", node, ast.Name(holder, ast.Load()), ast.Name(key, ast.Load()), line)
            subscript = ast.Subscript(
                ast.Name(holder, ast.Load()),
                self._rt("si", node, ast.Name(holder, ast.Load()), ast.Name(key, ast.Load()), line),
                ast.Store(),
            )
            third = ast.Assign([subscript], self._rt("iop", node, op, current, value, line))
            return [ast.copy_location(s, node) for s in (first, second, third)]
        return self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> ast.AST | list[ast.stmt]:
        if not self._inside:
            return node
        if not self._binds_shared_name(*node.targets):
            node.targets = [self._target(t) for t in node.targets]
            return node
        # ``del a, g`` deletes left to right: one statement per target, a shared name's recorded right before
        out: list[ast.stmt] = []
        for target in _flat_targets(node.targets):
            if isinstance(target, ast.Name) and self._binds_shared_name(target):
                record = self._wrap_name_store(target, ast.Constant(None))
                out.append(ast.copy_location(ast.Expr(record), target))
            else:
                target = self._target(target)
            out.append(ast.copy_location(ast.Delete([target]), target))
        return out

    def visit_For(self, node: ast.For) -> ast.AST | list[ast.stmt]:
        if not self._inside:
            return self.generic_visit(node)
        node.iter = self._iterated(self.visit(node.iter), isinstance(node, ast.AsyncFor))
        body = self._statements(node.body)
        if self._binds_shared_name(node.target):
            temp = self._temp_name()
            store = self._store_from(node.target, temp)
            node.target = ast.copy_location(ast.Name(temp, ast.Store()), node.target)
            body = [*store, *body]
        else:
            node.target = self._target(node.target)
        node.body = body
        node.orelse = self._statements(node.orelse)
        return node

    visit_AsyncFor = visit_For  # type: ignore[assignment]

    def visit_With(self, node: ast.With | ast.AsyncWith) -> ast.AST:
        if not self._inside:
            return self.generic_visit(node)
        body = self._statements(node.body)
        for i in reversed(range(len(node.items))):
            item = node.items[i]
            item.context_expr = self._rt(
                "cm", item.context_expr, self.visit(item.context_expr), self._line(item.context_expr)
            )
            target = item.optional_vars
            if target is not None and self._binds_shared_name(target):
                # ``with m as g, n:`` stores ``g`` before entering ``n``: split the items there, so the recorded
                # store of ``g`` stays right after entering ``m``
                temp = self._temp_name()
                item.optional_vars = ast.copy_location(ast.Name(temp, ast.Store()), target)
                inner = node.items[i + 1 :]
                if inner:
                    body = [ast.copy_location(type(node)(inner, body), node)]
                node.items = node.items[: i + 1]
                body = [*self._store_from(target, temp), *body]
            elif target is not None:
                item.optional_vars = self._target(target)
        node.body = body
        return node

    visit_AsyncWith = visit_With

    def visit_If(self, node: ast.If) -> ast.AST:
        node = self.generic_visit(node)  # type: ignore[assignment]
        if self._inside:
            node.test = self._whole(node.test)
        return node

    def visit_While(self, node: ast.While) -> ast.AST:
        node = self.generic_visit(node)  # type: ignore[assignment]
        if self._inside:
            node.test = self._whole(node.test)
        return node

    def visit_Assert(self, node: ast.Assert) -> ast.AST:
        node = self.generic_visit(node)  # type: ignore[assignment]
        if self._inside:
            node.test = self._whole(node.test)
        return node

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> ast.AST:
        node = self.generic_visit(node)  # type: ignore[assignment]
        if not self._inside or node.name is None:
            return node
        name = ast.copy_location(ast.Name(node.name, ast.Store()), node)
        if not self._binds_shared_name(name):
            return node
        # ``except E as g`` stores ``g`` and, leaving the handler however it leaves, stores ``None`` in it and
        # deletes it: the handler takes a temporary, and both stores are spelt out, each recorded right before
        temp = self._temp_name()
        node.name = temp
        cleanup = ast.Assign([ast.copy_location(ast.Name(name.id, ast.Store()), node)], ast.Constant(None))
        delete = ast.Delete([ast.copy_location(ast.Name(name.id, ast.Del()), node)])
        unbind = [
            *self._statements([ast.copy_location(cleanup, node)]),
            *self._statements([ast.copy_location(delete, node)]),
        ]
        guarded = ast.copy_location(ast.Try(node.body, [], [], unbind), node)
        node.body = [*self._store_from(name, temp), guarded]
        return node

    def _import(self, node: ast.Import | ast.ImportFrom) -> ast.AST | list[ast.stmt]:
        if not self._inside:
            return node
        bound = [_imported_name(alias) for alias in node.names]
        if not any(self._name_kind(name)[0] for name in bound):
            return node
        # one statement per name, each store recorded right after it (an import runs code before it stores)
        out: list[ast.stmt] = []
        for alias, name in zip(node.names, bound, strict=True):
            single = ast.copy_location(
                ast.ImportFrom(node.module, [alias], node.level)
                if isinstance(node, ast.ImportFrom)
                else ast.Import([alias]),
                node,
            )
            out.append(single)
            out.extend(self._name_touches([name], node))
        return out

    def visit_Import(self, node: ast.Import) -> ast.AST | list[ast.stmt]:
        return self._import(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> ast.AST | list[ast.stmt]:
        return self._import(node)

    def visit_Match(self, node: ast.Match) -> ast.AST:
        node = self.generic_visit(node)  # type: ignore[assignment]
        if self._inside:
            node.subject = self._whole(node.subject)  # a pattern reads the subject's items or attributes
        return node

    def visit_match_case(self, node: ast.match_case) -> ast.AST:
        node = self.generic_visit(node)  # type: ignore[assignment]
        if not self._inside:
            return node
        captured = [name for name in _captured_names(node.pattern) if self._name_kind(name)[0]]
        if not captured:
            return node
        # a pattern that matches stores its captures, then runs the guard: record them first thing in the guard
        guard = node.guard if node.guard is not None else ast.Constant(True)
        records = self._name_records(captured, node.pattern)  # each returns None: ``or`` goes on to the next
        node.guard = ast.copy_location(ast.BoolOp(ast.Or(), [*records, guard]), node.pattern)
        return node

    # -- expressions -----------------------------------------------------------------------------------------------

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        if not self._inside or not isinstance(node.ctx, ast.Load):
            return self.generic_visit(node)
        return self._rt("ga", node, self.visit(node.value), ast.Constant(node.attr), self._line(node))

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        if not self._inside or not isinstance(node.ctx, ast.Load):
            return self.generic_visit(node)
        return self._rt("gi", node, self.visit(node.value), self._key(node.slice), self._line(node))

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if not self._inside or not isinstance(node.ctx, ast.Load):
            return node
        return self._read_name(node, node)

    def visit_Call(self, node: ast.Call) -> ast.AST:
        if not self._inside:
            return self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id in _KEEP_CALLS:
            node.args = [self.visit(a) for a in node.args]
            node.keywords = [self.visit(k) for k in node.keywords]
            return node
        func = self.visit(node.func)
        args = [self.visit(a) for a in node.args]
        keywords = [self.visit(k) for k in node.keywords]
        call = ast.Call(
            ast.Attribute(ast.Name(RUNTIME_NAME, ast.Load()), "call", ast.Load()),
            [self._line(node), func, *args],
            keywords,
        )
        return ast.copy_location(call, node)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> ast.AST:
        """``(g := v)``: a store like ``g = v`` (in a comprehension, of the enclosing function's variable, which is
        what the comprehension's symbol table says ``g`` is)."""
        node.value = self.visit(node.value)
        if self._inside:
            node.value = self._wrap_name_store(node.target, node.value)
        return node

    def visit_Starred(self, node: ast.Starred) -> ast.AST:
        node.value = self.visit(node.value)
        if self._inside and isinstance(node.ctx, ast.Load):
            node.value = self._whole(node.value)
        return node

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.AST:
        node.values = [self._whole(self.visit(v)) for v in node.values]
        return node

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
        node.operand = self._whole(self.visit(node.operand))
        return node

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        node.left = self._whole(self.visit(node.left))
        node.right = self._whole(self.visit(node.right), deep=isinstance(node.op, ast.Mod))  # "%s" % x formats x
        return node

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        """Each operand of ``==``, ``<``, ``in``... is read deeply (containers compare their elements, a
        dataclass's generated ``__eq__`` its fields); an operand only of ``is`` / ``is not`` is read whole."""
        deep = [not isinstance(op, ast.Is | ast.IsNot) for op in node.ops]
        node.left = self._whole(self.visit(node.left), deep=deep[0])
        node.comparators = [
            self._whole(self.visit(c), deep=deep[i] or (i + 1 < len(deep) and deep[i + 1]))
            for i, c in enumerate(node.comparators)
        ]
        return node

    def visit_IfExp(self, node: ast.IfExp) -> ast.AST:
        node = self.generic_visit(node)  # type: ignore[assignment]
        node.test = self._whole(node.test)
        return node

    def visit_FormattedValue(self, node: ast.FormattedValue) -> ast.AST:
        node.value = self._whole(self.visit(node.value), deep=True)  # a container formats its elements
        if node.format_spec is not None:
            node.format_spec = self.visit(node.format_spec)
        return node

    # -- pieces ----------------------------------------------------------------------------------------------------

    def _whole(self, node: ast.expr, *, deep: bool = False) -> ast.expr:
        """``node``'s value read whole (``rt.rv``), or with ``deep`` with everything it holds (``rt.rd``)."""
        if not self._inside or isinstance(node, ast.Constant | ast.JoinedStr) or _always_bool(node):
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

    def _target(self, node: ast.expr) -> ast.expr:
        """Rewrite an assignment or deletion target so its object and key are recorded right before the store."""
        line = self._line(node)
        if isinstance(node, ast.Attribute):
            node.value = self._rt("sa", node, self.visit(node.value), ast.Constant(node.attr), line)
            return node
        if isinstance(node, ast.Subscript):
            holder = self._temp_name()
            obj = ast.NamedExpr(ast.Name(holder, ast.Store()), self.visit(node.value))
            node.value = ast.copy_location(obj, node)
            node.slice = self._rt("si", node, ast.Name(holder, ast.Load()), self._key(node.slice), line)
            return node
        if isinstance(node, ast.Tuple | ast.List):
            node.elts = [self._target(e) for e in node.elts]
            return node
        if isinstance(node, ast.Starred):
            node.value = self._target(node.value)
            return node
        return node

    def _binds_shared_name(self, *targets: ast.expr) -> bool:
        """True when storing to ``targets`` stores a module global or a shared closure variable (one recorded)."""
        return any(self._name_kind(name)[0] for name in _stored_names(targets))

    def _store_from(self, target: ast.expr, temp: str) -> list[ast.stmt]:
        """``target = temp``, rewritten like any assignment: for a binding form (``for``, ``with``, ``except``)
        whose target stores a global or shared cell, the form binds ``temp`` and this statement, right after, does
        the store, recorded as a plain assignment's is."""
        store = ast.copy_location(ast.Assign([target], ast.Name(temp, ast.Load())), target)
        return self._statements([store])

    def _complex_name_stores(self, targets: Iterable[ast.expr], where: ast.stmt) -> list[ast.stmt]:
        """Record stores of globals and cells made through tuple or chained targets, right after the statement."""
        return self._name_touches(_stored_names(targets), where)

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


def _flat_targets(targets: Iterable[ast.expr]) -> Iterator[ast.expr]:
    """``del`` targets, tuples and lists opened (``del (a, b)`` deletes ``a`` then ``b``)."""
    for target in targets:
        if isinstance(target, ast.Tuple | ast.List):
            yield from _flat_targets(target.elts)
        else:
            yield target


def _imported_name(alias: ast.alias) -> str:
    """The name an import binds: ``import a.b`` binds ``a``."""
    return alias.asname or alias.name.split(".")[0]


def _captured_names(pattern: ast.pattern) -> Iterator[str]:
    """The names a ``case`` pattern stores when it matches."""
    for node in ast.walk(pattern):
        if isinstance(node, ast.MatchAs | ast.MatchStar) and node.name is not None:
            yield node.name
        elif isinstance(node, ast.MatchMapping) and node.rest is not None:
            yield node.rest


def _stored_names(targets: Iterable[ast.expr]) -> Iterator[str]:
    for target in targets:
        if isinstance(target, ast.Name):
            yield target.id
        elif isinstance(target, ast.Tuple | ast.List):
            yield from _stored_names(target.elts)
        elif isinstance(target, ast.Starred):
            yield from _stored_names([target.value])


def _tables_by_position(table: symtable.SymbolTable) -> dict[tuple[str, str, int], symtable.SymbolTable]:
    found: dict[tuple[str, str, int], symtable.SymbolTable] = {}
    for child in table.get_children():
        kind = (
            "function"
            if child.get_type()
            in ("function", symtable.SymbolTableType.FUNCTION if hasattr(symtable, "SymbolTableType") else "function")
            else "class"
        )
        found.setdefault((kind, child.get_name(), child.get_lineno()), child)
        found.update({k: v for k, v in _tables_by_position(child).items() if k not in found})
    return found


def _is_captured(table: symtable.SymbolTable, name: str) -> bool:
    """True when a scope nested in ``table`` reads ``name`` as a closure variable."""
    for child in table.get_children():
        try:
            if child.lookup(name).is_free():
                return True
        except KeyError:
            pass
        if _is_captured(child, name):
            return True
    return False


def _module_level_assigned(tree: ast.Module) -> set[str]:
    """Names the module binds by assignment at its top level (data, not functions, classes or imports)."""
    names: set[str] = set()
    for statement in tree.body:
        for node in ast.walk(statement) if isinstance(statement, ast.If | ast.Try) else [statement]:
            if isinstance(node, ast.Assign):
                names.update(_stored_names(node.targets))
            elif isinstance(node, ast.AnnAssign | ast.AugAssign) and isinstance(node.target, ast.Name):
                names.add(node.target.id)
    return names


def _rebound_names(tree: ast.Module) -> tuple[set[str], set[str]]:
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
            stored.update(_imported_name(alias) for alias in node.names)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            stored.add(node.name)
        elif isinstance(node, ast.match_case):
            stored.update(_captured_names(node.pattern))
    return declared, stored


@dataclass
class InstrumentedModule:
    """One module under test: its original and rewritten code objects, swapped in and out of its functions."""

    name: str
    filename: str
    swaps: list[tuple[types.FunctionType, types.CodeType, types.CodeType]]
    codes: set[types.CodeType]
    by_key: dict[tuple[str, int], list[types.CodeType]] = field(default_factory=dict)
    cached_properties: list[tuple[functools.cached_property[Any], _CachedGetter]] = field(default_factory=list)
    """The module's ``functools.cached_property`` objects whose getter is rewritten, each with its getter's
    stand-in, which records the store that ``cached_property.__get__`` makes of what it returns."""

    def rewritten(self, code: types.CodeType) -> types.CodeType | None:
        """The rewritten twin of one of this module's code objects (a nested function or a lambda's too)."""
        twin = _twin(self.by_key, code, self.filename)
        return twin if twin is not None and twin.co_freevars == code.co_freevars else None

    def install(self) -> None:
        """Put the rewritten bodies in place."""
        for function, _original, rewritten in self.swaps:
            function.__code__ = rewritten
        for descriptor, getter in self.cached_properties:
            descriptor.func = getter
            if getter.lock is not None:
                # cached_property.__get__ (Python 3.11) runs the getter, now rewritten and so scheduled, holding one
                # real RLock per descriptor, made at import: any other actor reading the property meanwhile, of any
                # instance, would block outside the scheduler's view (HUNG). It runs without, as Python 3.12 runs
                # it: a scheduler-aware lock would add scheduling points that a run without the rewritten bodies
                # (probe granularity, a replay) does not have.
                descriptor.lock = _NO_LOCK  # type: ignore[attr-defined]

    def uninstall(self) -> None:
        """Put the original bodies back."""
        for function, original, _rewritten in self.swaps:
            function.__code__ = original
        for descriptor, getter in self.cached_properties:
            descriptor.func = getter.function
            if getter.lock is not None:
                descriptor.lock = getter.lock  # type: ignore[attr-defined]


@cache
def instrument_module(name: str) -> InstrumentedModule:
    """Rewrite the functions of the imported module ``name`` (once per process; install per run)."""
    module = sys.modules.get(name)
    filename = getattr(module, "__file__", None)
    if module is None or not filename:
        raise InstrumentError(f"module {name!r} is not imported, or has no source file")
    try:
        source = Path(filename).read_text(encoding="utf-8")
        tree = ast.parse(source, filename)
        table = symtable.symtable(source, filename, "exec")
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError) as error:
        raise InstrumentError(f"cannot read the source of module {name!r}: {error}") from None
    declared, stored = _rebound_names(tree)
    tracked = _module_level_assigned(tree) | declared
    rewritten = ast.fix_missing_locations(_Rewriter(table, tracked, stored).visit(tree))
    code = compile(rewritten, filename, "exec", dont_inherit=True)
    by_key: dict[tuple[str, int], list[types.CodeType]] = {}
    for rewritten_code in _all_codes(code):
        by_key.setdefault((rewritten_code.co_qualname, rewritten_code.co_firstlineno), []).append(rewritten_code)
    module.__dict__[RUNTIME_NAME] = ModuleRuntime(filename, name)
    swaps = []
    here = os.path.realpath(filename)
    for function in _functions_of(module):
        original = function.__code__
        if os.path.realpath(original.co_filename) != here:
            continue  # defined elsewhere (a dataclass's generated method, an imported helper)
        new = _twin(by_key, original, filename)
        if new is None or new.co_freevars != original.co_freevars:
            # Never run a module under test half instrumented: its unrecorded accesses would be a silent green.
            raise InstrumentError(
                f"cannot instrument {original.co_qualname} in {name} ({filename}): the source on "
                "disk no longer matches the code that was imported; re-run"
            )
        swaps.append((function, original, new))
    rewritten_functions = {id(function) for function, _original, _new in swaps}
    cached = [  # a getter left as it is takes no scheduling point the lab knows of: ModuleRuntime.ga records it
        (obj, _CachedGetter(obj, module.__dict__[RUNTIME_NAME]))
        for obj in _reachable(module)
        if isinstance(obj, functools.cached_property) and id(obj.func) in rewritten_functions and obj.attrname
    ]
    made = InstrumentedModule(name, filename, swaps, set(_all_codes(code)), by_key, cached)
    _rewritten_modules[name] = made
    return made


_NO_LOCK = contextlib.nullcontext()
"""What a cached property under test holds while its getter runs in a recorded run: nothing (reusable, reentrant)."""


class _CachedGetter:
    """What a ``functools.cached_property`` under test calls while the rewritten bodies are installed: its getter,
    then a record of the store ``cached_property.__get__`` makes of the result right after (no scheduling point
    between), in the step that makes it. (Recorded when the read began, the store would sit in a step before the
    getter's, and a store by another actor between the two would look independent of it.)"""

    records_its_store = True  # ModuleRuntime.ga: the store is recorded here, not at the read

    def __init__(self, descriptor: functools.cached_property[Any], runtime: ModuleRuntime) -> None:
        self.function: Callable[[Any], Any] = descriptor.func
        self.lock: Any = descriptor.__dict__.get("lock")  # Python 3.11's; 3.12 takes none
        self._name = descriptor.attrname or ""
        self._runtime = runtime
        self._line = getattr(getattr(self.function, "__code__", None), "co_firstlineno", 0)

    def __call__(self, instance: Any) -> Any:
        value = self.function(instance)
        self._runtime.stored(instance, self._name, self._line)
        return value


_BOOL_COMPARISONS = (ast.Is, ast.IsNot, ast.In, ast.NotIn)


def _always_bool(node: ast.expr) -> bool:
    """True for an expression whose value is a new ``True`` or ``False`` whatever its operands: ``not x``, a chain of
    ``is``/``in`` tests, and ``and``/``or`` of such. Read whole, such a value touches nothing (``rv`` would return at
    once), so the call is left out: a tenth of all the calls an explored run makes into the runtime."""
    if isinstance(node, ast.UnaryOp):
        return isinstance(node.op, ast.Not)
    if isinstance(node, ast.Compare):
        return all(isinstance(op, _BOOL_COMPARISONS) for op in node.ops)
    if isinstance(node, ast.BoolOp):
        return all(_always_bool(value) for value in node.values)
    return False


def instrumented_function(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` with its module's rewritten body, when that module is under test and already rewritten;
    otherwise ``function`` itself. For functions made before the rewritten bodies were installed (a lambda built
    inside a test), which keep the original code."""
    if not isinstance(function, types.FunctionType):
        return function
    module = _rewritten_modules.get(function.__module__)
    if module is None or function.__code__ in module.codes:
        return function
    twin = module.rewritten(function.__code__)
    if twin is None:
        return function
    copy = types.FunctionType(
        twin, function.__globals__, function.__name__, function.__defaults__, function.__closure__
    )
    copy.__kwdefaults__ = function.__kwdefaults__
    return copy


_rewritten_modules: dict[str, InstrumentedModule] = {}


def _twin(
    by_key: dict[tuple[str, int], list[types.CodeType]], code: types.CodeType, filename: str
) -> types.CodeType | None:
    """The rewritten code of ``code``: the one with its qualified name and first line; when several share those (two
    lambdas on one line), the one whose body starts at the same line and column (which the rewriting keeps)."""
    candidates = by_key.get((code.co_qualname, code.co_firstlineno), [])
    if len(candidates) <= 1:
        return candidates[0] if candidates else None
    start = _body_start(code)
    same = [candidate for candidate in candidates if _body_start(candidate) == start]
    if len(same) != 1:
        raise InstrumentError(
            f"cannot tell apart the functions {code.co_qualname} that start at "
            f"{filename}:{code.co_firstlineno}; put them on separate lines"
        )
    return same[0]


def _body_start(code: types.CodeType) -> tuple[int, int]:
    return next(
        (
            (line, column)
            for line, _end, column, _end_column in list(code.co_positions())[1:]
            if line is not None and column is not None and column > 0
        ),
        (0, 0),
    )


def _all_codes(code: types.CodeType) -> Iterator[types.CodeType]:
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _all_codes(const)


def _functions_of(module: types.ModuleType) -> Iterator[types.FunctionType]:
    """Every function of the module reachable from its namespace (see :func:`_reachable`), once each."""
    for obj in _reachable(module):
        if isinstance(obj, types.FunctionType) and obj.__module__ == module.__name__:
            yield obj


def _reachable(module: types.ModuleType) -> Iterator[object]:
    """Every object reached from the module's namespace through what defines or wraps code: functions at module
    level and in the module's classes (methods, properties, static and class methods, nested classes), and what a
    wrapper holds: a decorator's closure cells (with or without ``functools.wraps``), ``__wrapped__``, a
    ``functools.cached_property``, ``partial`` or ``partialmethod``, a bound method, an object of one of the
    module's classes. A function reached only through a wrapper still runs when the wrapper is called; left
    unrewritten, its accesses would go unrecorded. Functions of other modules met on the way are passed over by the
    caller (their file is not the module's); each object is yielded once."""
    seen: set[int] = set()
    stack: list[object] = list(vars(module).values())
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        yield obj
        if isinstance(obj, types.FunctionType):
            stack.extend(_cell_contents(obj.__closure__ or ()))
            wrapped = obj.__dict__.get("__wrapped__")
            if wrapped is not None:
                stack.append(wrapped)
        elif isinstance(obj, staticmethod | classmethod | types.MethodType):
            stack.append(obj.__func__)
        elif isinstance(obj, property):
            stack.extend(f for f in (obj.fget, obj.fset, obj.fdel) if f is not None)
        elif isinstance(obj, functools.cached_property | functools.partial | functools.partialmethod):
            stack.append(obj.func)
        elif isinstance(obj, type):
            if obj.__module__ == module.__name__:
                stack.extend(vars(obj).values())
        elif isinstance(obj, types.ModuleType):
            continue  # another module's namespace is its own to instrument
        elif type(obj).__module__ == module.__name__ or "__wrapped__" in _own_attributes(obj):
            stack.extend(_own_attributes(obj).values())  # a callable object made by a decorator, say


def _cell_contents(cells: tuple[types.CellType, ...]) -> Iterator[object]:
    for cell in cells:
        with contextlib.suppress(ValueError):  # an empty cell
            yield cell.cell_contents


def _own_attributes(obj: object) -> dict[str, object]:
    """``obj``'s instance dict, read without running any of its code (empty when it has none)."""
    try:
        attributes = object.__getattribute__(obj, "__dict__")
    except (AttributeError, TypeError):
        return {}
    return attributes if type(attributes) is dict else {}
