"""Small sessions in every format, written by the tests themselves.

Each builder returns the file's lines and what an independent reader must find in them, so
the tests state each format rule once, next to an example of it.  The shapes follow the
formats as docs/formats.md describes them; the numbers are made up.
"""

from __future__ import annotations

import json
from fractions import Fraction

T0 = "2026-03-01T10:00:00.000Z"


def stamp(seconds: float) -> str:
    """T0 plus some seconds, as Claude Code and Codex write timestamps."""
    whole = int(seconds)
    h, rest = divmod(10 * 3600 + whole, 3600)
    m, s = divmod(rest, 60)
    day = 1 + h // 24
    return f"2026-03-{day:02d}T{h % 24:02d}:{m:02d}:{s:02d}.{int((seconds - whole) * 1000):03d}Z"


def dumps(obj) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def shares(total: int, weights: list[int]) -> list[int]:
    """The sizing rule's share, written plainly: ``total`` tokens in proportion to
    ``weights``, each its floor, then one more each for the largest remainders (the
    earlier message first on a tie)."""
    exact = [Fraction(total * w, sum(weights)) for w in weights]
    parts = [int(x) for x in exact]
    order = sorted(range(len(weights)), key=lambda i: (-(exact[i] - parts[i]), i))
    for i in order[:total - sum(parts)]:
        parts[i] += 1
    return parts


def bytes_rule(nbytes: int) -> int:
    """A message no growth has sized yet: the awk's (bytes + 3) // 4 + 1."""
    return (nbytes + 3) // 4 + 1


# --- Claude Code --------------------------------------------------------------------------

