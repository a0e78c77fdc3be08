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

from .conftest import CACHE_DIR, EXAMPLE, INPUTS, clean_env, run_main
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
    assert len(compact_dp.load(kept).kinds) == 400        # not read twice


def test_a_loaded_session_can_be_copied_and_the_copy_decides_the_same():
    """copy asks for dunder names before __init__ has run; the session's delegation to
    its recording must say they are missing, not recurse."""
    import copy
    session = compact_dp.load(EXAMPLE)
    assert copy.copy(session).decide(**STATS).keep == session.decide(**STATS).keep == 54


def test_a_path_as_a_string_is_one_file_not_its_characters():
    assert compact_dp.load(str(EXAMPLE)).request_count > 0


def test_a_text_mode_file_is_a_clear_error():
    with open(EXAMPLE) as f, pytest.raises(BadValue, match="binary mode"):
        compact_dp.load(f)
    with pytest.raises(BadValue, match="not a path"):
        compact_dp.load(42)                            # type: ignore[arg-type]


def test_parameters_by_option_or_awk_name_and_errors_in_the_callers_words():
    by_option = compact_dp.load(EXAMPLE).decide(turns=5, requests=40, input_tokens=4e5)
    by_awk = compact_dp.load(EXAMPLE).decide(params={"t": "5", "total_requests": 40,
                                                     "total_input": 400000})
    assert (by_option.keep, by_option.benefit) == (by_awk.keep, by_awk.benefit)
    session = compact_dp.load(EXAMPLE)
    with pytest.raises(BadValue, match="^turnz: no such parameter$"):
        session.decide(params={"turnz": 5})
    with pytest.raises(TypeError, match="turnz"):        # a keyword: Python's own error
        session.decide(turnz=5)                         # type: ignore[call-arg]
    with pytest.raises(BadValue, match="^turns: given both as a keyword and in params$"):
        session.decide(turns=5, params={"t": 6})
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
    for name in ("compact", "keep", "core", "policy"):           # an answer, not a form
        with pytest.raises(AttributeError):
            setattr(d, name, None)


def test_load_and_decide_read_the_format_they_are_given(tmp_path):
    f = tmp_path / "s.jsonl"
    f.write_bytes(claude_session().text())
    assert compact_dp.load(f).format == "claude-code"
    as_lines = compact_dp.load(f, format="bash-agent")
    assert as_lines.format == "bash-agent"
    assert len(as_lines.kinds) == len(f.read_bytes().splitlines())
    d = compact_dp.decide(f, format="bash-agent", turns=1)
    assert d.as_dict()["session"]["format"] == "bash-agent"


# --- replay and prices: the commands' --json, as library calls ---------------------------

ENV = {"COMPACT_DP_DEBUG": "1", "COMPACT_DP_CACHE": CACHE_DIR}   # what run_main reads
CLAUDE, CODEX = str(EXAMPLES / "claude-code.jsonl"), str(EXAMPLES / "codex.jsonl")

# Each keyword of compact_dp.replay and the option of `compact-dp replay` that asks the same.
REPLAY_KEYWORDS = [
    ({}, []),
    ({"policies": ["dp", "never", "threshold:60"]},
     ["--policy", "dp", "--policy", "never", "--policy", "threshold:60"]),
    ({"by": "project", "sort": "cost"}, ["--by", "project", "--sort", "cost"]),
    ({"since": "20260102"}, ["--since", "20260102"]),
    ({"project": "nothing-like-it"}, ["--project", "nothing-like-it"]),
    ({"tokens": "bytes", "model": "v4.2", "keep": "best"},
     ["--tokens", "bytes", "--model", "v4.2", "--keep", "best"]),
    ({"compact_at": "request", "keep_tokens": 5000, "policies": ["dp", "threshold:50"]},
     ["--compact-at", "request", "--keep-tokens", "5000", "--policy", "dp",
      "--policy", "threshold:50"]),
    ({"price": "claude-sonnet-4-6", "cache_ttl": "1h"},
     ["--price", "claude-sonnet-4-6", "--cache-ttl", "1h"]),
    ({"auto_compact_tokens": "off", "params": {"beta": 0.2, "S": 900}},
     ["--auto-compact-tokens", "off", "--beta", "0.2", "--summary-tokens", "900"]),
    ({"auto_compact_tokens": 90000}, ["--auto-compact-tokens", "90000"]),
]


