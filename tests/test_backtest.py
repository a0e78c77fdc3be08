"""compact-dp backtest (docs/backtest.md): what the advice said at each point beside what
happened, scored; checked on hand-made sessions whose future the test knows."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from .conftest import INPUTS, ROOT, run_main
from .session_fixtures import claude_turns, codex_lines

EXAMPLES = ROOT / "examples"


# --- bad input ----------------------------------------------------------------------------------

def one_error_line(r, *words: str) -> str:
    assert r.status == 2 and not r.out
    lines = r.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("compact-dp: error: "), r.err
    for w in words:
        assert w in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("name, data, words", [
    ("garbage.jsonl", b"garbage\n", ["not a session"]),
    ("chat.json", (EXAMPLES / "openai-chat.json").read_bytes(), ["recorded usage"]),
    ("bash.jsonl", (INPUTS / "syn_40.jsonl").read_bytes(), ["recorded usage"]),
])
def test_a_file_named_that_backtest_cannot_measure_is_one_error_line(name, data, words,
                                                                     tmp_path):
    f = tmp_path / name
    f.write_bytes(data)
    line = one_error_line(run_main("backtest", str(f), str(EXAMPLES / "codex.jsonl")),
                          *words)
    assert line.count(str(f)) == 1


@pytest.mark.parametrize("args, words", [
    (["/nonexistent/session.jsonl"], ["cannot open", "/nonexistent/session.jsonl"]),
    (["-"], ["standard input"]),
    (["--every", "0", str(EXAMPLES / "codex.jsonl")], ["--every"]),
    (["--every", "ten", str(EXAMPLES / "codex.jsonl")], ["--every"]),
    (["--jobs", "0", str(EXAMPLES / "codex.jsonl")], ["--jobs"]),
    (["--every=", str(EXAMPLES / "codex.jsonl")], ["--every"]),
])
def test_bad_input_is_one_error_line_and_exit_2(args, words):
    one_error_line(run_main("backtest", *args), *words)


def test_in_a_folder_what_cannot_be_measured_is_skipped_with_a_line_each(tmp_path):
    (tmp_path / "codex.jsonl").write_bytes((EXAMPLES / "codex.jsonl").read_bytes())
    (tmp_path / "chat.json").write_bytes((EXAMPLES / "openai-chat.json").read_bytes())
    (tmp_path / "notes.jsonl").write_bytes(b"garbage\n")
    r = run_main("backtest", "--json", str(tmp_path))
    assert r.status == 0
    skipped = {Path(s["session"]).name: s["error"] for s in json.loads(r.out)["skipped"]}
    assert set(skipped) == {"chat.json", "notes.jsonl"}
    assert "recorded usage" in skipped["chat.json"]
    lines = r.err.splitlines()
    assert sorted(lines) == [f"compact-dp: warning: skipped {tmp_path}/chat.json: backtest "
                             "needs a Claude Code or Codex session with recorded usage",
                             f"compact-dp: warning: skipped {tmp_path}/notes.jsonl: not a "
                             "session in a known format (bash-agent, claude-code, codex, "
                             "openai); --format bash-agent reads any text as bash-agent "
                             "lines"]


def test_a_folder_with_nothing_to_measure_is_one_error_line(tmp_path):
    (tmp_path / "chat.json").write_bytes((EXAMPLES / "openai-chat.json").read_bytes())
    (tmp_path / "notes.jsonl").write_bytes(b"garbage\n")
    one_error_line(run_main("backtest", str(tmp_path)), "no session to backtest", "2 files")


# --- hand-made sessions whose future the test knows -----------------------------------------
#
# claude_turns: every prompt read whole from the cache the last one wrote, 2 s apart, nothing
# uncached.  The test profile makes R = 10 (j + 1)^0.5 and says what a compaction leaves: V +
# 2,000 tokens, 4,000 of them cached, after a summary of 1,000.

READ, WRITE, OUT = 0.5, 6.25, 25.0          # claude-opus-4-6, $/MTok (docs/pricing.md)
LEFT_EXTRA, LEFT_CACHED, SUMMARY = 2000.0, 4000.0, 1000.0
A_TURNS = [3, 5, 7, 9, 11]                  # turn ends at j = 3, 8, 15, 24: R = 20 … 50


@pytest.fixture(autouse=True)
def fresh_profiles(monkeypatch):
    from compact_dp.calibration import profile
    monkeypatch.setattr(profile, "_CACHE", {})


@pytest.fixture
def env(tmp_path) -> dict[str, str]:
    path = tmp_path / "profile.json"
    path.write_text(json.dumps({
        "profile_version": 1, "source": "a test profile", "exponent": 0.5,
        "end_chance": [-1.0, -0.5, 0.25],
        "agents": {"*": {"level": 10.0},
                   "claude-code": {"level": 10.0, "summary_tokens": SUMMARY,
                                   "after_extra": LEFT_EXTRA, "after_cached": LEFT_CACHED}}}))
    return {"COMPACT_DP_PROFILE": str(path)}


def test_the_prices_are_the_tables():
    from compact_dp.pricing.table import find
    p = find("claude-opus-4-6")
    assert (p.cache_read, p.write("5m"), p.output) == (READ, WRITE, OUT)


class Known:
    """A hand-made session, written to a file, and what the test knows of its future."""

    def __init__(self, tmp_path: Path, turns: list[int], grow: int, name: str):
        from compact_dp.sessions.read import read_session
        self.builder = claude_turns(turns, grow=grow, ids=name)    # its own requests
        self.path = tmp_path / name
        self.path.write_bytes(self.builder.text())
        self.turns = turns
        self.prompts = [r["prompt"] for r in self.builder.requests]
        self.n = len(self.prompts)
        read = read_session([str(self.path)])      # the reader's message sizes
        self.tokens, self.kinds = read.tokens, read.kinds
        self.seen = [r.seen for r in read.requests]
        self.V = read.segment_prefixes[0]

    def turn_ends(self) -> list[int]:
        return [sum(self.turns[:t]) for t in range(1, len(self.turns))]

    def points(self, every: int | None = None) -> list[tuple[int, str]]:
        ends = self.turn_ends()
        extra = [j for j in range(1, self.n) if every and j % every == 0 and j not in ends]
        return sorted([(j, "turn") for j in ends] + [(j, "request") for j in extra])

    def context(self, j: int, kind: str) -> int:
        """The context when the agent would compact: before the turn's human message, or
        everything the request is about to send."""
        if kind == "turn":
            users = [i for i, k in enumerate(self.kinds) if k == "user"]
            return sum(self.tokens[:users[self.turn_ends().index(j) + 1]])
        return sum(self.tokens[:self.seen[j]])

    def realized(self, j: int, kind: str) -> float:
        """What compacting once before request j saves, billed by hand: the summary request
        reads what the last prompt cached and writes the rest and its 70-token
        instruction; request j reads the 4,000 cached tokens of what the compaction left;
        every later request sends D = V + context − left fewer tokens, read from the cache."""
        p, ctx = self.prompts, self.context(j, kind)
        left = self.V + LEFT_EXTRA
        D = self.V + ctx - left

        def cost(prompt: float, read: float) -> float:
            return (read * READ + (prompt - read) * WRITE) / 1e6
        summary_prompt = self.V + ctx + 70
        summary = cost(summary_prompt, min(p[j - 1], summary_prompt)) + SUMMARY * OUT / 1e6
        after = p[j] - D
        saved = cost(p[j], p[j - 1]) - cost(after, min(LEFT_CACHED, after))
        saved += (self.n - 1 - j) * D * READ / 1e6
        return saved - summary

    def recorded_input_cost(self) -> float:
        p = self.prompts
        return (p[0] * WRITE + sum(p[i - 1] * READ + (p[i] - p[i - 1]) * WRITE
                                   for i in range(1, self.n))) / 1e6

    def said(self, j: int, kind: str, env: dict, time: float) -> dict:
        """The decision on the transcript as it stood: the lines before the turn's human
        message, or before request j's reply."""
        from compact_dp import api
        marker = f"task {self.turn_ends().index(j) + 1}:" if kind == "turn" else \
            '"requestId":"req_'
        starts = [i for i, line in enumerate(self.builder.lines) if marker in line]
        if kind == "turn":
            cut = starts[0]
        else:
            firsts = sorted({json.loads(self.builder.lines[i])["requestId"]: i
                             for i in reversed(starts)}.values())
            cut = firsts[j]
        data = ("\n".join(self.builder.lines[:cut]) + "\n").encode()
        return api.load(data).decide(environ=env, now=time).as_dict()


