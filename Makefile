# Everything a developer or CI needs, from a clean clone: `make demo`, `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
UV := $(VENV)/bin/uv
DRIVER_DIRS := $(patsubst %/pyproject.toml,%,$(wildcard drivers/*/pyproject.toml))
STAMP := $(VENV)/.installed
# The versions the suite last passed with (reproducible CI); `CONSTRAINTS=` for the newest.
CONSTRAINTS ?= .ci/constraints.txt
PIN := $(if $(CONSTRAINTS),-c $(CONSTRAINTS))
# Test workers (pytest-xdist). One process by default: under four workers a socket a test
# leaves to the garbage collector can be collected (and warn, an error here) in another
# test. `make test TEST_WORKERS=4` takes about 6 minutes on two cores instead of about 14.
TEST_WORKERS ?= 0

.PHONY: install demo demo-% test bench lint typecheck system-deps constraints clean

$(STAMP): pyproject.toml $(wildcard drivers/*/pyproject.toml) $(CONSTRAINTS)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check uv
	$(UV) pip install --quiet --python $(PY) $(PIN) -e '.[dev,server]' $(foreach d,$(DRIVER_DIRS),-e './$(d)[test]')
	touch $(STAMP)

install: $(STAMP)

system-deps:
	bash scripts/system-deps.sh

demo: install
	$(PY) -m mcs_rest.demo

# `make demo-graphql`, `make demo-grpc`...: each driver's own round trip against a local peer.
# Every peer is in-process or on loopback, so no system package is needed.
DEMOS := $(sort $(foreach f,$(wildcard drivers/*/mcs_*/demo.py),$(word 2,$(subst /, ,$(f)))))
demo-%: install
	$(if $(wildcard drivers/$*/mcs_$*/demo.py),,$(error no demo for '$*'; the drivers with one: $(DEMOS)))
	$(PY) -m mcs_$*.demo

test: install system-deps lint
	$(PY) -m pytest -q -p no:cacheprovider -n $(TEST_WORKERS)

bench: install
	$(UV) pip install --quiet --python $(PY) $(PIN) -e '.[dev,server,bench]'
	$(PY) -m bench

lint: install
	$(VENV)/bin/ruff check mcs drivers tests bench examples
	$(VENV)/bin/mypy mcs
	$(VENV)/bin/mypy --strict $(foreach d,$(DRIVER_DIRS),$(wildcard $(d)/mcs_*))

# Record the current environment's versions as the tested ones (after `make test` passed).
constraints: install
	{ sed -n '/^#/p' .ci/constraints.txt; $(UV) pip freeze --python $(PY) --exclude-editable | grep -v -e '^uv==' -e '^pip=='; } > .ci/constraints.tmp
	mv .ci/constraints.tmp .ci/constraints.txt

clean:
	rm -rf $(VENV) build dist .pytest_cache .mypy_cache .ruff_cache
