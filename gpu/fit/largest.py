"""The largest models of the catalog that fit a GPU: «какую самую большую ламу потянет 4090?», "what's the
biggest model i can run on an l40s?".

The fit engine answers "does this model fit?"; the question here runs it the other way. Each weight format
customers choose between (the model's own 16-bit weights, a 4-bit GGUF) gets the largest language model of the
catalog that fits at the engine's defaults (inference, batch 1, the default context), a family's only when
one is named. The answers are the engine's own :class:`FitResult` objects, so they render and verify like
any fit.
"""

from __future__ import annotations

import re

from gpu.fit.architectures import ModelSpec
from gpu.fit.engine import FitResult
from gpu.fit.request import FitInputError
from gpu.fit.service import FitService

# the weight formats a customer chooses between: the released 16-bit weights, and the usual 4-bit GGUF
LARGEST_FORMATS = ("bf16", "q4_k_m")
# a family as customers write it, in either alphabet (a family not here is matched by its catalog name)
_FAMILY_SPELLINGS = {"llama": r"лам\w*|лламу?\w*", "qwen": r"кв[еэ]н\w*", "mistral": r"мистрал\w*|mixtral|микстрал\w*",
                     "gemma": r"гемм?\w*", "deepseek": r"дипсик\w*|deep\s*seek", "phi": r"\bфи\b"}


def family_named(service: FitService, text: str) -> str | None:
    """The model family a question names («самую большую ламу», "largest qwen"), if any."""
    for family in sorted({model.family for model in service.data.models.all() if model.kind == "llm"}):
        spelled = _FAMILY_SPELLINGS.get(family, "")
        if re.search(rf"(?i)\b{re.escape(family)}\w*" + (f"|{spelled}" if spelled else ""), text):
            return family
    return None


def language_models(service: FitService, family: str | None = None) -> list[ModelSpec]:
    """The catalog's language models (one of a family when named), largest first."""
    models = [model for model in service.data.models.all()
              if model.kind == "llm" and (family is None or model.family == family)]
    return sorted(models, key=lambda model: (-model.params, model.id))


def largest_fitting(service: FitService, gpu_id: str, count: int = 1, family: str | None = None,
                    ) -> tuple[FitResult, ...]:
    """For each of :data:`LARGEST_FORMATS`, the fit of the largest model that fits ``count`` × ``gpu_id``
    (none for a format nothing fits in); a model found for a smaller format is not repeated for it."""
    results: list[FitResult] = []
    candidates = language_models(service, family)
    for fmt in LARGEST_FORMATS:
        for model in candidates:
            if any(result.request.model.id == model.id for result in results):
                break  # the larger format already fits a model this large: nothing more to show
            try:
                result = service.fit(f"{model.id} {fmt} on {count}x {gpu_id}")
            except FitInputError:
                continue  # a format this model is not offered in
            if result.fits:
                results.append(result)
                break
    return tuple(results)