def backtest(env: dict, *args: str) -> dict:
    r = run_main("backtest", "--json", "--jobs", "1", *args, environ=env)
    assert r.status == 0, r.err
    return json.loads(r.out)


def stamp_seconds(line: str) -> float:
    from datetime import datetime
    return datetime.fromisoformat(json.loads(line)["timestamp"].replace("Z", "+00:00")
                                  ).timestamp()


def test_a_line_nested_too_deep_is_skipped_as_every_reading_skips_it(env, tmp_path):
    """A line too deep to size (jsonsize.MAX_DEPTH) is a malformed line to the decision and
    to replay; backtest reads the moments with the same rules, so it skips it too (it once
    stopped there with an internal error)."""
    known = Known(tmp_path, A_TURNS, 4000, "a.jsonl")
    deep = json.dumps({"type": "user", "message": {"role": "user", "content": "X"}})
    deep = deep.replace('"X"', "[" * 450 + "]" * 450)
    lines = known.path.read_text().splitlines()
    bad = tmp_path / "b.jsonl"
    bad.write_text("\n".join(lines[:3] + [deep] + lines[3:]) + "\n")
    clean = backtest(env, str(known.path))
    assert json.dumps(backtest(env, str(bad))).replace(str(bad), str(known.path)) == \
        json.dumps(clean)


@pytest.mark.parametrize("every", [None, 5])
def test_each_point_puts_what_was_said_then_beside_what_happened(every, env, tmp_path):
    known = Known(tmp_path, A_TURNS, 4000, "a.jsonl")
    args = ["--every", str(every)] if every else []
    (session,) = backtest(env, *args, str(known.path))["sessions"]
    assert [(p["request"], p["kind"]) for p in session["points"]] == known.points(every)
    for p in session["points"]:
        j, kind = p["request"], p["kind"]
        assert p["remaining"] == known.n - j
        assert p["forecast"] == 10.0 * (j + 1) ** 0.5
        assert "a test profile" in p["horizon"]
        if kind == "turn":
            human = next(line for line in known.builder.lines
                         if f"task {known.turn_ends().index(j) + 1}:" in line)
            assert p["time"] == stamp_seconds(human)
        said = known.said(j, kind, env, p["time"])
        assert said["session"]["requests"] == j
        assert (p["predicted"], p["benefit"], p["compact"]) == \
            (said["terms"]["billed"], said["best_benefit"], said["decision"] == "compact")
        assert p["realized"] == pytest.approx(known.realized(j, kind), rel=1e-9, abs=1e-12)


def spearman_by_hand(x: list[float], y: list[float]) -> float:
    def ranks(v):
        return [sum(1 for w in v if w < a) + (sum(1 for w in v if w == a) - 1) / 2 for a in v]
    a, b = ranks(x), ranks(y)
    ma, mb = sum(a) / len(a), sum(b) / len(b)
    cov = sum((p - ma) * (q - mb) for p, q in zip(a, b))
    return cov / math.sqrt(sum((p - ma) ** 2 for p in a) * sum((q - mb) ** 2 for q in b))


def scores_by_hand(rows: list[tuple[int, float, int, float, float, bool]]) -> dict:
    """(j, forecast, remaining, predicted, realized, compact) → the scores as docs/backtest.md
    defines them."""
    R = [r[1] for r in rows]
    actual = [r[2] for r in rows]
    said, got = [r[3] for r in rows], [r[4] for r in rows]
    log = sum(abs(math.log(p / a)) for p, a in zip(R, actual)) / len(rows)
    elapsed = sum(abs(math.log(max(r[0], 1) / r[2])) for r in rows) / len(rows)
    ratios = sorted(p / g for p, g in zip(said, got) if g > 0)
    mid = len(ratios) // 2
    advised = [r for r in rows if r[5]]
    return {"points": len(rows), "forecast_bias": sum(R) / sum(actual),
            "forecast_log_error": log, "elapsed_log_error": elapsed,
            "forecast_log_error_vs_elapsed": log / elapsed,
            "dollars_sum_ratio": sum(said) / sum(got),
            "dollars_median_ratio": ratios[mid] if len(ratios) % 2 else
            (ratios[mid - 1] + ratios[mid]) / 2,
            "dollars_spearman": spearman_by_hand(said, got),
            "compact_advice": len(advised),
            "compact_advice_paid": sum(1 for r in advised if r[4] > 0) / len(advised)}


