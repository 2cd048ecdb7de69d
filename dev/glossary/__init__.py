"""Generator of `data/glossary/entries.yaml` from the seed files and the curator's annotations.

`python -m dev.glossary` rewrites the entry file; `python -m dev.glossary --check` fails (and shows the
difference) when the committed file is not what the seeds and `annotations.yaml` generate.
"""
