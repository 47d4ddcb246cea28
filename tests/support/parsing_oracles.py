"""Readings the parser used to make, kept as oracles for the tests of what replaced them."""

from __future__ import annotations

import ast


def program_by_its_statements(module: ast.AST | None) -> bool:
    """``is_program``'s old verdict on a fence body already parsed as statements: a program
    unless every statement is data (a docstring, a literal) or calls (``return f(x)`` counts)."""
    if not isinstance(module, ast.Module):
        return False
    for statement in module.body:
        value = statement.value if isinstance(statement, (ast.Expr, ast.Return)) else None
        if isinstance(statement, ast.Expr) and isinstance(value, (ast.Constant, ast.List, ast.Tuple, ast.Dict, ast.Set)):
            continue
        if not isinstance(value, (ast.Call, ast.List, ast.Tuple, ast.Await)):
            return True
    return False
