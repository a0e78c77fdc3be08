"""replay: hand-computed tiny sessions, the billing model on its own, the dp policy against
the plain transcription, the SVG picture, and the command line."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from compact_dp.core.models import get_model
from compact_dp.core.params import native_values
from compact_dp.replay.simulate import (Prices, make_policy, request_cost, simulate,
                                        summary_cost, load_session)
from compact_dp.replay.svg import plot_svg

from . import reference
from .conftest import INPUTS, run_cli, run_main

V307 = get_model("v3.0.7")

PRICES = Prices(V=100, S=10, p_input=1.0, p_cache=0.1, p_out=2.0)   # $/MTok


def line(role: str, tokens: int) -> bytes:
    """A JSON line of exactly ``tokens`` tokens: 4 (tokens − 1) bytes."""
    head = {"user": b'{"role":"user","content":"',
            "tool": b'{"role":"user","content":[{"type":"tool_result","content":"',
            "assistant": b'{"role":"assistant","content":[{"type":"text","text":"'}[role]
    tail = b'"}' if role == "user" else b'"}]}'
    pad = 4 * (tokens - 1) - len(head) - len(tail)
    assert pad >= 0
    data = head + b"x" * pad + tail
    assert (len(data) + 3) // 4 + 1 == tokens
    return data


def session_file(tmp_path, spec: list[tuple[str, int]]):
    f = tmp_path / "session.jsonl"
    f.write_bytes(b"".join(line(r, t) + b"\n" for r, t in spec))
    return f


def values(**given):
    return native_values({k: str(v) for k, v in given.items()}, {})


def test_a_tiny_session_without_compaction_by_hand(tmp_path):
    """user 10, assistant 20, tool 30, assistant 40; V = 100, prices 1 / 0.1 / 2 $/MTok.

    call 1: input 100 + 10 = 110, nothing cached:          110 × 1 + 20 × 2 = 150
    call 2: input 100 + 60 = 160, 110 cached, 50 uncached:  11 + 50 + 40 × 2 = 141
    """
    session = load_session(str(session_file(tmp_path, [("user", 10), ("assistant", 20),
                                                        ("tool", 30), ("assistant", 40)])))
    run = simulate(session, make_policy("never", values(max_context=1000), V307, 0),
                   PRICES)
    assert [(r.input, r.cached, r.uncached, r.output) for r in run.requests] == \
        [(110, 0, 110, 20), (160, 110, 50, 40)]
    assert run.total_cost == pytest.approx(291e-6, abs=1e-15)
    assert run.compactions == [] and run.cache_hit_share == pytest.approx(110 / 270)
    assert run.peak_context == 160 and run.mean_context == 135


def test_a_tiny_session_with_one_compaction_by_hand(tmp_path):
    """threshold:50 of a 300-token window, keeping the last 30 tokens.

    Call 1 as above (150).  Before call 2 the input would be 160 ≥ 150, so keep the last
    30 tokens: line 3.  If line 3 is a tool result the cut must grow back to a user line,
    line 1, which keeps everything: no compaction.  If it is a user message, lines 1–2
    (30 tokens) are summarised: (100 + 30) × 0.1 + 70 × 1 + 10 × 2 = 103, and call 2
    sends prefix 110 + context 30 = 140 with only V = 100 cached: 10 + 40 + 80 = 130.
    """
    policy = make_policy("threshold:50", values(max_context=300), V307, 30)
    tool = load_session(str(session_file(tmp_path, [("user", 10), ("assistant", 20),
                                                     ("tool", 30), ("assistant", 40)])))
    assert simulate(tool, policy, PRICES).compactions == []
    user = load_session(str(session_file(tmp_path, [("user", 10), ("assistant", 20),
                                                     ("user", 30), ("assistant", 40)])))
    run = simulate(user, policy, PRICES)
    assert [(c.request, c.dropped_lines, c.dropped_tokens, c.kept_lines)
            for c in run.compactions] == [(1, 2, 30, 1)]
    assert run.summary_cost == pytest.approx(103e-6, abs=1e-15)
    assert [(r.input, r.cached, r.uncached) for r in run.requests] == \
        [(110, 0, 110), (140, 100, 40)]
    assert run.total_cost == pytest.approx((150 + 130 + 103) * 1e-6, abs=1e-15)


def test_never_compacts_only_past_the_window(tmp_path):
    spec = [("user", 10), ("assistant", 20)] * 6
    session = load_session(str(session_file(tmp_path, spec)))
    run = simulate(session, make_policy("never", values(max_context=250, min_keep_ratio=0.5),
                                        V307, 0), PRICES)
    # inputs 110, 140, 170, 200, 230, 260 > 250 → compact before call 6 (turn-keep: 3 of
    # 6 user turns → keep the last 5 lines)
    assert [(c.request, c.kept_lines, c.forced) for c in run.compactions] == [(5, 5, True)]
    assert all(r.input <= 250 for r in run.requests)


def test_billing_on_its_own():
    assert request_cost(PRICES, cached=1000, uncached=500, output=200) == \
        pytest.approx((1000 * 0.1 + 500 * 1 + 200 * 2) / 1e6)
    assert summary_cost(PRICES, 900) == pytest.approx(((100 + 900) * 0.1 + 70 + 20) / 1e6)


def test_billing_does_not_use_the_decision_formula(monkeypatch, tmp_path):
    """The never/threshold replays run with the decision's terms made unusable."""
    import compact_dp.core.search as search

    def broken(*a, **k):
        raise AssertionError("billing used the decision formula")
    monkeypatch.setattr(search.BenefitCurve, "__call__", broken)
    monkeypatch.setattr(search.BenefitCurve, "terms", broken)
    session = load_session(str(INPUTS / "syn_150.jsonl"))
    for spec in ("never", "threshold:60"):
        run = simulate(session, make_policy(spec, values(max_context=20000), V307, 5000),
                       Prices.from_values(values()))
        assert run.requests