def rows_by_hand(known: Known, env: dict, points: list[dict]) -> list[tuple]:
    out = []
    for p in points:
        j, kind = p["request"], p["kind"]
        said = known.said(j, kind, env, p["time"])
        out.append((j, 10.0 * (j + 1) ** 0.5, known.n - j, said["terms"]["billed"],
                    known.realized(j, kind), said["decision"] == "compact"))
    return out


def assert_scores(scores: dict, expected: dict) -> None:
    """The scores by their definitions; the pause's (no pause past the TTL follows a turn
    end in these sessions, so none was given: test_wait.py scores one that does)."""
    assert set(scores) == set(expected) | PAUSE_SCORES
    for k, v in expected.items():
        assert scores[k] == pytest.approx(v, rel=1e-9, abs=1e-12), k
    assert {k: scores[k] for k in PAUSE_SCORES} == {
        "pause_points": 0, "pause_advice": 0, "pause_advice_paid": None,
        "pause_dollars_median_ratio": None, "pause_dollars_spearman": None}


def test_the_scores_are_the_points_scored_by_their_definitions(env, tmp_path):
    """A last turn of one request: compacting before it is advised (R says 60 more) and
    loses, so the scores see advice that did not pay and a saving below 0."""
    known = Known(tmp_path, A_TURNS + [1], 4000, "a.jsonl")
    (session,) = backtest(env, "--every", "5", str(known.path))["sessions"]
    rows = rows_by_hand(known, env, session["points"])
    expected = scores_by_hand(rows)
    assert 0 < expected["compact_advice"] < expected["points"]     # the test tells both
    assert any(r[5] and r[4] < 0 for r in rows) and 0 < expected["compact_advice_paid"] < 1
    assert_scores(session["scores"], expected)


def test_a_codex_point_mid_turn_sees_what_the_request_saw_not_its_output(env, tmp_path):
    """Codex writes a request's usage after its output items: the decision before it is
    the one on the file cut before them."""
    from compact_dp import api
    lines, expect = codex_lines()
    path = tmp_path / "rollout.jsonl"
    path.write_text("\n".join(lines) + "\n")
    (session,) = backtest(env, "--every", "1", str(path))["sessions"]
    assert [(p["request"], p["kind"]) for p in session["points"]] == \
        [(1, "request"), (2, "request"), (3, "turn")]
    for p, reply in zip(session["points"], ["Adding the flag.", "Added --verbose."]):
        cut = next(i for i, line in enumerate(lines) if reply in line)
        said = api.load(("\n".join(lines[:cut]) + "\n").encode()).decide(
            environ=env, now=p["time"]).as_dict()
        assert said["session"]["requests"] == p["request"]
        assert (p["predicted"], p["benefit"]) == (said["terms"]["billed"], said["best_benefit"])
    assert [p["remaining"] for p in session["points"]] == \
        [expect["requests"] - j for j in (1, 2, 3)]


