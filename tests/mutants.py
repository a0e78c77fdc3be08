#!/usr/bin/env python3
"""Break the code on purpose and check that the tests notice (``make mutants``).

Each mutant is one small change, of the kind a code review found the suite could not see,
in an area where a bug would cost a user.  For each, the script copies the repository to a
temporary folder, applies the change there, runs the named tests against that copy (in
this process's Python, with the copy first on PYTHONPATH, so the installed command the
tests run sees the mutant too) and reports whether they failed — as they must.  The copy
has no ``../shared`` beside it, so the catch rate is a lone clone's.

    python tests/mutants.py [--jobs N] [AREA ...]      # AREA: a word of an area's name

It first runs each selection of tests on an unchanged copy (a kill means nothing where the
tests fail anyway), then prints each mutant, a table per area and the overall catch rate;
the exit status is 1 when any mutant survived, 2 when a selection fails unchanged.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CODEX = "compact_dp/sessions/codex.py"
CLAUDE = "compact_dp/sessions/claude_code.py"
SIZING = "compact_dp/sessions/sizing.py"
CLOCK = "compact_dp/pricing/clock.py"
TABLE = "compact_dp/pricing/table.py"
BILLING = "compact_dp/replaying/billing.py"
API = "compact_dp/api.py"
RECORD = "compact_dp/views/record.py"
LINE = "compact_dp/integrations/statusline.py"
SETTINGS = "compact_dp/integrations/settings.py"
POLICIES = "compact_dp/replaying/policies.py"
PROJECT = "compact_dp/calibration/project.py"
SIMULATE = "compact_dp/replaying/simulate.py"
FIT = "compact_dp/calibration/fit.py"
QUESTION = "compact_dp/question.py"

# area -> [(name, file, text, mutated text, tests that must fail)]
MUTANTS: dict[str, list[tuple[str, str, str, str, str]]] = {
    "core": [
        ("v4.2 minimum kept size: < → <=", "compact_dp/core/decision.py",
         "if kept < 20 * d.S:", "if kept <= 20 * d.S:",
         "tests/test_boundaries.py"),
        ("v4.2 quality gate: > → >=", "compact_dp/core/search.py",
         "d.T > d.M * 0.30", "d.T >= d.M * 0.30",
         "tests/test_boundaries.py"),
        ("v4.2 ③: p·(H + 70) → p·H + p·70", "compact_dp/core/search.py",
         "self.pi * (H + L_INSTR)", "self.pi * H + self.pi * L_INSTR",
         "tests/test_properties.py"),
        ("break-even: > 0 → >= 0", "compact_dp/core/search.py",
         "if benefit(float(R)) > 0:", "if benefit(float(R)) >= 0:",
         "tests/test_explain_json.py"),
        ("search margin: b < top - margin → b < top", "compact_dp/core/search.py",
         "elif b < top - margin:", "elif b < top:",
         "tests/test_search.py"),
        ("cache-clock: a cold summary request reads at the read price",
         "compact_dp/core/search.py",
         "self.summary_read = write if d.cold else d.p_cache",
         "self.summary_read = d.p_cache",
         "tests/test_properties.py"),
        ("cache-clock: the cold re-write counts K instead of T", "compact_dp/core/search.py",
         "return (d.V + d.T) * (d.write_price - d.p_cache) / 1000000",
         "return (d.V + d.S) * (d.write_price - d.p_cache) / 1000000",
         "tests/test_properties.py"),
    ],
    "replay": [
        ("threshold policy: >= → >", POLICIES,
         "if prompt >= s.window * self.percent / 100 else None",
         "if prompt > s.window * self.percent / 100 else None",
         "tests/test_boundaries.py"),
        ("threshold at a turn end: < → <=", POLICIES,
         "if replay.prompt_now(request) < replay.setting.window * self.percent / 100:",
         "if replay.prompt_now(request) <= replay.setting.window * self.percent / 100:",
         "tests/test_user_boundaries.py"),
        ("replay dp policy: total_requests + 1", QUESTION,
         'numbers = {"t": turns, "total_requests": requests,',
         'numbers = {"t": turns, "total_requests": requests + 1,',
         "tests/test_boundaries.py"),
        ("replay: a cache idle past its TTL still reads", BILLING,
         "is_warm(cache.last, time, parse_ttl(cache.ttl))",
         "is_warm(cache.last, time, 100 * parse_ttl(cache.ttl))",
         "tests/test_replay.py"),
    ],
    "Codex reader": [
        ("a repeated token_count is a new request", CODEX,
         "if running is not None and running == self.last_total:", "if False:",
         "tests/test_codex_reader.py"),
        ("repeats told by the last usage, not the running total", CODEX,
         'running = [count(total.get(k)) for k in ("input_tokens", "cached_input_tokens",',
         'running = [count(last.get(k)) for k in ("input_tokens", "cached_input_tokens",',
         "tests/test_codex_reader.py"),
        ("a null info forgets the running total", CODEX,
         "            return                         # info is null until something is known",
         "            self.last_total = None\n            return",
         "tests/test_codex_reader.py"),
        ("a request with 0 output tokens is a placeholder", CODEX,
         'if not count(last.get("input_tokens")) and not count(last.get("output_tokens")):',
         'if not count(last.get("input_tokens")) or not count(last.get("output_tokens")):',
         "tests/test_codex_reader.py"),
        ("replacement_history prompts are turns", CODEX,
         "self._item(item, left=True)", "self._item(item)",
         "tests/test_codex_reader.py tests/test_sizing.py"),
        ("context_compacted after compacted counts again", CODEX,
         "        if not self.fresh_compaction:", "        if True:",
         "tests/test_codex_reader.py"),
        ("a new message does not end the compaction", CODEX,
         "            self.run_start = None\n        self.fresh_compaction = False",
         "            self.run_start = None",
         "tests/test_codex_reader.py"),
        ("turn_context's model only counts the first time", CODEX,
         'if isinstance(payload.get("model"), str) and payload["model"]:',
         'if isinstance(payload.get("model"), str) and payload["model"] and not self.llm:',
         "tests/test_codex_reader.py"),
        ("a request saw its own output run", CODEX,
         "seen = self.run_start if self.run_start is not None else self.rec.message_count",
         "seen = self.rec.message_count",
         "tests/test_codex_reader.py tests/test_sizing.py"),
        ("cached tokens beyond the prompt are kept", CODEX,
         'cached = min(count(last.get("cached_input_tokens")), prompt)',
         'cached = count(last.get("cached_input_tokens"))',
         "tests/test_codex_reader.py"),
        ("cache writes ignored", CODEX,
         'written = min(count(last.get("cache_write_input_tokens")), prompt - cached)',
         "written = 0",
         "tests/test_codex_reader.py"),
        ("a summary typed as a user message is a turn", CODEX,
         "contextual = text.startswith(CONTEXTUAL) or SUMMARY_PREFIX in text[:300]",
         "contextual = text.startswith(CONTEXTUAL)",
         "tests/test_codex_reader.py"),
    ],
    "Claude Code reader": [
        ("a sub-agent's boundary compacts the session", CLAUDE,
         'if get("subtype") == "compact_boundary" and not side:',
         'if get("subtype") == "compact_boundary":',
         "tests/test_claude_reader.py"),
        ("a response does not end the boundary's hold on the next user line", CLAUDE,
         "        self.after_boundary = False\n        index = self.rec.message(",
         "        index = self.rec.message(",
         "tests/test_claude_reader.py"),
        ("the summary line does not end the boundary's hold", CLAUDE,
         "        if text is not None:\n            self.after_boundary = False",
         "        if False:\n            self.after_boundary = False",
         "tests/test_claude_reader.py"),
        ("1-hour writes read as 5-minute ones", CLAUDE,
         'return [count(usage.get("input_tokens")), written - w1h, w1h,',
         'return [count(usage.get("input_tokens")), written, 0,',
         "tests/test_claude_reader.py"),
        ("a 1-hour split larger than the writes is kept", CLAUDE,
         'w1h = min(count(split.get("ephemeral_1h_input_tokens")), written) \\',
         'w1h = count(split.get("ephemeral_1h_input_tokens")) \\',
         "tests/test_claude_reader.py"),
        ("a response ends at its first line", CLAUDE,
         '            self.rec.done(time)', "            pass",
         "tests/test_claude_reader.py"),
        ("a request is sent when its response starts", CLAUDE,
         "sent=self.before if self.before is not None else time)", "sent=time)",
         "tests/test_claude_reader.py"),
        ("a sub-agent's line moves the sending time", CLAUDE,
         'if kind != "assistant" and time is not None and not sidechain:',
         'if kind != "assistant" and time is not None:',
         "tests/test_claude_reader.py"),
        ("copies of earlier responses are requests", CLAUDE,
         "        if key in self.known:", "        if False:",
         "tests/test_claude_reader.py"),
        ("synthetic errors are requests", CLAUDE,
         'if message.get("model") == "<synthetic>":',
         'if message.get("model") == "<synthetic/>":',
         "tests/test_claude_reader.py"),
        ("an api_error touches nothing", CLAUDE,
         'elif get("subtype") == "api_error" and not side:', "elif False:",
         "tests/test_claude_reader.py"),
        ("the compaction files billed as a sub-agent's", "compact_dp/replaying/bill.py",
         'os.path.basename(f).startswith("agent-acompact-")]', "False]",
         "tests/test_claude_reader.py"),
        ("any agent file beside the session is its", "compact_dp/replaying/bill.py",
         "            if _names_session(f, session_id):", "            if True:",
         "tests/test_claude_reader.py"),
    ],
    "sizing": [
        ("equal remainders go to the later message", SIZING,
         "key=lambda i: (-(total * w[i] % whole), i))",
         "key=lambda i: (-(total * w[i] % whole), -i))",
         "tests/test_sizing.py"),
        ("a request that did not grow leaves its new messages pending", SIZING,
         "if growth >= 0 and new:", "if growth > 0 and new:",
         "tests/test_sizing.py"),
        ("zero growth counts in the tokens per byte", SIZING,
         "                if growth > 0:\n                    self.grown += growth",
         "                if True:\n                    self.grown += growth",
         "tests/test_sizing.py"),
        ("a left reply counts in the summary", SIZING,
         "if m[FLAGS] == RUN | TEXT:", "if m[FLAGS] & RUN:",
         "tests/test_sizing.py"),
        ("what a compaction left forgets V", SIZING,
         "self.left = self.prefix + sum(", "self.left = sum(",
         "tests/test_sizing.py"),
        ("a context message after the first turn counts in the summary", SIZING,
         "in_run = self.run_open and context if left is None else left",
         "in_run = context if left is None else left",
         "tests/test_sizing.py"),
        ("estimates are cut down, not rounded", SIZING,
         "return round(nbytes * per_byte)", "return int(nbytes * per_byte)",
         "tests/test_sizing.py"),
        ("a compaction does not size the old context's last messages", SIZING,
         "        self._close()\n        self.segments.append",
         "        self.segments.append",
         "tests/test_sizing.py"),
        ("a removal never reaches V", SIZING,
         "self.prefix = max(0, self.prefix - (amount - take))",
         "self.prefix = self.prefix",
         "tests/test_sizing.py"),
        ("the bytes rule without its + 1", "compact_dp/core/scan.py",
         "    return (nbytes + 3) // 4 + 1", "    return (nbytes + 3) // 4",
         "tests/test_sizing.py tests/test_codex_reader.py"),
    ],
    "pricing": [
        ("no grace past the TTL", CLOCK, "GRACE = 15.0", "GRACE = 0.0",
         "tests/test_cache_prices.py"),
        ("warm only strictly within TTL and grace", CLOCK,
         "now - last <= ttl_seconds + GRACE", "now - last < ttl_seconds + GRACE",
         "tests/test_cache_prices.py"),
        ("seconds left count the grace", CLOCK,
         "max(0.0, self.ttl_seconds - idle)", "max(0.0, self.ttl_seconds + GRACE - idle)",
         "tests/test_cache_prices.py"),
        ("the clock's write price is always the default TTL's", CLOCK,
         "write = prices.write(ttl if ttl in (prices.cache_write or {}) else None)",
         "write = prices.write(None)",
         "tests/test_cache_prices.py"),
        ("a write's price ignores its TTL", TABLE,
         "        if ttl in self.cache_write:\n            return self.cache_write[ttl]",
         "        if False:\n            return self.cache_write[ttl]",
         "tests/test_cache_prices.py"),
        ("an hour is 50 minutes", TABLE, '"1h": 3600.0', '"1h": 3000.0',
         "tests/test_cache_prices.py"),
        ("OpenAI's minimum is exclusive", BILLING,
         "if least is not None and shared < least:", "if least is not None and shared <= least:",
         "tests/test_cache_prices.py"),
        ("OpenAI reads are not rounded to blocks", BILLING,
         "return float(int(shared // block) * block)", "return float(shared)",
         "tests/test_cache_prices.py"),
        ("a bill prices every write at 5 minutes", BILLING,
         'writes = (written - write_1h) * prices.write("5m") + write_1h * prices.write("1h")',
         'writes = written * prices.write("5m")',
         "tests/test_cache_prices.py tests/test_claude_reader.py"),
        ("a date suffix is not stripped", TABLE,
         "return head if len(tail) == 8 and tail.isdigit() else model", "return model",
         "tests/test_cache_prices.py"),
        ("[1m] keeps the table's window", TABLE,
         "name, window = name[:-4], LONG_CONTEXT", "name, window = name[:-4], None",
         "tests/test_cache_prices.py"),
        ("defaults swap the read and output prices", TABLE,
         'values["p_input"].num, values["p_out"].num,\n                  values["p_cache"].num,',
         'values["p_input"].num, values["p_cache"].num,\n                  values["p_out"].num,',
         "tests/test_cache_prices.py"),
        ("an unknown model's TTL is always 5 minutes", "compact_dp/question.py",
         'prices = defaults(values, agent.cache_ttl)', 'prices = defaults(values)',
         "tests/test_cache_prices.py"),
        ("equal 5-minute and 1-hour writes are a 1-hour TTL", "compact_dp/sessions/session.py",
         'return "1h" if write_1h > write_5m else "5m"',
         'return "1h" if write_1h >= write_5m else "5m"',
         "tests/test_claude_reader.py"),
        ("a request that writes nothing sets the TTL", "compact_dp/sessions/recorder.py",
         "            if usage[WRITE_5M] + usage[WRITE_1H]:\n                self.ttl = write_ttl(",
         "            if True:\n                self.ttl = write_ttl(",
         "tests/test_claude_reader.py"),
    ],
    "Python API": [
        ("p_write is not passed on", API, "p_write=p_write, now=now,", "p_write=None, now=now,",
         "tests/test_api.py"),
        ("cache_ttl is not passed on", API, "price=price, cache_ttl=cache_ttl,",
         "price=price, cache_ttl=None,", "tests/test_api.py"),
        ("force_percent is not passed on", API,
         "float(context_tokens or 0), force_percent)",
         "float(context_tokens or 0), DEFAULT_FORCE_PERCENT)", "tests/test_api.py"),
        ("context_tokens alone asks for no policy", API,
         "if trigger is not None or context_tokens is not None:", "if trigger is not None:",
         "tests/test_api.py"),
        ("a policy's keep is the core's", API,
         "return self.policy.keep if self.policy is not None else self.core.keep",
         "return self.core.keep", "tests/test_api.py"),
        ("a policy's action is the core's", API,
         'return self.policy.action == "compact"', "return self.core.compact",
         "tests/test_api.py"),
        ("a policy's exit status is 0", API,
         "return self.policy.exit_status if self.policy is not None else 0", "return 0",
         "tests/test_api.py"),
        ("the reason leaves the policy out", API,
         "return reason(self.core, self.policy)", "return reason(self.core)",
         "tests/test_api.py"),
        ("decide() drops tokens=", API, "return load(source, format, tokens).decide(",
         'return load(source, format, "auto").decide(', "tests/test_api.py"),
        ("bytes are not a source", API, "if isinstance(source, (bytes, bytearray)):",
         "if isinstance(source, bytearray):", "tests/test_api.py"),
        ("horizon=20 stays an int", "compact_dp/question.py",
         "            horizon = float(horizon)", "            pass", "tests/test_api.py"),
    ],
    "--json fields": [
        ("prefix_tokens is the context", RECORD, '"prefix_tokens": number(session.prefix),',
         '"prefix_tokens": number(session.live_tokens),', "tests/test_json_fields.py"),
        ("summary_tokens ignores where S came from", RECORD,
         '"summary_tokens": question.sources["S"].value if question is not None else',
         '"summary_tokens": session.summary_tokens if question is not None else',
         "tests/test_json_fields.py tests/test_user_boundaries.py"),
        ("last_request_at is when it was sent", RECORD,
         '"last_request_at": session.last_request.time if session.last_request else None,',
         '"last_request_at": session.last_request.sent if session.last_request else None,',
         "tests/test_json_fields.py"),
        ("messages counts the whole file", RECORD, '"messages": session.live_messages,',
         '"messages": len(session.kinds),', "tests/test_json_fields.py"),
        ("U is V", RECORD, "derived.update(X=d.X, U=d.U)", "derived.update(X=d.X, U=d.V)",
         "tests/test_json_fields.py"),
        ("cold_rewrite is the billed sum", RECORD, '"cold_rewrite": number(t.rewrite),',
         '"cold_rewrite": number(t.billed),', "tests/test_json_fields.py"),
        ("idle_seconds is the time left", CLOCK, '"idle_seconds": self.idle,',
         '"idle_seconds": self.seconds_left,', "tests/test_json_fields.py"),
        ("the prices' cache_read is the input price", "compact_dp/question.py",
         '"input": p.input, "cache_read": p.cache_read,',
         '"input": p.input, "cache_read": p.input,', "tests/test_json_fields.py"),
        ("peak and mean context swapped", "compact_dp/replaying/records.py",
         '"peak_context": self.peak_context, "mean_context": self.mean_context,',
         '"peak_context": self.mean_context, "mean_context": self.peak_context,',
         "tests/test_json_fields.py"),
        ("a compaction point names the request before it", "compact_dp/replaying/records.py",
         '{"request": c.before + 1,', '{"request": c.before,', "tests/test_json_fields.py"),
        ("a group's recorded cost is left out", "compact_dp/replaying/compare.py",
         '"recorded_cost": sum(bills) if bills else None,', '"recorded_cost": None,',
         "tests/test_json_fields.py"),
        ("sub-agent files counted by their requests", "compact_dp/replaying/bill.py",
         'agents["files"] = files.subagent_files',
         'agents["files"] = len(files.subagent_requests)', "tests/test_claude_reader.py"),
    ],
    "status line": [
        ("/compact shown when compacting nearly pays", LINE, "    if decision.compact:",
         "    if decision.compact or decision.best_benefit > -0.1:",
         "tests/test_statusline_lines.py"),
        ("cold for as long as idle, not past the TTL", LINE,
         'duration_text(cache.idle - cache.ttl_seconds)', 'duration_text(cache.idle)',
         "tests/test_statusline_lines.py"),
        ("warm's time left is the idle time", LINE,
         "duration_text(cache.seconds_left or 0)", "duration_text(cache.idle)",
         "tests/test_statusline_lines.py"),
        ("the transcript's context leaves V out", LINE,
         "used = float((session.prefix or 0) + session.live_tokens)",
         "used = float(session.live_tokens)", "tests/test_statusline_lines.py"),
        ("10,000 tokens written 10.0k", "compact_dp/views/words.py", "    if n >= 10_000:",
         "    if n > 10_000:", "tests/test_statusline_lines.py"),
        ("the share is a fraction, not a percentage", LINE,
         "percent = 100 * used / window", "percent = used / window",
         "tests/test_statusline_lines.py"),
        ("70 % is not yet yellow", LINE, "percent is not None and percent >= 70",
         "percent is not None and percent > 70", "tests/test_statusline_lines.py"),
        ("dollars in cents only from $1", LINE, '2 if abs(x) >= 0.1 else 3',
         '2 if abs(x) >= 1 else 3', "tests/test_statusline_lines.py"),
        ("Claude Code's warm: false ignored before expiry", LINE,
         "if left > 0 and warm is not False:", "if left > 0:",
         "tests/test_statusline_lines.py"),
        ("an expiry years away is believed", LINE,
         "if expires is not None and abs(expires - now) > 365 * 86400:", "if False:",
         "tests/test_statusline_lines.py"),
        ("parts joined by a bar", LINE, 'return " · ".join(parts) or "compact-dp"',
         'return " | ".join(parts) or "compact-dp"', "tests/test_statusline_lines.py"),
        ("no transcript says nothing", LINE, 'problem = "no transcript yet"',
         "problem = None", "tests/test_statusline_lines.py"),
        ("a changed transcript is sniffed from where the check stopped",
         "compact_dp/sessions/incremental.py", "        f.seek(0)  ", "        pass  ",
         "tests/test_statusline_lines.py"),
        ("a transcript changed near the saved offset is resumed",
         "compact_dp/sessions/incremental.py",
         'if _checksum(f.read(min(CHECK, offset))) == saved["check"] and \\',
         'if True or _checksum(f.read(min(CHECK, offset))) == saved["check"] and \\',
         "tests/test_statusline_lines.py"),
    ],
    "settings install": [
        ("a created settings file is 644", SETTINGS,
         "st_mode & 0o7777 if self.exists else 0o600",
         "st_mode & 0o7777 if self.exists else 0o644", "tests/test_install.py"),
        ("the backup as readable as the settings", SETTINGS,
         "self.backup_mode = self.mode & 0o600", "self.backup_mode = self.mode",
         "tests/test_install.py"),
        ("uninstall after edits keeps no backup", SETTINGS,
         "        if not restored:\n            _write(file, file.raw, file.backup)",
         "        if False:\n            _write(file, file.raw, file.backup)",
         "tests/test_install.py"),
        ("uninstall replaces the settings before backing them up", SETTINGS,
         "        if not restored:\n            _write(file, file.raw, file.backup)\n"
         "        if new is None:\n            _remove(file.path)\n        else:\n"
         "            _write(file, new, file.path)",
         "        if new is None:\n            _remove(file.path)\n        else:\n"
         "            _write(file, new, file.path)\n"
         "        if not restored:\n            _write(file, file.raw, file.backup)",
         "tests/test_install.py"),
        ("a write goes into the old file", "compact_dp/files.py",
         "        os.replace(tmp, path)", "        shutil.copyfile(tmp, path)",
         "tests/test_install.py"),
        ("a failed write leaves its temporary file", "compact_dp/files.py",
         "        if os.path.exists(tmp):\n            os.unlink(tmp)",
         "        if False:\n            os.unlink(tmp)", "tests/test_install.py"),
        ("the temporary file starts with the umask's mode", "compact_dp/files.py",
         "0o666 if mode is None else mode & 0o777", "0o666",
         "tests/test_install.py"),
        ("uninstall --dry-run writes", SETTINGS,
         "    change = diff(path, file.raw, new)\n    if change and not dry_run:",
         "    change = diff(path, file.raw, new)\n    if change:",
         "tests/test_install.py"),
    ],
    "fast reading": [              # (the copy has no C module built: the patterns run)
        ("a line naming only the system is not read", "compact_dp/sessions/bytescan.py",
         """rb'"(?:user|assistant|system)"'""", """rb'"(?:user|assistant)"'""",
         "tests/test_bytescan.py"),
        ("only \\u counts as an escaped control", "compact_dp/sessions/bytescan.py",
         'rb"\\\\[bfu]"', 'rb"\\\\u"', "tests/test_bytescan.py tests/test_fast.py"),
        ("a timestamp's minute is told by its hour", "compact_dp/sessions/timefmt.py",
         "    if text.startswith(key):", "    if text.startswith(key[:13]):",
         "tests/test_sizes_and_times.py"),
    ],
    "project forecast": [
        ("a session still going counts", PROJECT,
         "if n == 0 or self.times[n - 1] > now - QUIET:", "if n == 0:",
         "tests/test_project.py"),
        ("requests after the moment count", PROJECT,
         "return bisect_left(self.times, now)", "return len(self.times)",
         "tests/test_project.py"),
        ("the session itself counts", PROJECT,
         "            if path is not None and p.path == path or \\", "            if False and \\",
         "tests/test_project.py"),
        ("a resumed session's start counts as its own", PROJECT,
         "elif first not in seen or seen[first][0] < n:", "elif first not in seen:",
         "tests/test_project.py"),
        ("the cache is never written", PROJECT,
         "    if changed or len(files) != len(saved):", "    if False:",
         "tests/test_project.py"),
        ("the prior's weight ignored", "compact_dp/core/horizon.py",
         "return (remaining + weight * prior) / (exposure + weight)",
         "return (remaining + prior) / (exposure + 1)",
         "tests/test_project.py"),
        ("dollars set against hindsight's, not the cheapest's", "compact_dp/replaying/compare.py",
         "free = dollars.get(FREE)", "free = dollars.get(BEST)",
         "tests/test_project.py"),
    ],
    "boundaries and exits": [
        ("never compacts a prompt exactly at the window", POLICIES,
         "if replay.prompt_now(request) <= s.window_of(request):",
         "if replay.prompt_now(request) < s.window_of(request):", "tests/test_user_boundaries.py"),
        ("pre-compact blocks exactly at the margin", "compact_dp/integrations/hooks.py",
         "used >= window * (1 - margin / 100)", "used > window * (1 - margin / 100)",
         "tests/test_user_boundaries.py"),
        ("forced at exactly the limit", "compact_dp/core/policy.py",
         "elif context_tokens > limit:", "elif context_tokens >= limit:",
         "tests/test_user_boundaries.py"),
        ("the profile's S beats DP_S", "compact_dp/question.py",
         "if name not in given and not (param.env and env.get(param.env)):",
         "if name not in given:", "tests/test_user_boundaries.py"),
        ("DP_S beats the session's S", "compact_dp/question.py",
         '    if aftermath and aftermath[-1].summary is not None:\n        stats["S"]',
         '    if False:\n        stats["S"]', "tests/test_user_boundaries.py"),
        ("Ctrl-C exits 2", "compact_dp/errors.py", "EXIT_INTERRUPTED = 130",
         "EXIT_INTERRUPTED = 2", "tests/test_user_boundaries.py"),
        ("Ctrl-C says nothing", "compact_dp/cli/main.py",
         'return env.fail("interrupted", EXIT_INTERRUPTED)', "return EXIT_INTERRUPTED",
         "tests/test_user_boundaries.py"),
    ],
    # issue 28, "Behaviours no test pins today": one mutant per rule its tests now hold
    "issue 28 pins": [
        ("exactly $1 has its cents", "compact_dp/views/words.py",
         "if x >= 1 or x == 0:", "if x > 1 or x == 0:",
         "tests/test_output.py::test_money_has_cents_from_a_dollar_up_and_enough_digits_below"),
        ("threshold:0 accepted", POLICIES,
         "if not 0 < percent <= 100:", "if not 0 <= percent <= 100:",
         "tests/test_policy.py::test_a_threshold_is_a_percentage_above_0_up_to_100"),
        ("old-style agent-*.jsonl replayed as sessions", "compact_dp/history.py",
         'and not name.startswith("agent-")', "",
         "tests/test_history.py::test_old_style_sub_agent_files_beside_a_session_are_not_sessions"),
        ("--force-percent 0 refused", "compact_dp/cli/native.py",
         "if p != int(p) or not 0 <= p <= 100:", "if p != int(p) or not 0 < p <= 100:",
         "tests/test_user_boundaries.py::test_zero_is_a_legal_value_of_every_option_that_takes_one"),
        ("--context-tokens 0 and --p-write 0 refused", "compact_dp/cli/native.py",
         "    if x < 0:", "    if x <= 0:",
         "tests/test_user_boundaries.py::test_zero_is_a_legal_value_of_every_option_that_takes_one"),
        ("a transcript under 64 bytes fails to open again", "compact_dp/sessions/incremental.py",
         "f.seek(max(0, offset - CHECK))\n        if _checksum",
         "f.seek(offset - CHECK)\n        if _checksum",
         "tests/test_claude_code.py::test_a_transcript_shorter_than_the_check_is_read_again_from_its_state"),
        ("a line of exactly the limit is too long", "compact_dp/sessions/read.py",
         "if long or held + first > limit:", "if long or held + first >= limit:",
         "tests/test_long_lines.py::test_a_line_of_exactly_the_limit_is_whole_and_one_byte_more_is_long"),
        ("an interrupted tool use taken for an unanswered prompt", CLAUDE,
         "not text.startswith(INTERRUPTED_TOOL):", "True:",
         "tests/test_claude_reader.py"),
        ("--tokens bytes: a negative fixed prefix", SIZING,
         "max(0, prompt - self.have)", "prompt - self.have",
         "tests/test_sizing.py::test_bytes_mode_never_makes_the_fixed_prefix_negative"),
        ("only snapshot/progress lines: no claude-code line", CLAUDE,
         "        if kind in KNOWN:", "        if kind in CONVERSATION:",
         "tests/test_claude_reader.py::"
         "test_a_new_transcript_of_only_bookkeeping_lines_is_told_and_read_as_claude_code"),
        ("a compaction keeping messages forgets the recorded adjustments", SIMULATE,
         "                     + self.extra)", "                     )",
         "tests/test_replay.py::test_a_compaction_that_keeps_messages_drops_the_recorded_"
         "adjustments_with_the_history"),
        ("after a recorded compaction later messages leave the other policies' contexts",
         SIMULATE, "if self.skip_context and kinds[i] == CONTEXT:", "if self.skip_context:",
         "tests/test_replay.py::test_after_a_recorded_compaction_a_policy_that_did_not_take_"
         "it_keeps_every_later_message"),
        ("an unanswered prompt no longer touches the cache", SIMULATE,
         "                    self._touch(when)", "                    pass",
         "tests/test_replay.py::test_an_unanswered_prompt_keeps_the_cache_warm"),
        ("--price ignored when the session names its model", "compact_dp/replaying/setting.py",
         "key = self.price or model or self.world.fallback_llm",
         "key = model or self.price or self.world.fallback_llm",
         "tests/test_replay.py::test_price_sets_the_prices_of_a_session_that_names_its_model"),
        ("dp leaves the summary and re-injected tokens out of T", POLICIES,
         "extra = 0 if V is not None else max(0, round(replay.prefix_now(request) - s.V0))",
         "extra = 0",
         "tests/test_replay.py::test_dp_counts_the_summary_and_what_the_agent_re_injected_"
         "in_T_after_a_compaction"),
        ("the last turn end is never marked last", FIT,
         "bool(ends) and j >= ends[-1]", "bool(ends) and j > ends[-1]",
         "tests/test_calibrate.py::test_each_sessions_last_turn_end_is_the_ending_the_end_"
         "chance_is_fitted_on"),
        ("the user's compaction figures pulled toward zero", FIT,
         "return (n * mine + prior_sessions * before) / (n + prior_sessions)",
         "return (mine + prior_sessions * before) / (n + prior_sessions)",
         "tests/test_calibrate.py::test_the_users_compaction_figures_are_pulled_to_the_"
         "built_in_ones_by_their_number"),
        ("the end chance counts the arriving turn the wrong way round", QUESTION,
         "(0 if session.last_kind == USER else 1)", "(1 if session.last_kind == USER else 0)",
         "tests/test_question.py::test_the_end_chance_is_about_the_turn_arriving"),
        ("after_tokens is the smallest compaction", QUESTION,
         "left = upper_middle(a.left for a in aftermath if a.left is not None)",
         "left = min((a.left for a in aftermath if a.left is not None), default=None)",
         "tests/test_question.py::test_what_compactions_left_is_the_median_of_the_sessions_own"),
        ("hidden history counts in the live context after a compaction", QUESTION,
         "extra = round(hidden) if session.live_start == 0 else 0", "extra = round(hidden)",
         "tests/test_question.py::test_history_hidden_before_the_file_counts_until_a_"
         "compaction_replaces_it"),
        ("plain output with --trigger ignores the forced policy", "compact_dp/views/emit.py",
         'compact = policy.action == "compact" if policy is not None else decision.compact',
         "compact = decision.compact",
         "tests/test_output.py::test_plain_output_on_a_whole_history_agent_says_what_the_"
         "policy_did"),
    ],
    "one question": [             # replay's dp asks what the command asks (issue 28.1)
        ("the Asker forecasts R one request on", QUESTION,
         "horizon = self.forecast(requests) if", "horizon = self.forecast(requests + 1) if",
         "tests/test_one_question.py"),
        ("the Asker's end chance counts one turn more", QUESTION,
         "ending = self.ender(turns, requests) if",
         "ending = self.ender(turns + 1, requests) if", "tests/test_one_question.py"),
        ("the Asker's outlook forgets the agent's own compaction", QUESTION,
         "            outlook = Outlook(growth, o.auto, o.hold,",
         "            outlook = Outlook(growth, None, o.hold,", "tests/test_one_question.py"),
        ("replay's dp sizes unseen messages by the next request's usage", POLICIES,
         "conv.total + extra - replay.unsized", "conv.total + extra",
         "tests/test_one_question.py::test_replays_dp_decides_what_the_command_decides_on_"
         "the_cut_example"),
        ("replay's dp counts what a compaction left as the context's growth", POLICIES,
         "replay.compactions > 0, v)", "False, v)",
         "tests/test_one_question.py::test_replays_dp_decides_what_the_command_decides_on_"
         "the_cut_example"),
        ("the recorded context's prefix counted in T as well as in V", POLICIES,
         "extra = 0 if V is not None else max(0, round(replay.prefix_now(request) - s.V0))",
         "extra = max(0, round(replay.prefix_now(request) - s.V0))",
         "tests/test_one_question.py::test_on_the_recorded_context_after_a_compaction_v_is_"
         "that_contexts_own"),
        ("a request's estimate is its size even where its growth said otherwise", SIZING,
         "guessed = [self.estimate(b, per_byte) for b in nbytes] if self.keep \\",
         "guessed = None if self.keep \\",
         "tests/test_one_question.py::test_replays_dp_decides_what_the_command_decides_on_"
         "the_cut_example"),
    ],
}


def run_tests(tests: str, change: tuple[str, str, str] | None = None) -> bool:
    """True when ``tests`` fail on a copy of the repository with ``change`` (file, text,
    new text) applied; without a change, a failure prints the end of pytest's report."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "repo"
        shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns(
            ".venv", ".git", "__pycache__", ".hypothesis", ".pytest_cache", "data",
            "build", "*.egg-info"))
        if change is not None:
            file, old, new = change
            target = copy / file
            text = target.read_text()
            assert text.count(old) == 1, f"{old!r} not found exactly once in {file}"
            target.write_text(text.replace(old, new))
        p = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p",
                            "no:cacheprovider", *tests.split()], cwd=copy,
                           capture_output=True, text=True,
                           env={**os.environ, "PYTHONPATH": str(copy)})
        if change is None and p.returncode != 0:
            print(f"{tests}, unchanged:", *p.stdout.splitlines()[-15:], sep="\n  ")
        return p.returncode != 0


def run_mutant(name: str, file: str, old: str, new: str, tests: str) -> bool:
    """True when the tests fail on the mutant (the mutant is killed)."""
    return run_tests(tests, (file, old, new))


def main(argv: list[str]) -> int:
    jobs = 2
    if "--jobs" in argv:
        at = argv.index("--jobs")
        jobs = int(argv[at + 1])
        argv = argv[:at] + argv[at + 2:]
    areas = {area: items for area, items in MUTANTS.items()
             if not argv or any(word.lower() in area.lower() for word in argv)}
    todo = [(area, m) for area, items in areas.items() for m in items]
    with ThreadPoolExecutor(jobs) as pool:
        # a kill means something only where the same tests pass without the mutant
        selections = sorted({m[4] for _, m in todo})
        failing = [t for t, failed in zip(selections, pool.map(run_tests, selections))
                   if failed]
        if failing:
            print("these tests fail without any mutant:", *failing, sep="\n  ")
            return 2
        results = list(pool.map(lambda job: run_mutant(*job[1]), todo))
    table: dict[str, list[int]] = {}
    for (area, (name, _, _, _, tests)), killed in zip(todo, results):
        print(f"{'killed  ' if killed else 'SURVIVED'}  {area}: {name}  ({tests})")
        counts = table.setdefault(area, [0, 0])
        counts[0] += killed
        counts[1] += 1
    print(f"\n{'area':<22} caught")
    for area, (caught, total) in table.items():
        print(f"{area:<22} {caught:>3} of {total:<3} {100 * caught / total:5.1f} %")
    caught = sum(results)
    print(f"{'all':<22} {caught:>3} of {len(results):<3} "
          f"{100 * caught / max(1, len(results)):5.1f} %")
    return 0 if caught == len(results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
