# Two commands do everything on a fresh machine:  `make run`  and  `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
ARGS ?=

$(BIN)/.installed: pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	# the CPU build of torch first, so that torch>=2.2 below installs nothing more
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e ".[dev,peers]"  # peers: the Optuna/BoTorch/Nevergrad adapters' tests run too
	touch $@

.PHONY: setup run test
setup: $(BIN)/.installed

run: $(BIN)/.installed  ## the main job on the embedded MLflow store (override with ARGS="algo=... task=...")
	$(BIN)/python -m hpoflow $(ARGS)

test: $(BIN)/.installed  ## the whole test suite
	$(BIN)/python -m pytest -q -p no:cacheprovider
