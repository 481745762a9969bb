# fabricgen: `make render` and `make test` work on a fresh machine.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
FABRIC ?= medium
STAMP  := $(VENV)/.installed
# Exact versions of every dependency, compiled from pyproject.toml by `make lock`: a new
# upstream release cannot change what `make setup` installs on a bastion overnight.
CONSTRAINTS := constraints.txt

.PHONY: setup setup-nautobot lock lock-nautobot nautobot-db render test test-quick test-under-load test-unit lint golden bench bench-deploy bench-drift bench-verify bench-pyavd bench-sot deploy drift report clean

$(STAMP): pyproject.toml $(CONSTRAINTS)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet -c $(CONSTRAINTS) pip
	@# a conflict here means pyproject.toml changed without `make lock`
	$(BIN)/pip install --quiet -c $(CONSTRAINTS) -e '.[dev]'
	@# libyang (SONiC YANG validation) needs Debian's libyang2-dev; optional for render
	-$(BIN)/pip install --quiet -c $(CONSTRAINTS) -e '.[sonic]' 2>/dev/null || echo "note: libyang not installed (apt-get install libyang2-dev); SONiC YANG checks will be skipped"
	touch $(STAMP)

setup: $(STAMP)

# The real Nautobot of the sot tests (tests/support/nautobot_service.py): a server fabricgen talks
# to over HTTP, so its own venv, pinned by constraints-nautobot.txt (its Django stack clashes with
# constraints.txt). The tests skip without it, or fail under FABRICGEN_REQUIRE_NAUTOBOT=1 (CI).
NAUTOBOT_VERSION := 3.2.7
# the app whose ASN objects `sot push` writes when a server has it (tests/sot/test_sot_bgp_models.py)
NAUTOBOT_BGP_MODELS_VERSION := 3.2.0
NAUTOBOT_VENV    := .venv-nautobot
NAUTOBOT_STAMP   := $(NAUTOBOT_VENV)/.installed
NAUTOBOT_PINS    := constraints-nautobot.txt

$(NAUTOBOT_STAMP): $(NAUTOBOT_PINS)
	$(PYTHON) -m venv $(NAUTOBOT_VENV)
	$(NAUTOBOT_VENV)/bin/pip install --quiet -r $(NAUTOBOT_PINS)
	touch $(NAUTOBOT_STAMP)

setup-nautobot: $(NAUTOBOT_STAMP)

# Repin constraints-nautobot.txt: nautobot==$(NAUTOBOT_VERSION) into a scratch venv, then its freeze.
lock-nautobot:
	rm -rf build/lock-nautobot
	$(PYTHON) -m venv build/lock-nautobot
	build/lock-nautobot/bin/pip install --quiet nautobot==$(NAUTOBOT_VERSION) nautobot-bgp-models==$(NAUTOBOT_BGP_MODELS_VERSION)
	{ sed -n '/^#/p' $(NAUTOBOT_PINS); build/lock-nautobot/bin/pip freeze; } > $(NAUTOBOT_PINS).new
	mv $(NAUTOBOT_PINS).new $(NAUTOBOT_PINS)
	rm -rf build/lock-nautobot

# Migrate an empty Nautobot database into the dump cache (/var/tmp/fabricgen-nautobot-cache), so
# the first sot test restores it in seconds; CI runs it before `make test`.
nautobot-db: setup setup-nautobot
	$(BIN)/python -m tests.support.nautobot_service prepare

# Recompile constraints.txt from pyproject.toml. Existing pins are kept where they still fit;
# `make lock UPGRADE=1` moves every package to its newest allowed release.
lock: setup
	$(BIN)/pip-compile --quiet --extra dev --extra sonic --strip-extras --allow-unsafe \
		--no-emit-index-url --no-emit-find-links $(if $(UPGRADE),--upgrade,) \
		--output-file $(CONSTRAINTS) pyproject.toml

render: setup
	$(BIN)/fabricgen render inventories/$(FABRIC)/fabric.yaml -o build/$(FABRIC)

