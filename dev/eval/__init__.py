"""Evaluation scorers for the benchmarks and the eval tests.

* :mod:`dev.eval.retrieval`: retrieval on the labelled set (hit@k, MRR, gate accuracy);
* :mod:`dev.eval.faithfulness`: what a generated answer says, against ``tests/eval/faithfulness.yaml``;
* :mod:`dev.eval.catalog_facts`: the catalog fact table that scorer takes;
* :mod:`dev.eval.mutants`: the verifier's mutation set (``anchorgpu bench verifier``).
"""
