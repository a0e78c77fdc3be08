"""Each request once (docs/replay.md, "Each request once"): a run — files, folders, the
default history — counts every request once across all its files, whatever the arguments.
A file named or found twice is read once; a file whose requests are all in another is the
start of a resumed session (or a copy) and is left out with a note; files that share some
requests (a session resumed twice) bill them once; and a request is its ``requestId``,
whatever ``message.id`` each of its streamed lines carries."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from compact_dp.history import each_request_once

from .conftest import run_main
from .session_fixtures import ClaudeSession, claude_turns, codex_turns, dumps, stamp, text


def replay_json(*args: str, environ: dict | None = None) -> tuple[dict, str]:
    r = run_main("replay", "--json", *args, environ=environ)
    assert r.status == 0, r.err
    return json.loads(r.out), r.err


def bill(obj: dict) -> tuple[int, float]:
    """The run's requests and recorded bill, over every session it shows."""
    sessions = obj["sessions"]
    return (sum(s["requests"] for s in sessions),
            sum(s["recorded"]["total_cost"] for s in sessions))


def one_session(tmp_path: Path, name: str = "s.jsonl", **kw) -> Path:
    f = tmp_path / name
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_bytes(claude_turns([3, 4, 2], **kw).text())
    return f


# --- the rule ---------------------------------------------------------------------------------

def test_a_file_inside_another_is_left_out_into_the_largest_and_of_copies_the_first_counts():
    once = each_request_once([[1, 2], [1, 2, 3], [1, 2, 3], [1, 2, 3, 4], [5, None], [], [9]])
    assert once.inside == {0: 3, 1: 3, 2: 3}       # all inside the largest, which counts
    assert once.elsewhere == {} and once.adopts == {}
    copies = each_request_once([[1, 2], [1, 2]])
    assert copies.inside == {1: 0}                  # of two copies, the first counts


def test_a_file_with_a_request_without_a_key_is_never_left_out():
    assert each_request_once([[1, None], [1, 2, 3]]).inside == {}
    assert each_request_once([[1], [1, 2, None]]).inside == {0: 1}


def test_shared_requests_are_counted_by_the_first_file_and_elsewhere_by_the_rest():
    once = each_request_once([[1, 2, 3, 4], [1, 2, 5, 6], [1, 2, 7]], [[], [8], [8, 9]])
    assert once.inside == {}
    assert once.elsewhere == {1: {1, 2}, 2: {1, 2, 8}}


def test_the_side_requests_of_a_file_left_out_are_billed_by_the_file_it_is_inside():
    once = each_request_once([[1, 2], [1, 2, 3], [7]], [[10, 11, 12], [11], [12]])
    assert once.inside == {0: 1}
    assert once.adopts == {1: [0]}                  # for 10: no file counted holds it
    assert once.elsewhere == {1: {12}}              # file 2 counts 12
    assert each_request_once([[1, 2], [1, 2, 3]], [[11], [11]]).adopts == {}


# --- the same file twice -----------------------------------------------------------------------

def test_a_file_named_twice_is_read_once(tmp_path):
    f = one_session(tmp_path)
    alone, _ = replay_json("--policy", "recorded", str(f))
    (tmp_path / "sub").mkdir()
    (tmp_path / "link.jsonl").symlink_to(f)
    spellings = [str(f), str(f), str(tmp_path / "sub" / ".." / "s.jsonl"),
                 str(tmp_path / "link.jsonl")]
    twice, err = replay_json("--policy", "recorded", *spellings)
    assert [s["session"] for s in twice["sessions"]] == [str(f)]
    assert bill(twice) == bill(alone) and bill(alone)[0] == 9
    assert twice["skipped"] == [] and err == ""


def test_a_folder_named_with_its_own_subfolder_counts_each_file_once(tmp_path):
    one_session(tmp_path / "p", "a.jsonl", ids="a-")
    one_session(tmp_path / "p" / "sub", "b.jsonl", ids="b-")
    once, _ = replay_json("--policy", "recorded", str(tmp_path / "p"))
    both, _ = replay_json("--policy", "recorded", str(tmp_path / "p"),
                          str(tmp_path / "p" / "sub"), str(tmp_path / "p" / "sub" / "b.jsonl"))
    assert len(both["sessions"]) == 2 and both["skipped"] == []
    assert bill(both) == bill(once) and bill(once)[0] == 18


