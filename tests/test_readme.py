"""The README shows real output: its ``$ compact-dp`` examples (and those of the docs that
show commands on the example sessions) print what they show, and its real-session
sections are what examples/live_numbers.py computes now."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from .conftest import NO_SHARED, ROOT, command_path

sys.path.insert(0, str(ROOT / "examples"))
import live_numbers  # noqa: E402


@pytest.mark.parametrize("doc", live_numbers.CONSOLE_DOCS, ids=lambda p: p.name)
def test_console_examples_print_what_they_show(doc):
    text = doc.read_text()
    bin_dir = str(Path(command_path()).parent)
    assert live_numbers.console_blocks(text, bin_dir) == text


def test_example_sections_are_computed_not_pasted():
    """The history section: the example sessions laid out as a home, replayed now."""
    computed = live_numbers.example_sections()
    text = (ROOT / "README.md").read_text()
    assert live_numbers.rewrite(text, computed) == text
    for body in computed.values():
        assert body in text


def test_the_replay_picture_is_drawn_from_the_example_session():
    """docs/replay-example.svg is what ``replay --plot`` draws now, from examples/."""
    assert live_numbers.PICTURE.read_text() == live_numbers.example_picture()


def test_real_session_sections_are_computed_not_pasted():
    computed = live_numbers.sections()
    if computed is None:
        pytest.skip(NO_SHARED)
    text = (ROOT / "README.md").read_text()
    assert live_numbers.rewrite(text, computed) == text
    for body in computed.values():
        assert body in text


def test_the_readme_calls_a_tie_with_a_threshold_a_tie():
    """dp beats a threshold only where it costs less: the same dollars, to the cent, are
    said as the same, and a threshold that saves more is named as doing better."""
    def said(dp: float, t60: float, t83: float) -> str:
        saves = {"dp": dp, "hindsight": 1.0, "threshold:60": t60, "threshold:83": t83}
        return live_numbers.long_words([("s", saves, 1, 1)])
    assert said(0.5, 0.1, 0.2).endswith("dp beats both thresholds.")
    assert said(0.5, 0.5, 0.5).endswith("dp costs the same as both thresholds.")
    assert said(0.5, 0.5, -1.0).endswith(
        "dp costs the same as threshold:60 and less than threshold:83.")
    assert said(0.5, 0.1, 0.9).endswith("threshold:83 would have done better than dp.")
