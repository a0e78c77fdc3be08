"""OpenAI-style chat messages: a JSON array of ``{role, content, tool_calls, …}`` (or an
object with a ``messages`` array), or one message per line.

``role: user`` is a human turn, ``role: tool`` a tool result, ``role: assistant`` the
model's output (with its ``tool_calls``), ``system``/``developer`` context.  Each assistant
message answers a request that saw every message before it.  No usage, no times: sizes come
from the content (``--tokens bytes``).
"""

from __future__ import annotations

from .jsonsize import json_size
from .reader import LineReader
from .model import ASSISTANT, CONTEXT, TOOL, USER, Request, Session, skipped_warnings

FORMAT = "openai"
ROLES = {"user": USER, "tool": TOOL, "function": TOOL, "assistant": ASSISTANT,
         "system": CONTEXT, "developer": CONTEXT}


class OpenAIChatReader(LineReader):
    format = FORMAT

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[int] = []
        self.models: list[str | None] = []
        self.skipped["not a message"] = 0

    def feed(self, obj: object) -> None:
        self.seen_lines += 1
        self._feed(obj)

    def _feed(self, obj: object) -> None:
        if isinstance(obj, list):                        # a whole array on one line
            for item in obj:
                self._feed(item)
            return
        if isinstance(obj, dict) and isinstance(obj.get("messages"), list) and \
                "role" not in obj:
            self._feed(obj["messages"])
            return
        role = obj.get("role") if isinstance(obj, dict) else None
        if not isinstance(role, str) or role not in ROLES:
            self.skipped["not a message"] += 1
            return
        assert isinstance(obj, dict)
        self.recognised += 1
        kind = ROLES[role]
        size = json_size(obj.get("content"))
        if obj.get("tool_calls") is not None:
            size += json_size(obj["tool_calls"])
        if kind == ASSISTANT:
            self.seen.append(len(self.kinds))
            model = obj.get("model")
            self.models.append(model if isinstance(model, str) else None)
        self.kinds.append(kind)
        self.nbytes.append(size)

    def session(self, path: str | None = None) -> Session:
        requests = [Request(seen, None, model, None) for seen, model in
                    zip(self.seen, self.models)]
        s = Session(FORMAT, list(self.kinds), list(self.nbytes), requests, [], path=path)
        s.warnings += skipped_warnings(self.skipped, "item(s)")
        return s


def looks_like(obj: object) -> bool:
    if isinstance(obj, list):
        return bool(obj) and all(isinstance(x, dict) and "role" in x for x in obj[:5])
    return isinstance(obj, dict) and obj.get("role") in ROLES and (
        "content" in obj or "tool_calls" in obj)


def openai_only(obj: object) -> bool:
    """Shapes bash-agent never writes: tool/system roles, tool_calls, tool_call_id."""
    return isinstance(obj, dict) and (obj.get("role") in ("tool", "function", "system",
                                                         "developer")
                                      or "tool_calls" in obj or "tool_call_id" in obj)