def test_the_default_history_reads_a_folder_named_twice_once(tmp_path):
    one_session(tmp_path / "c" / "projects" / "-p", ids="a-")
    folder = str(tmp_path / "c")
    environ = {"HOME": str(tmp_path), "CLAUDE_CONFIG_DIR": f"{folder},{folder}/../c"}
    obj, err = replay_json("--policy", "recorded", environ=environ)
    assert len(obj["sessions"]) == 1 and bill(obj)[0] == 9
    assert [line for line in err.splitlines() if "Claude Code" in line] == [
        f"compact-dp: Claude Code: 1 session file in {folder}/projects"]


# --- a copy of a session, the start of a resumed one ------------------------------------------

def test_two_copies_of_a_session_in_one_project_are_one_session(tmp_path):
    project = tmp_path / ".claude" / "projects" / "-home-me-p"
    a = one_session(project, "aaaaaaaa.jsonl", session_id="aaaaaaaa-0000-4000-8000-0")
    alone, _ = replay_json("--policy", "recorded", str(a))
    (project / "bbbbbbbb.jsonl").write_bytes(a.read_bytes())
    r = run_main("replay", "--policy", "recorded", environ={"HOME": str(tmp_path),
                                                           "COLUMNS": "200"})
    assert r.status == 0
    rows = [line for line in r.out.splitlines() if line.startswith("|")]
    assert len([row for row in rows if "aaaaaaaa" in row]) == 1      # one row, not two
    assert "1 session" in next(row for row in rows if row.startswith("|total"))
    assert f"warning: skipped {project}/bbbbbbbb.jsonl: its 9 requests are all in " \
           f"{project}/aaaaaaaa.jsonl (the start of a resumed session, or a copy)" in r.err
    obj, _ = replay_json("--policy", "recorded", environ={"HOME": str(tmp_path)})
    assert bill(obj) == bill(alone)
    assert "total" not in obj and len(obj["groups"]) == 1      # one session: no total
    assert obj["groups"][0]["recorded_cost"] == pytest.approx(bill(alone)[1], rel=1e-12)
    assert obj["skipped"] == [{"session": f"{project}/bbbbbbbb.jsonl", "error":
                               f"its 9 requests are all in {project}/aaaaaaaa.jsonl (the "
                               "start of a resumed session, or a copy): counted there"}]


def resumed(tmp_path: Path) -> tuple[Path, Path, ClaudeSession]:
    """A session (``start``) resumed into a new file that repeats its lines, then goes on."""
    start = claude_turns([3, 4], ids="old-")
    goes_on = claude_turns([3, 4], ids="old-")
    goes_on.ids = "new-"
    goes_on.user("one more thing")
    goes_on.response([text("done")], (0, 900, goes_on.requests[-1]["prompt"]))
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "1-start.jsonl").write_bytes(start.text())
    (tmp_path / "2-resumed.jsonl").write_bytes(goes_on.text())
    return tmp_path / "1-start.jsonl", tmp_path / "2-resumed.jsonl", goes_on


def test_the_start_of_a_resumed_session_is_left_out_of_replay(tmp_path):
    start, later, _ = resumed(tmp_path)
    alone, _ = replay_json(str(later))
    obj, err = replay_json(str(tmp_path))
    assert [s["session"] for s in obj["sessions"]] == [str(later)]
    assert bill(obj) == bill(alone) and bill(obj)[0] == 8
    assert obj["skipped"][0]["session"] == str(start)
    assert f"its 7 requests are all in {later}" in obj["skipped"][0]["error"]
    assert f"compact-dp: warning: skipped {start}: its 7 requests" in err


