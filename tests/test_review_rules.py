"""Rules an outside review's fresh mutants found unguarded (tests/mutants.py's list did not
have them), each stated once over several cases: what a compaction keeps and where the
agent compacts by itself, what it leaves beyond V, parameter names, when a project's
earlier session counts, --plot's name, the session's id, the
settings file's final newline, the replay's cache clock, standard input once, dp past the
agent's own point, backtest's rank correlation; the seed horizon a fixed number of calls
asks for, an environment parameter over the profile's, a hook given no JSON, and where
``--tokens usage`` warns that it fell back to bytes."""

from __future__ import annotations

import json
import os

import pytest

from compact_dp.asking import awk_names
from compact_dp.calibration.project import QUIET, Past, project_history
from compact_dp.core.awkvalue import AwkValue
from compact_dp.core.models import get_model
from compact_dp.core.params import PARAMS
from compact_dp.question import after_compaction
from compact_dp.sessions.claude_code import compaction_mark
from compact_dp.sessions.read import read_session
from compact_dp.world import learn

from .conftest import ROOT, clean_env, run_cli, run_main, write
from .session_fixtures import ClaudeSession, text


def read(tmp_path, built: ClaudeSession, name: str = "session.jsonl"):
    return read_session([str(write(tmp_path, built.text(), name))])


def compacting(marks: list[dict]) -> ClaudeSession:
    """A Claude Code session compacted once per ``marks`` (each its compactMetadata)."""
    s = ClaudeSession()
    s.user("start")
    s.response([text("ok")], (1, 20000, 0))
    for k, meta in enumerate(marks):
        s.boundary()
        line = json.loads(s.lines[-1])
        line["compactMetadata"] = meta
        s.lines[-1] = json.dumps(line)
        s.summary()
        s.user(f"after {k}")
        s.response([text("ok")], (1, 3000, 0))
    return s


# --- what a compaction keeps, where the agent compacts by itself (world.py) --------------------

@pytest.mark.parametrize("meta, kept", [
    ({"preservedMessages": {"allUuids": ["a", "b", "c"]}}, 3),
    ({"preservedMessages": {"uuids": ["a"]}}, 1),
    ({"preservedMessages": {"allUuids": []}}, 0),
    ({"preservedSegment": {"headUuid": "a", "tailUuid": "b"}}, 2),
    ({"preservedSegment": {"headUuid": "a", "tailUuid": "a"}}, 1),
    ({"trigger": "manual"}, 0)])
def test_a_compaction_kept_as_many_messages_as_its_metadata_names(meta, kept):
    """docs/formats.md: the messages kept are the preserved ones named (one per distinct
    end of a preserved segment), none without."""
    assert compaction_mark(meta)[3] == kept


