#!/usr/bin/env python3
"""Write the example sessions this repository ships (``make examples``; deterministic).

    examples/claude-code.jsonl   a Claude Code session: progress lines, responses spread
                                 over several lines, tool results, usage with cache reads
                                 and 5-minute writes, a 25-minute pause (the cache expires)
                                 and an automatic compaction with its summary
    examples/codex.jsonl         a Codex CLI rollout with repeated token_count events
    examples/openai-chat.json    OpenAI-style chat messages

They are made up — words, sizes and timings drawn from a seeded generator — in the shapes
docs/formats.md describes, so the demo, the docs and the benchmark have sessions of every
format without copying anyone's data.  ``claude_code(requests, seed)`` makes bigger ones
(the benchmark's 3.5 MB transcript).
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORDS = ("the of and to in is that for it with as was on be by this are from at or file "
         "def return self import test error line value path parser config module class "
         "function assert raise update fix run build check").split()
SYSTEM = 21478            # system prompt + tools: what a compaction leaves in the cache
START = 1767261600.0      # 2026-01-01T10:00:00Z


def dumps(obj) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def stamp(t: float) -> str:
    import time
    ms = int(round((t % 1) * 1000)) % 1000
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{ms:03d}Z"


def words(rnd: random.Random, n: int) -> str:
    return " ".join(rnd.choices(WORDS, k=n))


class Claude:
    """A Claude Code session, written line by line with consistent usage."""

    def __init__(self, seed: int):
        self.rnd = random.Random(seed)
        self.lines: list[str] = []
        self.t = START
        self.n = 0
        self.prompt = 0            # the last request's prompt
        self.uncached = 0          # its uncached tail (not in the cache afterwards)
        self.last_time: float | None = None
        self.pending = 0           # tokens added since the last request
        self.compact_at: int | None = None

    def base(self, kind: str, **extra) -> dict:
        self.n += 1
        return {"parentUuid": f"u{self.n - 1}" if self.n > 1 else None,
                "isSidechain": False, "userType": "external", "cwd": "/home/dev/project",
                "sessionId": "0f0e0d0c-example", "version": "2.1.40", "gitBranch": "main",
                "type": kind, "uuid": f"u{self.n}", "timestamp": stamp(self.t), **extra}

    def add(self, obj: dict) -> None:
        self.lines.append(dumps(obj))

    def message_tokens(self, content) -> int:
        return len(dumps(content)) // 3 + 4

    def progress(self) -> None:
        self.add(self.base("progress", data={"type": "hook_progress",
                                             "hookEvent": "PostToolUse",
                                             "hookName": "PostToolUse:Bash",
                                             "command": "./hooks/format.sh"},
                           toolUseID=f"toolu_{self.n:06d}"))

    def user(self, text: str, **flags) -> None:
        self.t += self.rnd.uniform(5, 40)
        content = text
        self.pending += self.message_tokens(content)
        self.add(self.base("user", message={"role": "user", "content": content}, **flags))

    def tool_result(self, tool_id: str, size: int) -> None:
        self.t += self.rnd.uniform(0.5, 6)
        content = [{"tool_use_id": tool_id, "type": "tool_result",
                    "content": words(self.rnd, size)}]
        self.pending += self.message_tokens(content)
        self.add(self.base("user", message={"role": "user", "content": content}))

    def response(self, blocks: list[dict], cold: bool = False,
                 after_compaction: bool = False) -> None:
        self.t += self.rnd.uniform(2, 9)
        prompt = (self.prompt or SYSTEM + 4000) + self.pending
        uncached = self.rnd.randint(1, 3)
        if not self.prompt:
            read = 11442                       # another session wrote the system prefix
        elif cold:
            read = 0
        elif after_compaction:
            read = SYSTEM
        else:
            read = self.prompt - self.uncached
        written = prompt - read - uncached
        rid, mid = f"req_{self.n:06d}", f"msg_{self.n:06d}"
        for i, block in enumerate(blocks):
            usage = {"input_tokens": uncached, "cache_creation_input_tokens": written,
                     "cache_read_input_tokens": read,
                     "cache_creation": {"ephemeral_5m_input_tokens": written,
                                        "ephemeral_1h_input_tokens": 0},
                     "output_tokens": 12 if i < len(blocks) - 1 else self.rnd.randint(40, 900)}
            self.add(self.base("assistant", requestId=rid, message={
                "model": "claude-opus-4-6", "id": mid, "type": "message",
                "role": "assistant", "content": [block], "stop_reason": None,
                "usage": usage}))
            if i == 0:
                self.progress()
        self.prompt, self.uncached = prompt, uncached
        self.pending = sum(self.message_tokens([b]) for b in blocks)

    def boundary(self) -> None:
        self.t += 3
        self.add(self.base("system", subtype="compact_boundary",
                           content="Conversation compacted", level="info",
                           compactMetadata={"trigger": "auto", "preTokens": self.prompt}))

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def claude_code(requests: int = 180, seed: int = 7, compact_at: int | None = 120,
                pause_at: int | None = 60) -> str:
    """A session of ``requests`` API requests (a 25-minute pause before request
    ``pause_at``, an automatic compaction before ``compact_at``)."""
    s = Claude(seed)
    rnd = s.rnd
    s.add({"type": "file-history-snapshot", "messageId": "u1", "snapshot": {
        "messageId": "u1", "trackedFileBackups": {}, "timestamp": stamp(START)},
        "isSnapshotUpdate": False})
    s.user("the parser drops quoted fields; find out why and fix it, with a test")
    turn_every = max(20, requests // 4)
    after = False
    for j in range(requests):
        cold = False
        if pause_at is not None and j == pause_at:
            s.t += 25 * 60
            cold = True
        if compact_at is not None and j == compact_at:
            s.boundary()
            s.prompt = SYSTEM
            s.pending = 0
            s.user("This session is being continued from a previous conversation that ran "
                   "out of context. The summary below covers the earlier portion: "
                   + words(rnd, 2200), isCompactSummary=True, isVisibleInTranscriptOnly=True)
            after = True
        elif j and j % turn_every == 0:
            s.user(f"good; now {words(rnd, 12)}")
        tool = f"toolu_{j:06d}"
        blocks = [{"type": "thinking", "thinking": words(rnd, rnd.randint(20, 120)),
                   "signature": "redacted"},
                  {"type": "text", "text": words(rnd, rnd.randint(5, 40))},
                  {"type": "tool_use", "id": tool, "name": rnd.choice(["Bash", "Read",
                                                                        "Edit", "Grep"]),
                   "input": {"command": words(rnd, 6)}}]
        s.response(blocks, cold=cold, after_compaction=after)
        after = False
        s.progress()
        s.tool_result(tool, rnd.choice([20, 60, 150, 400, 1200]))
    return s.text()


def codex(seed: int = 3) -> str:
    rnd = random.Random(seed)
    t = [START]
    total = [0, 0, 0, 0]
    out = []

    def line(kind: str, payload: dict) -> None:
        t[0] += rnd.uniform(0.5, 8)
        out.append(dumps({"timestamp": stamp(t[0]), "type": kind, "payload": payload}))

    def usage(u):
        return {"input_tokens": u[0], "cached_input_tokens": u[1], "output_tokens": u[2],
                "reasoning_output_tokens": u[3], "total_tokens": u[0] + u[2]}

    def count(prompt: int, cached: int, out_tokens: int, repeat: bool = False) -> None:
        last = (prompt, cached, out_tokens, out_tokens // 3)
        for i in range(4):
            total[i] += last[i]
        for _ in range(2 if repeat else 1):
            line("event_msg", {"type": "token_count", "info": {
                "total_token_usage": usage(total), "last_token_usage": usage(last),
                "model_context_window": 272000}, "rate_limits": None})

    line("session_meta", {"id": "0199-example", "timestamp": stamp(START), "cwd": "/p",
                          "originator": "codex_cli_rs", "cli_version": "0.80.0",
                          "instructions": None, "source": "cli"})
    line("response_item", {"type": "message", "role": "user", "content": [
        {"type": "input_text", "text": "<environment_context>\n  <cwd>/p</cwd>\n"
                                       "</environment_context>"}]})
    line("turn_context", {"cwd": "/p", "approval_policy": "on-request",
                          "model": "gpt-5.1-codex", "summary": "auto"})
    line("event_msg", {"type": "token_count", "info": None, "rate_limits": None})
    prompt = 9000
    for turn in range(3):
        ask = f"step {turn + 1}: {words(rnd, 10)}"
        line("response_item", {"type": "message", "role": "user",
                               "content": [{"type": "input_text", "text": ask}]})
        line("event_msg", {"type": "user_message", "message": ask})
        for step in range(6):
            line("response_item", {"type": "reasoning", "summary": [],
                                   "encrypted_content": "x" * 200})
            line("response_item", {"type": "function_call", "name": "shell",
                                   "arguments": dumps({"command": ["rg", words(rnd, 2)]}),
                                   "call_id": f"c{turn}{step}"})
            cached = prompt - rnd.randint(300, 900) if prompt > 9000 else 0
            count(prompt, cached, rnd.randint(80, 400), repeat=step % 2 == 0)
            result = words(rnd, rnd.randint(30, 500))
            line("response_item", {"type": "function_call_output",
                                   "call_id": f"c{turn}{step}", "output": result})
            prompt += len(result) // 3 + 200
        line("response_item", {"type": "message", "role": "assistant", "content": [
            {"type": "output_text", "text": words(rnd, 40)}]})
    return "\n".join(out) + "\n"


def openai_chat() -> str:
    messages = [
        {"role": "system", "content": "You are a careful coding agent."},
        {"role": "user", "content": "The tests fail on Windows paths; fix the loader."},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "read_file", "arguments": "{\"path\": \"loader.py\"}"}}]},
        {"role": "tool", "tool_call_id": "call_1",
         "content": "def load(path):\n    return open(path.replace('/', os.sep))\n"},
        {"role": "assistant", "content": "The loader rewrites separators by hand; "
                                         "pathlib does it right. Patching."},
        {"role": "user", "content": "Good. Add a test."},
        {"role": "assistant", "content": "Added test_windows_paths in tests/test_loader.py."},
    ]
    return json.dumps(messages, indent=2) + "\n"


def main() -> int:
    (HERE / "claude-code.jsonl").write_text(claude_code())
    (HERE / "codex.jsonl").write_text(codex())
    (HERE / "openai-chat.json").write_text(openai_chat())
    return 0


if __name__ == "__main__":
    sys.exit(main())