def test_the_start_of_a_resumed_session_is_left_out_of_backtest(tmp_path):
    start, later, _ = resumed(tmp_path)
    r = run_main("backtest", "--json", str(tmp_path))
    assert r.status == 0, r.err
    obj = json.loads(r.out)
    assert [s["session"] for s in obj["sessions"]] == [str(later)]
    assert obj["skipped"][0]["session"] == str(start) and "keys" not in obj["sessions"][0]
    assert f"warning: skipped {start}: its 7 requests are all in {later}" in r.err


def test_the_start_of_a_resumed_session_is_left_out_of_calibrate(tmp_path):
    start, later, _ = resumed(tmp_path)
    r = run_main("calibrate", "--fresh", "--dry-run", "--json", str(tmp_path))
    assert r.status == 0, r.err
    assert f"warning: skipped {start}: its 7 requests are all in {later}" in r.err
    assert "calibrate: 2 sessions read, 1 left out" in r.err
    assert json.loads(r.out)["agents"]["claude-code"]["sessions"] == 1


def test_the_sub_agents_of_a_resumed_sessions_start_are_billed_with_the_session(tmp_path):
    start, later, _ = resumed(tmp_path)
    agent = ClaudeSession(agent="a77", ids="agent-", model="claude-haiku-4-5")
    agent.user("look it up")
    agent.response([text("found")], (3, 2000, 0))                 # 2,003 tokens in
    (tmp_path / "1-start" / "subagents").mkdir(parents=True)
    (tmp_path / "1-start" / "subagents" / "agent-a77.jsonl").write_bytes(agent.text())
    alone, _ = replay_json(str(later))
    obj, _ = replay_json(str(tmp_path))
    assert [s["session"] for s in obj["sessions"]] == [str(later)]
    sub = obj["sessions"][0]["recorded"]["subagents"]
    # haiku 4.5: $1 input, $1.25 a 5-minute write, $5 output per million
    assert (sub["requests"], sub["files"]) == (1, 1)
    assert sub["input_cost"] + sub["output_cost"] == pytest.approx(
        (3 * 1 + 2000 * 1.25 + 50 * 5) / 1e6, rel=1e-12)
    assert bill(obj)[1] == pytest.approx(bill(alone)[1] + (3 + 2500 + 250) / 1e6, rel=1e-12)


def test_a_session_resumed_twice_bills_the_requests_its_two_files_share_once(tmp_path):
    """A session resumed twice from the same start: both new files repeat its requests,
    then go their own ways.  Each request once: the shared ones in the first file."""
    start = claude_turns([3, 4], ids="old-")
    forks = []
    for name in ("a", "b"):
        fork = claude_turns([3, 4], ids="old-")
        fork.ids = f"{name}-"
        for i in range(2 if name == "a" else 3):
            fork.user(f"{name}: step {i}")
            fork.response([text("ok")], (0, 300 + 100 * i, fork.requests[-1]["prompt"]))
        forks.append(fork)
        (tmp_path / f"{name}.jsonl").write_bytes(fork.text())
    (tmp_path / "start.jsonl").write_bytes(start.text())
    parts = {name: bill(replay_json("--policy", "recorded", "--policy", "never",
                                    str(tmp_path / f"{name}.jsonl"))[0])
             for name in ("start", "a", "b")}
    obj, err = replay_json("--policy", "recorded", "--policy", "never", str(tmp_path))
    by = {Path(s["session"]).name: s for s in obj["sessions"]}
    assert sorted(by) == ["a.jsonl", "b.jsonl"]        # the start: inside b, the larger
    assert obj["skipped"][0]["session"] == str(tmp_path / "start.jsonl")
    assert f"requests are all in {tmp_path}/b.jsonl" in obj["skipped"][0]["error"]
    assert (by["a.jsonl"]["requests"], by["b.jsonl"]["requests"]) == (9, 3)
    assert bill(obj)[0] == 7 + 2 + 3
    assert bill(obj)[1] == pytest.approx(parts["a"][1] + parts["b"][1] - parts["start"][1],
                                         rel=1e-12)
    b = by["b.jsonl"]
    assert "7 of its requests are counted in another file" in " ".join(b["warnings"])
    assert f"{tmp_path}/b.jsonl: 7 of its requests are counted in another file" in err
    # like with like: b's replay of what was recorded is billed for its own 3 requests
    recorded = next(p for p in b["policies"] if p["policy"] == "recorded")
    assert recorded["requests"] == 3 and len(recorded["context"]) == 3
    assert abs(recorded["simulation_error"]) < 1e-9
    assert obj["total"]["requests"] == 12