def replay_dp_kept(lines: list[bytes], v: dict) -> list[int]:
    """The dp policy from the plain transcription: the kept lines at each compaction
    (stats as replay defines them: t, assistant replies, compactions, billed input)."""
    V, S = v["V"].num, v["S"].num
    conv: list[bytes] = []
    t = requests = compactions = total_input = last_input = 0
    summary = False
    kept = []
    for x in lines:
        conv.append(x)
        if reference.is_user(x, "v3.0.7"):
            t += 1
        if b'"role":"assistant"' in x:
            requests += 1
            continue
        w = {name: repr(x.num) for name, x in v.items()}
        for name, val in (("t", t), ("total_requests", requests),
                          ("total_compact", compactions), ("total_input", total_input)):
            w[name] = repr(val)
        keep = reference.decide(conv, w, "v3.0.7")
        keep, status = reference.policy(conv, keep, "auto", last_input, v["max_context"].num,
                                        v["min_keep_ratio"].num)
        if status == 0:
            kept.append(keep)
            conv = conv[len(conv) - keep:] if keep else []
            compactions += 1
            summary = True
        last_input = V + (S if summary else 0) + sum(reference.size(y) for y in conv)
        total_input += last_input
    return kept


@pytest.mark.parametrize("name, window", [("syn_400.jsonl", 200000),
                                          ("syn_900.jsonl", 30000),
                                          ("syn_150.jsonl", 60000)])
def test_dp_policy_compacts_where_the_spec_says(name, window):
    """Replay's dp policy, step by step, against the plain transcription of the model and the policy."""
    v = values(max_context=window)
    lines = reference.records((INPUTS / name).read_bytes())
    run = simulate(load_session(str(INPUTS / name)), make_policy("dp", v, V307, 0),
                   Prices.from_values(v))
    want = replay_dp_kept(lines, v)
    assert [c.kept_lines for c in run.compactions] == want
    assert want, "the session should compact"


# --- the picture -----------------------------------------------------------------------------

def test_svg_has_one_path_per_policy_and_a_point_per_compaction():
    v = values(max_context=40000)
    session = load_session(str(INPUTS / "syn_150.jsonl"))
    runs = [simulate(session, make_policy(p, v, V307, 20000), Prices.from_values(v))
            for p in ("dp", "never", "threshold:80")]
    root = ET.fromstring(plot_svg("syn_150", runs))
    ns = {"s": "http://www.w3.org/2000/svg"}
    paths = root.findall(".//s:path[@class='policy']", ns)
    assert [p.get("data-policy") for p in paths] == ["dp", "never", "threshold:80"]
    for run, path in zip(runs, paths):
        points = path.get("d")[2:].split(" L ")
        assert len(points) == len(run.requests)
        circles = root.findall(f".//s:circle[@data-policy='{run.policy}']", ns)
        assert len(circles) == len(run.compactions)
        for c, circle in zip(run.compactions, circles):
            assert (circle.get("cx"), circle.get("cy")) == tuple(points[c.request].split())
    assert sum(len(r.compactions) for r in runs) >= 3
    texts = [t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert "LLM request" in texts and "input tokens per request" in texts


# --- the command line --------------------------------------------------------------------------

def test_replay_prints_a_table_and_a_picture_per_session():
    p = run_cli("replay", "--max-context", "40000", str(INPUTS / "syn_150.jsonl"),
                env=None)
    text = p.stdout.decode()
    assert p.returncode == 0
    for policy in ("dp", "never", "threshold:80"):
        assert policy in text
    assert "▲" in text and "total $" in text


def test_replay_json_many_sessions_in_parallel_with_a_total(tmp_path):
    files = [str(INPUTS / n) for n in ("syn_40.jsonl", "syn_150.jsonl", "syn_400.jsonl")]
    plot = tmp_path / "ctx.svg"
    serial = json.loads(run_cli("replay", "--json", "--max-context", "30000", *files).stdout)
    p = run_cli("replay", "--json", "--jobs", "3", "--max-context", "30000",
                "--plot", str(plot), *files)
    assert p.returncode == 0
    parallel = json.loads(p.stdout)
    assert parallel == serial
    assert [s["session"] for s in parallel["sessions"]] == files
    total = {t["policy"]: t for t in parallel["total"]}
    for policy in ("dp", "never", "threshold:80"):
        per = [next(x for x in s["policies"] if x["policy"] == policy)
               for s in parallel["sessions"]]
        assert total[policy]["compactions"] == sum(x["compactions"] for x in per)
        assert total[policy]["total_cost"] == pytest.approx(sum(x["total_cost"] for x in per))
    assert plot.exists() and (tmp_path / "ctx-2.svg").exists() and \
        (tmp_path / "ctx-3.svg").exists()


@pytest.mark.parametrize("args, words", [
    (["replay", "--policy", "sometimes", "x.jsonl"], ["unknown policy"]),
    (["replay", "--policy", "threshold:120", str(INPUTS / "syn_12.jsonl")], ["threshold"]),
    (["replay", "missing.jsonl"], ["missing.jsonl"]),
    (["replay", str(INPUTS)], ["directory"]),
    (["replay"], ["FILE"]),
    (["replay", "--keep-tokens", "lots", str(INPUTS / "syn_12.jsonl")], ["--keep-tokens"]),
    (["replay", "--jobs", "0", str(INPUTS / "syn_12.jsonl")], ["--jobs"]),
    (["replay", "--jobs", "abc", str(INPUTS / "syn_12.jsonl")], ["--jobs: 'abc' is not a number"]),
    (["replay", "--max-context", "0", str(INPUTS / "syn_12.jsonl")], ["--max-context", "> 0"]),
    (["replay", "--plot", "out.png", str(INPUTS / "syn_12.jsonl")], ["--plot", ".svg"]),
    (["replay", "--plot", "-", str(INPUTS / "syn_12.jsonl")], ["--plot", ".svg"]),
    (["replay", "--model", "turn-keep", str(INPUTS / "syn_12.jsonl")], ["cost model"]),
])
def test_replay_errors(args, words, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = run_main(*args)
    assert r.status == 2 and r.out == "" and "Traceback" not in r.err
    assert len(r.err.strip().splitlines()) == 1
    for w in words:
        assert w in r.err
    assert list(tmp_path.iterdir()) == []            # no '-' or out.png written


def test_svg_of_a_one_request_session_draws_it_with_whole_ticks(tmp_path):
    """One request: a visible dot per policy, and the x axis counts whole requests."""
    f = session_file(tmp_path, [("user", 10), ("assistant", 20)])
    session = load_session(str(f))
    v = values()
    runs = [simulate(session, make_policy(p, v, V307, 20000), Prices.from_values(v))
            for p in ("dp", "never")]
    root = ET.fromstring(plot_svg("one", runs))
    ns = {"s": "http://www.w3.org/2000/svg"}
    assert len(root.findall(".//s:circle[@class='point']", ns)) == 2
    ticks = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")
             if t.get("text-anchor") == "middle" and (t.text or "").isdigit()]
    assert ticks == sorted(set(ticks), key=int) and ticks[0] == "1"
