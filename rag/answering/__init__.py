"""Answering: the orchestrator (:mod:`rag.answering.answerer`) and its pieces.

* :mod:`rag.answering.prompt`: the grounded-answer prompt; :mod:`rag.answering.generation`: one generation
  through the LLM queue;
* :mod:`rag.answering.extractive`: the glossary's own sentences that answer a question;
* :mod:`rag.answering.conversation`: the conversation memory follow-ups lean on.
"""
