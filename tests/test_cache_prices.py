"""What a cache write costs and how long a cache lives (docs/pricing.md): the write price
of each TTL, the clock's boundaries (a gap exactly at the TTL, the 15 s grace past it),
OpenAI's 1,024-token minimum and 128-token blocks, and the defaults a model the table does
not know gets."""

from __future__ import annotations

import json

import pytest

from compact_dp.pricing.clock import GRACE, is_warm
from compact_dp.pricing.table import find, parse_ttl
from compact_dp.replaying.billing import Cache, cached_part, input_cost, readable

from .conftest import run_main, write
from .session_fixtures import ClaudeSession, CodexRollout, text


def test_the_grace_is_15_seconds():
    assert GRACE == 15.0


# --- write prices ----------------------------------------------------------------------------

def test_an_anthropic_write_costs_the_price_of_its_ttl():
    opus = find("claude-opus-4-6")
    assert (opus.write("5m"), opus.write("1h"), opus.write(None)) == (6.25, 10.0, 6.25)
    assert opus.write("30m") == 6.25                     # a TTL it has no price for: its own


def test_a_write_without_a_premium_costs_input_and_gpt_5_6_writes_cost_its_30_minute_price():
    gpt = find("gpt-5.1-codex")
    assert (gpt.write("5m"), gpt.write("1h"), gpt.write(None)) == (1.25, 1.25, 1.25)
    terra = find("gpt-5.6-terra")
    assert terra.write("30m") == terra.cache_write["30m"] == 1.25 * terra.input
    assert terra.write("5m") == terra.write("30m")


def test_a_bill_prices_1_hour_writes_apart_from_5_minute_ones():
    opus = find("claude-opus-4-6")
    # 1,000 read, 3,000 written of which 2,000 with the 1-hour TTL, 7 uncached
    assert input_cost(opus, 1000, 3000, "5m", 7, write_1h=2000) == pytest.approx(
        (1000 * 0.5 + 1000 * 6.25 + 2000 * 10 + 7 * 5) / 1e6, rel=1e-12)
    assert input_cost(opus, 0, 3000, "1h") == pytest.approx(3000 * 10 / 1e6, rel=1e-12)


# --- the clock -------------------------------------------------------------------------------

@pytest.mark.parametrize("idle, warm", [(300, True), (314.99, True), (315, True),
                                        (315.01, False), (600, False)])
def test_a_5_minute_cache_answers_up_to_15_seconds_past_its_ttl(idle, warm):
    assert is_warm(1000.0, 1000.0 + idle, 300.0) is warm


def test_a_clock_without_times_never_expires():
    assert is_warm(None, 10.0**9, 300.0) and is_warm(5.0, None, 300.0)


def session_ending_at(tmp_path, ttl: str = "5m"):
    """A one-request Claude Code session; returns its file and when its response ended."""
    s = ClaudeSession()
    s.user("hi")
    s.response([text("hello")], (3, 1000, 0), ttl=ttl)
    f = write(tmp_path, s.text())
    from compact_dp.sessions.read import read_session
    return f, read_session([str(f)]).last_time(None)


def cache_at(f, now: float, *args: str) -> dict:
    r = run_main("--json", "--now", repr(now), *args, str(f))
    assert r.status == 0, r.err
    return json.loads(r.out)["session"]["cache"]


@pytest.mark.parametrize("ttl, idle, state, left", [
    ("5m", 300, "warm", 0.0), ("5m", 315, "warm", 0.0), ("5m", 316, "cold", 0.0),
    ("5m", 120, "warm", 180.0), ("1h", 3615, "warm", 0.0), ("1h", 3616, "cold", 0.0),
    ("1h", 1200, "warm", 2400.0)])
def test_the_decisions_cache_state_at_the_ttl_and_past_it(ttl, idle, state, left, tmp_path):
    f, last = session_ending_at(tmp_path, ttl)
    cache = cache_at(f, last + idle)
    assert (cache["state"], cache["ttl"], cache["idle_seconds"], cache["seconds_left"]) == (
        state, ttl, float(idle), left)


def test_the_cold_cache_changes_the_decision_terms(tmp_path):
    f, last = session_ending_at(tmp_path)
    warm = json.loads(run_main("--json", "--now", repr(last + 315), str(f)).out)
    cold = json.loads(run_main("--json", "--now", repr(last + 316), str(f)).out)
    assert warm["terms"]["cold_rewrite"] == 0.0 and cold["terms"]["cold_rewrite"] > 0


