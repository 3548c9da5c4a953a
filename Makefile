# Set-up is two commands: `make preview` and `make test` (README, "Quick start").
PYTHON ?= python3
VENV := venv
PY := $(VENV)/bin/python
STACK ?= dev
# One deployment unit of STACK (foundation, data, cluster-<key>, tenants, fleet); empty: all.
UNIT ?=
# Reference material (CRD schemas, chart values) beside the repository; see README.
SHARED_DIR ?= ../shared

.PHONY: help install schemas preview preview-all preview-delivery review doctor prices capacity docs lint test bench lock clean tools

help:
	@echo "make preview [STACK=dev|staging|prod]  offline preview of an environment's stacks (creates ./venv first)"
	@echo "        [UNIT=cluster-eus2]             only one unit (and the units it reads)"
	@echo "make preview-all                        offline preview of every stack"
	@echo "make preview-delivery                   offline preview and policy review of the delivery project"
	@echo "make review [BASE=origin/main]          every stack at BASE and here, compared: changes, replacements,"
	@echo "                                        policies, capacity, cost, diagrams (out/review.md)"
	@echo "make doctor [STACK=prod] [DELIVERY_STACK=<org>]  read-only checks of the tenant and GitHub before a first deploy"
	@echo "make prices                             refresh the Retail Prices snapshot (network)"
	@echo "make capacity [STACK=prod]              the capacity plan: nodes, pods, GPUs, address headroom, team quotas"
	@echo "make schemas                            verify (or download) the pinned CRDs and chart defaults"
	@echo "make docs                               regenerate docs/ pages that restate code (config reference, tables)"
	@echo "make lint                               ruff (format and lint) and mypy"
	@echo "make test                               lint, then the whole test suite, offline"
	@echo "make bench                              preview wall times against the import floor"

# The venv is rebuilt whenever a requirements or constraints file changes.
$(VENV)/.installed: requirements.txt requirements-dev.txt constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt -c constraints.txt
	touch $@

install: $(VENV)/.installed

preview: $(VENV)/.installed
	$(PY) scripts/preview.py --stack $(STACK) $(if $(UNIT),--unit $(UNIT))

capacity: $(VENV)/.installed
	$(PY) scripts/preview.py --stack $(STACK) --capacity --no-tree

# Upstream CRDs and chart defaults the tests check against, pinned in reference.lock.
schemas: $(VENV)/.installed
	SHARED_DIR=$(SHARED_DIR) $(PY) -m offline.reference

preview-all: $(VENV)/.installed
	$(PY) scripts/preview.py --stack dev --stack staging --stack prod --no-tree

# The delivery project (delivery/): state backend, identities, custom roles, grants and GitHub's
# settings, reviewed by its packs (policies/README.md).
preview-delivery: $(VENV)/.installed
	$(PY) scripts/preview_delivery.py

# What a pull request gets (no credentials): every stack previewed at BASE (a git worktree, its
# own venv when its pins differ) and at the head, both cores at once, with the delivery project's
# stacks (as "delivery"), compared: changes, predicted
# replacements, policies, capacity and cost, diagrams. Without BASE, the head alone.
# ACCEPT_FINDINGS=true: replacements of stateful resources are deliberate (a maintainer's label).
# Comment: out/review.md; whole report: out/review-full.md (docs/deploying.md, "Pull requests").
review: $(VENV)/.installed
	$(PY) scripts/review.py $(if $(BASE),--base $(BASE)) $(if $(filter true,$(ACCEPT_FINDINGS)),--accept-findings)

# Before an environment's first deploy: what it needs of Azure and GitHub, read-only (az and gh
# signed in); each missing thing with its fix (docs/operations.md, "make doctor").
doctor: $(VENV)/.installed
	$(PY) scripts/doctor.py --stack $(STACK) $(if $(DELIVERY_STACK),--delivery-stack $(DELIVERY_STACK))

# Refresh facts/retail_prices.json from Azure's Retail Prices API (network; .github/workflows/prices.yml).
prices: $(VENV)/.installed
	$(PY) scripts/prices.py

# shellcheck (Debian's package) checks scripts/runner-job-started in the tests; Mermaid's own parser
# (npm, pinned in tools/mermaid/package-lock.json, run by Node) checks the review's diagrams.
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
tools: tools/mermaid/node_modules/.installed
	@command -v shellcheck >/dev/null || { $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq shellcheck >/dev/null; }

tools/mermaid/node_modules/.installed: tools/mermaid/package-lock.json
	@command -v npm >/dev/null || { $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq nodejs npm >/dev/null; }
	cd tools/mermaid && npm ci --ignore-scripts --no-audit --no-fund --silent
	touch $@

# Format, lint and type checks (settings in pyproject.toml); `make test` runs them first.
lint: $(VENV)/.installed
	$(VENV)/bin/ruff format --check --quiet .
	$(VENV)/bin/ruff check --quiet .
	$(VENV)/bin/mypy
	cd policies/azure-platform && ../../$(VENV)/bin/mypy --config-file ../../pyproject.toml azure_guardrails guardrail.py
	cd policies/kubernetes-platform && ../../$(VENV)/bin/mypy --config-file ../../pyproject.toml kubernetes_guardrails guardrail.py
	cd policies/delivery && ../../$(VENV)/bin/mypy --config-file ../../pyproject.toml delivery_guardrails guardrail.py

test: $(VENV)/.installed schemas tools lint
	SHARED_DIR=$(SHARED_DIR) $(PY) -m pytest

# Pages under docs/ generated from the code; a test fails when a committed one is stale.
docs: $(VENV)/.installed
	$(PY) scripts/docs.py

bench: $(VENV)/.installed
	$(PY) scripts/bench.py

# Refresh constraints.txt (transitive pins) from a clean install of requirements-dev.txt.
lock:
	rm -rf /tmp/platform-lock-venv && $(PYTHON) -m venv /tmp/platform-lock-venv
	/tmp/platform-lock-venv/bin/pip install --quiet -r requirements-dev.txt
	/tmp/platform-lock-venv/bin/pip freeze --exclude-editable \
	  | grep -viE '^(pulumi|pulumi[-_]azure[-_]native|pulumi[-_]kubernetes|pulumi[-_]policy|pulumi[-_]github|pulumi[-_]postgresql|pydantic|pyyaml|rich|pytest|hypothesis|jsonschema|check[-_]jsonschema|pytest[-_]xdist|kubernetes[-_]validate|cel[-_]python|ruff|mypy)==' \
	  | sed '1i # Transitive pins, so a fresh clone installs exactly what CI tested.\n# Regenerate with `make lock` after changing requirements*.txt.' > constraints.txt

clean:
	rm -rf $(VENV) .pytest_cache out tools/mermaid/node_modules
