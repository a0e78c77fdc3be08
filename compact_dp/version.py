"""The release number and where the documentation is, in one place each (pyproject.toml
reads the version from here and names the same address in [project.urls])."""

__version__ = "0.2.0"
DOCS = "https://github.com/compact-dp/compact-dp/tree/main/docs"


def doc_lines(pages: tuple[str, ...] = ()) -> str:
    """The end of a --help page: the documentation's address and each page's, on lines of
    their own (no wrapping may cut an address)."""
    return "Documentation: " + "\n  ".join([doc_url()] + [doc_url(page) for page in pages])


def doc_url(page: str | None = None) -> str:
    """The address of a page of the documentation (``replay.md``), or of all of it: what
    help texts point to, since an installed copy (pipx) has no docs/ folder."""
    return f"{DOCS.replace('/tree/', '/blob/')}/{page}" if page else DOCS