class ClaudeSession:
    """Builds a Claude Code file line by line and counts what a reader must find."""

    def __init__(self, model: str = "claude-opus-4-6", session_id: str = "s-1",
                 cwd: str = "/p", agent: str | None = None, ids: str = ""):
        self.lines: list[str] = []
        self.model, self.sid, self.cwd = model, session_id, cwd
        self.agent = agent                   # a sub-agent's file: every line a sidechain
        self.ids = ids                       # begins every message.id and requestId
        self.t = 0.0
        self.requests: list[dict] = []       # one per (message.id, requestId)
        self.compactions = 0
        self.turns = 0
        self.n = 0

    def _base(self, kind: str, **extra) -> dict:
        self.n += 1
        self.t += 2.0
        agent = {"agentId": self.agent} if self.agent else {}
        return {"parentUuid": f"u{self.n - 1}", "isSidechain": self.agent is not None,
                "userType": "external", "cwd": self.cwd, "sessionId": self.sid,
                "version": "2.1.40", **agent, "type": kind, "uuid": f"u{self.n}",
                "timestamp": stamp(self.t), **extra}

    def progress(self) -> None:
        self.lines.append(dumps(self._base("progress", data={"type": "hook_progress",
                                                              "hookEvent": "PreToolUse"})))

    def snapshot(self) -> None:
        self.lines.append(dumps({"type": "file-history-snapshot", "messageId": "m",
                                 "snapshot": {"trackedFileBackups": {}}}))

    def pause(self, seconds: float) -> None:
        """Nothing happens for a while (the user is away): the next line comes later."""
        self.t += seconds

    def user(self, text: str, turn: bool | None = None, **flags) -> None:
        """A user line; a human turn unless flagged, command markup, or said otherwise."""
        if turn is None:
            turn = not flags and not text.startswith(("<command-", "<local-command-"))
        self.turns += turn
        self.lines.append(dumps(self._base("user", message={"role": "user", "content": text},
                                           **flags)))

    def tool_result(self, tool_id: str, text: str) -> None:
        content = [{"type": "tool_result", "tool_use_id": tool_id, "content": text}]
        self.lines.append(dumps(self._base("user", message={"role": "user",
                                                            "content": content})))

    def response(self, blocks: list[dict], prompt: tuple[int, int, int], ttl: str = "5m",
                 output: int = 50, gap: float = 2.0, model: str | None = None,
                 split: bool = True, sidechain: bool = False) -> None:
        """One API response written as one line per content block (same id, requestId);
        prompt = (uncached input, cache written, cache read)."""
        self.t += gap - 2.0
        uncached, written, read = prompt
        rid = f"req_{self.ids}{self.agent or ''}{len(self.lines)}"   # unique across files
        mid = f"msg_{self.ids}{self.agent or ''}{len(self.lines)}"
        usage = {"input_tokens": uncached, "cache_creation_input_tokens": written,
                 "cache_read_input_tokens": read, "output_tokens": 1}
        if split:
            usage["cache_creation"] = {"ephemeral_5m_input_tokens": written if ttl == "5m"
                                       else 0,
                                       "ephemeral_1h_input_tokens": written if ttl == "1h"
                                       else 0}
        for i, block in enumerate(blocks):
            last = i == len(blocks) - 1
            u = dict(usage, output_tokens=output if last else 1)     # a mid-stream snapshot
            line = self._base("assistant", requestId=rid,
                              message={"model": model or self.model, "id": mid,
                                       "type": "message", "role": "assistant",
                                       "content": [block], "usage": u})
            if sidechain:
                line["isSidechain"] = True
            self.lines.append(dumps(line))
            if i == 0 and len(blocks) > 1:
                self.progress()                 # progress lines interleave
        if not sidechain and not self.agent:
            self.requests.append({"prompt": uncached + written + read, "time": self.t,
                                  "model": model or self.model})

    def synthetic(self, text: str = "API Error: overloaded") -> None:
        self.lines.append(dumps(self._base("assistant", message={
            "model": "<synthetic>", "id": f"syn{self.n}", "role": "assistant",
            "content": [{"type": "text", "text": text}],
            "usage": {"input_tokens": 0, "output_tokens": 0}})))

    def boundary(self, trigger: str = "auto", pre_tokens: int = 0,
                 sidechain: bool = False, duration_ms: int | None = None) -> None:
        """A compaction; ``sidechain``: a sub-agent's own, not the session's;
        ``duration_ms``: the time it took, as newer versions record it."""
        meta: dict = {"trigger": trigger, "preTokens": pre_tokens}
        if duration_ms is not None:
            meta["durationMs"] = duration_ms
        line = self._base("system", subtype="compact_boundary",
                          content="Conversation compacted", compactMetadata=meta)
        if sidechain:
            line["isSidechain"] = True
        else:
            self.compactions += 1
        self.lines.append(dumps(line))

    def summary(self, text: str = "fixed parser quote handling. ") -> None:
        """The compaction's summary, as the first user line after the boundary (newer
        versions do not flag it)."""
        self.user("This session is being continued from a previous conversation. "
                  "Summary: " + text * 20, turn=False)

    def api_error(self) -> None:
        """The request failed: a system line, no response."""
        self.lines.append(dumps(self._base("system", subtype="api_error", level="error",
                                           retryAttempt=1)))

    def interrupt(self) -> None:
        """The user pressed Esc before any response line."""
        self.user("[Request interrupted by user]", turn=False)

    def system(self, subtype: str = "turn_duration") -> None:
        self.lines.append(dumps(self._base("system", subtype=subtype, durationMs=5)))

    def text(self) -> bytes:
        return ("\n".join(self.lines) + "\n").encode()


def text(t: str) -> dict:
    return {"type": "text", "text": t}


def tool_use(tool_id: str, command: str) -> dict:
    return {"type": "tool_use", "id": tool_id, "name": "Bash", "input": {"command": command}}


def claude_session(**kw) -> ClaudeSession:
    """Every rule at once: progress and snapshot lines, a response over three lines, tool
    results, a meta line, command markup, a synthetic error, a sidechain, a compaction with
    its summary, a cold gap and a second model (``kw``: ClaudeSession's)."""
    s = ClaudeSession(**kw)
    s.snapshot()
    s.progress()
    s.user("fix the failing test in parser.py")                         # turn 1
    s.response([{"type": "thinking", "thinking": "look first", "signature": "x"},
                text("Let me look."), tool_use("t1", "pytest -x")], (3, 12000, 11000))
    s.tool_result("t1", "1 failed: test_parse " + "x" * 400)
    s.response([text("The parser drops a quote."), tool_use("t2", "sed -n 1,80p parser.py")],
               (1, 900, 23000))
    s.tool_result("t2", "def parse(s):\n" + "    pass\n" * 60)
    s.user("Caveat: the messages below were generated by a local command", isMeta=True)
    s.user("<command-name>/model</command-name>\n<command-args></command-args>")
    s.user("<local-command-stdout>Kept model as Default</local-command-stdout>")
    s.synthetic()
    s.response([text("Fixed it.")], (1, 1400, 23900), output=120)
    s.response([text("side")], (3, 500, 0), sidechain=True)          # a sub-agent's call
    s.system()
    s.pause(400)                                                       # away 6.6 min
    s.user("now run the whole suite")                                  # turn 2
    s.response([tool_use("t3", "pytest")], (1, 25600, 0))             # a cold cache
    s.tool_result("t3", "120 passed")
    s.boundary("manual", 25700)
    s.user("This session is being continued from a previous conversation. Summary: " +
           "fixed parser quote handling. " * 30, turn=False)            # the summary
    s.response([text("Continuing.")], (3, 23500, 0), model="claude-haiku-4-5-20251001")
    s.user("thanks, now document it")                                  # turn 3
    s.response([text("Done: " + "doc " * 80)], (1, 400, 23500), ttl="1h",
               model="claude-haiku-4-5-20251001")
    return s