def test_the_policies_are_set_against_what_was_recorded_and_hindsight(env, tmp_path):
    known = Known(tmp_path, A_TURNS, 4000, "a.jsonl")
    (session,) = backtest(env, str(known.path))["sessions"]
    runs = session["policies"]
    assert list(runs) == ["recorded", "dp", "dp:known", "hindsight", "hindsight:free",
                          "threshold:60", "threshold:83"]
    recorded = runs["recorded"]
    prompts = known.prompts
    assert recorded["comparable_cost"] == pytest.approx(known.recorded_input_cost(), rel=1e-12)
    assert (recorded["requests"], recorded["compactions"], recorded["peak_context"]) == \
        (known.n, 0, max(prompts))
    assert recorded["cache_read_tokens"] == sum(prompts[:-1])
    best = recorded["comparable_cost"] - runs["hindsight"]["comparable_cost"]
    cheapest = recorded["comparable_cost"] - runs["hindsight:free"]["comparable_cost"]
    best_objective = recorded["objective"] - runs["hindsight"]["objective"]
    assert best > 0 and cheapest >= best and best_objective > 0
    for name, run in runs.items():
        if name == "recorded":
            assert "saving" not in run and "hindsight_share" not in run
            assert (run["objective_saving"], run["objective_share"]) == (0.0, 0.0)
            continue
        assert run["saving"] == recorded["comparable_cost"] - run["comparable_cost"]
        assert run["hindsight_share"] == pytest.approx(run["saving"] / best, rel=1e-12)
        # like with like: the objective over hindsight's, dollars over the cheapest's
        assert run["objective_saving"] == recorded["objective"] - run["objective"]
        assert run["objective_share"] == pytest.approx(run["objective_saving"] /
                                                       best_objective, rel=1e-12)
        assert run["dollar_share"] == pytest.approx(run["saving"] / cheapest, rel=1e-12)
        assert run["summary_output_cost"] == pytest.approx(run["compactions"] * SUMMARY * OUT /
                                                           1e6, rel=1e-12)
    for name, key in (("dp", "dp_beats_thresholds"),
                      ("dp:known", "dp_known_beats_thresholds")):
        assert session[key] == (
            runs[name]["comparable_cost"] < runs["threshold:60"]["comparable_cost"] and
            runs[name]["comparable_cost"] < runs["threshold:83"]["comparable_cost"])


def test_the_total_pools_every_point_and_holds_the_policy_goals_to_long_sessions(env,
                                                                                tmp_path):
    """The scores over all points of all sessions; dp's share of hindsight and the
    thresholds only over sessions of 100 requests or more (100 counts, 99 does not)."""
    a = Known(tmp_path, A_TURNS, 4000, "a.jsonl")
    long = Known(tmp_path, [10, 15, 5, 20, 10, 25, 15], 1500, "long.jsonl")
    short = Known(tmp_path, [10, 15, 5, 20, 10, 25, 14], 1500, "short.jsonl")
    assert (long.n, short.n) == (100, 99)
    obj = backtest(env, str(a.path), str(long.path), str(short.path))
    by_name = {Path(s["session"]).name: s for s in obj["sessions"]}
    rows = [row for known in (a, long, short)
            for row in rows_by_hand(known, env, by_name[known.path.name]["points"])]
    total = obj["total"]
    assert (total["sessions"], total["long_sessions"]) == (3, 1)
    assert_scores(total["scores"], scores_by_hand(rows))
    runs = by_name["long.jsonl"]["policies"]
    # dp's goals, and the same of dp told the end (dp:known) under dp_known_*
    for name, prefix in (("dp", "dp_"), ("dp:known", "dp_known_")):
        dp = runs[name]
        assert total[prefix + "hindsight_share_median"] == dp["objective_share"]
        assert total[prefix + "hindsight_share_sum"] == pytest.approx(
            dp["objective_saving"] / runs["hindsight"]["objective_saving"], rel=1e-12)
        assert total[prefix + "dollar_share_median"] == dp["dollar_share"]
        assert total[prefix + "dollar_share_sum"] == pytest.approx(
            dp["saving"] / runs["hindsight:free"]["saving"], rel=1e-12)
        assert total[prefix + "objective_worse_share"] == \
            (1.0 if dp["objective"] > runs["recorded"]["objective"] else 0.0)
        assert total[prefix + "compactions_over_hindsight"] == (
            dp["compactions"] / runs["hindsight"]["compactions"]
            if runs["hindsight"]["compactions"] else None)
        assert total[prefix + "beats_thresholds_share"] == \
            (1.0 if by_name["long.jsonl"][prefix + "beats_thresholds"] else 0.0)


POINT = {"request", "kind", "time", "forecast", "horizon", "remaining", "predicted",
         "benefit", "compact", "realized", "wait", "paused_at", "pause_saving",
         "pause_predicted", "pause_realized"}
PAUSE_SCORES = {"pause_points", "pause_advice", "pause_advice_paid",
                "pause_dollars_median_ratio", "pause_dollars_spearman"}
SCORES = {"points", "forecast_bias", "forecast_log_error", "elapsed_log_error",
          "forecast_log_error_vs_elapsed", "dollars_sum_ratio", "dollars_median_ratio",
          "dollars_spearman", "compact_advice", "compact_advice_paid"}
