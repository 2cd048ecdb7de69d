"""What a message asks for, decided once for every front (Telegram, console chat, ``anchorgpu ask``).

* a command (``/fit …``): the front's command table handles it;
* a price question ("сколько стоит H100 в час?"): answered from the price list, never by the model — a
  small model asked for a price invents one with confidence;
* a fit question ("влезет ли mixtral в две A100?") that names a model the fit engine knows: the fit engine;
* anything else: a glossary question for the answerer.

The order is the policy: a price question is a price question even when it also names a model.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Literal

from gpu.data import GpuData
from gpu.fit.request import FitInputError
from gpu.fit.service import FitService

IntentKind = Literal["command", "price", "fit", "glossary"]

PRICE_QUESTION = re.compile(
    r"(?i)(\bprice[sd]?\b|\bpricing\b|\$|\busd\b|\bdollars?\b|\bруб\w*|₽|\bдоллар\w*"
    r"|\bhow\s+much\b[^?.!]{0,60}\b(cost|costs|rent|rental|pay|charge|charges)\b"
    r"|\bcosts?\b[^?.!]{0,40}\b(rent|rental|per\s+hour|an?\s+hour|hourly|per\s+month|per\s+day)\b"
    r"|\b(rent|rental|renting)\b[^?.!]{0,40}\bcosts?\b"
    r"|\bцен[аыуе]?\b|\bцены\b|\bстоимост\w*|сколько\s+(стоит|стоят|будет\s+стоить)|\bпрайс\w*|\bрасценк\w*)")
FIT_QUESTION = re.compile(r"\b(влез\w*|помест\w*|войд[её]т|хватит|fits?|vram)\b", re.IGNORECASE)
COMMAND = re.compile(r"^/([A-Za-z0-9_]{1,32})(@\w+)?(?:\s+|$)")
MAX_SCANNED_WORDS = 60


@dataclass(frozen=True)
class Intent:
    kind: IntentKind
    text: str  # the question, or a command's arguments
    command: str | None = None  # "fit" for "/fit …"
    gpu_ids: tuple[str, ...] = ()  # price questions: the rentable GPUs named, in order


class IntentClassifier:
    def __init__(self, data: GpuData, fit: FitService) -> None:
        self.data = data
        self.fit = fit

    def classify(self, text: str) -> Intent:
        text = text.strip()
        command = COMMAND.match(text)
        if command:
            return Intent("command", text[command.end():].strip(), command=command.group(1).lower())
        return self.classify_question(text)

    def classify_question(self, question: str) -> Intent:
        """The intent of a question (no command parsing: ``/ask TEXT`` and addressed group messages)."""
        question = question.strip()
        if PRICE_QUESTION.search(question):
            return Intent("price", question, gpu_ids=tuple(self.rentable_gpus_named(question)))
        if FIT_QUESTION.search(question) and self._fit_parses(question):
            return Intent("fit", question)
        return Intent("glossary", question)

    def _fit_parses(self, question: str) -> bool:
        try:
            self.fit.parser.parse(question)
        except FitInputError:
            return False
        return True

    def rentable_gpus_named(self, text: str) -> list[str]:
        """Catalog ids named in free text (single words and word pairs, exact catalog spellings only)."""
        words = re.findall(r"[\w\-]+", text.lower())[:MAX_SCANNED_WORDS]
        candidates = words + [f"{a} {b}" for a, b in itertools.pairwise(words)]
        rentable = set(self.data.prices.rentable_ids())
        catalog = self.data.gpus
        found: list[str] = []
        for candidate in candidates:
            spec = catalog.find(candidate)
            if spec is not None and spec.id in rentable and spec.id not in found:
                found.append(spec.id)
        return found
