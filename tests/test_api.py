"""The Python API (docs/api.md): load a session, ask it, read the answer as --json does."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

import compact_dp
from compact_dp.errors import BadValue, CompactDpError, UsageError

from .conftest import EXAMPLE, INPUTS, clean_env, run_main
from .session_fixtures import claude_session

STATS = {"turns": 5, "requests": 40, "input_tokens": 400000}
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
NOW = 1_800_000_000.0


def test_every_kind_of_source_gives_the_same_decision():
    data = EXAMPLE.read_bytes()
    lines = data.rstrip(b"\n").split(b"\n")
    kept = [x + b"\n" for x in lines]                  # lines that keep their newline
    sources = (EXAMPLE, str(EXAMPLE), data, io.BytesIO(data), lines,
               [x.decode() for x in lines], kept, [x.decode() for x in kept])
    answers = {compact_dp.load(src).decide(**STATS).keep for src in sources}
    assert answers == {54}
    assert len(compact_dp.load(kept).recording.kinds) == 400        # not read twice


def test_a_loaded_session_can_be_copied_and_the_copy_decides_the_same():
    """copy asks for dunder names before __init__ has run; the session's delegation to
    its recording must say they are missing, not recurse."""
    import copy
    session = compact_dp.load(EXAMPLE)
    assert copy.copy(session).decide(**STATS).keep == session.decide(**STATS).keep == 54


def test_a_path_as_a_string_is_one_file_not_its_characters():
    assert compact_dp.load(str(EXAMPLE)).recording.request_count > 0


def test_a_text_mode_file_is_a_clear_error():
    with open(EXAMPLE) as f, pytest.raises(BadValue, match="binary mode"):
        compact_dp.load(f)
    with pytest.raises(BadValue, match="not a path"):
        compact_dp.load(42)                            # type: ignore[arg-type]


def test_parameters_by_option_or_awk_name_and_errors_in_the_callers_words():
    by_option = compact_dp.load(EXAMPLE).decide(turns=5, requests=40, input_tokens=4e5)
    by_awk = compact_dp.load(EXAMPLE).decide(t="5", total_requests=40, total_input=400000)
    assert (by_option.keep, by_option.benefit) == (by_awk.keep, by_awk.benefit)
    session = compact_dp.load(EXAMPLE)
    with pytest.raises(BadValue, match="^turnz: no such parameter$"):
        session.decide(turnz=5)
    with pytest.raises(BadValue, match="^turns: 'five' is not a number$"):
        session.decide(turns="five")
    with pytest.raises(BadValue, match="^retention: 1.5 is out of range"):
        session.decide(retention=1.5)
    with pytest.raises(BadValue, match="^keep: 'most'"):
        session.decide(keep="most")


def test_the_command_line_says_the_same_errors_as_options():
    r = run_main("--retention", "1.5", str(EXAMPLE))
    assert r.err.startswith("compact-dp: error: --retention: '1.5' is out of range")
    r = run_main("--cache-ttl", "soon", str(EXAMPLE), "--model", "cache-clock")
    assert "--cache-ttl:" in r.err


def test_one_error_type_for_callers():
    """Every failure a caller can cause is a CompactDpError with its exit status."""
    for call in (lambda: compact_dp.load(EXAMPLE).decide(turns="x"),
                 lambda: compact_dp.load(INPUTS / "missing.jsonl"),
                 lambda: compact_dp.load(EXAMPLE).decide(model="v9"),
                 lambda: compact_dp.load(EXAMPLE).decide(trigger="later")):
        with pytest.raises(CompactDpError) as info:
            call()
        assert info.value.status == 2 and info.value.line().startswith(("error", "fatal"))
    assert issubclass(BadValue, UsageError)


def test_env_only_when_asked():
    session = compact_dp.load(EXAMPLE)
    plain = session.decide(model="v3.0.7", **STATS)
    small = session.decide(environ={"DP_MIN_KEEP_RATIO": "0.5"}, **STATS)
    assert plain.derived.min_keep == 48 and small.derived.min_keep == 200


def test_a_trigger_asks_for_the_agents_whole_policy():
    r = compact_dp.load(EXAMPLE).decide(trigger="auto", context_tokens=185000, **STATS)
    assert (r.action, r.keep, r.forced, r.exit_status) == ("compact", 54, False, 0)
    r = compact_dp.load(INPUTS / "edge_no_user_lines.jsonl").decide(
        trigger="auto", context_tokens=1000, **STATS)
    assert (r.action, r.keep, r.exit_status) == ("skip", 0, 1)


def test_as_dict_is_what_json_prints(tmp_path):
    f = tmp_path / "s.jsonl"
    f.write_bytes(claude_session().text())
    now = 1_800_000_000.0
    cli = json.loads(run_main("--json", "--now", str(now), str(f)).out)
    api = compact_dp.load(f).decide(now=now).as_dict()
    assert api == cli
    assert api["schema_version"] == 1 and api["derived"]["horizon"] == "auto"


def test_importing_the_package_is_light():
    """``import compact_dp`` alone pulls in nothing but the package's own __init__."""
    p = subprocess.run([sys.executable, "-c", "import sys, compact_dp; "
                        "print(sorted(m for m in sys.modules if m.startswith('compact_dp')))"],
                       capture_output=True, text=True, env=clean_env(), cwd="/")
    assert p.stdout.strip() == "['compact_dp', 'compact_dp.version']"


