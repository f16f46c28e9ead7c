"""The rewriting rules for expressions: attribute and subscript reads, names, calls, and the values an operator
reads whole or deeply.

Every recording call runs immediately before the access it describes, after its operands were evaluated, so that at
instruction granularity the scheduling point falls right before the access.
"""

from __future__ import annotations

import ast

from lab.engine.record._rewrite_base import KEEP_CALLS, RUNTIME_NAME
from lab.engine.record._rewrite_scopes import ScopeRewriter


class ExpressionRewriter(ScopeRewriter):
    """The rules for expressions."""

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
        if isinstance(node.func, ast.Name) and node.func.id in KEEP_CALLS:
            node.args = [self.visit(a) for a in node.args]
            node.keywords = [self.visit(k) for k in node.keywords]
            plain = node.args and not node.keywords and not any(isinstance(a, ast.Starred) for a in node.args)
            if node.func.id in ("eval", "exec") and plain:
                # eval(*rt.ex(line, source, ...)): still called from this frame (its globals and locals when none
                # are given), with what the code it runs can reach charged first
                node.args = [ast.Starred(self._rt("ex", node, self._line(node), *node.args), ast.Load())]
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
