"""``compact-dp install claude-code`` / ``uninstall``: the status line and hooks in Claude
Code's ``settings.json``, merged in one step.

* Every other key is left as it was; a ``statusLine`` that is someone else's is not
  replaced without ``--force``.
* Before every write the old file is kept as ``settings.json.compact-dp-backup``; the new
  one is written to a temporary file and renamed over it.
* ``uninstall`` removes exactly what ``install`` added.  When the file is still what
  install made of the backup, it is the backup again, byte for byte.
* ``--dry-run`` prints the change as a diff and writes nothing.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys

from ..errors import UsageError
from ..files import write_atomic

BACKUP_SUFFIX = ".compact-dp-backup"


def default_settings() -> str:
    return os.path.join(os.path.expanduser("~"), ".claude", "settings.json")


def command_prefix() -> str:
    """How Claude Code should call this compact-dp: the installed script's absolute path
    (so PATH need not have it), else this Python with -m."""
    script = os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    if os.path.basename(script) == "compact-dp" and os.access(script, os.X_OK):
        return shlex.quote(script)
    found = shutil.which("compact-dp")
    if found:
        return shlex.quote(os.path.abspath(found))
    return f"{shlex.quote(sys.executable)} -m compact_dp"


def entries(prefix: str, block_auto_compact: bool) -> dict:
    """What install adds."""
    hooks: dict[str, list] = {"UserPromptSubmit": [{"hooks": [{
        "type": "command", "command": f"{prefix} hook user-prompt-submit", "timeout": 10}]}]}
    if block_auto_compact:
        hooks["PreCompact"] = [{"matcher": "auto", "hooks": [{
            "type": "command", "command": f"{prefix} hook pre-compact", "timeout": 10}]}]
    return {"statusLine": {"type": "command", "command": f"{prefix} statusline",
                           "padding": 0}, "hooks": hooks}


def ours(command: object) -> bool:
    """A command install wrote: compact-dp (or python -m compact_dp) running its status
    line or one of its hooks."""
    return isinstance(command, str) and ("compact-dp" in command or
                                         "compact_dp" in command) and \
        any(command.rstrip().endswith(k) for k in (" statusline", " hook user-prompt-submit",
                                                   " hook pre-compact"))


def read_settings(path: str) -> tuple[bytes, dict]:
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        return b"", {}
    except OSError as e:
        raise UsageError(f"cannot read {path}: {e.strerror or e}") from None
    if not raw.strip():
        return raw, {}
    try:
        data = json.loads(raw)
    except ValueError as e:
        raise UsageError(f"{path} is not valid JSON ({e}); not touching it") from None
    if not isinstance(data, dict):
        raise UsageError(f"{path} is not a JSON object; not touching it")
    return raw, data


def dumps_like(data: dict, original: bytes) -> bytes:
    """JSON written the way the original was (its indent, its final newline)."""
    indent: int | str = 2
    for line in original.decode("utf-8", "replace").splitlines()[1:]:
        stripped = line.lstrip(" \t")
        if stripped and len(stripped) < len(line):
            head = line[:len(line) - len(stripped)]
            indent = "\t" if head.startswith("\t") else len(head)
            break
    text = json.dumps(data, indent=indent, ensure_ascii=False)
    newline = not original or original.endswith(b"\n")
    return (text + ("\n" if newline else "")).encode()


def installed(data: dict, prefix: str, block_auto_compact: bool, force: bool) -> dict:
    """The settings with compact-dp's entries merged in."""
    out = json.loads(json.dumps(data))               # a deep copy
    add = entries(prefix, block_auto_compact)
    current = out.get("statusLine")
    if current is not None and not ours(_get_command(current)) and current != add["statusLine"]:
        if not force:
            raise UsageError("settings already have a statusLine that is not compact-dp's "
                             f"({_get_command(current)!r}); --force replaces it")
    out["statusLine"] = add["statusLine"]
    hooks = out.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise UsageError("settings' \"hooks\" is not an object; not touching it")
    for event, groups in add["hooks"].items():
        existing = [g for g in hooks.get(event, []) if not _group_is_ours(g)]
        hooks[event] = existing + groups
    return out


def uninstalled(data: dict) -> dict:
    """The settings without compact-dp's entries (and without containers left empty)."""
    out = json.loads(json.dumps(data))
    if ours(_get_command(out.get("statusLine"))):
        del out["statusLine"]
    hooks = out.get("hooks")
    if isinstance(hooks, dict):
        for event in list(hooks):
            groups = hooks[event]
            if not isinstance(groups, list):
                continue
            kept = [g for g in groups if not _group_is_ours(g)]
            if kept:
                hooks[event] = kept
            else:
                del hooks[event]
        if not hooks:
            del out["hooks"]
    return out


def _get_command(entry: object) -> object:
    return entry.get("command") if isinstance(entry, dict) else None


def _group_is_ours(group: object) -> bool:
    if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
        return False
    return bool(group["hooks"]) and all(ours(_get_command(h)) for h in group["hooks"])


def diff(path: str, before: bytes, after: bytes) -> str:
    import difflib
    lines = difflib.unified_diff(before.decode("utf-8", "replace").splitlines(True),
                                 after.decode("utf-8", "replace").splitlines(True),
                                 fromfile=path, tofile=f"{path} (new)")
    text = "".join(lines)
    return text if text.endswith("\n") or not text else text + "\n"


def install(path: str, dry_run: bool = False, force: bool = False,
            block_auto_compact: bool = False, prefix: str | None = None) -> str:
    """Merge the entries in; returns the diff (empty: nothing to change)."""
    raw, data = read_settings(path)
    new = dumps_like(installed(data, prefix or command_prefix(), block_auto_compact, force),
                     raw)
    change = diff(path, raw, new)
    if change and not dry_run:
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        if raw:
            with open(path + BACKUP_SUFFIX, "wb") as f:
                f.write(raw)
        write_atomic(path, new)
    return change


def uninstall(path: str, dry_run: bool = False) -> str:
    """Remove the entries; the file before install comes back byte for byte when nothing
    else changed since (and a file install created goes away)."""
    raw, data = read_settings(path)
    if not raw:
        return ""
    result = uninstalled(data)
    backup = path + BACKUP_SUFFIX
    original: bytes | None = None
    if os.path.exists(backup):
        with open(backup, "rb") as f:
            original = f.read()
    new: bytes | None
    if original is not None and _same_json(original, result):
        new = original                           # exactly the file before install
    elif original is None and result == {}:
        new = None                               # install created it: take it away again
    else:
        new = dumps_like(result, raw)
    change = diff(path, raw, new or b"")
    if change and not dry_run:
        with open(backup, "wb") as f:            # what is replaced is kept
            f.write(raw)
        if new is None:
            os.unlink(path)
        else:
            write_atomic(path, new)
    return change


def _same_json(raw: bytes, data: dict) -> bool:
    try:
        return bool(raw.strip()) and json.loads(raw) == data
    except ValueError:
        return False