RUN = {"policy", "requests", "compactions", "forced", "input_cost", "output_cost",
       "summary_cost", "summary_output_cost", "unrecorded_cost", "comparable_cost",
       "penalty", "objective", "total_cost", "cache_read_tokens", "cache_write_tokens",
       "peak_context", "mean_context", "cache_hit_share"}


def test_the_json_has_these_fields_and_no_others(env, tmp_path):
    """docs/backtest.md lists them: what each means is checked above."""
    folder = tmp_path / "sessions"
    folder.mkdir()
    known = Known(folder, A_TURNS, 4000, "a.jsonl")
    (folder / "chat.json").write_bytes((EXAMPLES / "openai-chat.json").read_bytes())
    obj = backtest(env, "--every", "5", str(folder))
    assert set(obj) == {"schema_version", "sessions", "total", "skipped"}
    assert obj["schema_version"] == 1
    assert obj["skipped"] == [{"session": str(folder / "chat.json"), "error":
                               "backtest needs a Claude Code or Codex session with recorded "
                               "usage"}]
    (s,) = obj["sessions"]
    assert set(s) == {"session", "project", "session_id", "format", "requests", "points",
                      "policies", "scores", "dp_beats_thresholds",
                      "dp_known_beats_thresholds"}
    from compact_dp.history import project_of
    from compact_dp.sessions.read import read_session
    read = read_session([str(known.path)])
    assert (s["project"], s["session_id"]) == (project_of(read, str(known.path)),
                                               read.session_id)
    assert (s["session"], s["format"], s["requests"]) == (str(known.path), "claude-code",
                                                          known.n)
    assert isinstance(s["dp_beats_thresholds"], bool)
    assert isinstance(s["dp_known_beats_thresholds"], bool)
    assert set(s["policies"]) == {"recorded", "dp", "dp:known", "hindsight", "hindsight:free",
                                  "threshold:60", "threshold:83"}
    assert set(s["scores"]) == SCORES | PAUSE_SCORES
    for p in s["points"]:
        assert set(p) == POINT
        assert p["kind"] in ("turn", "request") and isinstance(p["compact"], bool)
        assert p["wait"] in (None, "turn_end", "auto_compaction")
        assert all(isinstance(p[k], (int, float)) for k in POINT - {
            "kind", "horizon", "compact", "wait", "paused_at", "pause_saving",
            "pause_predicted", "pause_realized"})
    for name, run in s["policies"].items():
        assert set(run) == RUN | {"objective_saving", "objective_share", "dollar_share"} | (
            {"saving", "hindsight_share"} if name != "recorded" else set())
        assert run["policy"] == name and run["requests"] == known.n
    assert set(obj["total"]) == {"sessions", "scores", "long_sessions",
                                 "dp_hindsight_share_median", "dp_hindsight_share_sum",
                                 "dp_dollar_share_median", "dp_dollar_share_sum",
                                 "dp_objective_worse_share", "dp_compactions_over_hindsight",
                                 "dp_beats_thresholds_share",
                                 "dp_known_hindsight_share_median",
                                 "dp_known_hindsight_share_sum",
                                 "dp_known_dollar_share_median", "dp_known_dollar_share_sum",
                                 "dp_known_objective_worse_share",
                                 "dp_known_compactions_over_hindsight",
                                 "dp_known_beats_thresholds_share",
                                 "dp_compactions", "hindsight_compactions",
                                 "dp_compactions_vs_hindsight",
                                 "dp_worse_than_recorded_share"}
    assert obj["total"]["scores"] == s["scores"]


def test_a_session_without_a_turn_end_has_no_scores(env, tmp_path):
    one = Known(tmp_path, [6], 700, "one.jsonl")
    (s,) = backtest(env, str(one.path))["sessions"]
    assert (s["points"], s["scores"]) == ([], None)
    assert not s["dp_beats_thresholds"]             # all cost the same: dp is not cheaper
    table = run_main("backtest", str(one.path), environ={**env, "COLUMNS": "200"}).out
    row = table.splitlines()[3]                   # the first row below the header
    assert [c.strip() for c in row.strip("|").split("|")][2:] == ["6", "0"] + ["-"] * 6


