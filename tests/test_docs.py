"""The docs say what the code does: every parameter is documented with its default and
range, every doc link resolves (to a heading of that file, when it names one), and no doc
sends a reader outside the repository."""

from __future__ import annotations

import re

import pytest

from compact_dp.core.params import PARAMS

from .conftest import ROOT

DOCS = [ROOT / "README.md", ROOT / "agent_hooks" / "README.md", ROOT / "golden" / "README.md",
        *sorted((ROOT / "docs").glob("*.md"))]


def test_options_doc_lists_every_parameter_with_its_default_and_range():
    text = (ROOT / "docs" / "options.md").read_text()
    for p in PARAMS:
        row = next((x for x in text.splitlines() if x.startswith(f"| `--{p.option}` |")), "")
        assert row, p.option
        assert f"`{p.awk}`" in row and f"| {p.default} |" in row and p.rule() in row
        assert (f"`{p.env}`" in row) if p.env else "| — |" in row


def anchors(doc) -> set[str]:
    """The #anchors of a Markdown file's headings, as GitHub makes them: lower case, no
    punctuation but hyphens, a hyphen for each space (code blocks hold no heading)."""
    text = re.sub(r"```.*?```", "", doc.read_text(), flags=re.S)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
            for h in re.findall(r"^#+ (.*)$", text, re.M)}


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_docs_stand_alone(doc):
    text = doc.read_text()
    assert "../shared" not in text and "SPEC §" not in text
    for target, anchor in re.findall(r"\]\(([^)#\s]*)(?:#([^)\s]*))?\)", text):
        if target.startswith("http"):
            continue
        path = doc.parent / target if target else doc
        assert path.exists(), f"{doc.name}: broken link {target}"
        if anchor:
            assert anchor in anchors(path), f"{doc.name}: no heading for {target}#{anchor}"
