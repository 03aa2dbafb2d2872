# The published dataset as its users read it (tests/dataset): a real lowdown-server scans
# fixtures on three days and publishes; the real `datasets` and `pyarrow` (PyPI, pinned in
# tests/dataset/requirements.txt) load the Hugging Face layout, compared with the CSV files
# and the API's answers.

SETUP_TARGETS += setup-dataset
TEST_TARGETS += test-dataset

.PHONY: setup-dataset test-dataset

setup-dataset: $(VENV)/.dataset-stamp ## datasets and pyarrow (PyPI, pinned) in the repo venv

$(VENV)/.dataset-stamp: tests/dataset/requirements.txt $(VENV)/.bindings-stamp
	$(PY) -m pip install --quiet --disable-pip-version-check -r tests/dataset/requirements.txt
	@touch $@

test-dataset: setup-dataset build-server ## the published dataset: the Hugging Face layout loaded by datasets and pyarrow, row for row against the CSV files and the API
	$(PY) -m pytest -q -p no:cacheprovider tests/dataset/
