# Two commands matter: `make demo` and `make test`.  Both set up .venv on their own.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
READY  := $(VENV)/.ready
EXAMPLE := golden/inputs/syn_400.jsonl
STATS  := --turns 5 --requests 40 --input-tokens 400000

.PHONY: demo test bench setup clean mutants

# A regular (not editable) install, re-done when the sources change: an editable install
# adds an import hook to every start of this venv's Python (~10 ms), and the tests time
# nothing but they do run the installed command.
$(READY): pyproject.toml $(shell find compact_dp agent_hooks -type f -not -path '*/__pycache__/*')
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet '.[test]'
	touch $(READY)

setup: $(READY)

demo: $(READY)
	@echo '$$ compact-dp $(STATS) $(EXAMPLE)'
	@$(BIN)/compact-dp $(STATS) $(EXAMPLE)
	@echo
	@echo '$$ compact-dp $(STATS) --explain $(EXAMPLE)'
	@$(BIN)/compact-dp $(STATS) --explain $(EXAMPLE)
	@echo
	@echo '$$ compact-dp replay --max-context 40000 $(EXAMPLE)'
	@$(BIN)/compact-dp replay --max-context 40000 $(EXAMPLE)

test: $(READY)
	$(BIN)/python -m mypy compact_dp
	$(BIN)/python -m pytest -q

# Break the core on purpose: every mutant must fail a test (tests/mutants.py).
mutants: $(READY)
	$(BIN)/python tests/mutants.py

bench: $(READY)
	$(BIN)/python benchmarks/bench.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis
