"""Each rule once (docs/house.md): the homes a machine can check.

Each test walks the package's syntax trees and fails on a second copy of one rule: a second
median, a "$" written outside ``views/words``, an OSError put in words without
``errors.os_reason``, and so on.  A copy that slips past these is still a copy; these only
catch the spellings the copies had.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from compact_dp.core.middle import median, upper_middle

PACKAGE = Path(__file__).resolve().parent.parent / "compact_dp"


def trees() -> list[tuple[str, ast.Module]]:
    return [(p.relative_to(PACKAGE).as_posix(), ast.parse(p.read_text()))
            for p in sorted(PACKAGE.rglob("*.py"))]


def found(test, outside: set[str]) -> list[str]:
    """``module:line`` of every node ``test`` accepts, in modules other than ``outside``."""
    return [f"{name}:{node.lineno}" for name, tree in trees() if name not in outside
            for node in ast.walk(tree) if test(node)]


def ends(node: ast.AST, *names: str) -> bool:
    """A name or attribute spelled one of ``names`` (``x.seen``, ``READ``)."""
    return isinstance(node, ast.Name) and node.id in names or \
        isinstance(node, ast.Attribute) and node.attr in names


def test_the_hold_back_margin_is_defined_in_agents_only():
    def margin(node: ast.AST) -> bool:
        return isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and \
            any(isinstance(t, ast.Name) and ("MARGIN" in t.id or "SAFETY_PERCENT" in t.id)
                for t in node.targets)
    assert found(margin, {"agents.py"}) == []
    assert [f for f in found(margin, set()) if f.startswith("agents.py:")]


def test_medians_live_in_core_middle():
    """No other module defines a median or takes the middle of a sorted list by hand."""
    def defines(node: ast.AST) -> bool:
        return isinstance(node, ast.FunctionDef) and "median" in node.name or \
            isinstance(node, ast.FunctionDef) and "middle" in node.name

    def by_hand(node: ast.AST) -> bool:          # xs[len(xs) // 2]
        return isinstance(node, ast.Subscript) and isinstance(node.slice, ast.BinOp) and \
            isinstance(node.slice.op, ast.FloorDiv) and \
            isinstance(node.slice.left, ast.Call) and ends(node.slice.left.func, "len") and \
            isinstance(node.slice.right, ast.Constant) and node.slice.right.value == 2
    assert found(defines, {"core/middle.py"}) == []
    assert found(by_hand, {"core/middle.py"}) == []


def test_the_medians_average_or_take_the_upper_middle():
    assert median([4, 1, 3, 2]) == 2.5 and median([3, 1, 2]) == 2.0 and median([]) is None
    assert upper_middle([4, 1, 3, 2]) == 3 and upper_middle([3, 1, 2]) == 2
    assert upper_middle([]) is None and isinstance(upper_middle([1, 2]), int)


# a price per million tokens is not a dollar amount: --explain's "writes $3.75/MTok"
PRICES = {"views/explain.py"}


def test_dollars_are_written_in_views_words_only():
    """Every f-string that writes "$" before a value is in views/words (dollars, money)."""
    def writes_dollars(node: ast.AST) -> bool:
        if not isinstance(node, ast.JoinedStr):
            return False
        parts = node.values
        return any(isinstance(a, ast.Constant) and str(a.value).endswith("$") and
                   isinstance(b, ast.FormattedValue) for a, b in zip(parts, parts[1:]))
    assert found(writes_dollars, {"views/words.py"} | PRICES) == []
    assert found(writes_dollars, {"views/words.py"}) and \
        all(f.startswith("views/explain.py:") for f in found(writes_dollars, {"views/words.py"}))


def test_an_oserror_is_put_in_words_by_errors_os_reason_only():
    def strerror(node: ast.AST) -> bool:
        return isinstance(node, ast.Attribute) and node.attr == "strerror"
    assert found(strerror, {"errors.py"}) == []


def test_the_write_price_and_the_cold_rewrite_are_computed_once():
    """p_write else p_input is Derived.write_price; (V + T) × (write − read) is
    search.cold_rewrite."""
    def write_price(node: ast.AST) -> bool:
        return isinstance(node, ast.IfExp) and isinstance(node.test, ast.Compare) and \
            ends(node.test.left, "p_write")

    def rewrite(node: ast.AST) -> bool:           # (d.V + d.T) * ...
        return isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult) and \
            isinstance(node.left, ast.BinOp) and isinstance(node.left.op, ast.Add) and \
            ends(node.left.left, "V") and ends(node.left.right, "T")
    assert found(write_price, {"core/quantities.py"}) == []
    assert found(rewrite, {"core/search.py"}) == []


def test_a_prompt_and_the_messages_a_request_saw_are_counted_in_sessions_session():
    """input + writes + reads is session.prompt_of; max(request.seen, done) is
    session.seen_after."""
    def prompt(node: ast.AST) -> bool:
        if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add)):
            return False
        terms = [n.slice if isinstance(n, ast.Subscript) else n for n in ast.walk(node)]
        return any(ends(t, "write_5m", "WRITE_5M") for t in terms) and \
            any(ends(t, "read", "READ") for t in terms)

    def seen(node: ast.AST) -> bool:
        return isinstance(node, ast.Call) and ends(node.func, "max") and \
            any(isinstance(a, ast.Attribute) and a.attr == "seen" for a in node.args)
    assert found(prompt, {"sessions/session.py"}) == []
    assert found(seen, {"sessions/session.py"}) == []


def test_a_sessions_ttl_from_its_writes_is_chosen_in_sessions_session():
    """"1h" if … else "5m" (1 hour where the 1-hour writes are the larger part) is
    session.write_ttl, which the recorder and the world both call."""
    def choice(node: ast.AST) -> bool:
        return isinstance(node, ast.IfExp) and isinstance(node.body, ast.Constant) and \
            node.body.value == "1h" and isinstance(node.orelse, ast.Constant) and \
            node.orelse.value == "5m"
    assert found(choice, {"sessions/session.py"}) == []


REPLAY = {"replaying/simulate.py", "replaying/policies.py", "replaying/hindsight.py",
          "replaying/backtest.py"}


@pytest.mark.parametrize("module", sorted(REPLAY))
def test_the_compaction_points_are_named_by_agents_constants(module):
    """No ``kind == "turn"`` and no ``(index, "recorded")`` in replay: agents.TURN, ...
    (``spec == "recorded"`` names a policy, not a point.)"""
    def literal(node: ast.AST) -> bool:
        if isinstance(node, ast.Compare):
            parts, points = [node.left, *node.comparators], {"request", "turn"}
        elif isinstance(node, ast.Tuple):
            parts, points = list(node.elts), {"request", "turn", "recorded"}
        else:
            return False
        return any(isinstance(p, ast.Constant) and p.value in points for p in parts)
    tree = dict(trees())[module]
    assert [n.lineno for n in ast.walk(tree) if literal(n)] == []
