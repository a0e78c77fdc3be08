"""``--format auto``: tell the format from the first bytes of a file.

Byte patterns first: a plain bash-agent file matches none of the other formats' patterns,
and its decision must not pay json's import.  Where a pattern does match, the lines are
parsed to confirm it at the top level of an object — a bash-agent message can carry the
same bytes inside a tool call's arguments (``{"input": {"sessionId": …, "type": "user"}}``),
and that must not make it another format.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

FORMATS = ("bash-agent", "claude-code", "codex", "openai")
CLAUDE = (b'"sessionId":', b'"parentUuid":', b'"type":"file-history-snapshot"')
CLAUDE_TYPES = (b'"type":"user"', b'"type":"assistant"', b'"type":"system"',
                b'"type":"progress"', b'"type":"file-history-snapshot"',
                b'"type":"summary"', b'"type":"queue-operation"')
CODEX = (b'"type":"session_meta"', b'"type":"response_item"', b'"type":"event_msg"',
         b'"type":"turn_context"', b'"type":"compacted"')
OPENAI_ONLY = (b'"role":"tool"', b'"role":"system"', b'"role":"developer"', b'"tool_calls"',
               b'"tool_call_id"')
ROLE = b'"role":'
CONFIRM_LINES = 200                  # complete lines parsed, at most, to confirm a format


def _names(patterns: tuple[bytes, ...]) -> frozenset[str]:
    return frozenset(p.split(b'"')[-2].decode() for p in patterns if p.startswith(b'"type"'))


CLAUDE_NAMES, CODEX_NAMES = _names(CLAUDE_TYPES), _names(CODEX)
OPENAI_ROLES = frozenset({"tool", "function", "system", "developer"})


def _claude(obj: dict[str, object]) -> bool:
    return obj.get("type") in CLAUDE_NAMES and (
        "sessionId" in obj or "parentUuid" in obj or obj.get("type") == "file-history-snapshot")


def _codex(obj: dict[str, object]) -> bool:
    return obj.get("type") in CODEX_NAMES and isinstance(obj.get("payload"), dict)


def _legacy_codex(obj: dict[str, object]) -> bool:
    """A rollout from before the envelope (mid-2025) opens with its session line."""
    return "instructions" in obj and "id" in obj and "timestamp" in obj and "role" not in obj


def _openai(obj: dict[str, object]) -> bool:
    """A message in a shape bash-agent never writes, or a ``{"messages": [...]}`` object."""
    if isinstance(obj.get("messages"), list) and "role" not in obj:
        return True
    role = obj.get("role")
    return isinstance(role, str) and (role in OPENAI_ROLES or "tool_calls" in obj or
                                      "tool_call_id" in obj)


def _head_objects(head: bytes) -> Iterator[dict[str, object] | None]:
    """The JSON object each of the head's first CONFIRM_LINES non-blank lines holds (None:
    no object, or the head's cut last line): the one loop both checks read."""
    from ..lightjson import loads
    for line in head.split(b"\n", CONFIRM_LINES)[:CONFIRM_LINES]:
        line = line.strip()
        if not line:
            continue
        obj = None
        if line.startswith(b"{"):
            try:
                obj = loads(line)
            except (ValueError, RecursionError):
                pass
        yield obj if isinstance(obj, dict) else None


def _some_line(head: bytes, test: Callable[[dict[str, object]], bool]) -> bool | None:
    """Does one of the first JSON-object lines pass ``test`` at its top level?  None when
    no line is a whole JSON object (a pretty-printed document): the bytes must do."""
    parsed = False
    for obj in _head_objects(head):
        if obj is not None:
            if test(obj):
                return True
            parsed = True
    return None if not parsed else False


def _claude_code(head: bytes, raw: bytes | None = None) -> bool:
    return any(c in head for c in CLAUDE) and any(t in head for t in CLAUDE_TYPES) and \
        _some_line(head if raw is None else raw, _claude) is not False


def claude_code_bookkeeping(head: bytes) -> list[str]:
    """The line types of a file that holds only Claude Code's own bookkeeping — lines with
    its ``type`` names (``summary``, ``file-history-snapshot``) but no conversation's
    envelope, as its ``{"type":"summary","leafUuid":…}`` files are — in order of first
    appearance; none for anything else (a line of another shape, or no JSON line)."""
    types: list[str] = []
    for obj in _head_objects(head):
        if obj is None:
            return []
        kind = obj.get("type")
        if not isinstance(kind, str) or kind not in CLAUDE_NAMES or _claude(obj):
            return []
        if kind not in types:
            types.append(kind)
    return types


def sniff(head: bytes) -> str | None:
    """The format the first bytes show, or None when they show none of them.

    Claude Code and Codex lines carry their envelope (``sessionId``/``parentUuid`` with a
    ``type``; ``type`` + ``payload``); a JSON array of objects, or role lines in a shape
    bash-agent never writes (tool or system roles, tool_calls), are OpenAI chat; other
    role lines are bash-agent's (which reads any bytes, so a stray non-JSON line does not
    matter).  JSON written with spaces (``"type": "user"``, as Python's json.dumps does)
    is matched as if it had none.
    """
    raw = head
    if _claude_code(raw):                  # compact, as Claude Code writes: the same answer
        return "claude-code"               # (taking spaces out only adds matches), sooner
    head = head.replace(b'" :', b'":').replace(b'": ', b'":')
    text = head.lstrip()
    if not text:
        return "bash-agent"                # nothing to tell: the awk's answer is 0
    if _claude_code(head, raw):
        return "claude-code"
    if b'"payload":' in head and any(t in head for t in CODEX) and \
            _some_line(raw, _codex) is not False:
        return "codex"
    first = text.split(b"\n", 1)[0]
    if b'"instructions"' in first and b'"id":' in first and b'"timestamp":' in first and \
            _some_line(raw.lstrip().split(b"\n", 1)[0], _legacy_codex) is not False:
        return "codex"
    if text[:1] == b"[" and text[1:].lstrip()[:1] in (b"{", b"]"):
        return "openai"                    # an array of messages (not "[agent] started")
    if ROLE in head:
        if (any(o in head for o in OPENAI_ONLY) or b'"messages"' in first) and \
                _some_line(raw, _openai) is not False:
            return "openai"
        return "bash-agent"
    return None
