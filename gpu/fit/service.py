"""FitService: the catalogs, the request parser and the fit engine behind one call.

The catalogs and prices come from :class:`gpu.data.GpuData` (their one owner); the parser and the engine
are rebuilt when a catalog file changes. Results are data; the fronts render them (``app.views.fit``).
"""

from __future__ import annotations

import dataclasses
import threading

from gpu.data import GpuData
from gpu.fit.architectures import ModelInputError, ModelSpec
from gpu.fit.engine import FitEngine, FitResult
from gpu.fit.request import MAX_GPU_COUNT, FitInputError, RequestParser


class FitService:
    def __init__(self, data: GpuData) -> None:
        self.data = data
        self._built: tuple[tuple[int, ...], FitEngine, RequestParser] | None = None
        self._lock = threading.Lock()

    def _parts(self) -> tuple[FitEngine, RequestParser]:
        # the prices are a snapshot of the price list's version: the engine looks up every GPU's price for
        # its cheapest configurations, and one stat() per lookup would be most of a fit's cost
        version = (*self.data.catalog_version, self.data.prices.version_now())
        built = self._built
        if built is None or built[0] != version:
            with self._lock:
                gpus, models = self.data.gpus, self.data.models
                prices = {gpu_id: price.on_demand for gpu_id, price in self.data.prices.current().gpus.items()}
                built = (version, FitEngine(gpus, prices), RequestParser(gpus, models))
                self._built = built
        return built[1], built[2]

    @property
    def engine(self) -> FitEngine:
        return self._parts()[0]

    @property
    def parser(self) -> RequestParser:
        return self._parts()[1]

    @property
    def currency(self) -> str:
        return self.data.prices.current().currency

    def fit(self, text: str, model: ModelSpec | None = None, gpu_count: int | None = None) -> FitResult:
        """Parse and evaluate; raises FitInputError (a phrase and suggestions). ``gpu_count``: a count the
        caller read where the grammar does not look («h100 … 8 хватит?»), used when the text states none."""
        engine, parser = self._parts()
        try:
            parsed = parser.parse(text, model=model)
        except ModelInputError as exc:
            raise FitInputError(exc.phrase.key, **exc.phrase.params) from None
        request = parsed.request
        if gpu_count is not None and 1 <= gpu_count <= MAX_GPU_COUNT and not request.count_given \
                and request.gpu is not None:
            request = dataclasses.replace(request, gpu_count=gpu_count, count_given=True)
        result = engine.evaluate(request)
        result.notes.extend(parsed.notes(parser))
        return result
