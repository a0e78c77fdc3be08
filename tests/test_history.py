"""Your own history: replay with no FILE reads the agents' folders (docs/history.md)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from .conftest import clean_env, run_cli, run_main
from .session_fixtures import ClaudeSession, claude_session, codex_lines, text

ALPHA = "aaaaaaaa-1111-4111-8111-111111111111"
BETA = "bbbbbbbb-2222-4222-8222-222222222222"
CODEX = "cccccccc-3333-4333-8333-333333333333"


def make_home(root: Path) -> Path:
    """A home laid out like a real one: two Claude Code projects (one session with a
    sub-agent's file beside it, one in a project whose name has a '-' and begun three days
    later in a subfolder of it) and a Codex rollout of the first project, a day later."""
    home = root / "home"
    alpha = home / ".claude" / "projects" / "-home-me-work-alpha"
    (alpha / ALPHA / "subagents").mkdir(parents=True)
    (alpha / f"{ALPHA}.jsonl").write_bytes(
        claude_session(session_id=ALPHA, cwd="/home/me/work/alpha").text())
    agent = ClaudeSession(session_id=ALPHA, cwd="/home/me/work/alpha")
    agent.user("look for the parser's tests", turn=False)
    agent.response([text("found them")], (3, 2000, 0), sidechain=True)
    (alpha / ALPHA / "subagents" / "agent-a1b2c3.jsonl").write_bytes(agent.text())
    beta = home / ".claude" / "projects" / "-home-me-work-beta-app"
    beta.mkdir(parents=True)
    later = ClaudeSession(session_id=BETA, cwd="/home/me/work/beta-app/src")
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


# --- the folders ------------------------------------------------------------------------------

def test_replay_with_no_arguments_replays_every_session_of_the_home_once(home):
    p = run_cli("replay", "--json", env=history_env(home))
    err = p.stderr.decode()
    assert p.returncode == 0, err
    stems = [Path(s["session"]).stem for s in json.loads(p.stdout)["sessions"]]
    assert sorted(stems) == sorted([ALPHA, BETA, f"rollout-2026-03-02T10-00-00-{CODEX}"])
    assert err.splitlines() == [
        f"compact-dp: Claude Code: 2 session files in {home}/.claude/projects",
        f"compact-dp: Codex: 1 session file in {home}/.codex/sessions"]


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
    assert [Path(s["session"]).stem for s in json.loads(r.out)["sessions"]] == [BETA]
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
