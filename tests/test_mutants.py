"""``make mutants`` stays runnable: a mutant whose text the code no longer holds would
stop the whole run (or, worse, silently test nothing), so each is checked here, cheaply,
on every ``make test``."""

from __future__ import annotations

from .mutants import MUTANTS, ROOT


def test_every_mutant_changes_one_place_of_the_code_and_names_tests_that_exist():
    stale = []
    for area, items in MUTANTS.items():
        for name, file, old, new, tests in items:
            found = (ROOT / file).read_text().count(old) if (ROOT / file).exists() else 0
            if found != 1 or old == new:
                stale.append(f"{area}: {name}: {old!r} found {found} times in {file}")
            stale += [f"{area}: {name}: no test file {t}" for t in tests.split()
                      if not (ROOT / t.split("::")[0]).exists()]
    assert stale == []


def test_the_mutants_cover_every_area_the_review_named():
    assert {"Codex reader", "sizing", "pricing", "Python API", "--json fields",
            "status line", "settings install"} <= set(MUTANTS)