# --- Codex ----------------------------------------------------------------------------------

def codex_lines() -> tuple[list[str], dict]:
    """A rollout: meta, context, two turns with tool calls, a repeated token_count, a null
    info, a compaction with its replacement history."""
    t = [0.0]

    def line(kind: str, payload: dict) -> str:
        t[0] += 1.5
        return dumps({"timestamp": stamp(t[0]), "type": kind, "payload": payload})

    def usage(inp: int, cached: int, out: int) -> dict:
        return {"input_tokens": inp, "cached_input_tokens": cached, "output_tokens": out,
                "reasoning_output_tokens": out // 2, "total_tokens": inp + out}

    total = [0, 0, 0]
    last = [usage(0, 0, 0)]

    def token_count(inp: int, cached: int, out: int) -> str:
        total[0] += inp
        total[1] += cached
        total[2] += out
        last[0] = usage(inp, cached, out)
        return repeat()

    def repeat() -> str:
        """Codex reports the same request again with an unchanged running total."""
        return line("event_msg", {"type": "token_count", "info": {
            "total_token_usage": usage(total[0], total[1], total[2]),
            "last_token_usage": last[0], "model_context_window": 272000},
            "rate_limits": None})

    def msg(role: str, text: str) -> dict:
        kind = "output_text" if role == "assistant" else "input_text"
        return {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}

    out = [
        line("session_meta", {"id": "r-1", "timestamp": stamp(0), "cwd": "/p",
                              "originator": "codex_cli_rs", "cli_version": "0.80.0",
                              "instructions": None}),
        line("response_item", msg("user", "<environment_context>\n<cwd>/p</cwd>\n"
                                          "</environment_context>")),
        line("turn_context", {"cwd": "/p", "approval_policy": "on-request",
                              "model": "gpt-5.1-codex", "summary": "auto"}),
        line("event_msg", {"type": "token_count", "info": None, "rate_limits": None}),
        line("response_item", msg("user", "add a --verbose flag")),
        line("event_msg", {"type": "user_message", "message": "add a --verbose flag"}),
        line("response_item", {"type": "reasoning", "summary": [], "encrypted_content": "x"}),
        line("response_item", {"type": "function_call", "name": "shell",
                               "arguments": dumps({"command": ["rg", "argparse"]}),
                               "call_id": "c1"}),
        token_count(9000, 0, 300),
        repeat(),                                                    # the same, repeated
        line("response_item", {"type": "function_call_output", "call_id": "c1",
                               "output": "cli.py:12: parser = argparse.ArgumentParser()"}),
        line("response_item", msg("assistant", "Adding the flag.")),
        line("response_item", {"type": "custom_tool_call", "name": "apply_patch",
                               "call_id": "c2", "input": "*** Begin Patch\n" + "+x\n" * 40}),
        token_count(9600, 8900, 500),
        line("response_item", {"type": "custom_tool_call_output", "call_id": "c2",
                               "output": "Done"}),
        line("response_item", msg("assistant", "Added --verbose.")),
        token_count(10300, 9500, 80),
        line("response_item", msg("user", "also document it")),
        line("event_msg", {"type": "user_message", "message": "also document it"}),
        line("compacted", {"message": "", "replacement_history": [
            msg("user", "add a --verbose flag"), msg("user", "also document it"),
            msg("user", "Another language model started to solve this problem and produced "
                        "a summary: added --verbose to cli.py.")]}),
        line("event_msg", {"type": "context_compacted"}),
        line("response_item", msg("assistant", "Documented in README.")),
        token_count(3000, 0, 200),
    ]
    expect = {"requests": 4, "compactions": 1, "turns": 2,
              "last_request_tokens": 3000, "models": ["gpt-5.1-codex"],
              "prompts": [9000, 9600, 10300, 3000]}
    return out, expect


# --- OpenAI chat --------------------------------------------------------------------------

OPENAI_MESSAGES = [
    {"role": "system", "content": "You are a coding agent."},
    {"role": "user", "content": "list the files"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "a.py\nb.py"},
    {"role": "assistant", "content": "Two files: a.py and b.py."},
    {"role": "user", "content": "open a.py"},
    {"role": "assistant", "content": "It prints hello."},
]


class CodexRollout:
    """Builds a Codex rollout line by line, in the shapes real rollouts have: the
    envelope, a token_count after each request that Codex often repeats unchanged, a null
    ``info`` before anything is known, turn_context lines that switch the model,
    compactions as a ``compacted`` line and a ``context_compacted`` event.  ``prompts``
    are the requests a reader must find."""

    def __init__(self, model: str = "gpt-5.1-codex", window: int = 272000):
        self.lines: list[str] = []
        self.t = 0.0
        self.window = window
        self.total = [0, 0, 0, 0]                  # input, cached, output, total
        self.last: dict = {}
        self.prompts: list[int] = []
        self.line("session_meta", {"id": "r-1", "timestamp": stamp(0), "cwd": "/p",
                                   "originator": "codex_cli_rs", "cli_version": "0.80.0",
                                   "instructions": None})
        self.turn_context(model)

    def line(self, kind: str, payload: dict, gap: float = 1.5) -> None:
        self.t += gap
        self.lines.append(dumps({"timestamp": stamp(self.t), "type": kind,
                                 "payload": payload}))

    def turn_context(self, model: str) -> None:
        self.line("turn_context", {"cwd": "/p", "approval_policy": "on-request",
                                   "model": model, "summary": "auto"})

    @staticmethod
    def msg(role: str, text: str) -> dict:
        kind = "output_text" if role == "assistant" else "input_text"
        return {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}

    def item(self, payload: dict, gap: float = 1.5) -> None:
        self.line("response_item", payload, gap)

    def context(self, text: str = "<environment_context>\n<cwd>/p</cwd>\n"
                                  "</environment_context>") -> None:
        self.item(self.msg("user", text))

    def user(self, text: str, gap: float = 1.5) -> None:
        """A human turn: the message, then Codex's user_message event."""
        self.item(self.msg("user", text), gap)
        self.line("event_msg", {"type": "user_message", "message": text}, 0.0)

    def assistant(self, text: str) -> None:
        self.item(self.msg("assistant", text))

    def reasoning(self) -> None:
        self.item({"type": "reasoning", "summary": [], "encrypted_content": "e" * 40})

    def call(self, call_id: str, command: str) -> None:
        self.item({"type": "function_call", "name": "shell",
                   "arguments": dumps({"command": ["bash", "-lc", command]}),
                   "call_id": call_id})

    def output(self, call_id: str, text: str) -> None:
        self.item({"type": "function_call_output", "call_id": call_id, "output": text})

    def token_count(self, prompt: int, cached: int = 0, output: int = 100,
                    write: int | None = None, count: bool = True) -> None:
        """A request's usage (``input_tokens`` includes the cached part), its running
        total moved on; ``count``: a reader must count it (not a 0-token placeholder)."""
        last = {"input_tokens": prompt, "cached_input_tokens": cached,
                "output_tokens": output, "reasoning_output_tokens": output // 2,
                "total_tokens": prompt + output}
        if write is not None:
            last["cache_write_input_tokens"] = write
        for i, x in enumerate((prompt, cached, output, prompt + output)):
            self.total[i] += x
        self.last = last
        if count:
            self.prompts.append(prompt)
        self.repeat()

    def repeat(self) -> None:
        """The last token_count again, its running total unchanged (not a new request)."""
        total = dict(zip(("input_tokens", "cached_input_tokens", "output_tokens",
                          "total_tokens"), self.total))
        self.line("event_msg", {"type": "token_count", "info": {
            "total_token_usage": total, "last_token_usage": self.last,
            "model_context_window": self.window}, "rate_limits": None}, 0.2)

    def null_info(self) -> None:
        self.line("event_msg", {"type": "token_count", "info": None, "rate_limits": None})

    def compacted(self, history: list[dict] | None = None, message: str = "") -> None:
        payload: dict = {"message": message}
        if history is not None:
            payload["replacement_history"] = history
        self.line("compacted", payload)

    def context_compacted(self) -> None:
        self.line("event_msg", {"type": "context_compacted"})

    def pause(self, seconds: float) -> None:
        self.t += seconds

    def tool_request(self, prompt: int, cached: int, result: str = "ok") -> None:
        """A request that answers with a tool call, and the tool's result."""
        call_id = f"c{len(self.prompts) + 1}"
        self.call(call_id, "ls")
        self.token_count(prompt, cached)
        self.output(call_id, result)

    def reply(self, prompt: int, cached: int, words: str = "Done.") -> None:
        """A request that answers in words (a turn's last)."""
        self.assistant(words)
        self.token_count(prompt, cached)

    def text(self) -> bytes:
        return ("\n".join(self.lines) + "\n").encode()


def claude_with_side_files(folder, sid: str = "4f00d1e5-0000-4000-8000-000000000001"):
    """A Claude Code session kept the way real ones are (``folder/<sid>.jsonl`` and
    ``folder/<sid>/subagents/``): the main chain writes its cache with the 1-hour TTL, the
    client breaks the cache once while it is warm (reads drop to nothing, all re-written),
    the user is away 20 minutes (warm on the 1-hour clock, cold on a 5-minute one), a
    sub-agent's lines and its own compaction run inline as sidechains, and a compaction
    whose summary request is recorded in ``subagents/agent-acompact-*.jsonl``, beside a
    sub-agent's file ``agent-*.jsonl`` (one of its responses also copied into the main
    file: billed once).  Returns the main file's path and what a reader must find."""
    from pathlib import Path
    folder = Path(folder)
    main = ClaudeSession(session_id=sid)
    main.user("refactor the parser")                                   # turn 1
    main.response([text("Reading it."), tool_use("t1", "cat parser.py")], (3, 20000, 0),
                  ttl="1h")
    main.tool_result("t1", "def parse(s):\n" + "    pass\n" * 40)
    main.response([text("Split into two functions.")], (1, 700, 20000), ttl="1h")
    main.user("run the tests")                                         # turn 2
    main.response([tool_use("t2", "pytest")], (1, 300, 20700), ttl="1h")
    main.tool_result("t2", "40 passed")
    main.response([text("side work")], (3, 4000, 0), sidechain=True)   # a sub-agent
    main.boundary("auto", 9000, sidechain=True)                         # ... compacting
    main.response([text("All green.")], (1, 21400, 0), ttl="1h")       # a cache break
    main.pause(1200)                                                    # away 20 min
    main.user("now add a docstring")                                    # turn 3
    main.response([text("Added " + "doc " * 50)], (1, 250, 21400), ttl="1h")
    main.boundary("manual", 21700)
    main.summary()
    main.response([text("Continuing.")], (3, 12000, 0), ttl="1h")
    main.user("thanks")                                                  # turn 4
    main.response([text("You are welcome.")], (1, 90, 12000), ttl="1h")
    compaction = ClaudeSession(session_id=sid, agent="acompact-0a1b2c")
    compaction.t = main.t - 20
    compaction.user("Your task is to create a detailed summary of the conversation so far")
    compaction.response([text("Summary: " + "s " * 300)], (3, 1500, 21400), output=900)
    agent = ClaudeSession(session_id=sid, agent="a5e6f70", model="claude-sonnet-4-5")
    agent.t = 30
    agent.user("find every caller of parse()")
    agent.response([tool_use("a1", "rg parse")], (3, 9000, 0))
    agent.tool_result("a1", "cli.py:3\nlib.py:9")
    agent.response([text("Two callers.")], (2, 60, 9000), output=40)
    copied = json.loads(agent.lines[-1])
    main.lines.insert(3, dumps(dict(copied, isSidechain=True)))        # copied inline
    path = folder / f"{sid}.jsonl"
    subagents = folder / sid / "subagents"
    subagents.mkdir(parents=True)
    path.write_bytes(main.text())
    (subagents / "agent-acompact-0a1b2c.jsonl").write_bytes(compaction.text())
    (subagents / "agent-a5e6f70.jsonl").write_bytes(agent.text())
    expect = {"main": main.requests, "turns": main.turns, "compaction": compaction.requests,
              "agent": [dict(r, model=agent.model) for r in agent.requests],
              "agent_usage": [(3, 9000, 0, 0), (2, 60, 0, 9000)],
              "compaction_usage": (3, 1500, 0, 21400)}
    return path, expect


def claude_turns(turns: list[int], first: int = 9000, grow: int = 700,
                 away: dict[int, float] | None = None, **kw) -> ClaudeSession:
    """A session of ``len(turns)`` human turns of ``turns[i]`` requests each (tool calls,
    then a reply), two seconds apart: the first prompt writes ``first`` tokens, each
    later one reads the whole last prompt from the cache and writes ``grow`` more, and
    nothing is uncached — a bill simple enough to work out by hand.  ``away``: seconds
    of nothing before turn i."""
    s = ClaudeSession(**kw)
    prompt = 0
    for t, n in enumerate(turns):
        s.pause((away or {}).get(t, 0.0))
        s.user(f"task {t}: " + "please do it " * 20)
        for i in range(n):
            new = first if prompt == 0 else prompt + grow
            last = i == n - 1
            s.response([text("done " * 30) if last else tool_use(f"t{t}.{i}", "ls")],
                       (0, new - prompt, prompt))
            prompt = new
            if not last:
                s.tool_result(f"t{t}.{i}", "out " * 50)
    return s


# --- sessions of turns, for replay ------------------------------------------------------------

COLD = 400.0            # seconds away: past any 5-minute cache (and its grace)


def turns_session(turns: list[list[int]], start: int = 20000, pauses: list[float] | None = None,
                  models: list[str | None] | None = None, compacted: int | None = None,
                  summary: bool = True, trigger: str = "manual", waited: float = 0.0,
                  **kw) -> ClaudeSession:
    """A Claude Code session of human turns: each turn a list of prompt growths, one per
    request (tool results between them, the last one the turn's reply); ``pauses``: the
    time away before each turn (COLD: the cache expired); ``models``: each turn's model
    (None: the session's).  Every request reads what the cache rules say its model's cache
    holds — that model's previous prompt, or nothing after a pause past the TTL — and
    writes the rest, with a 1-token uncached tail, so the recording has no cache event of
    its own.  ``compacted``: a recorded /compact before that turn (its boundary and, with
    ``summary``, its summary line; the context starts again from ``start``, its fixed
    prefix still cached), set off by ``trigger``, ``waited`` seconds before the turn's
    message."""
    s = ClaudeSession(**kw)
    prompt = start
    cached: dict[str | None, int] = {}
    for t, growths in enumerate(turns):
        away = pauses[t] if pauses else 0.0
        s.pause(away)
        if away > 300:
            cached = {}
        model = models[t] if models else None
        if t == compacted:
            # the agent compacts by itself once the last reply took it past its point
            s.boundary(trigger, prompt + 500 if trigger == "auto" else prompt)
            if summary:
                s.user("This session is being continued from a previous conversation. "
                       "Summary: " + "we did things. " * 40, turn=False)
            s.pause(waited)
            prompt = start
            cached = {m: min(c, start // 2) for m, c in cached.items() if waited <= 300}
        s.user(f"turn {t}: " + "please go on " * 20)
        for k, grow in enumerate(growths):
            prompt += grow if t or k else 0
            last = k == len(growths) - 1
            block = text("done " + "y" * 300) if last else tool_use(f"t{t}.{k}", "ls")
            read = cached.get(model, 0)
            s.response([block], (1, prompt - read - 1, read), model=model)
            cached[model] = prompt
            if not last:
                s.tool_result(f"t{t}.{k}", "x" * 4 * grow)
    return s


def blocks(tokens: int) -> int:
    """What an OpenAI cache serves of a prefix: whole 128-token blocks from 1,024 on."""
    return tokens // 128 * 128 if tokens >= 1024 else 0


def codex_turns(turns: list[list[int]], start: int = 12000) -> CodexRollout:
    """A Codex rollout of human turns, as turns_session's (no pauses: OpenAI's cache lives
    for hours); each request reads the previous prompt's whole blocks."""
    s = CodexRollout()
    s.context()
    prompt, cached = start, 0
    for t, growths in enumerate(turns):
        s.user(f"turn {t}: " + "please go on " * 20)
        for k, grow in enumerate(growths):
            prompt += grow if t or k else 0
            if k == len(growths) - 1:
                s.reply(prompt, blocks(cached), "done " + "y" * 300)
            else:
                s.tool_request(prompt, blocks(cached), "x" * 4 * grow)
            cached = prompt
    return s
