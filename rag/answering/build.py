"""The answerer as the application builds it: from the settings, over a backend loaded here."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence

from infra.settings import Settings
from models.base import LLMBackend, LLMUnavailableError
from models.queue import RequestQueue
from rag.answering.answerer import Answerer
from rag.answering.conversation import ConversationStore
from rag.context import Retriever
from rag.glossary import GlossaryEntry
from rag.retrieval.phrasings import current_phrasings
from rag.rules import Caveat
from rag.unknown_names import Vocabulary
from rag.verification.renderings import RENDERINGS_FILE, Rendering, RenderingsError, load_renderings

log = logging.getLogger(__name__)


async def build_answerer(settings: Settings, retriever: Retriever, conversations: ConversationStore | None,
                         backend: LLMBackend,
                         caveats: Callable[[Sequence[GlossaryEntry]], tuple[Caveat, ...]] | None = None,
                         known_names: Iterable[str] = ()) -> Answerer:
    """The answerer over ``backend`` (loaded here); a model that cannot load gives retrieval-only answers."""
    reason: str | None = None
    try:
        await backend.load()
    except LLMUnavailableError as exc:
        reason = str(exc)
        log.warning("LLM unavailable, answering from retrieval only: %s", reason)
        await backend.aclose()
        backend_or_none: LLMBackend | None = None
    else:
        backend_or_none = backend
    queue = RequestQueue(max_waiting=settings.llm.queue_size, parallel=backend.parallel)
    renderings = curated_renderings(settings)
    return Answerer(retriever, backend_or_none, queue=queue, conversations=conversations,
                    top_k=settings.rag.top_k, max_tokens=settings.llm.max_tokens,
                    temperature=settings.llm.temperature, timeout_s=settings.llm.request_timeout_s,
                    unavailable_reason=reason, caveats=caveats, renderings=renderings,
                    generate=settings.llm.answer_mode == "generate",
                    vocabulary=answer_vocabulary(settings, renderings, known_names))


def curated_renderings(settings: Settings) -> dict[str, Rendering]:
    """The curated English renderings; without them English questions get the Russian words, as before."""
    try:
        return load_renderings(settings.data.data_dir / RENDERINGS_FILE)
    except RenderingsError as exc:
        log.warning("English renderings off: %s", exc)
        return {}


def answer_vocabulary(settings: Settings, renderings: Mapping[str, Rendering], known_names: Iterable[str] = (),
                      ) -> Vocabulary:
    """The names the bot knows besides the glossary's own: its English renderings, its phrasings and the
    catalogs' names (``known_names``: the GPUs and models, which ``rag`` does not read)."""
    phrasings = current_phrasings(settings.data.data_dir)
    return Vocabulary([*(rendering.en for rendering in renderings.values()),
                       *(text for texts in phrasings.values() for text in texts), *known_names])