def test_two_copies_of_a_codex_rollout_are_one(tmp_path):
    rollout = codex_turns([[0, 800, 600], [700, 900]]).text()
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "rollout-1.jsonl").write_bytes(rollout)
    alone, _ = replay_json("--policy", "recorded", str(tmp_path / "a"))
    (tmp_path / "a" / "rollout-2.jsonl").write_bytes(rollout)
    obj, err = replay_json("--policy", "recorded", str(tmp_path / "a"))
    assert len(obj["sessions"]) == 1 and bill(obj) == bill(alone) and bill(obj)[0] == 5
    assert "rollout-2.jsonl: its 5 requests are all in" in err


# --- a request is its requestId ----------------------------------------------------------------

class Streamed:
    """A Claude Code file written line by line as goccc's hand-computed example is shaped:
    a response streamed over several lines, each with a ``message.id`` of its own under one
    ``requestId``, each repeating the request's usage with a growing output count."""

    def __init__(self, sid: str, agent: str | None = None):
        self.lines: list[str] = []
        self.sid, self.agent, self.t = sid, agent, 0.0

    def line(self, kind: str, **fields) -> None:
        self.t += 3
        extra = {"agentId": self.agent} if self.agent else {}
        self.lines.append(dumps({"type": kind, "isSidechain": self.agent is not None,
                                 "sessionId": self.sid, "cwd": "/w", "version": "2.1.47",
                                 "uuid": f"u{len(self.lines)}", "timestamp": stamp(self.t),
                                 **extra, **fields}))

    def user(self, content: object) -> None:
        self.line("user", message={"role": "user", "content": content})

    def request(self, rid: str, model: str, uncached: int, w5m: int, w1h: int, read: int,
                outputs: list[int]) -> None:
        for k, out in enumerate(outputs):
            self.line("assistant", requestId=rid, message={
                "model": model, "id": f"msg_{rid}_{k}", "type": "message",
                "role": "assistant", "content": [text(f"part {k}")],
                "usage": {"input_tokens": uncached, "output_tokens": out,
                          "cache_creation_input_tokens": w5m + w1h,
                          "cache_read_input_tokens": read,
                          "cache_creation": {"ephemeral_5m_input_tokens": w5m,
                                             "ephemeral_1h_input_tokens": w1h}}})

    def text(self) -> bytes:
        return ("\n".join(self.lines) + "\n").encode()


OPUS = "claude-opus-4-6"                  # $ per million: the price table's
HAIKU = "claude-haiku-4-5-20251001"
PRICES = {OPUS: {"input": 5, "output": 25, "cache_read": 0.5, "5m": 6.25, "1h": 10},
          HAIKU: {"input": 1, "output": 5, "cache_read": 0.1, "5m": 1.25, "1h": 2}}


def test_the_table_has_the_prices_the_hand_made_bill_uses():
    table = json.loads((Path(__file__).parent.parent / "compact_dp" / "pricing" /
                        "prices.json").read_text())
    for model, want in PRICES.items():
        entry = next(m for m in table["models"]
                     if model in [m["model"], *m.get("aliases", [])])
        assert {"input": entry["input"], "output": entry["output"],
                "cache_read": entry["cache_read"], **entry["cache_write"]} == want


