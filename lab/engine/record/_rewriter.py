"""Rewrite the modules under test so that every access to shared state is recorded as it happens.

Why rewriting, and not tracing: a trace hook (``sys.settrace`` line or opcode events, ``sys.monitoring``) says
*where* the code is, not *which object* an instruction touches -- the operands live on the value stack, which
Python does not expose. Guessing them from the source text (``self.<name>``) is what made the old footprints blind
to globals, closures, containers passed as arguments, nested objects and helpers in other modules. So the lab does
what pytest does for ``assert``: it parses each module under test, rewrites the bodies of its functions so that
attribute and subscript accesses, global and closure-variable accesses and calls go through
:class:`lab.engine.record._runtime.ModuleRuntime`, compiles the result with the module's own file name and line
numbers, and swaps the new code objects into the module's existing functions (``function.__code__``) for the
duration of a run (:mod:`lab.engine.record._install`). Classes, instances and imports stay exactly the ones the
program already holds; only the bodies change, and outside a recorded run the rewritten code behaves like the
original.

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
step that performs it. This module holds the rules for statements, the last of the rewriter's layers.
"""

from __future__ import annotations

import ast

from lab.engine.record._rewrite_base import OPS
from lab.engine.record._rewrite_expressions import ExpressionRewriter
from lab.engine.record._syntax import captured_names, flat_targets, imported_name


class Rewriter(ExpressionRewriter):
    """The whole rewriter: the rules for statements, over those for expressions and scopes."""

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
        op = ast.Constant(OPS[type(node.op)])
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
            node.targets = [self._target(t, deleted=True) for t in node.targets]
            return node
        # ``del a, g`` deletes left to right: one statement per target, a shared name's recorded right before
        out: list[ast.stmt] = []
        for target in flat_targets(node.targets):
            if isinstance(target, ast.Name) and self._binds_shared_name(target):
                record = self._wrap_name_store(target, ast.Constant(None))
                out.append(ast.copy_location(ast.Expr(record), target))
            else:
                target = self._target(target, deleted=True)
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
        bound = [imported_name(alias) for alias in node.names]
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
        captured = [name for name in captured_names(node.pattern) if self._name_kind(name)[0]]
        if not captured:
            return node
        # a pattern that matches stores its captures, then runs the guard: record them first thing in the guard
        guard = node.guard if node.guard is not None else ast.Constant(True)
        records = self._name_records(captured, node.pattern)  # each returns None: ``or`` goes on to the next
        node.guard = ast.copy_location(ast.BoolOp(ast.Or(), [*records, guard]), node.pattern)
        return node
