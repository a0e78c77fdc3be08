"""``compact-dp install claude-code`` and ``uninstall claude-code``."""

from __future__ import annotations

from ..environment import Env
from ..errors import UsageError
from .options import Option
from .typerkit import command

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .typerkit import Command

INSTALL_DOC = """Add compact-dp's status line and hooks to Claude Code's settings.

TARGET is claude-code.  The statusLine shows after every assistant message whether /compact
pays now; a UserPromptSubmit hook tells the model when it does; with --block-auto-compact a
PreCompact hook blocks an automatic compaction that does not pay yet (installing again keeps
it).  Every other setting is left untouched, the old file is kept as
settings.json.compact-dp-backup (mode 600), and a statusLine that is not compact-dp's is
only replaced with --force.
"""
UNINSTALL_DOC = """Remove what install claude-code added (the file before install comes back
byte for byte when nothing else changed, and its backup goes)."""
COMMON = [Option("--settings", "settings", "the settings file (default "
                 "~/.claude/settings.json)", metavar="PATH"),
          Option("--dry-run", "dry_run", "show the change as a diff; write nothing",
                 takes_value=False)]
INSTALL_OPTIONS = COMMON + [
    Option("--force", "force", "replace a statusLine that is not compact-dp's",
           takes_value=False),
    Option("--block-auto-compact", "block_auto_compact", "also install the PreCompact hook "
           "that blocks automatic compactions that do not pay yet", takes_value=False)]


def _target(files: list[str] | None) -> None:
    if files != ["claude-code"]:
        raise UsageError("the only target is claude-code (compact-dp install claude-code)")


def _backup_note(path: str, words: str) -> str:
    """The end of the message: where the backup is, when there is one."""
    import os

    from ..integrations.settings import backup_of
    kept = backup_of(path)
    return f" ({words.format(kept)})\n" if os.path.exists(kept) else "\n"


def build_install(env: Env) -> Command:
    def install(files: list[str] | None, settings: str | None, dry_run: bool, force: bool,
                block_auto_compact: bool) -> int:
        from ..integrations.settings import command_prefix, default_settings, settings_path
        from ..integrations.settings import install as do_install
        _target(files)
        default = default_settings(env.environ)
        path = settings_path(settings, default)
        change = do_install(path, command_prefix(env.program, env.environ), dry_run, force,
                            block_auto_compact, default)
        if dry_run or not change:
            return env.write(change or f"{path}: already installed, nothing to change\n")
        return env.write(f"{path}: status line and hooks installed"
                         + _backup_note(path, "backup: {}"))
    return command("install", install, INSTALL_OPTIONS, "claude-code", INSTALL_DOC,
                   "TARGET", pages=("claude-code.md",))


def build_uninstall(env: Env) -> Command:
    def uninstall(files: list[str] | None, settings: str | None, dry_run: bool) -> int:
        from ..integrations.settings import default_settings, settings_path
        from ..integrations.settings import uninstall as do_uninstall
        _target(files)
        path = settings_path(settings, default_settings(env.environ))
        change = do_uninstall(path, dry_run)
        if dry_run or not change:
            return env.write(change or f"{path}: nothing of compact-dp's to remove\n")
        return env.write(f"{path}: compact-dp's status line and hooks removed"
                         + _backup_note(path, "the file it replaced is kept as {}"))
    return command("uninstall", uninstall, COMMON, "claude-code", UNINSTALL_DOC, "TARGET",
                   pages=("claude-code.md",))