def test_the_table_fits_80_columns_and_names_a_session_as_replay_does(env, tmp_path):
    """Its project (cut to fit) and its id, not its path: a path of a home's history is
    long, and replay's rows name the same sessions so."""
    deep = tmp_path / ("a-folder-with-a-long-name-" * 4) / "and-a-session-file.jsonl"
    deep.parent.mkdir(parents=True)
    deep.write_bytes(claude_turns(A_TURNS, grow=4000).text())
    out = run_main("backtest", str(deep), environ={**env, "COLUMNS": "80"}).out
    assert all(len(line) <= 80 for line in out.splitlines()), out
    replayed = run_main("replay", "--json", str(deep), environ=env)
    (r,) = json.loads(replayed.out)["sessions"]
    from compact_dp.replaying.view import cut, short_id
    row = out.splitlines()[3]
    assert [c.strip() for c in row.strip("|").split("|")][:2] == [cut(r["project"]),
                                                                  short_id(r)]
    assert str(deep.parent) not in out and "and-a-session-file" not in out
    total = [c.strip() for c in out.splitlines()[4].strip("|").split("|")]
    assert total[:2] == ["total", "1 session"] and "goal" in out
    wide = run_main("backtest", str(deep), environ={**env, "COLUMNS": "250"}).out
    header = next(line for line in wide.splitlines() if line.startswith("|"))
    for column in ("project", "session", "requests", "points", "R / actual", "log err / elapsed's",
                   "$ said / got", "ρ", "compact paid", "dp vs best"):
        assert column in header


def run_with_stderr(args: list[str], terminal: bool) -> bytes:
    """The command's standard error, on a pseudo-terminal or a pipe."""
    import os
    import subprocess

    from .conftest import clean_env, command_path
    if not terminal:
        return subprocess.run([command_path(), *args], capture_output=True,
                              env=clean_env(COLUMNS="80"), timeout=60).stderr
    master, slave = os.openpty()
    p = subprocess.Popen([command_path(), *args], stdout=subprocess.DEVNULL, stderr=slave,
                         env=clean_env(COLUMNS="80", TERM="xterm"))
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:                         # the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    assert p.wait(timeout=60) == 0
    return b"".join(chunks)


def test_a_progress_bar_only_on_a_terminal(tmp_path):
    files = []
    for i, turns in enumerate(([2, 3], [3, 2], [4, 4])):
        f = tmp_path / f"s{i}.jsonl"
        f.write_bytes(claude_turns(turns, ids=f"s{i}-").text())
        files.append(str(f))
    assert b"backtesting" in run_with_stderr(["backtest", "--jobs", "1", *files], True)
    assert run_with_stderr(["backtest", "--jobs", "1", *files], False) == b""


# --- the corpus ---------------------------------------------------------------------------------

def corpus_sample(count: int = 3) -> list[str]:
    """The smallest files of ≥ 100 requests of each agent in the shared corpus."""
    import subprocess

    from .conftest import NO_SHARED, SHARED
    unpack = SHARED / "transcripts" / "corpus" / "unpack"
    if not unpack.exists():
        pytest.skip(NO_SHARED)
    folder = Path(subprocess.run([str(unpack)], capture_output=True, text=True,
                                 check=True).stdout.strip())
    rows = [line.split("\t") for line in (folder / "MANIFEST.tsv").read_text().splitlines()]
    head = rows[0]
    table = [dict(zip(head, r)) for r in rows[1:]]
    out = []
    for agent in ("claude-code", "codex"):
        long = sorted((int(r["bytes"]), r["path"]) for r in table
                      if r["path"].startswith(agent + "/") and int(r["requests"]) >= 100)
        out += [str(folder / path) for _, path in long[:count]]
    return out


def test_a_sample_of_the_corpus_reports_every_goal():
    files = corpus_sample(2)
    r = run_main("backtest", "--json", *files)
    assert r.status == 0, r.err
    obj = json.loads(r.out)
    total = obj["total"]
    assert total["sessions"] == len(files)
    assert total["long_sessions"] == sum(s["requests"] >= 100 for s in obj["sessions"]) > 0
    for name in ("forecast_bias", "forecast_log_error_vs_elapsed", "dollars_median_ratio",
                 "dollars_spearman"):
        assert isinstance(total["scores"][name], float) and math.isfinite(
            total["scores"][name]), name
    assert isinstance(total["dp_hindsight_share_median"], float)
    assert 0.0 <= total["dp_beats_thresholds_share"] <= 1.0
    out = run_main("backtest", *files, environ={"COLUMNS": "80"}).out
    assert "goal 0.75–1.33" in out and "goal ≥ 70 %" in out


