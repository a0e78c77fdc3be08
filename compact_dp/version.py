"""The release number, which build runs, and where the documentation is, in one place each
(pyproject.toml reads the version from here and names the same address in [project.urls])."""

import os

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


# A module of each kind the compiled build makes: one mypyc compiles, and the C one.
COMPILED_WITNESSES = ("sessions/fast", "sessions/_bytescan")


def build() -> str:
    """``"compiled"`` when the modules beside this one are the compiled build's, else
    ``"pure Python"`` (a pure install, or the source tree itself).  It looks for the
    built files, importing nothing: Python loads an extension module before the ``.py``
    of the same name, so the files that are there are the ones that run."""
    from importlib.machinery import EXTENSION_SUFFIXES

    here = os.path.dirname(os.path.abspath(__file__))
    built = all(any(os.path.exists(os.path.join(here, name + suffix))
                    for suffix in EXTENSION_SUFFIXES) for name in COMPILED_WITNESSES)
    return "compiled" if built else "pure Python"