# pytest-xdist workers: twice the cores, since most integration tests wait on SSH, Kea or a
# subprocess rather than compute (measured in the README's Tests section); WORKERS=1 runs serially.
# Tests that share a resource of the machine take a lease on it instead of a worker of their own
# (the namespace hosts' management pools: tests/integration/netns.py free_mgmt_octet). --dist
# loadgroup with no groups hands out one test (its own scope) at a time as workers free up; plain
# --dist load queued tests behind the long namespace-host ones: 24 min against 17-18 min.
WORKERS ?= $(shell echo $$(( $$(nproc) * 2 )))
# Bytecode is cached (in the venv, not the checkout) even where the environment sets
# PYTHONDONTWRITEBYTECODE: without it every xdist worker and every `python -m generator.cli` a test
# starts compiled the package again, and pytest rewrote every test module's asserts again (9 s of
# each worker's collection against 3.4 s). What the tests compile in their scratch directories is
# removed after the run (the cache mirrors absolute paths: ~50 MB a run under pycache/tmp).
xdist   = $(if $(filter 1,$(1)),,-n $(1) --dist loadgroup)
PYTEST_RUN := PYTHONDONTWRITEBYTECODE= PYTHONPYCACHEPREFIX=$(CURDIR)/$(VENV)/pycache $(BIN)/pytest -q -p no:cacheprovider
PYTEST  := $(PYTEST_RUN) $(call xdist,$(WORKERS))
# test-quick computes rather than waits: one worker per core (2 cores: 131 s and 243 CPU-s against
# 142 s and 283 CPU-s with 4, README "Tests"); each extra worker repeats imports and caches
QUICK_WORKERS ?= $(shell nproc)
# test-quick's scratch files (tmp_path, tempfile) on a tmpfs when there is one: the unit tests
# render and delete tens of thousands of small files, and creating one on this ext4 disk costs
# ~0.9 ms of kernel time against ~0.01 ms in RAM (a fuzz module: 9-17 s of system time against 0.8 s).
QUICK_TMP ?= /dev/shm

# the whole suite (CI runs this)
test: setup
	$(PYTEST); status=$$?; rm -rf "$(VENV)/pycache$${TMPDIR:-/tmp}"; exit $$status

# for editing: unit and golden tests only, no lab, SSH or namespace; property tests at most 50
# examples each from a fixed seed (tests/conftest.py QUICK_EXAMPLES), `make test` tries them all
test-quick: setup
	@scratch=$$(mktemp -d "$(QUICK_TMP)/fabricgen-test-quick.XXXXXX" 2>/dev/null || mktemp -d) && \
	TMPDIR="$$scratch" $(PYTEST_RUN) $(call xdist,$(QUICK_WORKERS)) --hypothesis-profile=quick tests/unit tests/golden; status=$$?; \
	chmod -R u+w "$$scratch" 2>/dev/null; rm -rf "$$scratch" "$(VENV)/pycache$$scratch"; exit $$status

test-unit: setup
	$(PYTEST) tests/unit

# the integration suite with every core busy (a CPU hog per core, stopped by PID afterwards):
# tests that race a real process must pass on a loaded machine; not part of every CI run
test-under-load: setup
	$(BIN)/python -m tests.load.under_load -- -q -p no:cacheprovider $(if $(filter 1,$(WORKERS)),,-n $(WORKERS) --dist loadgroup) tests/integration

lint: setup
	$(BIN)/ruff check generator tests bench napalm_nvue napalm_sonic_fabric playbooks/files
	@# the package layers (pyproject.toml [tool.importlinter]): fails on the next up-edge
	$(BIN)/lint-imports
	@# the playbooks at ansible-lint's strictest profile; PATH so it finds the venv's ansible
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/ansible-lint --offline --profile production playbooks/

golden: setup
	$(BIN)/python -m tests.golden.regenerate
	git --no-pager diff --stat -- tests/golden

bench: setup
	$(BIN)/python bench/render_scale.py

bench-deploy: setup
	$(BIN)/python bench/deploy_scale.py $(if $(NOS),--nos $(NOS),)

bench-drift: setup
	$(BIN)/python bench/drift_scale.py $(if $(NOS),--nos $(NOS),)

# verify of 128 correctly wired switches, ten runs in a row: each must pass with no finding.
# NOS=sonic for the SONiC fabric (also for bench-deploy and bench-drift).
bench-verify: setup
	$(BIN)/python bench/verify_scale.py $(if $(NOS),--nos $(NOS),)

# `fabricgen sot` against a live Nautobot ($$NAUTOBOT_URL, token in $$NAUTOBOT_TOKEN): first push,
# second push (must write nothing) and diff of inventories/medium and a ~1,000-device fabric
bench-sot: setup
	$(BIN)/python bench/sot_scale.py $(if $(SIZES),--sizes $(SIZES),)

# fabricgen and pyavd side by side in one run (issue 14); pyavd goes into its own venv,
# bench/.venv-pyavd, made on first use: never a dependency of fabricgen. GPUS=2048 for 112 switches.
bench-pyavd: setup
	$(BIN)/python bench/pyavd_compare.py $(if $(GPUS),--gpus $(GPUS),)

deploy: setup
	$(BIN)/fabricgen deploy inventories/$(FABRIC)/fabric.yaml $(if $(ENDPOINTS),--endpoints $(ENDPOINTS),) $(DEPLOY_ARGS)

drift: setup
	$(BIN)/fabricgen drift inventories/$(FABRIC)/fabric.yaml $(if $(ENDPOINTS),--endpoints $(ENDPOINTS),) $(DRIFT_ARGS)

report: setup
	$(BIN)/fabricgen report inventories/$(FABRIC)/fabric.yaml -o build/$(FABRIC)-report.html

clean:
	rm -rf build dist *.egg-info
