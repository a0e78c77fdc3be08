"""A summary and a full session are the same numbers (sessions.recorder, sessions.sizing).

The status line keeps no message of a transcript, only totals, and reads it a piece at a
time; ``--json`` reads the file whole.  Both must decide alike, so every total must agree —
after any line, resumed from a saved state at any line, on fixtures and on real sessions.
"""

from __future__ import annotations

import marshal
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from compact_dp.sessions.incremental import read_incremental
from compact_dp.sessions.read import read_session
from compact_dp.sessions.recorder import Recorder
from compact_dp.sessions.session import ASSISTANT, CONTEXT, KINDS, TOOL, USER

from .conftest import SHARED, transcripts
from .session_fixtures import claude_session, codex_lines


def grow_line_by_line(data: bytes, tmp_path: Path, every: int = 1) -> None:
    """Append ``data`` to a file a few lines at a time; after each append the status line's
    incremental read equals a full read of the file so far."""
    lines = data.split(b"\n")
    tmp_path.mkdir(parents=True, exist_ok=True)
    f = tmp_path / "live.jsonl"
    f.write_bytes(b"")
    cache = str(tmp_path / "cache")
    for i in range(0, len(lines), every):
        with open(f, "ab") as out:
            out.write(b"\n".join(lines[i:i + every]) + (b"\n" if i + every < len(lines)
                                                        else b""))
        live = read_incremental(str(f), cache).session
        whole = read_session([str(f)])
        assert live is not None and not live.full and whole.full
        assert live.totals() == whole.totals(), (i, f.read_bytes()[-200:])


def test_a_claude_code_transcript_read_as_it_grows_is_the_whole_file(tmp_path):
    grow_line_by_line(claude_session().text(), tmp_path)


def test_a_codex_rollout_read_as_it_grows_is_the_whole_file(tmp_path):
    lines, _ = codex_lines()
    grow_line_by_line(("\n".join(lines) + "\n").encode(), tmp_path)


