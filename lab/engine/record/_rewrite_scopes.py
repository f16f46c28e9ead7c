"""The rewriting rules for scopes: functions, lambdas, classes and comprehensions.

Each opens a scope the rewriter must know the names of (a global, a shared closure cell, a comprehension's inlined
variables on Python 3.12), and a ``def`` or ``class`` inside a function is itself a store of a name.
"""

from __future__ import annotations

import ast

from lab.engine.record._rewrite_base import RewriterBase


class ScopeRewriter(RewriterBase):
    """The rules for what opens a scope."""

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
