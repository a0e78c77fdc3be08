"""Boundary examples: each sits exactly on a comparison of the model or a policy, where
``<`` and ``<=`` (or ``>`` and ``>=``) give different answers.  A single-point mutation of
that comparison fails the test named after it."""

from __future__ import annotations

from compact_dp.core.decision import decide_conversation
from compact_dp.core.models import get_model
from compact_dp.core.params import awk_values

from . import reference
from .conftest import AGENT_VALUES, scan_stream


def user_lines(n: int, size_bytes: int) -> list[bytes]:
    return [b'{"role":"user","content":"' + b"x" * size_bytes + b'"}'] * n


def test_v42_minimum_kept_size_is_strict():
    """v4.2 refuses a cut whose kept tokens are *below* 20 × S: exactly 20 × S passes.
    (41 user lines of 105 tokens, S = 27: the cut keeps 5 lines = 540 = 20 × 27 tokens.)"""
    lines = user_lines(41, 400)
    given = dict(AGENT_VALUES, S="27")
    d = decide_conversation(awk_values(given), scan_stream(lines), get_model("v4.2"))
    assert d.kept_tokens == 20 * 27 and d.guard is None
    assert d.keep == reference.decide(lines, given, "v4.2") == 5


def test_v42_quality_gate_is_strict():
    """v4.2 counts ⑤ only when T > 0.30 M: at T = 0.30 M exactly (T = 3,000, M = 10,000,
    and 10,000 × 0.30 is 3,000.0 in doubles) ⑤ is 0 for every k."""
    lines = user_lines(30, 365)                      # 30 lines of 100 tokens: T = 3,000
    given = dict(AGENT_VALUES, max_context="10000")
    assert 10000 * 0.30 == 3000.0
    d = decide_conversation(awk_values(given), scan_stream(lines), get_model("v4.2"))
    assert d.total_tokens == 3000 and d.terms is not None and d.terms.quality == 0.0
    rows = reference.explain(lines, given, "v4.2")[3]["rows"]
    assert all(row["quality"] == 0 for row in rows)
    assert (d.best_k, d.best_benefit) == reference.explain(lines, given, "v4.2")[1:3]


def test_threshold_policy_compacts_at_the_threshold(tmp_path):
    """threshold:P compacts when the next request *reaches* P % of the window: with V = 100
    and 50 context tokens the input is 150 = 50 % of 300 exactly."""
    from .test_replay import replay, session_file

    path = session_file(tmp_path, [("user", 10), ("assistant", 20), ("user", 20),
                                   ("assistant", 20)])
    _, (run,) = replay(path, ["threshold:50"], max_context=300, keep_tokens=5)
    assert [c.before for c in run.compactions] == [1]


def test_replay_dp_policy_sees_the_requests_so_far(monkeypatch, tmp_path):
    """Before each request the dp policy sees t = user messages so far and
    total_requests = the requests before it — not one more."""
    import compact_dp.replaying.policies as simulate_module

    from .test_replay import replay, session_file

    seen = []
    original = simulate_module.answer

    def spy(ask, conv):
        seen.append((ask.values["t"].num, ask.values["total_requests"].num))
        return original(ask, conv)
    monkeypatch.setattr(simulate_module, "answer", spy)
    path = session_file(tmp_path, [("user", 10), ("assistant", 20), ("tool", 30),
                                   ("assistant", 40), ("user", 10), ("assistant", 20)])
    replay(path, ["dp"])
    assert seen == [(1, 0), (1, 1), (2, 2)]
