"""The price table: every model recorded sessions bill with is in it, sourced and dated, its
write prices follow each provider's stated rule, its caching granularity reaches ``Prices``,
and ``compact-dp prices`` shows it."""

from __future__ import annotations

import json

import pytest

from compact_dp.pricing.table import entries, find, table

from .conftest import run_main

# Models recorded sessions use that the table once billed at the defaults.
SESSION_MODELS = ["claude-fable-5", "gpt-5.5", "gpt-5.6-sol", "gpt-5.3-codex-spark", "gpt-5.4"]


@pytest.mark.parametrize("model", SESSION_MODELS)
def test_a_model_recorded_sessions_use_is_in_the_table_with_a_source_and_a_date(model):
    p = find(model)
    assert p is not None and p.known and p.llm == model
    assert p.source.startswith("https://") and p.date


def test_an_assumed_price_says_so_in_its_note():
    """OpenAI publishes no API price for Spark: the entry must not pass for a real one."""
    assert "ASSUMED" in find("gpt-5.3-codex-spark").note


def test_no_entry_is_dated_after_the_day_the_table_was_checked():
    checked = table()["checked"]
    assert all(p.date <= checked for p in entries()), checked


def test_anthropic_writes_cost_1_25x_input_for_5_minutes_and_2x_for_an_hour():
    for p in entries():
        if p.provider == "anthropic":
            assert p.cache_write == {"5m": 1.25 * p.input, "1h": 2 * p.input}, p.llm


def test_openai_writes_cost_input_before_gpt_5_6_and_1_25x_for_30_minutes_from_it():
    for p in entries():
        if p.provider != "openai":
            continue
        if p.llm.startswith("gpt-5.6"):
            assert p.cache_write == {"30m": 1.25 * p.input} and p.default_ttl == "30m"
        else:
            assert p.cache_write is None and p.write() == p.input, p.llm


def test_openai_caches_128_token_blocks_from_1024_tokens_before_gpt_5_6_only():
    for p in entries():
        if p.provider == "openai" and not p.llm.startswith("gpt-5.6"):
            assert (p.cache_block, p.cache_min) == (128, 1024), p.llm
        else:
            assert (p.cache_block, p.cache_min) == (None, None), p.llm


def test_prices_json_has_the_cache_granularity():
    r = run_main("prices", "--json", "gpt-5", "gpt-5.6-terra", "claude-opus-4-6")
    assert r.status == 0
    rows = [(m["cache_block"], m["cache_min"]) for m in json.loads(r.out)["models"]]
    assert rows == [(128, 1024), (None, None), (None, None)]


def test_prices_lists_each_session_model_with_its_date():
    r = run_main("prices", *SESSION_MODELS)
    assert r.status == 0
    for model in SESSION_MODELS:
        row = next(x for x in r.out.splitlines() if f"|{model} " in x)
        assert find(model).date in row


def test_prices_lists_them_all_without_arguments():
    r = run_main("prices")
    assert r.status == 0
    assert all(f"|{model} " in r.out for model in SESSION_MODELS)


def test_prices_json_has_each_session_models_source_date_and_note():
    r = run_main("prices", "--json", *SESSION_MODELS)
    assert r.status == 0
    rows = {m["model"]: m for m in json.loads(r.out)["models"]}
    assert list(rows) == SESSION_MODELS
    for model, row in rows.items():
        p = find(model)
        assert (row["source"], row["date"], row["note"]) == (p.source, p.date, p.note)