def test_a_transcript_cut_mid_line_is_summed_like_the_whole_file(tmp_path):
    data = claude_session().text()
    f = tmp_path / "cut.jsonl"
    cache = str(tmp_path / "cache")
    for at in range(len(data) // 3, len(data), max(1, len(data) // 40)):
        f.write_bytes(data[:at])
        assert read_incremental(str(f), cache).session.totals() == \
            read_session([str(f)]).totals()


def test_real_sessions_read_as_they_grow_are_the_whole_files(tmp_path):
    for path in transcripts():
        data = path.read_bytes()
        lines = data.count(b"\n")
        grow_line_by_line(data, tmp_path / path.stem, every=max(1, lines // 12))


def test_the_corpus_sample_sums_alike():
    corpus = Path.home() / ".cache" / "compact-dp-corpus"
    if not (SHARED / "transcripts" / "corpus").is_dir() or not corpus.is_dir():
        import pytest
        pytest.skip("needs the unpacked shared corpus (../shared/transcripts/corpus/unpack)")
    files = sorted(p for p in corpus.rglob("*.jsonl")
                   if "subagents" not in p.parts and not p.name.startswith("agent-"))
    for path in files[::25]:
        from compact_dp.sessions.read import read_session as full
        from compact_dp.sessions.read import reader_for
        from compact_dp.sessions.sniff import sniff
        fmt = sniff(path.read_bytes()[:65536])
        reader = reader_for(fmt, keep=False)
        from compact_dp.lightjson import loads
        for line in path.read_bytes().split(b"\n"):
            if line.strip():
                try:
                    reader.feed(loads(line))
                except ValueError:
                    reader.skip_bad_line()
        assert reader.session(str(path)).totals() == full([str(path)]).totals(), path


# --- any sequence of events ------------------------------------------------------------------

# small prompts next to message sizes of up to ~1,250 tokens: the cases where messages
# exceed a prompt, prompts shrink and growth has no message to go to all come up
usage = st.lists(st.integers(0, 3000), min_size=5, max_size=5)
event = st.one_of(
    st.tuples(st.just("message"), st.sampled_from(KINDS), st.integers(0, 5000)),
    st.tuples(st.just("grow"), st.integers(0, 3000)),
    st.tuples(st.just("request"), st.integers(-2, 3), st.none() | usage),
    st.tuples(st.just("usage"), usage),
    st.tuples(st.just("compaction"),),
    st.tuples(st.just("turn"),),
    st.tuples(st.just("save"),),
)


def play(events, keep: bool, tokens: str, clock: bool = True) -> Recorder:
    """The events fed to a recorder; a "save" stops it and resumes from its saved state,
    as the status line does between calls."""
    rec = Recorder("claude-code", tokens, keep)
    newest = -1
    for e in events:
        if e[0] == "message":
            newest = rec.message(e[1], e[2])
        elif e[0] == "grow" and newest >= 0:
            rec.grow(newest, e[1])
        elif e[0] == "request":
            rec.request(max(0, rec.message_count + e[1]),
                        float(len(events)) if clock else None, "m", e[2])
        elif e[0] == "usage":
            rec.usage(list(e[1]))
        elif e[0] == "compaction":
            rec.compaction(None)
            newest = -1
        elif e[0] == "turn":
            rec.turn()
        elif e[0] == "save":
            rec = Recorder.from_state(marshal.loads(marshal.dumps(rec.state())))
    return rec


@settings(max_examples=300)
@given(st.lists(event, max_size=60), st.sampled_from(["auto", "bytes"]))
def test_any_events_give_the_same_totals_kept_or_summed_and_resumed_anywhere(events, tokens):
    assert play(events, True, tokens).session().totals() == \
        play(events, False, tokens).session().totals()


@settings(max_examples=300)
@given(st.lists(event, max_size=60))
def test_the_prefix_the_sizes_and_the_adjustments_are_every_recorded_prompt(events):
    """The usage rule: within a context, V, the sizes of the messages a request saw and
    the adjustments up to it sum to its recorded prompt — unless a removal emptied the
    context and took from V — and no size changes once given."""
    rec = play([e for e in events if e[0] in ("message", "grow", "request", "compaction")],
               True, "usage", clock=False)
    s = rec.session()
    for seg in range(len(s.compactions) + 1):
        bounds = [0, *(c.at for c in s.compactions), len(s.kinds)]
        start, end = bounds[seg], bounds[seg + 1]
        reqs = [r for r in s.requests if r.segment == seg and r.usage is not None]
        assert all(t >= 0 for t in s.tokens[start:end])
        if not reqs:
            continue
        V = s.segment_prefixes[seg]
        seen, adjusted, sums = start, 0, []
        for r in reqs:
            seen = min(max(r.seen, seen), end)
            adjusted += r.adjust
            sums.append((V + sum(s.tokens[start:seen]) + adjusted, r.usage.prompt))
        if V == reqs[0].usage.prompt - sum(s.tokens[start:min(max(reqs[0].seen, start),
                                                                  end)]):
            assert all(a == b for a, b in sums)        # V was never taken from
    assert s.live_tokens == sum(s.tokens[s.live_start:]) + sum(
        r.adjust for r in s.requests if r.segment == len(s.compactions))
    assert s.live_user_count == sum(1 for k in s.kinds[s.live_start:] if k == USER)


def test_the_summary_of_a_compaction_is_its_opening_context_at_its_first_size():
    rec = Recorder("claude-code", "usage", True)
    rec.message(USER, 400)
    rec.request(1, None, "m", [3, 10_000, 0, 0, 5])
    rec.message(ASSISTANT, 800)
    rec.compaction(None)
    rec.message(CONTEXT, 4000)                 # the summary
    rec.message(CONTEXT, 8000)                 # re-injected files
    rec.message(USER, 100)
    rec.request(5, None, "m", [3, 9000, 21_000, 0, 5])
    rec.message(ASSISTANT, 500)
    rec.request(6, None, "m", [3, 0, 1000, 29_000, 5])      # then the prompt shrinks
    rec.message(TOOL, 100)
    rec.request(7, None, "m", [3, 0, 0, 20_000, 5])
    s = rec.session()
    summary, first_prompt, first_read = (s.aftermath[0].summary, s.aftermath[0].first_prompt,
                                         s.aftermath[0].first_read)
    assert (first_prompt, first_read) == (30_003, 0)
    assert summary == s.summary_tokens and summary > 0
    # the first request saw the three new messages, sized at the tokens per byte shown so
    # far (none: the context before grew by no request), so by the bytes rule; the later
    # shrink does not change the summary
    assert summary == (4000 + 3) // 4 + 1 + (8000 + 3) // 4 + 1
    assert s.tokens[2] + s.tokens[3] == summary and s.requests[-1].adjust < 0


# --- the status line's saved state -------------------------------------------------------------

def test_the_saved_state_is_private_small_and_holds_no_conversation_text(tmp_path):
    import os
    import stat
    s = claude_session()
    s.user("the secret word is PLOVER " * 200)
    for i in range(300):                       # a long transcript: the state stays small
        s.user(f"step {i} PLOVER")
        s.response([{"type": "text", "text": "PLOVER " * 50}], (1, 100, 20_000 + 200 * i))
    f = tmp_path / "t.jsonl"
    f.write_bytes(s.text())
    cache = tmp_path / "cache"
    read_incremental(str(f), str(cache))
    (state,) = cache.iterdir()
    assert stat.S_IMODE(os.stat(state).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(cache).st_mode) == 0o700
    raw = state.read_bytes()
    assert b"PLOVER" not in raw and b"step" not in raw
    # a few numbers, and 16 bytes per response (its key, to count it once)
    assert len(raw) < 2048 + 16 * 310 < f.stat().st_size // 40


def test_old_states_are_pruned_when_a_new_one_is_written(tmp_path):
    import os
    import time
    cache = tmp_path / "cache"
    cache.mkdir()
    old, recent = cache / "aaaa-old.jsonl.state", cache / "bbbb-recent.jsonl.state"
    for p in (old, recent):
        p.write_bytes(b"x")
    month = time.time() - 31 * 86400
    os.utime(old, (month, month))
    other = cache / "notes.txt"                # not ours: left alone, however old
    other.write_bytes(b"keep")
    os.utime(other, (month, month))
    f = tmp_path / "t.jsonl"
    f.write_bytes(claude_session().text())
    read_incremental(str(f), str(cache))
    names = sorted(p.name for p in cache.iterdir())
    assert old.name not in names and recent.name in names and "notes.txt" in names
    assert len(names) == 3