@pytest.mark.parametrize("kept", [[0, 3], [2, 0, 0], [4], [1, 5, 2]])
def test_any_compaction_that_kept_messages_makes_the_setting_keep_recent(kept, tmp_path):
    """A session any of whose compactions kept messages verbatim keeps recent ones, the
    upper middle of what they kept; one whose compactions kept none keeps none."""
    marks = [{"trigger": "auto", "preTokens": 150000,
              "preservedMessages": {"allUuids": [f"u{i}" for i in range(k)]}} for k in kept]
    world = learn(read(tmp_path, compacting(marks)))
    assert (world.keeps, world.kept_messages) == ("recent", sorted(kept)[len(kept) // 2])
    none = learn(read(tmp_path, compacting([{"trigger": "auto", "preTokens": 150000}] * 2),
                      "none.jsonl"))
    assert (none.keeps, none.kept_messages) == ("none", None)


@pytest.mark.parametrize("marks", [[("auto", 160000), ("auto", 151234)],
                                   [("auto", 151234), ("manual", 90000), ("auto", 170000)],
                                   [("manual", 80000), ("auto", 155000)]])
def test_the_agents_own_point_is_its_smallest_automatic_compaction(marks, tmp_path):
    """docs/replay.md: the auto-compaction point is the smallest preTokens of the session's
    own automatic compactions (a turn can overshoot it; a manual one says nothing of it)."""
    world = learn(read(tmp_path, compacting([{"trigger": t, "preTokens": n}
                                             for t, n in marks])))
    assert world.auto_compact_tokens == min(n for t, n in marks if t == "auto")


# --- the question (question.py) ------------------------------------------------------------------

@pytest.mark.parametrize("V", [0.0, 5000.0, 30000.0])
@pytest.mark.parametrize("X", [100.0, 4000.0])
def test_what_a_compaction_leaves_beyond_v_does_not_depend_on_v(V, X):
    """after_tokens is the whole context a compaction leaves (V included): what it leaves
    beyond the fixed prefix is after_tokens − V, so the same X for any V; without a
    measured one it is S."""
    values = {"after_tokens": AwkValue.number(V + X), "V": AwkValue.number(V),
              "S": AwkValue.number(777.0)}
    assert after_compaction(values) == X
    values["after_tokens"] = AwkValue.number(0.0)
    assert after_compaction(values) == 777.0


def usage_session() -> ClaudeSession:
    s = ClaudeSession()
    for turn in range(3):
        s.user(f"step {turn}")
        s.response([text("ok")], (1, 3000, 20000 + 3000 * turn))
    return s


# --- parameter names (asking.py) ---------------------------------------------------------------

def test_every_parameter_is_named_by_its_awk_name_or_its_option_name_either_way():
    """docs/api.md: params are keyed by awk name or option name (``input-tokens`` or
    ``input_tokens``), every one of them."""
    for p in PARAMS:
        for key in (p.awk, p.option, p.option.replace("-", "_")):
            assert awk_names({key: 1}) == {p.awk: 1}, key


# --- a project's earlier sessions (calibration/project.py) -------------------------------------

@pytest.mark.parametrize("now", [-5.0, 0.5, 100.0, 1000.0 + QUIET / 2, 1000.0 + QUIET + 1,
                                 2000.0 + QUIET - 1, 2000.0 + QUIET + 1, 1e9])
def test_an_earlier_session_counts_once_quiet_for_quiet_seconds(now):
    """A session counts at a moment when it had made a request by then and its latest
    request before then is more than QUIET seconds old (one still being written may not
    be over) — whenever it began."""
    past = Past("p.jsonl", "claude-code", "/p", "s", 0.0, [0.0, 1000.0, 2000.0], [1, 2])
    made = past.made_by(now)
    quiet = made > 0 and past.times[made - 1] <= now - QUIET
    assert (past.evidence(now, 0.5) is not None) == quiet


def test_sub_agents_files_are_no_earlier_sessions_of_the_project(tmp_path):
    """A Claude Code project folder's agent-*.jsonl files are sub-agents' sidechains, not
    sessions: the project's history holds the other sessions only."""
    folder = tmp_path / "proj"
    folder.mkdir()
    for name in ("now.jsonl", "earlier.jsonl", "agent-1234.jsonl"):
        s = usage_session()
        f = write(folder, s.text(), name)
        os.utime(f, (1e9, 1e9))                   # long quiet: every file is read
    history = project_history(str(folder / "now.jsonl"), "claude-code", "/p",
                              {"COMPACT_DP_CACHE": str(tmp_path / "cache")})
    assert history is not None
    assert sorted(os.path.basename(p.path) for p in history.pasts) == ["earlier.jsonl"]


# --- --plot's file name (cli/replay.py) --------------------------------------------------------

@pytest.mark.parametrize("name, ok", [("p.svg", True), ("p.SVG", True), ("dir/P.Svg", True),
                                      ("p.png", False), ("-", False), ("svg", False)])
def test_plot_takes_any_name_ending_in_svg_in_any_case(name, ok, tmp_path):
    """--plot FILE.svg: a name ending in .svg, in any case, is written; anything else is a
    usage error (exit 2) and nothing is replayed."""
    from .test_replay import session_file
    path = session_file(tmp_path, [("user", 10), ("assistant", 20)])
    target = tmp_path / name if name != "-" else name
    if isinstance(target, type(tmp_path)):
        target.parent.mkdir(parents=True, exist_ok=True)
    r = run_main("replay", "--policy", "never", "--plot", str(target), str(path))
    assert (r.status == 0) == ok, r.err
    if ok:
        assert os.path.exists(target)


# --- the session's id (sessions/line_reader.py) --------------------------------------------------

@pytest.mark.parametrize("ids", [["s-1", "s-2"], ["a", "b", "a"], ["only"]])
def test_a_sessions_id_is_the_first_its_file_names(ids, tmp_path):
    """A file whose lines name several session ids (a resumed or copied session) is the
    session of the first one (docs/formats.md): the id a run counts its requests under."""
    s = ClaudeSession(session_id=ids[0])
    for k, sid in enumerate(ids):
        s.sid = sid
        s.user(f"turn {k}")
        s.response([text("ok")], (1, 3000, 3000 * k))
    assert read(tmp_path, s).session_id == ids[0]


# --- the settings file's style (integrations/settings.py) ----------------------------------------

@pytest.mark.parametrize("before", [None, "", '{"theme": "dark"}\n', '{"theme": "dark"}',
                                    '{\n\t"theme": "dark"\n}'])
def test_install_writes_the_settings_the_way_they_were_written(before, tmp_path):
    """A settings file install writes keeps the original's final newline (or its lack);
    one install creates, or that was empty, ends with a newline, as JSON files do."""
    from compact_dp.integrations import settings as cc_settings
    f = tmp_path / "settings.json"
    if before is not None:
        f.write_text(before)
    cc_settings.install(str(f), prefix="/bin/compact-dp")
    after = f.read_text()
    assert json.loads(after)["statusLine"]["command"] == "/bin/compact-dp statusline"
    assert after.endswith("\n") == (not before or before.endswith("\n"))


# --- the replay's cache clock (replaying/simulate.py) --------------------------------------------

def test_a_replays_cache_was_last_used_when_the_response_ended(tmp_path):
    """docs/replay.md: a cache is used until its response ends, and the TTL runs from
    there: after the replay, each model's cache was last used when its last response
    ended, not when that request was sent."""
    from compact_dp.replaying.policies import make_policy
    from compact_dp.replaying.run import setting_for
    from compact_dp.replaying.simulate import Replay
    s = ClaudeSession()
    s.user("go")
    s.response([text("a"), text("b"), text("c")], (1, 20000, 0), gap=30.0)
    s.user("more")
    s.response([text("a"), text("b"), text("c")], (1, 2000, 20000), gap=60.0)
    session = read(tmp_path, s)
    last = session.requests[-1]
    assert last.done is not None and last.sent is not None and last.done > last.sent
    setting = setting_for(session, {}, get_model("cache-clock"), True, 0, None, None, {})
    for name in ("recorded", "never"):
        replay = Replay(setting, make_policy(name), setting.events)
        replay.run()
        (cache,) = replay.caches.values()
        assert cache.last == last.done, name


# --- standard input, once (replaying/batch.py) ---------------------------------------------------

@pytest.mark.parametrize("times", [1, 2, 3])
def test_standard_input_is_replayed_once_and_named_twice_is_a_usage_error(times):
    """``-`` is standard input, read once: named once it is replayed; named more than
    once, the command refuses (exit 2, saying why) rather than replay it once silently."""
    s = ClaudeSession()
    s.user("go")
    s.response([text("ok")], (1, 20000, 0))
    r = run_main("replay", "--policy", "never", *["-"] * times, stdin=s.text())
    if times == 1:
        assert r.status == 0, r.err
    else:
        assert r.status == 2 and "can be replayed once" in r.err, (r.status, r.err)


# --- replay's dp past the agent's own point (replaying/policies.py) ------------------------------

def test_past_the_agents_own_point_dp_compacts_where_its_decision_says_so(tmp_path,
                                                                          monkeypatch):
    """docs/replay.md: in the middle of a turn, once the context is past the agent's
    automatic point, dp is asked before every request (as the PreCompact hook is): it
    compacts at the first request its decision says pays — before the hold's limit — and
    is forced only at that limit.  (Its decision, stubbed here: pays from the point on.)"""
    from compact_dp.replaying.policies import Compact, DpPolicy
    from compact_dp.replaying.run import setting_for
    from compact_dp.replaying.simulate import Replay

    from .test_setting import long_claude
    session = read(tmp_path, long_claude(190000, step=5000))
    # the point given (the session went on past the documented one: it ran with it off)
    setting = setting_for(session, {}, get_model("cache-clock"), True, 0, None, None, {},
                          auto=(150000.0, False))
    auto, hold = setting.auto, setting.hold_limit
    assert auto is not None and auto < hold
    prompts = [r.usage.prompt for r in session.requests if r.usage is not None]
    assert any(auto <= p < hold for p in prompts)

    def decide(self, replay, request, turn_end=False):
        return Compact(0) if replay.prompt_now(request) >= auto else None
    monkeypatch.setattr(DpPolicy, "_decide", decide)
    replay = Replay(setting, DpPolicy(), setting.events)
    run = replay.run()
    first = run.compactions[0]
    assert prompts[first.before] >= auto and prompts[first.before - 1] < auto
    assert not first.forced


# --- backtest's rank correlation (replaying/backtest.py) -----------------------------------------

def plain_spearman(xs: list[float], ys: list[float]) -> float | None:
    """Pearson's correlation of the mean ranks, written plainly."""
    def ranks(v: list[float]) -> list[float]:
        return [sum(1 for w in v if w < x) + (sum(1 for w in v if w == x) - 1) / 2 for x in v]
    a, b = ranks(xs), ranks(ys)
    ma, mb = sum(a) / len(a), sum(b) / len(b)
    cov = sum((x - ma) * (y - mb) for x, y in zip(a, b))
    va, vb = sum((x - ma) ** 2 for x in a), sum((y - mb) ** 2 for y in b)
    return cov / (va * vb) ** 0.5 if va and vb else None


@pytest.mark.parametrize("xs, ys", [([1.0], [2.0]), ([1.0, 2.0], [1.0, 2.0]),
                                    ([1.0, 2.0], [2.0, 1.0]), ([1.0, 2.0, 3.0], [1.0, 3.0, 2.0]),
                                    ([5.0, 5.0, 1.0, 2.0], [1.0, 2.0, 2.0, 9.0]),
                                    ([1.0, 1.0, 1.0], [1.0, 2.0, 3.0])])
def test_backtests_rank_correlation_needs_three_points_and_a_spread(xs, ys):
    """docs/backtest.md: the dollars' Spearman correlation is said from three points on
    (two points always rank ±1, which says nothing), ties at their mean rank, and None
    where either side has no spread."""
    from compact_dp.replaying.backtest import spearman
    got = spearman(xs, ys)
    want = plain_spearman(xs, ys) if len(xs) >= 3 else None
    assert got == pytest.approx(want) if want is not None else got is None


# --- the question's sources, the hooks ----------------------------------------------------------

EXAMPLE = str(ROOT / "examples" / "claude-code.jsonl")


def test_a_fixed_number_of_calls_per_turn_asks_for_the_seed_rule_as_fixed_turns_do():
    """`--calls-per-turn` (L_fixed), like `--fixed-turns` (e_fixed), is bash-agent's rule
    E × L: the forecast gives way to it, and `--json` says the seed horizon and why."""
    for option in ("--calls-per-turn", "--fixed-turns"):
        r = run_cli("--json", option, "3", EXAMPLE)
        assert r.returncode in (0, 1), r.stderr
        doc = json.loads(r.stdout)
        assert doc["derived"]["horizon"] == "seed", option
        assert "e_fixed or L_fixed" in doc["session"]["horizon_reason"], option
    doc = json.loads(run_cli("--json", EXAMPLE).stdout)
    assert doc["derived"]["horizon"] == "auto"


def test_a_parameter_set_in_the_environment_beats_the_profiles_figure():
    """On a session that shows no summary of its own, DP_S (the summary's tokens) in the
    environment is the S the decision uses, not the profile's median summary, and
    `--json` says where it came from."""
    codex = str(ROOT / "examples" / "codex.jsonl")
    env = {**clean_env(), "DP_S": "1234"}
    doc = json.loads(run_cli("--json", codex, env=env).stdout)
    assert doc["session"]["sources"]["S"] == "env DP_S"
    assert doc["session"]["summary_tokens"] == 1234
    plain = json.loads(run_cli("--json", codex).stdout)["session"]
    assert plain["sources"]["S"].startswith("the median summary of codex sessions")
    assert plain["summary_tokens"] != 1234


def test_a_hook_given_no_json_object_says_so_and_never_fails_its_agent():
    """Claude Code runs the hooks: standard input that is empty, not JSON or not an
    object is said on stderr, with exit status 0, so the agent goes on."""
    deep = b'{"transcript_path": "x", "a": ' + b"[" * 3000 + b"]" * 3000 + b"}"
    for name in ("user-prompt-submit", "pre-compact"):
        for stdin in (b"", b"not json\n", b"[1, 2]\n", deep):
            r = run_cli("hook", name, input=stdin)
            assert r.returncode == 0, (name, stdin, r.stderr)
            assert r.stdout == b""
            assert r.stderr == b"compact-dp: hook " + name.encode() + \
                b": standard input holds no JSON object; nothing to do\n"
    # nested past what the parser recurses to is no status either: the line says so
    r = run_cli("statusline", "--color", "never", input=deep)
    assert (r.returncode, r.stdout, r.stderr) == (0, b"compact-dp: no transcript yet\n", b"")


@pytest.mark.parametrize("w5, w1, ttl", [(1000, 1000, "5m"), (999, 1000, "1h"),
                                         (1000, 999, "5m"), (0, 10, "1h")])
def test_the_sessions_ttl_is_1h_only_where_most_writes_were_1_hour(w5, w1, ttl, tmp_path):
    """The setting's TTL: 1 hour where the 1-hour writes are the larger part; a tie is the
    5-minute default's."""
    s = ClaudeSession()
    s.user("start")
    s.response([text("ok")], (1, w5, 0), ttl="5m")
    s.user("more")
    s.response([text("ok")], (1, w1, w5), ttl="1h")
    r = run_cli("replay", "--json", "--policy", "recorded",
                str(write(tmp_path, s.text(), "ttl.jsonl")))
    (session,) = json.loads(r.stdout)["sessions"]
    assert session["setting"]["ttl"] == ttl


@pytest.mark.parametrize("gap, timed", [(600.0, True), (600.5, False), (2.0, True)])
def test_an_untimed_automatic_compaction_is_timed_by_its_gap_up_to_ten_minutes(gap, timed,
                                                                              tmp_path):
    """A compaction that records no duration, started by the agent, took the gap from the
    line before it, up to MAX_GAP (600 s) included; a longer gap waited on someone."""
    from compact_dp.calibration.fit import MAX_GAP, timed_compactions
    assert MAX_GAP == 600.0
    s = ClaudeSession()
    s.user("start")
    s.response([text("ok")], (1, 20000, 0))
    s.t += gap - 2.0                        # each line is 2 s after the one before
    s.boundary(trigger="auto", pre_tokens=150000)
    s.summary()
    s.user("after")
    s.response([text("ok")], (1, 3000, 0))
    assert timed_compactions(read(tmp_path, s)) == ([(150000.0, gap)] if timed else [])


def test_a_sessions_working_folder_is_the_last_its_lines_name(tmp_path):
    """The session's cwd is the last working folder its lines name (the user may have
    moved on), and replay's project is that folder's last part."""
    s = ClaudeSession(cwd="/work/alpha")
    s.user("start")
    s.response([text("ok")], (1, 20000, 0))
    s.cwd = "/work/beta"
    s.user("more")
    s.response([text("ok")], (1, 300, 20000))
    f = write(tmp_path, s.text(), "s.jsonl")
    assert read_session([str(f)]).cwd == "/work/beta"
    r = run_cli("replay", "--json", "--policy", "recorded", str(f))
    (session,) = json.loads(r.stdout)["sessions"]
    assert session["project"] == "beta"


@pytest.mark.parametrize("role", ["developer", "system", "tool"])
def test_a_chat_file_with_an_openai_only_role_is_read_as_openai(role, tmp_path):
    """A file of chat messages with a role only OpenAI's format has (a developer, system
    or tool message) is an OpenAI chat, not bash-agent's lines."""
    f = tmp_path / "chat.jsonl"
    f.write_text(f'{{"role":"{role}","content":"be brief"}}\n'
                 '{"role":"user","content":"hi"}\n{"role":"assistant","content":"yo"}\n')
    doc = json.loads(run_cli("--json", str(f)).stdout)
    assert doc["session"]["format"] == "openai"


def test_help_on_an_unknown_topic_names_every_command():
    from compact_dp.cli.options import COMMANDS
    r = run_cli("help", "BOGUS")
    assert r.returncode == 2
    assert r.stderr.decode() == ("compact-dp: error: no help for 'BOGUS' (commands: "
                                 f"{', '.join(COMMANDS)})\n")


@pytest.mark.parametrize("fmt", ["bash-agent", "claude-code"])
def test_tokens_usage_warns_only_where_usage_could_have_been_recorded(fmt, tmp_path):
    """``--tokens usage`` on a file that records no usage falls back to bytes and says so;
    a bash-agent file never records usage, so asking it is no mistake to warn about."""
    if fmt == "bash-agent":
        f = ROOT / "golden" / "inputs" / "syn_400.jsonl"
    else:
        s = ClaudeSession()                 # a conversation of two turns, no response
        s.user("start")
        s.user("more")
        f = write(tmp_path, s.text())
    r = run_main("--tokens", "usage", "--json", str(f))
    assert r.status == 0, r.err
    said = "the session records no usage: --tokens usage falls back to bytes"
    warned = json.loads(r.out)["session"]["warnings"]
    assert (said in r.err, said in warned) == ((fmt != "bash-agent"),) * 2


@pytest.mark.parametrize("version, environ, point", [
    ("2.1.40", {}, 167_000.0),                                   # the window less 33,000
    ("2.1.20", {}, 155_000.0),                                   # ... less 45,000 before
    ("2.1.40", {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "100000"}, 67_000.0),
    ("2.1.40", {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "300000"}, 167_000.0),  # never above
    ("2.1.40", {"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "50"}, 100_000.0),
    ("2.1.40", {"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "95"}, 167_000.0),  # it only lowers
    ("2.1.40", {"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "0"}, 167_000.0),   # out of range
    ("2.1.40", {"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "150"}, 167_000.0),
    ("2.1.40", {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "100000",
                "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "50"}, 50_000.0),  # of the capped one
    ("2.1.40", {"DISABLE_AUTO_COMPACT": "1"}, None),
    ("2.1.40", {"DISABLE_COMPACT": "true"}, None),
    ("2.1.40", {"DISABLE_AUTO_COMPACT": "0"}, 167_000.0),
    ("2.1.40", {"DISABLE_AUTO_COMPACT": "false"}, 167_000.0),
])
def test_claude_codes_own_point_as_its_settings_move_it(version, environ, point):
    """Claude Code compacts by itself at the window less its reserve; its settings cap
    the window, lower the point by a percentage (never raise it: Claude Code takes the
    smaller) or turn it off."""
    from compact_dp.agents import agent_of
    assert agent_of("claude-code").auto_point(200_000.0, version, environ)[0] == point
