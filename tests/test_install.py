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
    prefix = cc_settings.command_prefix("", os.environ)
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


# --- the backup --------------------------------------------------------------------------------

def test_an_uninstall_that_restores_the_file_leaves_no_copy_of_it(tmp_path):
    """Once the settings are the file before install again, the backup holds nothing the
    file does not: uninstall removes it rather than leave a copy of an API key behind."""
    f = settings_file(tmp_path)
    assert cli("install", f, "--block-auto-compact").status == 0
    assert backup(f).read_text() == SECRET and mode(backup(f)) == 0o600
    r = cli("uninstall", f)
    assert r.status == 0 and "removed" in r.out and "backup" not in r.out
    assert f.read_text() == SECRET and mode(f) == 0o600
    assert not backup(f).exists()
    assert sorted(os.listdir(tmp_path)) == ["settings.json"]


def test_an_uninstall_of_a_file_install_created_leaves_nothing(tmp_path):
    f = tmp_path / "settings.json"
    for _ in range(2):
        assert cli("install", f).status == 0 and mode(f) == 0o600
        assert cli("uninstall", f).status == 0
        assert os.listdir(tmp_path) == []


def test_an_uninstall_after_other_edits_keeps_what_it_replaced_privately_and_says_where(
        tmp_path):
    f = settings_file(tmp_path, permissions=0o644)
    assert cli("install", f).status == 0
    edited = json.loads(f.read_text())
    edited["model"] = "haiku"                                       # the user edits
    f.write_text(json.dumps(edited, indent=2) + "\n")
    replaced = f.read_bytes()
    r = cli("uninstall", f)
    assert r.status == 0 and f"the file it replaced is kept as {backup(f)}" in r.out
    assert json.loads(f.read_text()) == {**json.loads(SECRET), "model": "haiku"}
    assert mode(f) == 0o644
    assert backup(f).read_bytes() == replaced and mode(backup(f)) == 0o600


@pytest.mark.parametrize("permissions", [0o644, 0o640, 0o600])
def test_a_backup_is_never_more_readable_than_the_settings_nor_by_anyone_else(
        permissions, tmp_path):
    f = settings_file(tmp_path, permissions=permissions)
    assert cli("install", f).status == 0
    assert mode(backup(f)) == 0o600 and mode(f) == permissions
    assert backup(f).read_text() == SECRET


def test_a_backup_left_readable_is_made_private_by_the_next_install(tmp_path):
    """A backup an older compact-dp wrote with the settings' 644 stays no more readable
    than the settings once they are 600."""
    f = settings_file(tmp_path, permissions=0o644)
    cc_settings.install(str(f), prefix=OLD)
    backup(f).chmod(0o644)
    f.chmod(0o600)
    assert cli("install", f).status == 0
    assert mode(backup(f)) == 0o600 and backup(f).read_text() == SECRET


def test_a_symlinked_settings_file_keeps_its_backup_beside_the_link(tmp_path):
    """A dotfile manager's link: the target changes, the link stays, and the backup (the
    user's settings, keys included) goes in the settings folder, never into the dotfiles
    repository the link points into."""
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    target = settings_file(dotfiles)
    folder = tmp_path / "claude"
    folder.mkdir()
    link = folder / "settings.json"
    link.symlink_to(target)
    r = cli("install", link)
    assert r.status == 0 and f"backup: {backup(link)}" in r.out
    assert link.is_symlink() and "statusLine" in json.loads(target.read_text())
    assert backup(link).read_text() == SECRET and mode(backup(link)) == 0o600
    assert os.listdir(dotfiles) == ["settings.json"]
    assert cli("uninstall", link).status == 0
    assert link.is_symlink() and target.read_text() == SECRET and mode(target) == 0o600
    assert os.listdir(dotfiles) == ["settings.json"] and os.listdir(folder) == [
        "settings.json"]


# --- the folder ----------------------------------------------------------------------------------

@pytest.mark.parametrize("dry_run", [[], ["--dry-run"]])
def test_settings_in_a_folder_that_does_not_exist_are_refused(dry_run, tmp_path):
    f = tmp_path / "no" / "such" / "dir" / "settings.json"
    r = cli("install", f, *dry_run)
    assert r.status == 2 and r.out == "" and r.err.count("\n") == 1
    assert r.err.startswith("compact-dp: ") and str(f.parent) in r.err
    assert os.listdir(tmp_path) == []


