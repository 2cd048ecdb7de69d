from __future__ import annotations

import pytest

from app.pipeline import ReplyPipeline
from tests.app.support import build_pipeline


@pytest.fixture(scope="session")
def pipeline() -> ReplyPipeline:
    return build_pipeline()
