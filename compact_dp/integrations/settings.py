"""``compact-dp install claude-code`` / ``uninstall``: the status line and hooks in Claude
Code's ``settings.json``, merged in one step.

* Every other key is left as it was; a ``statusLine`` that is someone else's is not
  replaced without ``--force``.  compact-dp's entries already there stay, with their
  options, and run the installing compact-dp.
* The first install keeps the file as it was in ``settings.json.compact-dp-backup``
  (beside the path given, readable by its owner only); every write goes to a temporary
  file renamed over the old one, with the old one's permissions.
* ``uninstall`` removes exactly what ``install`` added.  When the file is still what
  install made of the backup, it is the backup again, byte for byte, and the backup goes;
  after other edits the file it replaces is kept as the backup.  A backup that holds
  compact-dp's own entries (what an uninstall kept, or what an older version wrote) is
  never taken for the original.
* Folders are not made up: only ~/.claude, for the default path.
* ``--dry-run`` prints the change as a diff and writes nothing.
"""

from __future__ import annotations

import json
import math
import os
import shlex
import shutil
import sys

from ..errors import UsageError, os_reason
from ..files import make_folder_for, regular_or_absent, write_atomic

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

BACKUP_SUFFIX = ".compact-dp-backup"


def default_settings(environ: Mapping[str, str]) -> str | None:
    """~/.claude/settings.json, ~ as every default folder has it (environment.home_of);
    None without a home: then --settings must say where (``settings_path``)."""
    from ..environment import home_of
    home = home_of(environ)
    return os.path.join(home, ".claude", "settings.json") if home else None


def settings_path(given: str | None, default: str | None) -> str:
    if given:
        return given
    if default is None:
        raise UsageError("no home folder (HOME is not an absolute path): --settings names "
                         "the settings file")
    return default


def command_prefix(program: str, environ: Mapping[str, str]) -> str:
    """How Claude Code should call this compact-dp: ``program`` (the running script, as
    argv[0] names it) by its absolute path, so PATH need not have it; else the
    compact-dp on ``environ``'s PATH; else this Python with -m."""
    script = os.path.abspath(program) if program else ""
    if os.path.basename(script) == "compact-dp" and os.access(script, os.X_OK):
        return shlex.quote(script)
    found = shutil.which("compact-dp", path=environ.get("PATH"))
    if found:
        return shlex.quote(os.path.abspath(found))
    return f"{shlex.quote(sys.executable)} -m compact_dp"


def entries(prefix: str, block_auto_compact: bool
            ) -> tuple[dict[str, object], dict[str, list[object]]]:
    """What install adds: the statusLine, and the hooks per event."""
    hooks: dict[str, list[object]] = {"UserPromptSubmit": [{"hooks": [{
        "type": "command", "command": f"{prefix} hook user-prompt-submit", "timeout": 10}]}]}
    if block_auto_compact:
        hooks["PreCompact"] = [{"matcher": "auto", "hooks": [{
            "type": "command", "command": f"{prefix} hook pre-compact", "timeout": 10}]}]
    return {"type": "command", "command": f"{prefix} statusline", "padding": 0}, hooks


HOOK_NAMES = ("user-prompt-submit", "pre-compact")


def _subcommand(command: object) -> int | None:
    """Where compact-dp's subcommand (``statusline``, ``hook NAME``) starts among the words
    of a command install wrote — compact-dp or python -m compact_dp, with any options the
    user added (``--color never``); None for any other command."""
    if not isinstance(command, str) or not ("compact-dp" in command or
                                            "compact_dp" in command):
        return None
    words = command.split()
    for i in range(1, len(words)):
        if words[i] == "statusline" or words[i] == "hook" and \
                words[i + 1:i + 2] and words[i + 1] in HOOK_NAMES:
            return i
    return None


def ours(command: object) -> bool:
    return _subcommand(command) is not None


def moved(command: str, prefix: str) -> str:
    """compact-dp's command run by ``prefix`` instead: its subcommand and the options
    after it kept."""
    at = _subcommand(command)
    return command if at is None else " ".join([prefix, *command.split()[at:]])


def _move(entry: dict[str, object], prefix: str) -> None:
    """One of compact-dp's entries (the statusLine, a hook) run by ``prefix`` instead."""
    command = entry.get("command")
    if isinstance(command, str):
        entry["command"] = moved(command, prefix)


def backup_of(path: str) -> str:
    """Where the backup of a settings file goes: beside the path as given, in the settings
    folder — for a symlinked settings.json not beside its target, inside the dotfiles
    repository the link points into."""
    return os.path.abspath(path) + BACKUP_SUFFIX


