"""The sentence stream: verified text as the model writes it.

Raw text comes in as the model writes it; a sentence is released once it is complete (:data:`SENTENCE_END`)
and :class:`rag.verification.sentences.SentenceVerifier` has passed it, renumbered to the sources' order.

A stream whose first claim failed, with nothing shown yet, is :attr:`SentenceStream.stalled`: the answerer
then stops that generation and tries again at once instead of waiting for its end (on the held-out probe
the default model, its first claim failed, went on writing what no entry says, once for 270 tokens). What
states no claim does not count: a lead-in to a list, a list number, and the question restated (the small
model often opens with it: "We need to turn hundreds of hours of calls into text." before "ASR is …").
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rag.text import content_lemmas
from rag.verification.sentences import SENTENCE_END, SentenceCheck, SentenceVerifier, VerifiedAnswer

# a lead-in ("Вот несколько вариантов:", "Here is how:") or a list marker ("1.") states nothing to fail on
_WORD = re.compile(r"\w+")
_MIN_CLAIM_WORDS = 3
# a sentence at least this much made of the question's words restates it
_RESTATED_SHARE = 0.5


def states_a_claim(check: SentenceCheck, question_words: set[str]) -> bool:
    """A rejected sentence that said something: not a lead-in to a list, a list number, a heading, or the
    question restated."""
    text = check.text.strip()
    if text.endswith(":") or len(_WORD.findall(text)) < _MIN_CLAIM_WORDS:
        return False
    lemmas = content_lemmas(text)
    return not lemmas or sum(lemma in question_words for lemma in lemmas) / len(lemmas) < _RESTATED_SHARE


class SentenceStream:
    """Verified text as the model writes it: a sentence is released once it is complete and has passed."""

    def __init__(self, verifier: SentenceVerifier) -> None:
        self.verifier = verifier
        self.answer = VerifiedAnswer()
        self.started = False  # the model has written something (shown or not)
        self._pending = ""
        self._shown: list[str] = []

    @property
    def stalled(self) -> bool:
        """Nothing shown yet and a sentence that stated a claim failed."""
        return not self._shown and any(states_a_claim(check, self.verifier.question_words)
                                       for check in self.answer.rejected)

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

