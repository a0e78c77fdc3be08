"""install / uninstall claude-code leave the settings, their backup and their folder the
way docs/claude-code.md says: every entry on the new command, no stray copy of the
settings, nothing readable that the settings are not, no folder made up from a typo."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from compact_dp.integrations import settings as cc_settings

from .conftest import run_main

SECRET = '{\n  "env": {"ANTHROPIC_API_KEY": "sk-secret"},\n  "theme": "dark"\n}\n'
OLD = "/old/venv/bin/compact-dp"


def mode(path: Path) -> int:
    return path.stat().st_mode & 0o777


def backup(settings: Path) -> Path:
    return settings.with_name(settings.name + ".compact-dp-backup")


def commands(data: dict) -> list[str]:
    """Every command in the settings: the statusLine's and every hook's."""
    found = [data["statusLine"]["command"]] if "statusLine" in data else []
    for groups in data.get("hooks", {}).values():
        found += [h["command"] for g in groups for h in g["hooks"]]
    return found


def cli(verb: str, settings: Path, *args: str):
    return run_main(verb, "claude-code", "--settings", str(settings), *args)


def settings_file(tmp_path: Path, text: str = SECRET, permissions: int = 0o600) -> Path:
    f = tmp_path / "settings.json"
    f.write_text(text)
    f.chmod(permissions)
    return f


# --- installing again from another compact-dp -----------------------------------------------

def test_installing_from_another_binary_moves_every_entry_the_pre_compact_hook_included(
        tmp_path):
    """An install moves every compact-dp entry it finds to the new command — a PreCompact
    hook an earlier --block-auto-compact added too, without the flag this time — keeping
    the options added to it; uninstall then gives the first file back, byte for byte."""
    f = settings_file(tmp_path)
    cc_settings.install(str(f), prefix=OLD, block_auto_compact=True)
    data = json.loads(f.read_text())
    data["hooks"]["PreCompact"][0]["hooks"][0]["command"] += " --margin 5"
    f.write_text(json.dumps(data, indent=2) + "\n")
    r = cli("install", f)
    assert r.status == 0 and "installed" in r.out
    after = json.loads(f.read_bytes())
    prefix = cc_settings.command_prefix()
    assert len(commands(after)) == 3 and OLD.encode() not in f.read_bytes()
    assert all(c.startswith(prefix + " ") for c in commands(after)), commands(after)
    pre = after["hooks"]["PreCompact"]
    assert pre == [{"matcher": "auto", "hooks": [{
        "type": "command", "command": f"{prefix} hook pre-compact --margin 5",
        "timeout": 10}]}]
    assert backup(f).read_text() == SECRET                  # the file before the first install
    assert cli("uninstall", f).status == 0
    assert f.read_text() == SECRET


def test_installing_again_from_the_same_binary_changes_nothing(tmp_path):
    f = settings_file(tmp_path)
    assert cli("install", f, "--block-auto-compact").status == 0
    before = f.read_bytes()
    r = cli("install", f)
    assert r.status == 0 and "already installed" in r.out and f.read_bytes() == before
    assert "PreCompact" in json.loads(before)["hooks"]