class Settings:
    """A settings file as read: its real path (through symlinks), bytes, JSON, mode."""

    def __init__(self, path: str):
        self.path = os.path.realpath(path)
        self.backup = backup_of(path)
        self.exists = os.path.exists(self.path)
        self.mode = os.stat(self.path).st_mode & 0o7777 if self.exists else 0o600
        self.backup_mode = self.mode & 0o600     # never more readable, nor by anyone else
        self.raw, self.data = read_settings(self.path)

    def folders(self, given: str, dry_run: bool, default: str | None) -> None:
        """The settings go in folders that exist: a mistyped --settings must not grow a
        tree of them.  Only ~/.claude, for the ``default`` path, is made (Claude Code makes
        it on its first run, which may come after install), for its owner only."""
        may_make = (os.path.dirname(default),) \
            if default and os.path.abspath(given) == default else ()
        for folder in dict.fromkeys([os.path.dirname(os.path.abspath(given)),
                                     os.path.dirname(self.path)]):
            make_folder_for(given, may_make, "--settings", dry_run, folder)


def read_settings(path: str) -> tuple[bytes, dict[str, object]]:
    if not regular_or_absent(path):
        raise UsageError(f"{path} is not a regular file; not touching it")
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        return b"", {}
    except OSError as e:
        raise UsageError(f"cannot read {path}: {os_reason(e)}") from None
    if not raw.strip():
        return raw, {}
    try:
        data = json.loads(raw, parse_float=_finite)
    except _Unwritable as e:
        raise UsageError(f"{path} holds the number {e}, which JSON cannot be written back "
                         "with (it would become Infinity); not touching it") from None
    except ValueError as e:
        raise UsageError(f"{path} is not valid JSON ({e}); not touching it") from None
    if not isinstance(data, dict):
        raise UsageError(f"{path} is not a JSON object; not touching it")
    return raw, data


class _Unwritable(ValueError):
    """A number of the settings that json reads as infinite: written back, it would be
    ``Infinity``, which is no JSON, and Claude Code could not read its settings."""


def _finite(text: str) -> float:
    value = float(text)
    if value in (math.inf, -math.inf):
        raise _Unwritable(text)
    return value


def _write(file: Settings, content: bytes, target: str) -> None:
    """Write the settings (with their own permissions) or their backup (readable by no
    one the settings are not, and by no one but their owner: they may hold API keys)
    atomically; a failure is one line, and leaves the old file."""
    try:
        write_atomic(target, content,
                     mode=file.backup_mode if target == file.backup else file.mode)
    except OSError as e:
        raise UsageError(f"cannot write {target}: {os_reason(e)}; {file.path} is "
                         "unchanged") from None


def _private_backup(file: Settings) -> None:
    """A backup kept from before (an older version wrote it as readable as the settings
    were) is made no more readable than the settings are now."""
    try:
        if os.stat(file.backup).st_mode & 0o777 & ~file.backup_mode:
            os.chmod(file.backup, file.backup_mode)
    except OSError:
        pass


def _writable(file: Settings) -> None:
    if file.exists and not file.mode & 0o200:
        raise UsageError(f"{file.path} is read-only; not touching it (chmod u+w to allow)")


def dumps_like(data: dict[str, object], original: bytes) -> bytes:
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
    try:
        return (text + ("\n" if newline else "")).encode()
    except UnicodeEncodeError:          # a lone surrogate ("\ud800"): as the file wrote it
        return (json.dumps(data, indent=indent) + ("\n" if newline else "")).encode()


def installed(data: dict[str, object], prefix: str, block_auto_compact: bool, force: bool
              ) -> dict[str, object]:
    """The settings with compact-dp's entries merged in.  Every entry of compact-dp's
    already there — wherever it is, a PreCompact hook an earlier --block-auto-compact
    added included — stays, with its options, and now runs ``prefix``; the entries
    missing are added."""
    out = _copy(data)
    status_line, add = entries(prefix, block_auto_compact)
    current = out.get("statusLine")
    if isinstance(current, dict) and ours(current.get("command")):
        _move(current, prefix)
    else:
        if current is not None and current != status_line and not force:
            said = _get_command(current) if isinstance(current, dict) else current
            raise UsageError("settings already have a statusLine that is not compact-dp's "
                             f"({said!r}); --force replaces it")
        out["statusLine"] = status_line
    hooks = out.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise UsageError("settings' \"hooks\" is not an object; not touching it")
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            raise UsageError(f"settings' \"hooks\".\"{event}\" is not a list; not touching it")
        for hook in _our_hooks(groups):
            _move(hook, prefix)
    for event, groups in add.items():
        if not _our_hooks(hooks.get(event, [])):
            hooks[event] = hooks.get(event, []) + groups
    return out


def is_installed(data: dict[str, object]) -> bool:
    """Settings that hold any of compact-dp's entries."""
    hooks = data.get("hooks")
    return ours(_get_command(data.get("statusLine"))) or isinstance(hooks, dict) and any(
        isinstance(groups, list) and _our_hooks(groups) for groups in hooks.values())


def uninstalled(data: dict[str, object]) -> dict[str, object]:
    """The settings without compact-dp's entries (and without containers left empty)."""
    out = _copy(data)
    if ours(_get_command(out.get("statusLine"))):
        del out["statusLine"]
    hooks = out.get("hooks")
    if isinstance(hooks, dict):
        for event in list(hooks):
            groups = hooks[event]
            if not isinstance(groups, list):
                continue
            kept = _without_ours(groups)
            if kept:
                hooks[event] = kept
            else:
                del hooks[event]
        if not hooks:
            del out["hooks"]
    return out


