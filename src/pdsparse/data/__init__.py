"""Data layer: registry of real data sets, fetching, LIBSVM parsing, normalization, storage.

Flow: ``config/datasets.yaml`` --``registry.load_registry``--> ``registry.DatasetSpec``
--``fetch.fetch``--> ``data/raw/<name>.bz2`` --``prepare.prepare``--> ``data/processed/<name>.npz``
--``store.load_dataset``--> ``store.Dataset`` (A: n x d CSR float64, rows = examples; b: labels).

Import from the submodules (``from pdsparse.data.fetch import fetch``). Nothing is re-exported
here on purpose: the functions ``fetch``, ``normalize`` and ``prepare`` share their modules'
names, and re-exporting them would shadow the submodules (breaking ``import
pdsparse.data.fetch as m`` and monkeypatching by dotted path).
"""
