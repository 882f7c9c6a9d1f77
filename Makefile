# Two commands do everything on a fresh machine:  `make run`  and  `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
ARGS ?=
# pytest-xdist workers of `make test` (auto: one per CPU core; WORKERS=0: all in one process)
WORKERS ?= auto
# Where pip finds torch. Empty: the default index. pypi.org serves the CUDA build of torch for Linux x86_64 (plus
# several GB of nvidia-* wheels); for the CPU build there, use: make run TORCH_INDEX=https://download.pytorch.org/whl/cpu
TORCH_INDEX ?=

$(BIN)/.installed: pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	# torch first (the CPU build where the index serves it first, or from TORCH_INDEX), so that torch>=2.2
	# below installs nothing more
	$(BIN)/pip install -q torch==2.13.0 $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX))
	# editable_mode=compat: the clone goes on sys.path, so a folder named hpoflow beside a script (the clone, seen
	# from its parent) cannot shadow the package (setuptools' default finder loses to such a namespace folder)
	$(BIN)/pip install -q -e ".[dev,peers,cluster]" --config-settings editable_mode=compat 2>/dev/null \
	  || $(BIN)/pip install -q -e ".[dev,peers,cluster]"  # peers: the Optuna/BoTorch/Nevergrad adapters' tests run too;
	# cluster: the Ray launcher's, submitit's and (where PostgreSQL's binaries are installed) the tracking server's
	# PostgreSQL's binaries for the tracking-server and Ray walkthrough tests: installed where root has apt-get (CI),
	# skipped otherwise (those tests then skip)
	-if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; \
	  then apt-get update -qq && apt-get install -y -qq postgresql >/dev/null; fi
	touch $@

.PHONY: setup run test test-fast docs
setup: $(BIN)/.installed

run: $(BIN)/.installed  ## the main job (algo=auto) on the embedded MLflow store (override with ARGS="algo=... task=...")
	$(BIN)/python -m hpoflow algo=auto $(ARGS)

test: $(BIN)/.installed  ## the whole test suite, what CI runs (all but -m slow), one test file per xdist worker
	$(BIN)/python -m pytest -q -p no:cacheprovider -n $(WORKERS) --dist loadfile

test-fast: $(BIN)/.installed  ## the inner loop: no slow, cli, browser or integration tests
	$(BIN)/python -m pytest -q -p no:cacheprovider -n $(WORKERS) -m "not slow and not cli and not browser and not integration"

docs: $(BIN)/.installed  ## the documentation site (docs/, mkdocs.yml) into site/; strict: a broken link or reference fails it
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict
