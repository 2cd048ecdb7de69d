"""Retrieval: from a question to the glossary entries that may answer it.

* :mod:`rag.retrieval.dense` (the embedder), :mod:`rag.retrieval.index` (the Chroma store of the vectors),
  :mod:`rag.retrieval.lexical` (BM25 and the name index);
* :mod:`rag.retrieval.retriever`: the hybrid search over them, and :mod:`rag.retrieval.gate`, whether the best
  hits are in scope at all;
* :mod:`rag.retrieval.reload`: a changed glossary picked up while the bot runs.
"""
