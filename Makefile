# ranklens developer commands. `make demo` and `make test` work on a fresh machine (they create .venv).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
RANKLENS := $(VENV)/bin/ranklens

.PHONY: demo test test-spark35 venv venv-test lint bench clean docs dashboard

$(VENV)/.base: pyproject.toml src/ranklens/data/_ctrec.c src/ranklens/_cexpress.c src/ranklens/data/_trec_lex.h
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e .
	touch $@

$(VENV)/.test: $(VENV)/.base
	$(PY) -m pip install -q -e '.[test]'
	touch $@

venv: $(VENV)/.base
venv-test: $(VENV)/.test

demo: venv
	@echo "== the textbook 5-movie example: nDCG@5 of labels 3,0,3,2,0 =="
	$(RANKLENS) eval examples/movies.qrels examples/movies.run -m nDCG@5 DCG@5 --per-query
	@echo "== two systems on a small TREC-style collection =="
	$(RANKLENS) eval examples/toy.qrels examples/toy_bm25.run examples/toy_dense.run -m nDCG@10 AP P@5 RR R@100
	@echo "== is dense really better than bm25? paired t-test over queries =="
	$(RANKLENS) compare examples/toy.qrels examples/toy_bm25.run examples/toy_dense.run -m nDCG@10 AP
	@echo "== how nDCG@5 is computed for query 3 of the dense system =="
	$(RANKLENS) explain examples/toy.qrels examples/toy_dense.run --query q3 -m nDCG@5

$(VENV)/.monitor: $(VENV)/.base
	$(PY) -m pip install -q -e '.[monitor]'
	touch $@

dashboard: $(VENV)/.monitor
	$(RANKLENS) serve --demo --public-read

$(VENV)/.bench: $(VENV)/.base
	$(PY) -m pip install -q -e '.[bench]'
	touch $@

# the benchmark tables, scaling plot and target table of docs/benchmarks.md (long: about three hours on
# 2 cores). `make bench TREC_EVAL_SRC=~/src/trec_eval` builds trec_eval from its source tree first.
BENCH_TREC_EVAL := $(if $(TREC_EVAL_SRC),--trec-eval-src $(TREC_EVAL_SRC))
bench: $(VENV)/.bench
	$(PY) -m bench.run --shapes S,T,M --repeat 3 $(BENCH_TREC_EVAL)
	$(PY) -m bench.run --shapes Mpq,W --phases load,ndcg,four,cli --repeat 3 --name extra
	$(PY) -m bench.run --scaling --repeat 3
	$(PY) -m bench.run --quick-cli
	$(PY) -m bench.run --targets
	$(PY) -m bench.run --faces --repeat 7 --shapes S
	$(PY) -m bench.api_memory --rows 1000000 --repeat 3 --tools ranklens-pandas,ranklens-dicts,pytrec_eval
	$(PY) -m bench.report --into docs/benchmarks.md:results bench/out/results.json
	$(PY) -m bench.report --into docs/benchmarks.md:extra bench/out/extra.json
	$(PY) -m bench.report --into docs/benchmarks.md:scaling bench/out/scaling.json

test: venv-test
	$(PY) -m pytest -q -p no:cacheprovider

# the Spark parity tests on Spark 3.5 as well (issue 30): the venv holds pyspark 4; pyspark 3.5 from PyPI goes
# into a directory of its own, first on PYTHONPATH for these tests only (RANKLENS_EXPECT_PYSPARK makes them
# fail, not skip, when that pyspark is not the one imported). Spark 3.5 runs on Java 8, 11 or 17.
SPARK35 := $(VENV)/pyspark35
$(SPARK35)/.done: $(VENV)/.test
	$(PY) -m pip install -q --no-deps --target $(SPARK35) 'pyspark==3.5.*' 'py4j==0.10.9.7'
	touch $@

test-spark35: $(SPARK35)/.done
	PYTHONPATH=$(SPARK35) RANKLENS_EXPECT_PYSPARK=3.5 $(PY) -m pytest -q -p no:cacheprovider \
		tests/spark/test_parity.py tests/spark/test_scan.py tests/spark/test_worker.py tests/spark/test_sql_text.py

# ruff (pyflakes, pycodestyle, isort, bugbear, pyupgrade) and mypy on the package; .ci/run runs it
lint: venv-test
	$(VENV)/bin/ruff check src tests bench
	$(PY) -m mypy src/ranklens

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis

docs: venv
	$(PY) -m ranklens.measures.catalog README.md