def test_cache_ttl_and_p_write_given_win_and_say_so(tmp_path):
    f, last = session_ending_at(tmp_path)
    cache = cache_at(f, last + 600, "--cache-ttl", "1h")
    assert (cache["state"], cache["ttl"], cache["ttl_source"], cache["p_write"],
            cache["p_write_source"]) == ("warm", "1h", "--cache-ttl", 10.0,
                                         "price table, 1h writes")
    cache = cache_at(f, last + 600, "--p-write", "7.5")
    assert (cache["state"], cache["p_write"], cache["p_write_source"]) == (
        "cold", 7.5, "given")


@pytest.mark.parametrize("text, seconds", [("5m", 300.0), ("1h", 3600.0), ("90s", 90.0),
                                           ("1.5h", 5400.0), ("600", 600.0), ("2m", 120.0)])
def test_a_ttl_is_minutes_hours_or_seconds(text, seconds):
    assert parse_ttl(text) == seconds


@pytest.mark.parametrize("text", ["0", "-5m", "soon", "m", ""])
def test_a_ttl_that_is_no_time_is_refused(text):
    with pytest.raises(ValueError):
        parse_ttl(text)


# --- OpenAI's granularity --------------------------------------------------------------------

@pytest.mark.parametrize("shared, read", [(1023, 0.0), (1024, 1024.0), (1151, 1024.0),
                                          (1152, 1152.0), (5000, 4992.0)])
def test_openai_reads_whole_128_token_blocks_from_1024_tokens(shared, read):
    assert cached_part(shared, find("gpt-5.1-codex")) == read


def test_anthropic_and_gpt_5_6_read_any_length():
    for model in ("claude-opus-4-6", "gpt-5.6-terra"):
        assert cached_part(1023, find(model)) == 1023 and cached_part(1151, find(model)) == 1151


def test_a_warm_cache_reads_what_the_prompt_shares_with_it_in_the_providers_steps():
    gpt = find("gpt-5.1-codex")
    cache = Cache(2000, 100.0, "5m")
    assert readable(cache, 400.0, 2500, gpt) == 1920.0         # 2,000 shared: 15 blocks
    assert readable(cache, 400.0, 1500, gpt) == 1408.0         # the prompt is shorter
    assert readable(cache, 416.0, 2500, gpt) == 0.0            # past the TTL and grace
    assert readable(None, 400.0, 2500, gpt) == 0.0


def test_a_codex_replay_reads_in_128_token_blocks(tmp_path):
    """Three requests a few seconds apart, each a little longer: the replay of what
    happened reads 1,920 then 2,048 tokens — whole blocks of what the cache held."""
    c = CodexRollout(model="gpt-5.1-codex")
    c.user("one")
    c.token_count(2000)
    c.user("two")
    c.token_count(2100, 1920)
    c.user("three")
    c.token_count(2300, 2048)
    f = write(tmp_path, c.text(), "rollout.jsonl")
    r = run_main("replay", "--json", "--policy", "never", str(f))
    assert r.status == 0, r.err
    never = json.loads(r.out)["sessions"][0]["policies"][0]
    assert never["policy"] == "never" and never["cache_read_tokens"] == 1920 + 2048


# --- a model the table does not know ---------------------------------------------------------

def unknown_model_json(tmp_path, built, name: str) -> dict:
    r = run_main("--json", "--now", "1800000000", str(write(tmp_path, built.text(), name)))
    assert r.status == 0, r.err
    assert r.err == ("compact-dp: warning: model 'mystery-model-1' is not in the price "
                     "table: using the default prices (--price MODEL or --p-* to set them)\n")
    return json.loads(r.out)["session"]


@pytest.mark.parametrize("fmt, ttl, window", [("claude-code", "5m", 200000),
                                              ("codex", "2h", 272000)])
