"""Rules that fresh mutants, written by a reviewer who had not read the tests, broke
without a test noticing (issue 28: "Fresh mutants ... caught at ≥ 90 %"). Each test states
the rule as a user meets it."""

from __future__ import annotations

import json

from .conftest import ROOT, clean_env, run_cli

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


def test_standard_input_can_be_replayed_once_and_twice_is_refused():
    r = run_cli("replay", "-", "-", input=b"")
    assert r.returncode == 2
    assert b"- (standard input) can be replayed once" in r.stderr


def test_plot_takes_an_svg_file_name_in_any_case(tmp_path):
    """--plot writes SVG: "out.SVG" is an SVG file name as much as "out.svg"."""
    out = tmp_path / "out.SVG"
    r = run_cli("replay", "--plot", str(out), EXAMPLE)
    assert r.returncode == 0, r.stderr
    assert out.read_bytes().lstrip().startswith(b"<")
    assert run_cli("replay", "--plot", str(tmp_path / "out.png"), EXAMPLE).returncode == 2


def _two_compactions(tmp_path, first: dict, second: dict):
    """A Claude Code session whose recorded compaction is written as two boundaries in a
    row, each with its own compactMetadata."""
    from .session_fixtures import turns_session
    s = turns_session([[0, 3000, 3000], [3000, 3000], [3000]], compacted=1)
    lines = [json.loads(x) for x in s.lines]
    at = next(i for i, x in enumerate(lines) if x.get("subtype") == "compact_boundary")
    copy = json.loads(json.dumps(lines[at]))
    copy["uuid"] = f"{copy.get('uuid', 'b')}-2"
    lines[at]["compactMetadata"] = first
    copy["compactMetadata"] = second
    lines.insert(at + 1, copy)
    f = tmp_path / "s.jsonl"
    f.write_text("".join(json.dumps(x) + "\n" for x in lines))
    r = run_cli("replay", "--json", "--policy", "recorded", str(f))
    assert r.returncode == 0, r.stderr
    (session,) = json.loads(r.stdout)["sessions"]
    return session["setting"]


def test_the_auto_point_is_the_smallest_point_the_session_compacted_at_by_itself(tmp_path):
    """Of two automatic compactions, the agent's point is at most the smaller: it
    compacted there by itself, so its point cannot be above it."""
    setting = _two_compactions(tmp_path, {"trigger": "auto", "preTokens": 160000},
                               {"trigger": "auto", "preTokens": 150000})
    assert setting["auto_compact_tokens"] == 150000


def test_a_session_keeps_recent_messages_when_any_compaction_kept_some(tmp_path):
    """One compaction that kept nothing and one that kept three messages verbatim: the
    session's compactions keep recent messages (the middle of what they kept), not
    none."""
    setting = _two_compactions(
        tmp_path, {"trigger": "auto", "preTokens": 150000},
        {"trigger": "auto", "preTokens": 150000,
         "preservedMessages": {"allUuids": ["u1", "u2", "u3"]}})
    assert setting["keeps"] == "recent"
    assert setting["kept_messages"] == 3


def test_the_rank_correlation_needs_three_points():
    """Two points always rank ±1: the backtest says nothing rather than a perfect ρ."""
    from compact_dp.replaying.backtest import spearman
    assert spearman([1.0, 2.0], [1.0, 2.0]) is None
    assert spearman([1.0, 2.0], [2.0, 1.0]) is None
    assert spearman([1.0, 2.0, 3.0], [1.0, 2.0, 3.0]) == 1.0


def test_the_totals_mean_context_is_per_request_over_every_session():
    """A policy's mean context in the totals is every request's context over all the
    requests, not over the sessions."""
    r = run_cli("replay", "--json", "--policy", "recorded", "--policy", "never", EXAMPLE,
                str(ROOT / "examples" / "codex.jsonl"))
    doc = json.loads(r.stdout)
    for i, total in enumerate(doc["total"]["policies"]):
        rows = [s["policies"][i] for s in doc["sessions"]]
        assert total["requests"] == sum(p["requests"] for p in rows) > len(rows)
        expected = sum(p["mean_context"] * p["requests"] for p in rows) / total["requests"]
        assert abs(total["mean_context"] - expected) < 1e-6 * expected


def test_a_hook_given_no_json_object_says_so_and_never_fails_its_agent():
    """Claude Code runs the hooks: standard input that is empty, not JSON or not an
    object is said on stderr, with exit status 0, so the agent goes on."""
    for name in ("user-prompt-submit", "pre-compact"):
        for stdin in (b"", b"not json\n", b"[1, 2]\n"):
            r = run_cli("hook", name, input=stdin)
            assert r.returncode == 0, (name, stdin, r.stderr)
            assert r.stdout == b""
            assert b"standard input holds no JSON object; nothing to do" in r.stderr


def test_install_ends_a_new_settings_file_with_a_newline_and_keeps_an_old_files_end(
        tmp_path):
    """A settings file install creates ends with a newline, as a text file does; one that
    ended without a newline still does (nothing changes but the keys installed)."""
    env = {**clean_env(), "HOME": str(tmp_path)}
    new = tmp_path / "settings.json"
    assert run_cli("install", "claude-code", "--settings", str(new), env=env).returncode == 0
    assert new.read_bytes().endswith(b"}\n")
    old = tmp_path / "old.json"
    old.write_bytes(b'{"a": 1}')
    assert run_cli("install", "claude-code", "--settings", str(old), env=env).returncode == 0
    assert old.read_bytes().endswith(b"}") and not old.read_bytes().endswith(b"\n")
    assert json.loads(old.read_bytes())["a"] == 1