@pytest.mark.parametrize("t60, t83, beats", [(6.0, 7.0, True), (6.0, 4.0, False),
                                             (5.0, 7.0, False), (4.0, 6.0, False)])
def test_dp_beats_the_thresholds_only_when_cheaper_than_each(t60, t83, beats):
    """Cheaper than one threshold and not the other, or as dear as one, is no win."""
    from compact_dp.replaying.backtest import compare
    costs = {"recorded": 8.0, "dp": 5.0, "hindsight": 4.5, "hindsight:free": 4.0,
             "threshold:60": t60, "threshold:83": t83}
    runs = {n: {"policy": n, "comparable_cost": c, "objective": c, "compactions": 1}
            for n, c in costs.items()}
    assert compare(runs)["dp_beats_thresholds"] is beats
    assert "dp_known_beats_thresholds" not in compare(runs)     # not replayed: not said
    runs["dp:known"] = {**runs.pop("dp"), "policy": "dp:known"}
    judged = compare(runs)
    assert judged["dp_known_beats_thresholds"] is beats and "dp_beats_thresholds" not in judged


def test_dp_told_the_end_is_totalled_apart_from_dp():
    """The long sessions' goals of dp:known are its own run's, under dp_known_*, beside
    dp's: here dp:known compacts less, its objective is above the recorded one's and it
    does not beat threshold:60.
    The table's last line says both shares."""
    from compact_dp.replaying.backtest import compare, totals

    def run(name, cost, objective, compactions):
        return {"policy": name, "comparable_cost": cost, "objective": objective,
                "compactions": compactions}
    runs = {"recorded": run("recorded", 10.0, 10.5, 1), "dp": run("dp", 8.0, 8.6, 3),
            "dp:known": run("dp:known", 8.7, 10.8, 1), "hindsight": run("hindsight", 8.5, 8.7, 2),
            "hindsight:free": run("hindsight:free", 7.0, 7.9, 4),
            "threshold:60": run("threshold:60", 8.5, 9.0, 2),
            "threshold:83": run("threshold:83", 9.5, 9.8, 1)}
    session = {"points": [], "requests": 150, "policies": runs, **compare(runs)}
    assert session["dp_beats_thresholds"] and not session["dp_known_beats_thresholds"]
    # a session replayed without dp:known (an older result) counts for dp alone
    older = {name: dict(r) for name, r in runs.items() if name != "dp:known"}
    alone = {"points": [], "requests": 120, "policies": older, **compare(older)}
    total = totals([session, alone])
    assert total["dp_hindsight_share_sum"] == pytest.approx(1.9 / 1.8)
    assert total["dp_known_hindsight_share_sum"] == pytest.approx(-0.3 / 1.8)
    assert (total["dp_objective_worse_share"], total["dp_known_objective_worse_share"]) == \
        (0.0, 1.0)
    assert total["dp_known_dollar_share_sum"] == pytest.approx(1.3 / 3.0)
    assert (total["dp_compactions_over_hindsight"],
            total["dp_known_compactions_over_hindsight"]) == (1.5, 0.5)
    assert (total["dp_beats_thresholds_share"], total["dp_known_beats_thresholds_share"]) == \
        (1.0, 0.0)                 # of the sessions that ran each
    cheaper = {**runs, "dp:known": run("dp:known", 8.0, 9.0, 1)}
    beaten = {"points": [], "requests": 150, "policies": cheaper, **compare(cheaper)}
    assert totals([beaten, alone])["dp_known_beats_thresholds_share"] == 1.0
    import io

    from compact_dp.environment import Env
    from compact_dp.replaying.backtest_view import render
    said = {**total, "dp_beats_thresholds_share": 0.6, "dp_known_beats_thresholds_share": 0.25}
    env = Env(stdin=io.BytesIO(b""), stdout=io.StringIO(), stderr=io.StringIO(),
              environ={"COLUMNS": "400"}, stdin_isatty=False, stdout_isatty=False)
    line = render([], said, env).splitlines()[-1]
    assert "on 60% of 2 sessions" in line and "(dp:known), on 25%." in line