def test_an_unknown_model_gets_the_documented_defaults_and_its_agents_ttl(fmt, ttl, window,
                                                                          tmp_path):
    """The parameters' prices, no write premium, the agent's provider's TTL, and the
    window the agent reported (Codex does) or the default."""
    if fmt == "claude-code":
        built = ClaudeSession(model="mystery-model-1")
        built.user("hi")
        built.response([text("a")], (3, 1000, 0), split=False)
        lines = [json.loads(x) for x in built.lines]
        del lines[-1]["message"]["usage"]["cache_creation_input_tokens"]   # nothing written
        built.lines = [json.dumps(x) for x in lines]
    else:
        built = CodexRollout(model="mystery-model-1")
        built.user("hi")
        built.token_count(1003)
    got = unknown_model_json(tmp_path, built, f"{fmt}.jsonl")
    prices, cache = got["prices"], got["cache"]
    assert {k: prices[k] for k in ("model", "known", "input", "cache_read", "cache_write",
                                   "output", "context_window")} == {
        "model": "(defaults)", "known": False, "input": 3.0, "cache_read": 0.3,
        "cache_write": None, "output": 15.0, "context_window": window}
    assert prices["source"] == "the parameters (no price table entry)"
    assert (cache["ttl"], cache["ttl_source"], cache["p_write"], cache["p_write_source"]) == (
        ttl, "default", 3.0, "no write premium: writes cost input")
    assert got["warnings"] == ["model 'mystery-model-1' is not in the price table: using "
                               "the default prices (--price MODEL or --p-* to set them)"]


@pytest.mark.parametrize("model, found, window", [
    # (the model's own window is 1M, prices.json with its source; the 200k that Claude Code
    # opened before 2026-03-13 is the agent's rule, agents.py, not the table's)
    ("claude-opus-4-6", "claude-opus-4-6", 1_000_000),
    ("claude-opus-4-6-20260205", "claude-opus-4-6", 1_000_000),   # an alias
    ("claude-opus-4-6-20991231", "claude-opus-4-6", 1_000_000),   # any date suffix
    ("claude-haiku-4-5", "claude-haiku-4-5", 200000),
    ("claude-opus-4-6[1m]", "claude-opus-4-6", 1_000_000),        # the 1M window
    ("claude-sonnet-4-5[1m]", "claude-sonnet-4-5", 1_000_000),    # ... past the table's
    ("claude-sonnet-4-5-20250929[1M]", "claude-sonnet-4-5", 1_000_000),   # in any case
    ("claude-opus-4-9", None, None), ("opus", None, None), ("", None, None)])
def test_model_ids_match_exactly_by_alias_or_without_a_date_never_by_likeness(
        model, found, window):
    p = find(model)
    assert (p.llm, p.context_window) == (found, window) if found else p is None


@pytest.mark.parametrize("gap, read", [(315, 1000), (316, 0)])
def test_a_replay_reads_a_cache_sent_to_up_to_15_seconds_past_its_ttl(gap, read, tmp_path):
    """From the end of the last response to the sending of the next prompt: 315 s on a
    5-minute cache still reads, 316 s does not."""
    s = ClaudeSession()
    s.user("hi")
    s.response([text("a")], (3, 1000, 0))
    s.pause(gap - 2)
    s.user("more")                                     # sent `gap` s after the response
    s.response([text("b")], (1, 100, 1000) if read else (1, 1100, 0))
    r = run_main("replay", "--json", "--policy", "never", str(write(tmp_path, s.text())))
    never = json.loads(r.out)["sessions"][0]["policies"][0]
    assert never["cache_read_tokens"] == read


def test_a_moment_before_the_last_response_is_no_idle_time(tmp_path):
    f, last = session_ending_at(tmp_path)
    cache = cache_at(f, last - 100)
    assert (cache["state"], cache["idle_seconds"], cache["seconds_left"]) == (
        "warm", 0.0, 300.0)


def test_a_known_model_with_no_write_recorded_takes_its_providers_ttl_and_write_price(
        tmp_path):
    from compact_dp.sessions.read import read_session
    c = CodexRollout(model="gpt-5.1-codex")
    c.user("hi")
    c.token_count(5000)
    f = write(tmp_path, c.text(), "rollout.jsonl")
    last = read_session([str(f)]).last_time(None)
    cache = cache_at(f, last + 3600)
    assert {k: cache[k] for k in ("state", "ttl", "ttl_seconds", "ttl_source", "p_write",
                                  "p_write_source", "seconds_left")} == {
        "state": "warm", "ttl": "2h", "ttl_seconds": 7200.0, "ttl_source": "openai default",
        "p_write": 1.25, "p_write_source": "no write premium: writes cost input",
        "seconds_left": 3600.0}
