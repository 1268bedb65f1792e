"""No function of the package is over 60 code lines (issue 29: a room holds one concern).

Code lines: from the first decorator to the last line of the body, leaving out the docstring,
blank lines and lines holding only a comment; a nested function counts inside its enclosing one
too.  Tests are not counted.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("implicitbias", "theory", "numerics", "validation")
LIMIT = 60


def code_lines(lines: list[str], node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    first = node.body[0]
    docstring = set()
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        docstring = set(range(first.lineno, first.end_lineno + 1))
    start = min([d.lineno for d in node.decorator_list] + [node.lineno])
    return sum(1 for i in range(start, node.end_lineno + 1)
               if i not in docstring and lines[i - 1].strip() and not lines[i - 1].strip().startswith("#"))


def functions():
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            source = path.read_text()
            lines = source.splitlines()
            for node in ast.walk(ast.parse(source)):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    yield f"{path.relative_to(ROOT)}:{node.lineno} {node.name}", code_lines(lines, node)


def test_no_function_is_over_the_limit():
    long = {name: n for name, n in functions() if n > LIMIT}
    assert not long, long


@pytest.mark.parametrize("body, expected", [
    ('def f():\n    """Doc\n    string."""\n    # a comment\n\n    return 1\n', 2),
    ("@decorator\ndef f(\n    a,\n):\n    x = a  # trailing comment counts\n    return x\n", 6),
    ("def f():\n    def g():\n        return 1\n    return g\n", 4),
])
def test_code_lines_leave_out_the_docstring_blanks_and_comments(body, expected):
    node = ast.parse(body).body[0]
    assert code_lines(body.splitlines(), node) == expected
