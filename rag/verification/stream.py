"""The sentence stream: verified text as the model writes it.

Raw text comes in as the model writes it; a sentence is released once it is complete (:data:`SENTENCE_END`)
and :class:`rag.verification.sentences.SentenceVerifier` has passed it, renumbered to the sources' order.
"""

from __future__ import annotations

from collections.abc import Sequence

from rag.verification.sentences import SENTENCE_END, SentenceVerifier, VerifiedAnswer


class SentenceStream:
    """Verified text as the model writes it: a sentence is released once it is complete and has passed."""

    def __init__(self, verifier: SentenceVerifier) -> None:
        self.verifier = verifier
        self.answer = VerifiedAnswer()
        self.started = False  # the model has written something (shown or not)
        self._pending = ""
        self._shown: list[str] = []

    def feed(self, delta: str) -> str:
        self._pending += delta
        parts = SENTENCE_END.split(self._pending)
        if len(parts) == 1:
            return ""
        complete, self._pending = parts[:-1], parts[-1]
        return self._release(complete)

    def flush(self) -> str:
        pending, self._pending = self._pending, ""
        return self._release([pending])

    def _release(self, sentences: Sequence[str]) -> str:
        released = []
        for sentence in sentences:
            if sentence.strip():
                shown = self.verifier.render(self.verifier.check(sentence), self.answer)
                if shown:
                    released.append(shown)
        if not released:
            return ""
        text = " ".join(released)
        prefix = " " if self._shown else ""
        self._shown.append(text)
        self.answer.text = " ".join(self._shown)
        return prefix + text