def test_a_link_into_a_folder_that_does_not_exist_is_refused(tmp_path):
    link = tmp_path / "settings.json"
    link.symlink_to(tmp_path / "gone" / "settings.json")
    r = cli("install", link)
    assert r.status == 2 and str(tmp_path / "gone") in r.err and r.err.count("\n") == 1
    assert sorted(os.listdir(tmp_path)) == ["settings.json"] and link.is_symlink()


def test_only_the_default_folder_is_created_and_only_for_its_owner(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    environ = {"HOME": str(home)}      # (the environment given is the whole truth)
    r = run_main("install", "claude-code", "--dry-run", environ=environ)
    assert r.status == 0 and "statusLine" in r.out and os.listdir(home) == []
    r = run_main("install", "claude-code", environ=environ)
    claude = home / ".claude"
    assert r.status == 0 and mode(claude) == 0o700 and os.listdir(claude) == ["settings.json"]
    assert mode(claude / "settings.json") == 0o600
    assert "statusLine" in json.loads((claude / "settings.json").read_bytes())


def test_no_copy_of_the_settings_is_ever_on_disk_more_readable_than_its_mode(
        tmp_path, monkeypatch):
    """A write goes through a temporary file, which holds the keys too: it has the final
    mode from its creation on, not the umask's 644 until it is narrowed."""
    seen: list[int] = []
    fsync = os.fsync

    def watched(fd: int) -> None:
        seen.append(os.fstat(fd).st_mode & 0o777)
        fsync(fd)

    monkeypatch.setattr(os, "fsync", watched)
    f = settings_file(tmp_path, permissions=0o600)
    assert cli("install", f).status == 0
    assert seen == [0o600, 0o600]                        # the backup, then the settings


def test_the_default_folder_is_made_even_through_a_linked_home(tmp_path):
    (tmp_path / "real-home").mkdir()
    (tmp_path / "home").symlink_to(tmp_path / "real-home")
    for dry_run in (["--dry-run"], []):
        r = run_main("install", "claude-code", *dry_run,
                     environ={"HOME": str(tmp_path / "home")})
        assert r.status == 0 and r.err == ""
    assert mode(tmp_path / "real-home" / ".claude" / "settings.json") == 0o600


# --- how the files are written -------------------------------------------------------------------

@pytest.mark.parametrize("umask", [0o000, 0o022, 0o077])
def test_a_settings_file_install_creates_is_its_owners_only_whatever_the_umask(
        umask, tmp_path):
    f = tmp_path / "settings.json"
    old = os.umask(umask)
    try:
        assert cli("install", f).status == 0
    finally:
        os.umask(old)
    assert mode(f) == 0o600 and not backup(f).exists()


def test_moving_to_a_command_of_the_same_length_rewrites_the_file_at_the_same_size(
        tmp_path):
    """Another compact-dp whose path is as long: the file changes but not its size, and
    is still replaced whole (a new file under the name), its backup the first original."""
    f = settings_file(tmp_path, permissions=0o640)
    cc_settings.install(str(f), prefix="/old/bin/compact-dp")
    before, inode = f.read_bytes(), f.stat().st_ino
    cc_settings.install(str(f), prefix="/new/bin/compact-dp")
    after = f.read_bytes()
    assert len(after) == len(before) and after != before
    assert after == before.replace(b"/old/bin/", b"/new/bin/")
    assert f.stat().st_ino != inode and mode(f) == 0o640
    assert backup(f).read_text() == SECRET


def test_a_write_replaces_the_file_whole_and_a_reader_of_the_old_one_still_sees_it_whole(
        tmp_path):
    f = settings_file(tmp_path)
    with open(f, "rb") as reader:
        assert cli("install", f).status == 0
        assert reader.read() == SECRET.encode()          # the old file, untouched
    assert "statusLine" in json.loads(f.read_text())
    assert sorted(os.listdir(tmp_path)) == ["settings.json", "settings.json.compact-dp-backup"]


def test_a_replace_that_fails_leaves_the_settings_as_they_were_and_no_temporary_file(
        tmp_path, monkeypatch):
    f = settings_file(tmp_path)
    replace = os.replace

    def full_disk(src, dst):
        if str(dst) == str(f):
            raise OSError(28, "No space left on device")
        replace(src, dst)
    monkeypatch.setattr(os, "replace", full_disk)
    r = cli("install", f)
    assert r.status == 2 and r.err == (f"compact-dp: error: cannot write {f}: No space left "
                                       f"on device; {f} is unchanged\n")
    assert f.read_text() == SECRET and not [x for x in os.listdir(tmp_path) if ".tmp" in x]


def test_an_uninstall_after_other_edits_backs_up_the_file_it_replaces_before_replacing_it(
        tmp_path, monkeypatch):
    """The backup is written first: a failure between the two writes leaves the edited
    settings whole and a copy of them."""
    f = settings_file(tmp_path)
    assert cli("install", f).status == 0
    edited = json.loads(f.read_text())
    edited["theme"] = "light"
    f.write_text(json.dumps(edited, indent=2) + "\n")
    replaced = f.read_bytes()
    order: list[str] = []
    replace = os.replace

    def watched(src, dst):
        order.append(os.path.basename(dst))
        replace(src, dst)
    monkeypatch.setattr(os, "replace", watched)
    assert cli("uninstall", f).status == 0
    assert order == ["settings.json.compact-dp-backup", "settings.json"]
    assert backup(f).read_bytes() == replaced and mode(backup(f)) == 0o600
    assert json.loads(f.read_text()) == {**json.loads(SECRET), "theme": "light"}


def test_an_uninstall_dry_run_shows_the_change_and_keeps_file_and_backup(tmp_path):
    f = settings_file(tmp_path)
    assert cli("install", f).status == 0
    installed = f.read_bytes()
    r = cli("uninstall", f, "--dry-run")
    assert r.status == 0 and r.out.startswith(f"--- {f}\n") and '-  "statusLine"' in r.out
    assert f.read_bytes() == installed and backup(f).read_text() == SECRET


def test_an_uninstall_of_settings_without_our_entries_touches_nothing(tmp_path):
    f = settings_file(tmp_path)
    backup(f).write_text('{"kept": "by someone"}\n')
    r = cli("uninstall", f)
    assert r.status == 0 and f.read_text() == SECRET
    assert backup(f).read_text() == '{"kept": "by someone"}\n'


# --- JSON that does not survive a round trip -------------------------------------------------

@pytest.mark.parametrize("number", ["1e999", "-1E400"])
def test_a_number_json_cannot_write_back_is_refused_untouched(number, tmp_path):
    """json reads 1e999 as infinite and would write it as Infinity, which is no JSON:
    Claude Code could then read no settings at all."""
    f = settings_file(tmp_path, '{"x": ' + number + "}")
    r = cli("install", f)
    assert r.status == 2 and r.err == (
        f"compact-dp: error: {f} holds the number {number}, which JSON cannot be written "
        "back with (it would become Infinity); not touching it\n")
    assert f.read_text() == '{"x": ' + number + "}" and not backup(f).exists()


def test_a_lone_surrogate_is_written_back_escaped_and_restored(tmp_path):
    """"\\ud800" is legal JSON and no UTF-8: the settings are written back with it escaped
    (it was an internal error), and uninstall gives the bytes back."""
    text = '{"u": "\\ud800", "v": "caf\u00e9"}'
    f = settings_file(tmp_path, text)
    assert cli("install", f).status == 0
    data = json.loads(f.read_bytes())
    assert data["u"] == "\ud800" and data["v"] == "caf\u00e9" and "statusLine" in data
    assert cli("uninstall", f).status == 0 and f.read_text() == text


def test_a_status_line_that_is_no_object_is_named_as_it_is(tmp_path):
    f = settings_file(tmp_path, '{"statusLine": "my-line"}')
    r = cli("install", f)
    assert r.status == 2 and r.err.endswith(
        "a statusLine that is not compact-dp's ('my-line'); --force replaces it\n")


@pytest.mark.parametrize("home", [None, "", "relative/home"])
def test_without_a_home_install_needs_settings_named(home, tmp_path):
    """~ is the environment's absolute HOME, as for every default folder: none, empty or
    relative is no home (a relative one once named a folder under the working one)."""
    environ = {} if home is None else {"HOME": home}
    for verb in ("install", "uninstall"):
        r = run_main(verb, "claude-code", "--dry-run", environ=environ)
        assert (r.status, r.out) == (2, "") and r.err == (
            "compact-dp: error: no home folder (HOME is not an absolute path): --settings "
            "names the settings file\n")
    f = settings_file(tmp_path)
    r = run_main("install", "claude-code", "--settings", str(f), environ=environ)
    assert r.status == 0 and "statusLine" in json.loads(f.read_text())
