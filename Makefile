# Every target creates its own virtual environment (.venv) from requirements.txt on first use.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PORT   ?= 8501
# The dashboard stores uploaded panels: it listens on this machine only unless ADDRESS opens it
# (e.g. make run ADDRESS=0.0.0.0 to serve other machines on the network).
ADDRESS ?= 127.0.0.1

.PHONY: install run test bench clean

$(VENV)/.installed: requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	touch $@

install: $(VENV)/.installed

run: install
	$(PY) -m streamlit run app.py --server.port $(PORT) --server.address $(ADDRESS) --server.headless true

test: install
	$(PY) -m pytest -q tests

bench: install
	PYTHONPATH=. $(PY) bench/bench_select.py

clean:
	rm -rf $(VENV) .pytest_cache