@pytest.mark.parametrize("paths", [[CLAUDE], [CODEX], [CLAUDE, CODEX]])
@pytest.mark.parametrize("keywords, options", REPLAY_KEYWORDS)
def test_replay_as_dict_is_what_replay_json_prints(paths, keywords, options):
    r = run_main("replay", "--json", "--jobs", "1", *options, *paths)
    assert r.status == 0, r.err
    got = compact_dp.replay(paths, jobs=1, environ=ENV, **keywords)
    assert got.as_dict() == json.loads(r.out)
    assert got.sessions == json.loads(r.out)["sessions"]


def test_replay_of_a_folder_skips_what_the_command_skips_and_says_nothing(tmp_path,
                                                                           capsys):
    (tmp_path / "a.jsonl").write_bytes((EXAMPLES / "codex.jsonl").read_bytes())
    (tmp_path / "notes.json").write_text('{"not": "a session"}')
    (tmp_path / "empty.jsonl").write_text("")
    cli = run_main("replay", "--json", "--jobs", "1", str(tmp_path))
    seen = []
    got = compact_dp.replay(tmp_path, jobs=1, environ=ENV,
                            progress=lambda done, total: seen.append((done, total)))
    assert got.as_dict() == json.loads(cli.out) and len(got.skipped) == 2
    assert seen == [(1, 3), (2, 3), (3, 3)]
    assert "left out" in cli.err and capsys.readouterr() == ("", "")


def test_replay_errors_name_the_keyword_where_the_command_names_the_option():
    for keywords, words in (({"by": "week"}, "by: 'week' is not one of"),
                            ({"sort": "size"}, "sort: 'size' is not one of"),
                            ({"since": "2026-13-01"}, "since: '2026-13-01' is not a date"),
                            ({"keep_tokens": 1.5}, "keep_tokens: 1.5 is not a whole number"),
                            ({"jobs": 0}, "jobs: 0 is not a whole number ≥ 1"),
                            ({"auto_compact_tokens": -1}, "auto_compact_tokens: -1 is not"),
                            ({"params": {"turns": 5}}, "turns: no such parameter of replay"),
                            ({"tokens": "lines"}, "tokens: 'lines' is not one of")):
        with pytest.raises(BadValue, match="^" + words):
            compact_dp.replay(CODEX, environ=ENV, **keywords)
    r = run_main("replay", "--keep-tokens", "1.5", CODEX)
    assert r.err == "compact-dp: error: --keep-tokens: '1.5' is not a whole number ≥ 0\n"


def test_replay_reads_the_users_profile_unless_told(tmp_path, monkeypatch):
    """As the decision does: the process's environment names the profile the command
    would use; ``profile=`` and ``environ=`` say otherwise."""
    from compact_dp.calibration.profile import BUILT_IN
    config = tmp_path / "config"
    assert run_main("calibrate", str(EXAMPLES), environ={"XDG_CONFIG_HOME": str(config)}
                    ).status == 0
    mine = str(config / "compact-dp" / "profile.json")
    monkeypatch.delenv("COMPACT_DP_PROFILE", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))

    def used(**keywords):
        (session,) = compact_dp.replay(CLAUDE, jobs=1, **keywords).sessions
        return session["profile"]["path"]
    assert used() == mine
    assert used(profile="none") == used(environ={}) == BUILT_IN
    assert used(environ={"COMPACT_DP_PROFILE": mine}, profile=BUILT_IN) == BUILT_IN
    assert compact_dp.load(CLAUDE).decide(now=NOW, profile="none").as_dict()[
        "session"]["profile"]["path"] == BUILT_IN


@pytest.mark.parametrize("models", [[], ["claude-opus-4-6"], ["gpt-5.6", "claude-sonnet-4-6"]])
def test_prices_as_dict_is_what_prices_json_prints(models):
    r = run_main("prices", "--json", *models)
    got = compact_dp.prices(models)
    assert got.as_dict() == json.loads(r.out)
    assert [m.llm for m in got.models] == [m["model"] for m in json.loads(r.out)["models"]]
    assert len(got.models) == (len(models) or len(json.loads(r.out)["models"]))


def test_prices_of_an_unknown_model_say_what_the_command_says():
    with pytest.raises(UsageError) as info:
        compact_dp.prices(["gpt-0"])
    assert run_main("prices", "gpt-0").err == f"compact-dp: {info.value.line()}\n"
    assert compact_dp.prices("claude-opus-4-6").models[0].llm == "claude-opus-4-6"


