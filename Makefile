# Every target creates its own virtual environment (.venv) from requirements.txt on first use.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PORT   ?= 8501

.PHONY: install run test bench clean

$(VENV)/.installed: requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	touch $@

install: $(VENV)/.installed

run: install
	$(PY) -m streamlit run app.py --server.port $(PORT) --server.headless true

test: install
	$(PY) -m pytest -q tests

bench: install
	PYTHONPATH=. $(PY) bench/bench_select.py

clean:
	rm -rf $(VENV) .pytest_cache
