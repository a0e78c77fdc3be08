"""Your own history: replay with no FILE reads the agents' folders, a row per session,
project, day or month with a total, the filters and the order, and hindsight's share
(docs/history.md, docs/replay.md)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from compact_dp.history import Selection, matches, parse_day, project_of
from compact_dp.sessions.session import Session

from .conftest import ROOT, clean_env, run_cli, run_main
from .session_fixtures import ClaudeSession, claude_session, codex_lines, text

EXAMPLES = ROOT / "examples"
ALPHA = "aaaaaaaa-1111-4111-8111-111111111111"
BETA = "bbbbbbbb-2222-4222-8222-222222222222"
CODEX = "cccccccc-3333-4333-8333-333333333333"
SHORT = {ALPHA: "aaaaaaaa…", BETA: "bbbbbbbb…", CODEX: "cccccccc…"}


def make_home(root: Path) -> Path:
    """A home laid out like a real one: two Claude Code projects (one session with a
    sub-agent's file beside it, one in a project whose name has a '-' and begun three days
    later in a subfolder of it) and a Codex rollout of the first project, a day later."""
    home = root / "home"
    alpha = home / ".claude" / "projects" / "-home-me-work-alpha"
    (alpha / ALPHA / "subagents").mkdir(parents=True)
    (alpha / f"{ALPHA}.jsonl").write_bytes(
        claude_session(session_id=ALPHA, cwd="/home/me/work/alpha", ids="alpha-").text())
    agent = ClaudeSession(session_id=ALPHA, cwd="/home/me/work/alpha", ids="agent-")
    agent.user("look for the parser's tests", turn=False)
    agent.response([text("found them")], (3, 2000, 0), sidechain=True)
    (alpha / ALPHA / "subagents" / "agent-a1b2c3.jsonl").write_bytes(agent.text())
    beta = home / ".claude" / "projects" / "-home-me-work-beta-app"
    beta.mkdir(parents=True)
    later = ClaudeSession(session_id=BETA, cwd="/home/me/work/beta-app/src", ids="beta-")
    later.pause(3 * 86400)
    later.user("rename the module")
    later.response([text("Renamed.")], (3, 9000, 0))
    later.user("and its tests")
    later.response([text("Done.")], (1, 300, 9000))
    (beta / f"{BETA}.jsonl").write_bytes(later.text())
    codex = home / ".codex" / "sessions" / "2026" / "03" / "02"
    codex.mkdir(parents=True)
    lines, _ = codex_lines()
    rollout = "\n".join(lines).replace('"cwd":"/p"', '"cwd":"/home/me/work/alpha"') \
        .replace('"id":"r-1"', f'"id":"{CODEX}"').replace("2026-03-01T", "2026-03-02T")
    (codex / f"rollout-2026-03-02T10-00-00-{CODEX}.jsonl").write_text(rollout + "\n")
    return home


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    """The fixture home, dates read in UTC (a session's day is local)."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield make_home(tmp_path)
    monkeypatch.undo()
    time.tzset()


def history_env(home: Path, **extra: str) -> dict[str, str]:
    """The command's environment with HOME at the fixture and the agents' own variables
    unset."""
    env = {k: v for k, v in clean_env(HOME=str(home), TZ="UTC", COLUMNS="200",
                                      NO_COLOR="1").items()
           if k not in ("CLAUDE_CONFIG_DIR", "CODEX_HOME")}
    env.update(extra)
    return env


def replay(home: Path, *args: str, **extra: str):
    return run_main("replay", *args, environ={"HOME": str(home), "COLUMNS": "200", **extra})


def replay_json(home: Path, *args: str) -> dict:
    r = replay(home, "--json", *args)
    assert r.status == 0, r.err
    return json.loads(r.out)


def table_rows(out: str) -> list[list[str]]:
    """The cells of the ASCII table's body rows (header and rules left out)."""
    lines = [line for line in out.splitlines() if line.startswith("|")]
    return [[c.strip() for c in line.strip("|").split("|")] for line in lines[1:]
            if not set(line) <= set("|-+")]


def table_header(out: str) -> list[str]:
    first = next(line for line in out.splitlines() if line.startswith("|"))
    return [c.strip() for c in first.strip("|").split("|")]


def cents(x):
    return "-" if x is None else f"{'-' if x < -0.005 else ''}${abs(x):,.2f}"


# --- the folders ------------------------------------------------------------------------------

def test_replay_with_no_arguments_lists_every_session_of_the_home_once(home):
    p = run_cli("replay", env=history_env(home))
    out, err = p.stdout.decode(), p.stderr.decode()
    assert p.returncode == 0, err
    rows = table_rows(out)
    assert [r[1] for r in rows[:-1]].count(SHORT[ALPHA]) == 1
    assert sorted(r[1] for r in rows[:-1]) == sorted(SHORT.values())     # no sub-agent
    assert rows[-1][:2] == ["total", "3 sessions"]
    assert err.splitlines() == [
        f"compact-dp: Claude Code: 2 session files in {home}/.claude/projects",
        f"compact-dp: Codex: 1 session file in {home}/.codex/sessions"]
    assert "▁" not in out                           # no pictures of many sessions


def test_backtest_with_no_arguments_reads_the_same_folders(home):
    p = run_cli("backtest", "--json", env=history_env(home))
    assert p.returncode == 0, p.stderr
    assert f"Claude Code: 2 session files in {home}/.claude/projects" in p.stderr.decode()
    assert {Path(s["session"]).stem for s in json.loads(p.stdout)["sessions"]} >= {ALPHA}


def test_the_agents_own_variables_name_other_folders(home, tmp_path):
    """$CLAUDE_CONFIG_DIR (a comma-separated list) and $CODEX_HOME replace ~/.claude and
    ~/.codex."""
    other = tmp_path / "elsewhere"
    (other / "projects").mkdir(parents=True)
    (home / ".claude" / "projects" / "-home-me-work-beta-app").rename(
        other / "projects" / "-home-me-work-beta-app")
    r = replay(home, "--json", CLAUDE_CONFIG_DIR=f"{other}, {tmp_path / 'none'}",
               CODEX_HOME=str(home / "nowhere"))
    assert r.status == 0, r.err
    assert [s["session_id"] for s in json.loads(r.out)["sessions"]] == [BETA]
    assert r.err == f"compact-dp: Claude Code: 1 session file in {other}/projects\n"


@pytest.mark.parametrize("layout", ["nothing", "empty folders"])
def test_no_file_and_no_session_is_a_one_line_error(tmp_path, layout):
    if layout == "empty folders":
        (tmp_path / ".claude" / "projects").mkdir(parents=True)
        (tmp_path / ".codex" / "sessions").mkdir(parents=True)
    p = run_cli("replay", env=history_env(tmp_path))
    err = p.stderr.decode()
    assert p.returncode == 2 and p.stdout == b"" and len(err.splitlines()) == 1, err
    assert err.startswith("compact-dp: error: no FILE or DIR given")
    assert (".claude/projects" in err) and (".codex/sessions" in err)


# --- the rows ---------------------------------------------------------------------------------

def test_a_session_row_has_its_project_day_requests_compactions_bill_and_savings(home):
    obj = replay_json(home)
    sessions = {s["session_id"]: s for s in obj["sessions"]}
    assert {i: (s["project"], s["date"]) for i, s in sessions.items()} == {
        ALPHA: ("alpha", "2026-03-01"), BETA: ("beta-app", "2026-03-04"),
        CODEX: ("alpha", "2026-03-02")}
    for group in obj["groups"]:
        s = sessions[group["session_id"]]
        assert group["paths"] == [s["session"]] and group["sessions"] == 1
        assert (group["requests"], group["compactions"]) == (s["requests"],
                                                             s["compactions"])
        assert group["recorded_cost"] == s["recorded"]["total_cost"]
        by_name = {p["policy"]: p for p in s["policies"]}
        assert [p["policy"] for p in group["policies"]] == [
            p for p in by_name if p != "recorded"]
        for p in group["policies"]:
            assert p["saving"] == pytest.approx(by_name[p["policy"]]["saving"])
            assert p["hindsight_share"] == by_name[p["policy"]]["hindsight_share"]
    assert sessions[ALPHA]["compactions"] == 1 and sessions[CODEX]["compactions"] == 1


def test_the_bill_counts_the_sub_agents(home):
    alpha = next(s for s in replay_json(home)["sessions"] if s["session_id"] == ALPHA)
    bill = alpha["recorded"]
    assert bill["subagents"]["requests"] == 1 and bill["subagents"]["input_cost"] > 0
    assert bill["total_cost"] == pytest.approx(
        bill["input_cost"] + bill["output_cost"] + bill["subagents"]["input_cost"] +
        bill["subagents"]["output_cost"])
    row = next(r for r in table_rows(replay(home).out) if r[1] == SHORT[ALPHA])
    assert row[table_header(replay(home).out).index("bill")] == cents(bill["total_cost"])


EXAMPLE_FILES = [str(EXAMPLES / "claude-code.jsonl"), str(EXAMPLES / "codex.jsonl")]


@pytest.mark.parametrize("files", [[], EXAMPLE_FILES], ids=["home", "examples"])
@pytest.mark.parametrize("by", ["session", "project", "day", "month"])
def test_the_json_groups_carry_the_numbers_the_rows_show(home, by, files):
    out = replay(home, "--by", by, *files).out
    obj = replay_json(home, "--by", by, *files)
    header, rows = table_header(out), table_rows(out)
    groups = obj["groups"] + [obj["total"]]
    assert obj["by"] == by and len(rows) == len(groups)
    for row, group in zip(rows, groups):
        cells = dict(zip(header, row))
        assert cells["requests"] == f"{group['requests']:,}"
        assert cells["compactions"] == f"{group['compactions']:,}"
        assert cells["bill"] == cents(group["recorded_cost"])
        by_name = {p["policy"]: p for p in group["policies"]}
        for name in ("dp", "hindsight", "never", "threshold:80"):
            assert cells[name] == cents(by_name[name]["saving"]), name
        share = by_name["dp"]["objective_share"]        # like with like: the objective
        assert cells["dp of best"] == ("-" if share is None else f"{share:.0%}")


def test_by_project_adds_up_the_sessions_of_each_project_across_agents(home):
    obj = replay_json(home, "--by", "project")
    sessions = {s["session"]: s for s in obj["sessions"]}
    assert [(g["key"], g["sessions"]) for g in obj["groups"]] == [("alpha", 2),
                                                                   ("beta-app", 1)]
    alpha = obj["groups"][0]
    members = [sessions[p] for p in alpha["paths"]]
    assert {m["format"] for m in members} == {"claude-code", "codex"}
    assert alpha["first"] == "2026-03-01" and alpha["last"] == "2026-03-02"
    assert alpha["requests"] == sum(m["requests"] for m in members)
    assert alpha["recorded_cost"] == pytest.approx(sum(m["recorded"]["total_cost"]
                                                       for m in members))
    saving = {name: sum(p["saving"] for m in members for p in m["policies"]
                        if p["policy"] == name) for name in ("dp", "hindsight")}
    dp = next(p for p in alpha["policies"] if p["policy"] == "dp")
    assert dp["saving"] == pytest.approx(saving["dp"])
    best = saving["hindsight"]
    assert dp["hindsight_share"] == (pytest.approx(saving["dp"] / best) if best > 1e-9
                                     else None)
    rows = table_rows(replay(home, "--by", "project").out)
    assert [r[:2] for r in rows] == [["alpha", "2"], ["beta-app", "1"], ["total", "3"]]


def test_by_day_and_month_put_each_session_on_the_day_it_began(home):
    days = replay_json(home, "--by", "day")["groups"]
    assert [(g["key"], g["sessions"]) for g in days] == [
        ("2026-03-01", 1), ("2026-03-02", 1), ("2026-03-04", 1)]
    months = replay_json(home, "--by", "month")["groups"]
    assert [(g["key"], g["sessions"]) for g in months] == [("2026-03", 3)]


# --- choosing and ordering --------------------------------------------------------------------

@pytest.mark.parametrize("args, ids", [
    (["--since", "20260302"], {CODEX, BETA}),
    (["--since", "2026-03-02"], {CODEX, BETA}),
    (["--until", "20260301"], {ALPHA}),
    (["--since", "20260302", "--until", "2026-03-03"], {CODEX}),
    (["--since", "20260305"], set()),
    (["--project", "ALPHA"], {ALPHA, CODEX}),           # a part, any case
    (["--project", "app"], {BETA}),
    (["--project", "b*"], {BETA}),                       # a glob: the whole name
    (["--project", "lph*"], set()),                    # not "lph" anywhere
    (["--project", "alpha", "--since", "20260302"], {CODEX}),
])
def test_since_until_and_project_keep_only_the_sessions_asked_for(home, args, ids):
    obj = replay_json(home, *args)
    assert {s["session_id"] for s in obj["sessions"]} == ids
    assert sum(g["sessions"] for g in obj["groups"]) == len(ids) and obj["skipped"] == []
    out = replay(home, *args).out
    assert {r[1] for r in table_rows(out)[:-1]} == {SHORT[i] for i in ids}


def test_since_and_until_leave_out_sessions_without_a_date(tmp_path):
    f = tmp_path / "bash.jsonl"
    f.write_bytes((ROOT / "golden" / "inputs" / "syn_12.jsonl").read_bytes())
    assert not Selection("2026-01-01").admits("x", None)
    assert Selection(project="x").admits("x", None)
    assert replay_json(tmp_path, str(f))["sessions"] != []
    assert replay_json(tmp_path, "--since", "19700101", str(f))["sessions"] == []


@pytest.mark.parametrize("sort, key, reverse", [
    ("date", lambda g: g["first"], False), ("requests", lambda g: g["requests"], True),
    ("cost", lambda g: g["recorded_cost"], True),
    ("saving", lambda g: g["policies"][0]["saving"], True),
    ("project", lambda g: (g["project"], g["first"]), False)])
def test_sort_orders_the_rows(home, sort, key, reverse):
    groups = replay_json(home, "--sort", sort)["groups"]
    values = [key(g) for g in groups]
    assert values == sorted(values, reverse=reverse) and len(set(map(str, values))) > 1
    rows = table_rows(replay(home, "--sort", sort).out)[:-1]
    assert [r[1] for r in rows] == [SHORT[g["session_id"]] for g in groups]


def test_the_default_order_is_oldest_first(home):
    assert [g["session_id"] for g in replay_json(home)["groups"]] == [ALPHA, CODEX, BETA]


@pytest.mark.parametrize("args, words", [
    (["--since", "2026-13-01"], "--since: '2026-13-01' is not a date"),
    (["--until", "202603"], "--until: '202603' is not a date"),
    (["--since", "2026-0301"], "--since: '2026-0301' is not a date"),
    (["--by", "week"], "--by: 'week' is not one of session, project, day, month"),
    (["--sort", "size"], "--sort: 'size' is not one of date, project, requests, cost"),
])
def test_bad_dates_and_keys_are_one_line_errors(home, args, words):
    r = replay(home, *args)
    assert r.status == 2 and r.out == "" and len(r.err.splitlines()) == 1
    assert words in r.err, r.err


def test_dates_are_taken_as_ccusage_writes_them_and_with_dashes():
    assert parse_day("20260301", "--since") == parse_day("2026-03-01", "--since") == \
        "2026-03-01"


def test_a_pattern_is_a_part_of_the_name_or_a_glob_of_all_of_it():
    assert matches("beta-app", "TA-A") and not matches("beta-app", "ta-a*")
    assert matches("beta-app", "*-app") and matches("beta-app", "beta-ap[pq]")


# --- how it looks -----------------------------------------------------------------------------

def test_the_table_of_many_sessions_names_projects_and_short_ids_not_paths(home):
    """At 80 columns: no path (nothing folds in the middle of a word), a long project name
    cut with …, every line within the width."""
    deep = home / ".claude" / "projects" / "-home-me-work-a-project-with-a-very-long-name"
    deep.mkdir()
    (deep / "dddddddd-4444.jsonl").write_bytes(
        claude_session(session_id="dddddddd-4444",
                       cwd="/home/me/work/a-project-with-a-very-long-name").text())
    out = replay(home, COLUMNS="80").out
    assert "/" not in "".join(line for line in out.splitlines() if line.startswith("|"))
    assert max(len(line) for line in out.splitlines()) <= 80
    rows = table_rows(out)
    assert "a-project-with-a-very-l…" in [r[0] for r in rows]
    assert all(len(r[0]) <= 24 for r in rows)


def test_detail_adds_each_sessions_table_and_picture(home):
    out = replay(home, "--detail").out
    assert out.count("input tokens per request") == 3 and "▲" in out
    assert f"alpha · {SHORT[ALPHA]} · claude-code" in out
    assert table_rows(out)[-1][:2] == ["total", "3 sessions"]


@pytest.mark.parametrize("columns", ["80", "200"])
def test_one_session_shows_its_table_picture_and_hindsights_share(columns):
    path = str(EXAMPLES / "claude-code.jsonl")
    r = run_main("replay", path, environ={"COLUMNS": columns})
    session = json.loads(run_main("replay", "--json", path).out)["sessions"][0]
    assert "input tokens per request" in r.out and f"file: {path}" in r.out
    shown = {row[0]: row[-1] for row in table_rows(r.out)}
    assert table_header(r.out)[-1] == "of best"
    policies = {p["policy"]: p for p in session["policies"]}
    assert list(shown) == ["recorded", "dp", "hindsight", "never", "threshold:80"]
    for name, cell in shown.items():        # like with like: the objective hindsight minimises
        assert cell == f"{policies[name]['objective_share']:.0%}"


# --- hindsight's share ------------------------------------------------------------------------

def test_every_policy_gets_its_saving_over_hindsights():
    """hindsight_share = (recorded − policy) / (recorded − hindsight) on comparable costs,
    for every policy, recorded and hindsight included; the total's on the sums."""
    obj = json.loads(run_main("replay", "--json", str(EXAMPLES / "claude-code.jsonl"),
                              str(EXAMPLES / "codex.jsonl")).out)
    for s in obj["sessions"]:
        cost = {p["policy"]: p["comparable_cost"] for p in s["policies"]}
        best = cost["recorded"] - cost["hindsight"]
        for p in s["policies"]:
            want = (cost["recorded"] - cost[p["policy"]]) / best if best > 1e-9 else None
            assert p["hindsight_share"] == (pytest.approx(want) if want is not None
                                            else None), (s["session"], p["policy"])
    shares = [p["hindsight_share"] for s in obj["sessions"] for p in s["policies"]]
    assert any(x is None for x in shares) and any(x not in (None, 0.0, 1.0) for x in shares)
    total = {p["policy"]: p for p in obj["total"]["policies"]}
    saved = {n: sum(p["saving"] for s in obj["sessions"] for p in s["policies"]
                    if p["policy"] == n) for n in ("never", "hindsight")}
    assert total["never"]["hindsight_share"] == pytest.approx(saved["never"] /
                                                              saved["hindsight"])


def test_a_share_of_no_saving_or_of_a_loss_is_null():
    from compact_dp.replaying.compare import shares
    assert shares({"dp": 1.0, "hindsight": 2.0}) == {"dp": 0.5, "hindsight": 1.0}
    for best in (0.0, 1e-12, -0.5):
        assert shares({"dp": 1.0, "hindsight": best}) == {"dp": None, "hindsight": None}
    assert shares({"dp": 1.0}) == {"dp": None}


def test_the_total_compares_only_the_sessions_with_a_bill():
    """A file without usage replayed under recorded all the same has no bill: the total's
    saving and its share of the recorded cost are those of the sessions with one."""
    files = [str(EXAMPLES / "claude-code.jsonl"), str(ROOT / "golden" / "inputs" /
                                                      "syn_150.jsonl")]
    args = ["--policy", "recorded", "--policy", "dp", *files]
    obj = json.loads(run_main("replay", "--json", *args).out)
    billed, unbilled = obj["sessions"]
    assert "saving" not in unbilled["policies"][1] and "recorded" not in unbilled
    dp = next(p for p in obj["total"]["policies"] if p["policy"] == "dp")
    assert dp["saving"] == billed["policies"][1]["saving"]
    assert dp["compared_cost"] == billed["policies"][0]["comparable_cost"]
    out = run_main("replay", "--detail", *args, environ={"COLUMNS": "200"}).out
    total = out[out.index("total · 2 sessions"):]
    assert f"saves ${dp['saving']:,.3f} ({dp['saving'] / dp['compared_cost']:.0%})" in total


def test_backtest_puts_each_policys_saving_over_hindsights():
    r = run_main("backtest", "--json", str(EXAMPLES / "claude-code.jsonl"))
    policies = json.loads(r.out)["sessions"][0]["policies"]
    best = policies["hindsight"]["saving"]
    assert best > 1e-9
    for name, p in policies.items():
        if name != "recorded":
            assert p["hindsight_share"] == pytest.approx(p["saving"] / best), name


def test_without_hindsight_every_share_is_null():
    obj = json.loads(run_main("replay", "--json", "--policy", "recorded", "--policy", "dp",
                              str(EXAMPLES / "claude-code.jsonl")).out)
    assert [p["hindsight_share"] for p in obj["sessions"][0]["policies"]] == [None, None]
    assert obj["groups"][0]["policies"][0]["hindsight_share"] is None


def test_hindsight_runs_by_default_only_where_it_is_exact_and_comparable():
    """Sessions with usage whose agent keeps no message: hindsight; a bash-agent file
    (no bill, messages kept) gets neither recorded nor hindsight unless asked, and a
    session replayed keeping messages no hindsight (its schedule would not be exact)."""
    obj = json.loads(run_main("replay", "--json", str(EXAMPLES / "codex.jsonl"),
                              str(ROOT / "golden" / "inputs" / "syn_40.jsonl")).out)
    names = [[p["policy"] for p in s["policies"]] for s in obj["sessions"]]
    assert names == [["recorded", "dp", "hindsight", "never", "threshold:80"],
                     ["dp", "never", "threshold:80"]]
    kept = json.loads(run_main("replay", "--json", "--keep", "best",
                               str(EXAMPLES / "codex.jsonl")).out)
    assert [p["policy"] for p in kept["sessions"][0]["policies"]] == [
        "recorded", "dp", "never", "threshold:80"]


# --- project names ----------------------------------------------------------------------------

def session_in(cwd: str | None) -> Session:
    s = Session("claude-code")
    s.cwd = cwd
    return s


@pytest.mark.parametrize("cwd, path, home, project", [
    ("/home/me/work/beta-app", "/x/projects/-home-me-work-beta-app/s.jsonl", "", "beta-app"),
    ("/home/me/work/beta-app/src/deep", "/x/projects/-home-me-work-beta-app/s.jsonl", "",
     "beta-app"),                                  # a subfolder of the project's
    ("/home/me/my.site", "/x/projects/-home-me-my-site/s.jsonl", "", "my.site"),
    ("/home/me/my.site/src", "/x/projects/-home-me-my-site/s.jsonl", "", "my.site"),
    ("/home/me/my_app/src", "/x/projects/-home-me-my-app/s.jsonl", "", "my_app"),
    ("/elsewhere/tool", "/x/projects/-home-me-work-beta-app/s.jsonl", "", "tool"),
    (None, "/x/projects/-home-me-work-beta-app/s.jsonl", "/home/me", "work-beta-app"),
    (None, "/x/projects/-home-me-work-beta-app/s.jsonl", "", "home-me-work-beta-app"),
    ("C:\\Users\\me\\proj", "/x/sessions/2026/03/01/rollout.jsonl", "", "proj"),
    (None, "/data/runs/s.jsonl", "", "runs"),
])
def test_the_project_is_the_working_folder_the_session_names(cwd, path, home, project):
    assert project_of(session_in(cwd), path, {"HOME": home}) == project


def test_the_example_sessions_name_their_projects():
    obj = json.loads(run_main("replay", "--json", str(EXAMPLES / "claude-code.jsonl"),
                              str(EXAMPLES / "codex.jsonl")).out)
    assert [(s["project"], s["session_id"]) for s in obj["sessions"]] == [
        ("project", "0f0e0d0c-example"), ("p", "0199-example")]
    assert os.path.basename(obj["groups"][0]["paths"][0]) == "claude-code.jsonl"


def test_old_style_sub_agent_files_beside_a_session_are_not_sessions(tmp_path):
    """``agent-*.jsonl`` beside a session (older Claude Code) are its sub-agents: found in a
    folder they are not sessions of their own; the session's files are (.jsonl, .json)."""
    from compact_dp.history import find_sessions
    for name in ("s1.jsonl", "s2.json", "agent-aold.jsonl", "agent-b.json", "notes.txt"):
        (tmp_path / name).write_text("{}\n")
    found = sorted(os.path.basename(f) for f in find_sessions([str(tmp_path)]))
    assert found == ["s1.jsonl", "s2.json"]