def test_a_horizon_given_as_a_whole_number_is_a_number_of_requests():
    """``horizon=20`` is what a caller writes; it must mean 20.0 requests, not fail."""
    session = compact_dp.load(EXAMPLES / "claude-code.jsonl")
    as_int = session.decide(now=NOW, horizon=20).as_dict()
    assert as_int == session.decide(now=NOW, horizon=20.0).as_dict()
    assert as_int["derived"]["R"] == 20.0 and as_int["derived"]["horizon"] == "fixed"


def test_every_example_of_docs_api_md_runs_and_prints_what_it_shows(monkeypatch):
    """The blocks of docs/api.md, run in order in one namespace (as a reader would type
    them) from the repository's root; each output is compared as doctest does."""
    import doctest
    import re
    root = EXAMPLES.parent
    text = (root / "docs" / "api.md").read_text()
    blocks = re.findall(r"```pycon\n(.*?)```", text, re.S)
    assert len(blocks) >= 7
    monkeypatch.chdir(root)
    test = doctest.DocTestParser().get_doctest("".join(blocks), {}, "docs/api.md",
                                               "docs/api.md", 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    out = io.StringIO()
    result = runner.run(test, out=out.write)
    assert result.failed == 0 and result.attempted >= 20, out.getvalue()


# Each keyword of Session.decide and the command-line option that asks the same.
KEYWORDS = [
    ({}, []),
    ({"keep": "best"}, ["--keep", "best"]),
    ({"model": "v4.2"}, ["--model", "v4.2"]),
    ({"price": "claude-sonnet-4-6"}, ["--price", "claude-sonnet-4-6"]),
    ({"cache_ttl": "1h"}, ["--cache-ttl", "1h"]),
    ({"p_write": 3.5}, ["--p-write", "3.5"]),
    ({"horizon": "seed"}, ["--horizon", "seed"]),
    ({"horizon": 12.0}, ["--horizon", "12"]),
    ({"turns": 9, "summary_tokens": 4000}, ["--turns", "9", "--summary-tokens", "4000"]),
    ({"trigger": "plan_clear"}, ["--trigger", "plan_clear"]),
    ({"context_tokens": 190000}, ["--context-tokens", "190000"]),      # trigger auto
    ({"trigger": "auto", "context_tokens": 150000, "force_percent": 50},
     ["--trigger", "auto", "--context-tokens", "150000", "--force-percent", "50"]),
]


@pytest.mark.parametrize("keywords, options", KEYWORDS)
def test_each_keyword_asks_what_its_option_asks(keywords, options, tmp_path):
    f = tmp_path / "s.jsonl"
    f.write_bytes(claude_session().text())
    r = run_main("--json", "--now", str(NOW), *options, str(f))
    api = compact_dp.load(f).decide(now=NOW, **keywords)
    assert api.as_dict() == json.loads(r.out)
    assert api.exit_status == r.status


def test_environ_is_read_as_the_command_reads_the_environment(tmp_path):
    f = tmp_path / "s.jsonl"
    f.write_bytes(claude_session().text())
    environ = {"DP_BETA": "0.2", "COMPACT_DP_MODEL": "v3.0.7"}
    cli = json.loads(run_main("--json", "--now", str(NOW), str(f), environ=environ).out)
    api = compact_dp.load(f).decide(now=NOW, environ=environ).as_dict()
    assert api == cli and api["model"] == "v3.0.7"


def test_load_takes_the_format_and_the_token_mode_the_command_takes(tmp_path):
    f = tmp_path / "s.jsonl"
    f.write_bytes(claude_session().text())
    cli = json.loads(run_main("--json", "--now", str(NOW), "--tokens", "bytes",
                              "--format", "claude-code", str(f)).out)
    api = compact_dp.load(f, format="claude-code", tokens="bytes").decide(now=NOW)
    assert api.as_dict() == cli and cli["session"]["tokens"] == "bytes"
    short = compact_dp.decide(f, format="claude-code", tokens="bytes", now=NOW)
    assert short.as_dict() == cli


def test_a_decision_reads_the_same_as_its_dict(tmp_path):
    """compact, keep, benefit, action, reason, forced: the object's words are the dict's —
    a policy's where one was asked (here forced, where the cost model says skip)."""
    f = tmp_path / "s.jsonl"
    f.write_bytes(claude_session().text())
    for source, keywords in ((EXAMPLE, STATS), (EXAMPLE, {**STATS, "trigger": "plan_clear"}),
                             (EXAMPLE, {**STATS, "keep": "best"}), (f, {"now": NOW}),
                             (f, {"now": NOW, "trigger": "plan_clear"})):
        d = compact_dp.load(source).decide(**keywords)
        obj = d.as_dict()
        assert d.action == obj.get("action", obj["decision"])
        assert d.compact == (d.action == "compact") and d.keep == obj["keep"]
        assert d.benefit == obj["best_benefit"] and d.reason == obj["reason"]
        assert d.forced == obj.get("forced", False)
        assert d.terms.benefit == obj["terms"]["benefit"]
        assert d.derived.R == obj["derived"]["R"]
        assert d.exit_status == (1 if obj.get("action") == "skip" else 0)
    assert (d.compact, d.core.compact, d.forced) == (True, False, True)


def test_load_and_decide_read_the_format_they_are_given(tmp_path):
    f = tmp_path / "s.jsonl"
    f.write_bytes(claude_session().text())
    assert compact_dp.load(f).format == "claude-code"
    as_lines = compact_dp.load(f, format="bash-agent")
    assert as_lines.format == "bash-agent"
    assert len(as_lines.kinds) == len(f.read_bytes().splitlines())
    d = compact_dp.decide(f, format="bash-agent", turns=1)
    assert d.as_dict()["session"]["format"] == "bash-agent"
