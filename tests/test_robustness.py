"""No argument list, however odd, makes compact-dp raise: every failure is an exit status."""

from __future__ import annotations

import io
import sys

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compact_dp.main import main

from .conftest import INPUTS

WORDS = ["-v", "t=1", "-vt=abc", "-vmax_context=abc", "-v", "total_requests=5", "-f",
         "compact_turn_keep.awk", "-fcompact_dp.awk", "--model", "v2", "v4.2", "turn-keep",
         "v9", "--json", "--explain", "--", "-", "nofile.jsonl", str(INPUTS / "syn_12.jsonl"),
         str(INPUTS / "empty.jsonl"), str(INPUTS), "--turns", "abc", "1e999", "nan", "",
         "--trigger", "plan_clear", "later", "--context-tokens", "-5", "190000", "replay",
         "--policy", "threshold:x", "threshold:80", "never", "--jobs", "0", "2", "=",
         "1x=2", "x=", "--force-percent", "50.5", "--p-input", "-F", ",", "--help", "-h",
         "--keep-tokens", "--retention", "2", "--compactions", "1e12"]


class FakeStdin:
    buffer = io.BytesIO(b'{"role":"user","content":"hi"}\n')

    @staticmethod
    def isatty():
        return False


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(argv=st.lists(st.sampled_from(WORDS), max_size=8))
def test_any_arguments_end_in_an_exit_status(argv, capsys, monkeypatch):
    FakeStdin.buffer.seek(0)
    monkeypatch.setattr(sys, "stdin", FakeStdin)
    status = main(argv)
    out, err = capsys.readouterr()
    assert status in (0, 1, 2)
    assert "Traceback" not in err
    if status == 2 and "--help" not in argv and "-h" not in argv:
        assert err.strip(), "an error must say something"