# --- the types a caller sees ----------------------------------------------------------------

def test_decide_takes_the_keywords_session_decide_takes_and_no_others():
    """compact_dp.decide writes Session.decide's keywords out again (so a type checker
    sees them): the two lists must stay one, with the parameters' names from their
    table."""
    import inspect

    from compact_dp import api
    from compact_dp.core.params import PARAMS
    method = inspect.signature(api.Session.decide).parameters
    function = inspect.signature(api.decide).parameters
    assert list(function) == ["source", "format", "tokens", *list(method)[1:]]
    for name, p in list(method.items())[1:]:
        assert function[name] == p
    assert [p.option.replace("-", "_") for p in PARAMS] == list(method)[1:len(PARAMS) + 1]
    assert typing_hints(api.decide)["keep"] == typing_hints(api.Session.decide)["keep"]
    for call in (api.decide, api.Session.decide, api.load, api.replay, api.prices):
        kinds = {p.kind for p in inspect.signature(call).parameters.values()}
        assert inspect.Parameter.VAR_KEYWORD not in kinds, call
        assert all(p.annotation is not inspect.Parameter.empty
                   for p in inspect.signature(call).parameters.values() if p.name != "self")


def typing_hints(call):
    import typing
    return typing.get_type_hints(call)


def test_the_literal_types_are_the_values_the_code_checks():
    import typing

    from compact_dp import api
    from compact_dp.agents import POINTS
    from compact_dp.core.horizon import HORIZONS
    from compact_dp.core.policy import TRIGGERS
    from compact_dp.question import KEEP_MODES
    from compact_dp.replaying.compare import BY, SORTS
    from compact_dp.sessions.recorder import TOKEN_MODES
    literal = {name: set(typing.get_args(getattr(api, name))) for name in
               ("Keep", "Trigger", "Tokens", "By", "Sort", "Point")}
    assert literal == {"Keep": set(KEEP_MODES), "Trigger": set(TRIGGERS),
                       "Tokens": set(TOKEN_MODES), "By": set(BY), "Sort": set(SORTS),
                       "Point": set(POINTS)}
    (words, number) = typing.get_args(api.Horizon)
    assert set(typing.get_args(words)) == set(HORIZONS) and number is float


def test_a_type_checker_sees_every_keyword_and_the_read_only_properties(tmp_path):
    """mypy on a caller's code, against the installed package (its py.typed): a mistyped
    keyword, a value no keyword takes and a write to a property are errors before
    anything runs."""
    (tmp_path / "caller.py").write_text(
        "import compact_dp\n"
        "compact_dp.decide('s.jsonl', turnz=5)\n"
        "compact_dp.load('s.jsonl').decide(keep='most')\n"
        "compact_dp.replay('s.jsonl', by='week')\n"
        "compact_dp.load('s.jsonl').format = 'codex'\n"
        "ok: int = compact_dp.decide('s.jsonl', turns=5, horizon=20).keep\n"
        "cost: object = compact_dp.prices(['gpt-5.6']).as_dict()['models']\n")
    p = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-error-summary",
                        "--cache-dir", str(tmp_path / "cache"), "caller.py"],
                       capture_output=True, text=True, cwd=tmp_path, env=clean_env())
    errors = sorted(int(line.split(":")[1]) for line in p.stdout.splitlines()
                    if ": error:" in line)
    assert errors == [2, 3, 4, 5], p.stdout + p.stderr
    assert 'did you mean "turns"' in p.stdout and "read-only" in p.stdout


def test_a_session_is_read_only_and_has_no_passthrough():
    """Its properties are copies of what the reader found: nothing a caller does to one
    changes a later decision."""
    from compact_dp import api
    session = compact_dp.load(EXAMPLE)
    assert "__getattr__" not in vars(api.Session)
    for name in ("format", "request_count", "kinds", "requests", "llms"):
        with pytest.raises(AttributeError):
            setattr(session, name, None)
    assert not hasattr(session, "peaks")               # not public: no passthrough
    with pytest.raises(AttributeError):
        session.anything_new = 1                       # no new attributes either
    assert isinstance(session.kinds, tuple) and len(session.kinds) == 400
    assert (session.request_count, session.user_turns) == (len(session.requests), 40)
    assert session.decide(**STATS).keep == 54
