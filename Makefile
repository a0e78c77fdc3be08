# Two commands matter: `make demo` and `make test`.  Both set up .venv on their own.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
READY  := $(VENV)/.ready
EXAMPLE := golden/inputs/real_swe_7tasks.jsonl
STATS  := --turns 5 --requests 40 --input-tokens 400000

.PHONY: demo test bench setup clean

$(READY): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(READY)

setup: $(READY)

demo: $(READY)
	@echo '$$ compact-dp $(STATS) $(EXAMPLE)'
	@$(BIN)/compact-dp $(STATS) $(EXAMPLE)
	@echo
	@echo '$$ compact-dp $(STATS) --explain $(EXAMPLE)'
	@COLUMNS=110 $(BIN)/compact-dp $(STATS) --explain $(EXAMPLE)

test: $(READY)
	$(BIN)/python -m pytest -q

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis
