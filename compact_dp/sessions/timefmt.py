"""Timestamps: ISO 8601 text to seconds since the epoch (UTC), without importing datetime
for the common ``2026-02-10T21:11:56.846Z`` shape (the status line starts on every message).
"""

from __future__ import annotations


def _days_from_civil(y: int, m: int, d: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm)."""
    y -= m <= 2
    era = (y if y >= 0 else y - 399) // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


class _Last:
    """The minute read last, and its seconds (one pair, replaced whole): a session's lines
    share their minutes, and comparing a line's first 16 characters with the line
    before's costs less than reading them again.  It starts with a key no timestamp
    starts with."""

    def __init__(self) -> None:
        self.pair: tuple[str, int | None] = ("\0" * 16, None)


LAST = _Last()


def _minute(text: str) -> int | None:
    """Seconds since the epoch of a timestamp's minute (its first 16 characters: ``text``
    has at least 20), read once per run of lines in the same minute (None: not a time)."""
    key, seconds = LAST.pair
    if text.startswith(key):
        return seconds
    seconds = None
    try:
        y, mo, d = int(text[0:4]), int(text[5:7]), int(text[8:10])
        h, mi = int(text[11:13]), int(text[14:16])
        seconds = ((_days_from_civil(y, mo, d) * 24 + h) * 60 + mi) * 60
    except ValueError:
        pass
    LAST.pair = (text[:16], seconds)
    return seconds


LATEST = 1e11       # seconds since 1970 (year 5138): the last a time in seconds may say; a
                    # larger number is one in milliseconds


def parse_time(text: object) -> float | None:
    """Seconds since the epoch, or None for anything that is not a timestamp — a text one
    no clock shows either (before 1970, or past what a number may say: year 5138), as a
    number's range already says."""
    if isinstance(text, str):
        if len(text) < 10:
            return None
        try:
            if len(text) >= 20 and text[4] == "-" and text[7] == "-" and \
                    text[10] in "Tt " and text[-1] in "Zz":
                minute = _minute(text)
                value = None if minute is None else minute + float(text[17:-1])
            else:
                from datetime import UTC, datetime  # here: only for a rare shape
                stamp = datetime.fromisoformat(text)
                if stamp.tzinfo is None:
                    stamp = stamp.replace(tzinfo=UTC)
                value = stamp.timestamp()
        except (ValueError, IndexError):
            return None
        return value if value is not None and 0 <= value < LATEST else None
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        if not 0 <= text < LATEST * 1000.0:    # not a time: garbage, NaN or infinite
            return None
        return float(text) / (1000.0 if text > LATEST else 1.0)
    return None


def date_of(seconds: float | None, utc: bool = False) -> str | None:
    """The date (YYYY-MM-DD) of a moment, local or UTC; None for none, or one no calendar
    can say."""
    if seconds is None:
        return None
    import time
    try:
        return time.strftime("%Y-%m-%d", (time.gmtime if utc else time.localtime)(seconds))
    except (OverflowError, OSError, ValueError):
        return None
