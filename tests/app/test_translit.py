"""Russian typed in Latin letters is read as the Russian it is; English is left alone."""

from __future__ import annotations

import pytest

from app.translit import latin_words, russian_in_latin, to_cyrillic
from app.views.reply import render_text
from tests.app.support import build_pipeline

NAMES = latin_words(["LoRA", "QLoRA", "KV cache", "qwen"])


@pytest.mark.parametrize(("text", "russian"), [
    ("chto takoe pereobuchenie modeli?", "что такое переобучение модели?"),
    ("kvantizaciya modeli eto chto?", "квантизация модели это что?"),
    ("skolko stoit arenda h100 na nedelyu", "сколько стоит аренда h100 на неделю"),
    ("gde posmotret vse moi aktivnye arendy", "где посмотреть все мои активные аренды"),
    ("chem otlichaetsya lora ot qlora?", "чем отличается lora от qlora?"),
    ("kak rabotaet kv cache?", "как работает kv cache?"),
    ("potyanet li 3090 qwen 32b?", "потянет ли 3090 qwen 32b?"),
    ("potyanet li l40s qwen 70b v 4 bitah?", "потянет ли l40s qwen 70b в 4 битах?"),
])
def test_russian_in_latin_letters_is_spelled_in_cyrillic_with_its_names_kept(text: str, russian: str) -> None:
    assert russian_in_latin(text, NAMES)
    assert to_cyrillic(text, NAMES) == russian


@pytest.mark.parametrize("text", [
    "can i run llama 3 70b on 2x h100?", "my model is not working", "what is lora and why do i need it",
    "train loss keeps dropping, my colleague says it's pereobuchenie", "что такое lora?", "hi", "ok na",
])
def test_english_and_cyrillic_messages_are_left_as_written(text: str) -> None:
    assert not russian_in_latin(text, NAMES)


async def test_a_question_in_latin_letters_is_answered_in_russian() -> None:
    pipeline = build_pipeline()
    reply = await pipeline.reply("chto takoe kvantizaciya?")
    assert reply.lang == "ru" and reply.routing.intent == "glossary", reply
    assert reply.question == "что такое квантизация?"
    fit = await pipeline.reply("potyanet li rtx 4090 qwen 2.5 32b?")
    assert fit.routing.intent == "fit" and fit.lang == "ru"
    assert "Не помещается" in render_text(fit, pipeline.data)
