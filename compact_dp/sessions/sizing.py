"""Per-message token sizes: from the recorded prompts (``usage``) or the content (``bytes``).

With ``usage``, within each context (the messages between two compactions):

* the first request's prompt is the fixed prefix V (system prompt, tools, whatever the
  client adds that the file does not show) plus the messages it saw, sized at the tokens
  per byte the whole session shows (below; the bytes rule if it shows none); V is what
  remains (at least 0, the messages scaled down if they alone exceed it);
* between two requests the prompt grew by g tokens: g is shared among the messages added
  in between, in proportion to their bytes (whole tokens, largest remainders first), so
  the sizes of the messages a request saw, plus V, sum to its recorded prompt exactly;
  a growth with no new message goes to the last message seen;
* a prompt that shrank without a compaction (the client cleared old tool results) takes
  the difference from the messages already seen, in proportion to their sizes;
* messages no request has seen yet (the last reply, the newest tool results) are sized at
  the same tokens per byte.

The tokens per byte: all the growth shared among new messages, over their bytes, across
the whole session.

With ``bytes``, each message is ``(bytes + 3) // 4 + 1`` tokens of its content.
"""

from __future__ import annotations

from .model import CONTEXT, Session


def bytes_rule(nbytes: int) -> int:
    return (nbytes + 3) // 4 + 1


def share(total: int, weights: list[int]) -> list[int]:
    """Whole numbers in proportion to ``weights`` that sum to ``total`` exactly (the
    largest remainders get the leftover units; equal shares when all weights are 0)."""
    n = len(weights)
    if n == 0:
        return []
    w = [max(0, x) for x in weights]
    whole = sum(w)
    if whole == 0:
        w, whole = [1] * n, n
    parts = [total * x // whole for x in w]
    left = total - sum(parts)
    if left:
        order = sorted(range(n), key=lambda i: (-(total * w[i] % whole), i))
        for i in order[:left]:
            parts[i] += 1
    return parts


def size_session(session: Session, mode: str = "auto") -> Session:
    """Fill ``session.tokens``, ``prefix`` and ``summary_tokens``; ``mode``: usage, bytes
    or auto (usage when the session records it)."""
    if session.format == "bash-agent":
        session.token_source = "bytes"          # the scanner already sized every line
        return session
    use_usage = session.has_usage if mode == "auto" else mode == "usage"
    if mode == "usage" and not session.has_usage:
        session.warnings.append("the session records no usage: --tokens usage falls back "
                                "to bytes")
        use_usage = False
    n = len(session.kinds)
    if not use_usage:
        session.tokens = [bytes_rule(b) for b in session.nbytes]
        session.token_source = "bytes"
        session.prefix = _prefix_from_first_request(session)
    else:
        session.tokens = [0] * n
        session.token_source = "usage"
        per_byte = tokens_per_byte(session)
        prefixes = [_size_segment(session, seg, per_byte)
                    for seg in range(len(session.compactions) + 1)]
        session.segment_prefixes = prefixes
        live = prefixes[-1]
        if live is None:                         # no request in the live context yet
            live = next((p for p in reversed(prefixes) if p is not None), None)
        session.prefix = live
    session.summary_tokens = _summary_tokens(session)
    return session


def _prefix_from_first_request(session: Session) -> float | None:
    """V from the live context's first request even when sizes come from bytes."""
    live = session.live_requests()
    first = live[0] if live else None
    if first is None or first.usage is None:
        return None
    start = session.live_start
    seen = sum(bytes_rule(b) for b in session.nbytes[start:first.seen])
    return float(max(0, first.usage.prompt - seen))


def tokens_per_byte(session: Session) -> float | None:
    """Recorded growth over the bytes of the messages it was shared among (None: no such
    growth in the whole session)."""
    grown = weighed = 0
    for segment in range(len(session.compactions) + 1):
        start, end = session.segment_bounds(segment)
        requests = [r for r in session.requests
                    if r.segment == segment and r.usage is not None]
        for before, after in zip(requests, requests[1:]):
            a, b = min(max(before.seen, start), end), min(max(after.seen, start), end)
            growth = after.usage.prompt - before.usage.prompt if after.usage and \
                before.usage else 0
            if b > a and growth > 0:
                grown += growth
                weighed += sum(session.nbytes[a:b])
    return grown / weighed if grown and weighed else None


def estimate(nbytes: int, per_byte: float | None) -> int:
    """A message no recorded growth sized: at the session's tokens per byte."""
    return round(nbytes * per_byte) if per_byte is not None else bytes_rule(nbytes)


def _size_segment(session: Session, segment: int, per_byte: float | None) -> float | None:
    """Size one context's messages from its requests; returns its prefix V (None when the
    context has no request with usage)."""
    start, end = session.segment_bounds(segment)
    tokens, nbytes = session.tokens, session.nbytes
    requests = [r for r in session.requests if r.segment == segment and r.usage is not None]
    if not requests:
        for i in range(start, end):
            tokens[i] = estimate(nbytes[i], per_byte)
        return None
    first = requests[0]
    seen = min(max(first.seen, start), end)
    estimates = [estimate(nbytes[i], per_byte) for i in range(start, seen)]
    prompt = first.usage.prompt if first.usage else 0
    if sum(estimates) <= prompt:
        prefix = prompt - sum(estimates)
        tokens[start:seen] = estimates
    else:                                        # the messages alone exceed the prompt
        prefix = 0
        tokens[start:seen] = share(prompt, estimates)
    last_prompt, last_seen = prompt, seen
    for r in requests[1:]:
        now = min(max(r.seen, last_seen), end)
        prompt = r.usage.prompt if r.usage else last_prompt
        growth = prompt - last_prompt
        if growth >= 0:
            if now > last_seen:
                tokens[last_seen:now] = share(growth, nbytes[last_seen:now])
            elif now > start:
                tokens[now - 1] += growth
            else:
                prefix += growth
        else:
            prefix = _shrink(tokens, start, last_seen, -growth, prefix)
            if now > last_seen:
                tokens[last_seen:now] = [0] * (now - last_seen)
        last_prompt, last_seen = prompt, now
    for i in range(last_seen, end):
        tokens[i] = estimate(nbytes[i], per_byte)
    return float(prefix)


def _shrink(tokens: list[int], start: int, end: int, amount: int, prefix: int) -> int:
    """Take ``amount`` tokens from messages[start:end] in proportion to their sizes (the
    rest, if they run out, from the prefix); returns the prefix."""
    have = sum(tokens[start:end])
    take = min(amount, have)
    cut = share(take, tokens[start:end])
    for i, c in zip(range(start, end), cut):
        tokens[i] -= c
    return max(0, prefix - (amount - take))


def _summary_tokens(session: Session) -> int | None:
    """The last compaction's summary: the context messages that open the new context."""
    if not session.compactions:
        return None
    at = session.compactions[-1].at
    total, i = 0, at
    while i < len(session.kinds) and session.kinds[i] == CONTEXT:
        total += session.tokens[i]
        i += 1
    return total or None
