"""``--format auto``: tell the format from the first bytes of a file.

Byte patterns, not JSON parsing: a bash-agent decision must not pay json's (and re's)
import, and every format announces itself in its first lines.
"""

from __future__ import annotations

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


def sniff(head: bytes) -> str | None:
    """The format the first bytes show, or None when they show none of them.

    Claude Code and Codex lines carry their envelope (``sessionId``/``parentUuid`` with a
    ``type``; ``type`` + ``payload``); a JSON array, or role lines in a shape bash-agent
    never writes (tool or system roles, tool_calls), are OpenAI chat; other role lines are
    bash-agent's (which reads any bytes, so a stray non-JSON line does not matter).
    JSON written with spaces (``"type": "user"``, as Python's json.dumps does) is matched
    as if it had none.
    """
    head = head.replace(b'" :', b'":').replace(b'": ', b'":')
    text = head.lstrip()
    if not text:
        return "bash-agent"                # nothing to tell: the awk's answer is 0
    if any(c in head for c in CLAUDE) and any(t in head for t in CLAUDE_TYPES):
        return "claude-code"
    if b'"payload":' in head and any(t in head for t in CODEX):
        return "codex"
    first = text.split(b"\n", 1)[0]
    if b'"instructions"' in first and b'"id":' in first and b'"timestamp":' in first:
        return "codex"                     # a rollout from before the envelope (mid-2025)
    if text[:1] == b"[":
        return "openai"
    if ROLE in head:
        if any(o in head for o in OPENAI_ONLY) or (text[:1] == b"{" and
                                                   b'"messages"' in first):
            return "openai"
        return "bash-agent"
    return None
