"""Verification: nothing the model writes is shown before it is checked against the context.

* :mod:`rag.verification.sentences`: every generated sentence checked (:class:`SentenceVerifier`);
* :mod:`rag.verification.stream`: the verified stream (:class:`SentenceStream`), sentence by sentence;
* :mod:`rag.verification.alignment`: does a sentence restate one sentence of an entry;
* :mod:`rag.verification.citations`, :mod:`rag.verification.mentions`: the entries a sentence cites and the
  concepts it names; :mod:`rag.verification.renderings`: the curated English an English sentence restates.
"""