def _copy(data: dict[str, object]) -> dict[str, object]:
    """A deep copy of settings (plain JSON)."""
    copy: dict[str, object] = json.loads(json.dumps(data))
    return copy


def _get_command(entry: object) -> object:
    return entry.get("command") if isinstance(entry, dict) else None


def _our_hooks(groups: list[object]) -> list[dict[str, object]]:
    """compact-dp's hooks among an event's groups."""
    return [h for g in groups if isinstance(g, dict) and isinstance(g.get("hooks"), list)
            for h in g["hooks"] if ours(_get_command(h))]


def _without_ours(groups: list[object]) -> list[object]:
    """Hook groups less compact-dp's hooks: a group left with none goes, a group the user
    added hooks to keeps theirs."""
    out = []
    for group in groups:
        hooks = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(group, dict) or not isinstance(hooks, list):
            out.append(group)
            continue
        kept = [h for h in hooks if not ours(_get_command(h))]
        if len(kept) == len(hooks):
            out.append(group)
        elif kept:
            out.append({**group, "hooks": kept})
    return out


def diff(path: str, before: bytes, after: bytes | None) -> str:
    """The change as a unified diff: to the file as it will be, ``(new)``, or — ``after``
    None — to no file, ``(removed)``."""
    import difflib
    lines = difflib.unified_diff(before.decode("utf-8", "replace").splitlines(True),
                                 (after or b"").decode("utf-8", "replace").splitlines(True),
                                 fromfile=path,
                                 tofile=f"{path} ({'removed' if after is None else 'new'})")
    text = "".join(lines)
    return text if text.endswith("\n") or not text else text + "\n"


def install(path: str, prefix: str, dry_run: bool = False, force: bool = False,
            block_auto_compact: bool = False, default: str | None = None) -> str:
    """Merge the entries that call ``prefix`` (``command_prefix``) in; returns the diff
    (empty: nothing to change).  The backup is the file as it was before compact-dp was
    first installed in it: installing again keeps it.  ``default``: the default settings
    path, whose folder may be made."""
    file = Settings(path)
    new = dumps_like(installed(file.data, prefix, block_auto_compact, force), file.raw)
    change = diff(path, file.raw, new)
    file.folders(path, dry_run or not change, default)
    if change and not dry_run:
        _writable(file)
        if file.exists and not is_installed(file.data):
            _write(file, file.raw, file.backup)
        else:
            _private_backup(file)
        _write(file, new, file.path)
    return change


def uninstall(path: str, dry_run: bool = False) -> str:
    """Remove the entries.  When nothing else changed since install, the file is the one
    before install again, byte for byte (a statusLine that --force replaced included); a
    file install created goes away.  After other edits, those stay, and a replaced
    statusLine comes back."""
    file = Settings(path)
    if not file.exists or not is_installed(file.data):
        return ""
    result = uninstalled(file.data)
    original: bytes | None = None
    before: object = None
    try:
        with open(file.backup, "rb") as f:
            kept = f.read()
        before = json.loads(kept) if kept.strip() else {}
        original = kept
    except (OSError, ValueError):
        pass
    if not isinstance(before, dict) or is_installed(before):
        original = None              # not a file from before install (an older backup)
    new: bytes | None
    if original is None:
        new = None if result == {} else dumps_like(result, file.raw)
    else:
        assert isinstance(before, dict)
        if _same_apart_from_replaced(result, before):
            new = original                       # exactly the file before install
        else:
            if "statusLine" not in result and \
                    "statusLine" in before and not ours(_get_command(before["statusLine"])):
                result["statusLine"] = before["statusLine"]     # what --force replaced
            new = dumps_like(result, file.raw)
    change = diff(path, file.raw, new)
    if change and not dry_run:
        _writable(file)
        # the file as it was before install (or no file, when install made it and nothing
        # else is in it) needs no backup: the one there would be a stray copy of the
        # settings; after other edits, what is replaced is kept
        restored = new is None or new == original
        if not restored:
            _write(file, file.raw, file.backup)
        if new is None:
            _remove(file.path)
        else:
            _write(file, new, file.path)
        if restored:
            _remove(file.backup)
    return change


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    except OSError as e:
        raise UsageError(f"cannot remove {path}: {os_reason(e)}") from None


def _same_apart_from_replaced(result: dict[str, object], before: dict[str, object]
                              ) -> bool:
    """Is ``result`` (the file less compact-dp's entries) the file before install, but for
    a statusLine install replaced?"""
    expected = uninstalled(before)
    if "statusLine" in expected and not ours(_get_command(expected["statusLine"])) and \
            "statusLine" not in result:
        expected = {k: v for k, v in expected.items() if k != "statusLine"}
    return result == expected
