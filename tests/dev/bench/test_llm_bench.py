"""`anchorgpu bench llm --sections lookup` on the small model: prompt-lookup decoding on vs off, side by side."""

from __future__ import annotations

import json

import pytest

from anchorgpu.cli import main
from tests.conftest import SMALL_MODEL


@pytest.mark.long
def test_the_lookup_section_compares_both_sides_on_the_same_prompts(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "llm", "--model", str(SMALL_MODEL), "--sections", "lookup", "--lookup-questions", "2",
                 "--max-tokens", "12", "--askers", "0"]) == 0
    lookup = json.loads(capsys.readouterr().out)["lookup"]
    assert lookup["questions"] == len(lookup["rows"]) >= 1
    for row in lookup["rows"]:
        for side in ("on", "off"):
            assert 1 <= row[f"{side}_tokens"] <= 12 and row[f"{side}_first_sentence_s"] >= 0
        assert 0 <= row["on_accepted"] <= row["on_drafted"]
    assert lookup["off"]["decode_tok_s"] > 0 and lookup["on"]["decode_tok_s"] > 0
    assert lookup["draft_acceptance"] is None or 0.0 <= lookup["draft_acceptance"] <= 1.0