def test_streamed_lines_with_their_own_message_ids_are_one_request_and_one_bill(tmp_path):
    sid = "9d0c0000-0000-4000-8000-00000000abcd"
    main = Streamed(sid)
    main.user("move the config loader to its own module")
    main.request("req_m1", OPUS, 10, 3000, 1000, 20000, [100, 400, 900])   # three lines
    main.user([{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}])
    main.request("req_m2", OPUS, 5, 0, 2000, 24000, [1500])
    main.user("and update its callers")
    main.request("req_m3", OPUS, 8, 1000, 0, 26000, [300, 2000])             # two lines
    main.line("assistant", requestId="req_err", isApiErrorMessage=True, message={
        "model": "<synthetic>", "id": "msg_err", "role": "assistant",
        "content": [text("API Error")], "usage": {"input_tokens": 0, "output_tokens": 0}})
    agent = Streamed(sid, agent="c0ffee1")
    agent.user("find the callers")
    agent.request("req_s1", HAIKU, 300, 2000, 0, 6000, [200, 700])
    agent.user([{"type": "tool_result", "tool_use_id": "s1", "content": "a.py\nb.py"}])
    agent.request("req_s2", HAIKU, 100, 0, 500, 8000, [400])
    project = tmp_path / "-w"
    (project / sid / "subagents").mkdir(parents=True)
    (project / f"{sid}.jsonl").write_bytes(main.text())
    (project / sid / "subagents" / "agent-c0ffee1.jsonl").write_bytes(agent.text())

    # By hand, $ per million tokens (a request's output: its last line's count):
    #   req_m1  10×5 + 20000×0.5 + 3000×6.25 + 1000×10 = 38,800   output 900×25  = 22,500
    #   req_m2   5×5 + 24000×0.5 + 2000×10             = 32,025   output 1500×25 = 37,500
    #   req_m3   8×5 + 26000×0.5 + 1000×6.25           = 19,290   output 2000×25 = 50,000
    #   req_s1 300×1 +  6000×0.1 + 2000×1.25           =  3,400   output 700×5   =  3,500
    #   req_s2 100×1 +  8000×0.1 +  500×2              =  1,900   output 400×5   =  2,000
    # main: input $0.090115, output $0.11; the sub-agent: $0.0108; in all $0.210915.
    # (Each line a request of its own would bill req_m1 three times and req_m3 twice.)
    obj, _ = replay_json("--policy", "recorded", str(project))
    (session,) = obj["sessions"]
    recorded = session["recorded"]
    assert session["requests"] == recorded["requests"] == 3
    assert recorded["input_cost"] == pytest.approx(0.090115, rel=1e-12)
    assert recorded["output_cost"] == pytest.approx(0.11, rel=1e-12)
    sub = recorded["subagents"]
    assert (sub["requests"], sub["files"]) == (2, 1)
    assert sub["input_cost"] == pytest.approx(0.0053, rel=1e-12)
    assert sub["output_cost"] == pytest.approx(0.0055, rel=1e-12)
    assert recorded["total_cost"] == pytest.approx(0.210915, rel=1e-12)
    # the same session in another file of the project adds nothing
    (project / "copy.jsonl").write_bytes(main.text())
    again, _ = replay_json("--policy", "recorded", str(project))
    assert bill(again) == (3, pytest.approx(0.210915, rel=1e-12))
    assert os.path.basename(again["skipped"][0]["session"]) == "copy.jsonl"


# --- the corpus ---------------------------------------------------------------------------------

def test_a_corpus_project_of_checkpoints_counts_each_of_its_requests_once():
    """A real project whose folder holds checkpoints of the same sessions taken at several
    moments (each later one repeating the earlier): the run's requests are exactly the
    distinct requests of its files, each file left out is inside the one it names, and
    what the files counted bill is what the whole folder bills."""
    from compact_dp.sessions.read import read_session

    from .conftest import corpus
    folder = corpus() / "claude-code" / "JanDeDobbeleer__oh-my-posh"
    obj, _ = replay_json("--policy", "recorded", "--jobs", "1", str(folder))
    keys = {}
    for f in sorted(folder.rglob("*.jsonl")):
        if "subagents" not in f.parts:
            keys[str(f)] = [r.key for r in read_session([str(f)], fast=True).requests]
    counted = [s["session"] for s in obj["sessions"]]
    distinct = {k for ks in keys.values() for k in ks}
    assert None not in distinct
    assert sum(len(keys[f]) for f in counted) == bill(obj)[0] == len(distinct)
    left = [s for s in obj["skipped"] if s["error"].endswith("counted there")]
    assert len(left) == 7
    for s in left:
        other = s["error"].split(" are all in ")[1].split(" (the start")[0]
        assert other in counted and set(keys[s["session"]]) <= set(keys[other])
