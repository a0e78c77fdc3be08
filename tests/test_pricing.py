"""The price table: its write prices follow each provider's stated rule, its caching
granularity reaches ``Prices``, and ``compact-dp prices --json`` shows it."""

from __future__ import annotations

import json

from compact_dp.pricing.table import entries, table

from .conftest import run_main


def test_no_entry_is_dated_after_the_day_the_table_was_checked():
    checked = table()["checked"]
    assert all(p.date <= checked for p in entries()), checked


def test_anthropic_writes_cost_1_25x_input_for_5_minutes_and_2x_for_an_hour():
    for p in entries():
        if p.provider == "anthropic":
            assert p.cache_write == {"5m": 1.25 * p.input, "1h": 2 * p.input}, p.model


def test_openai_writes_cost_input_before_gpt_5_6_and_1_25x_for_30_minutes_from_it():
    for p in entries():
        if p.provider != "openai":
            continue
        if p.model.startswith("gpt-5.6"):
            assert p.cache_write == {"30m": 1.25 * p.input} and p.default_ttl == "30m"
        else:
            assert p.cache_write is None and p.write() == p.input, p.model


def test_openai_caches_128_token_blocks_from_1024_tokens_before_gpt_5_6_only():
    for p in entries():
        if p.provider == "openai" and not p.model.startswith("gpt-5.6"):
            assert (p.cache_block, p.cache_min) == (128, 1024), p.model
        else:
            assert (p.cache_block, p.cache_min) == (None, None), p.model


def test_prices_json_has_the_cache_granularity():
    r = run_main("prices", "--json", "gpt-5", "gpt-5.6-terra", "claude-opus-4-6")
    assert r.status == 0
    rows = [(m["cache_block"], m["cache_min"]) for m in json.loads(r.out)["models"]]
    assert rows == [(128, 1024), (None, None), (None, None)]
