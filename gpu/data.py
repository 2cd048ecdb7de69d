"""The owner of the GPU data files: the GPU catalog, the model catalog and the price list.

Each file has exactly one reader, a :class:`infra.datafile.DataFile` that re-reads it when an operator
edits it; ``/quote``, ``/fit`` (its cheapest configurations), ``/gpus`` and price questions all ask this
object, so they always agree on one version of each file. The data directory comes from the settings
(``ANCHORGPU_DATA_DIR``); nothing else in the code knows where it is.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

from gpu.catalog import GPUCatalog, read_gpu_catalog
from gpu.fit.architectures import ModelCatalog, read_model_catalog
from gpu.prices import GPUPrice, PriceList, read_price_list
from infra.datafile import DataFile


class PriceBook:
    """``prices.yaml``: the one source of every price the bot shows (Decimal, never float)."""

    def __init__(self, path: Path, gpus: DataFile[GPUCatalog]) -> None:
        self._gpus = gpus
        self._file: DataFile[PriceList] = DataFile(path, self._read)

    def _read(self, path: Path) -> PriceList:
        return read_price_list(path, set(self._gpus.get().ids()))

    @property
    def path(self) -> Path:
        return self._file.path

    @property
    def version(self) -> int:
        return self._file.version

    def version_now(self) -> int:
        """The version after noticing an edit (one stat())."""
        self._file.get()
        return self._file.version

    def current(self) -> PriceList:
        return self._file.get()

    def price_for(self, gpu_id: str) -> GPUPrice | None:
        return self.current().price_for(gpu_id)

    def on_demand(self, gpu_id: str) -> Decimal | None:
        """The on-demand hourly price of one GPU (the fit engine's cheapest-configuration lookup)."""
        price = self.price_for(gpu_id)
        return price.on_demand if price is not None else None

    def rentable_ids(self) -> list[str]:
        """Catalog ids that have a price, in catalog order."""
        priced = self.current().gpus
        return [gpu_id for gpu_id in self._gpus.get().ids() if gpu_id in priced]

    def offers_spot(self, gpu_id: str) -> bool:
        price = self.price_for(gpu_id)
        return price is not None and price.spot is not None


class GpuData:
    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self._gpus: DataFile[GPUCatalog] = DataFile(data_dir / "gpus.yaml", read_gpu_catalog)
        self._models: DataFile[ModelCatalog] = DataFile(data_dir / "models.yaml", read_model_catalog)
        self.prices = PriceBook(data_dir / "prices.yaml", self._gpus)

    @property
    def gpus(self) -> GPUCatalog:
        return self._gpus.get()

    @property
    def models(self) -> ModelCatalog:
        return self._models.get()

    @property
    def catalog_version(self) -> tuple[int, int]:
        """Changes whenever either catalog is reloaded (what the fit parser is built from)."""
        self.gpus, self.models  # noqa: B018 - touching them notices an edit
        return self._gpus.version, self._models.version

    def check(self) -> None:
        """Read every file now, so a broken data directory stops start-up with a clear error."""
        self.gpus, self.models, self.prices.current()
