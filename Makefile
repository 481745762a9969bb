# fabricgen: `make render` and `make test` work on a fresh machine.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
FABRIC ?= medium
STAMP  := $(VENV)/.installed

.PHONY: setup render test test-unit lint golden bench bench-deploy bench-drift deploy drift report clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	@# libyang (SONiC YANG validation) needs Debian's libyang2-dev; optional for render
	-$(BIN)/pip install --quiet -e '.[sonic]' 2>/dev/null || echo "note: libyang not installed (apt-get install libyang2-dev); SONiC YANG checks will be skipped"
	touch $(STAMP)

setup: $(STAMP)

render: setup
	$(BIN)/fabricgen render inventories/$(FABRIC)/fabric.yaml -o build/$(FABRIC)

test: setup
	$(BIN)/pytest -q -p no:cacheprovider

test-unit: setup
	$(BIN)/pytest -q -p no:cacheprovider tests/unit

lint: setup
	$(BIN)/ruff check generator tests bench napalm_nvue napalm_sonic_fabric

golden: setup
	$(BIN)/python -m tests.golden.regenerate
	git --no-pager diff --stat -- tests/golden

bench: setup
	$(BIN)/python bench/render_scale.py

bench-deploy: setup
	$(BIN)/python bench/deploy_scale.py

bench-drift: setup
	$(BIN)/python bench/drift_scale.py

deploy: setup
	$(BIN)/fabricgen deploy inventories/$(FABRIC)/fabric.yaml $(if $(ENDPOINTS),--endpoints $(ENDPOINTS),) $(DEPLOY_ARGS)

drift: setup
	$(BIN)/fabricgen drift inventories/$(FABRIC)/fabric.yaml $(if $(ENDPOINTS),--endpoints $(ENDPOINTS),) $(DRIFT_ARGS)

report: setup
	$(BIN)/fabricgen report inventories/$(FABRIC)/fabric.yaml -o build/$(FABRIC)-report.html

clean:
	rm -rf build dist *.egg-info
