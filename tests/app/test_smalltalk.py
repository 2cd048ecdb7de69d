"""Small talk: short, friendly replies in the user's language that show what the bot does and what to type."""

from __future__ import annotations

from typing import get_args

import pytest
import yaml

from app.gaps.log import VOTES
from app.smalltalk import EXAMPLE_KEYS, FAREWELL, SmallTalkKind, example_requests, render_smalltalk
from infra.i18n import LANGS, MESSAGES, MESSAGES_DIR, Lang, placeholders, t
from infra.markup import HTML

KINDS: tuple[SmallTalkKind, ...] = get_args(SmallTalkKind)
EXAMPLES = {
    "ru": ("потянет ли RTX 4090 qwen 2.5 32b", "сколько стоит 4 A100 на две недели", "что такое KV cache"),
    "en": ("can I run llama 3 70b on 2x H100", "how much for 8 H100 for a month", "what is NVLink"),
}


@pytest.mark.parametrize("lang", LANGS)
def test_the_examples_are_a_fit_a_price_and_a_glossary_request(lang: Lang) -> None:
    assert example_requests(lang) == EXAMPLES[lang]


@pytest.mark.parametrize("kind", ["greeting", "help", "complaint"])
@pytest.mark.parametrize("lang", LANGS)
def test_greetings_help_and_complaints_show_three_examples(kind: SmallTalkKind, lang: Lang) -> None:
    text = render_smalltalk(kind, lang)
    for example in EXAMPLES[lang]:
        assert f"• {example}" in text
    assert t("smalltalk_examples_intro", lang) in text


@pytest.mark.parametrize("lang", LANGS)
def test_a_greeting_and_help_say_what_the_bot_does(lang: Lang) -> None:
    greeting, help_text = render_smalltalk("greeting", lang), render_smalltalk("help", lang)
    assert greeting.startswith("Привет!" if lang == "ru" else "Hi!")
    assert "AnchorGPU" in greeting and "AnchorGPU" in help_text
    for command in ("/fit", "/quote", "/placements"):
        assert command in help_text
    assert greeting.endswith(t("smalltalk_all_commands", lang)) and "/help" in greeting


@pytest.mark.parametrize("lang", LANGS)
def test_thanks_is_one_line_without_examples(lang: Lang) -> None:
    text = render_smalltalk("thanks", lang)
    assert "\n" not in text and text == t("smalltalk_thanks", lang)
    assert not any(example in text for example in EXAMPLES[lang])


@pytest.mark.parametrize("lang", LANGS)
def test_a_goodbye_is_one_line_and_no_introduction(lang: Lang) -> None:
    text = render_smalltalk("farewell", lang)
    assert "\n" not in text and text == t("smalltalk_farewell", lang)
    assert "AnchorGPU" not in text and not any(example in text for example in EXAMPLES[lang])


@pytest.mark.parametrize("text", ["пока", "Пока-пока!", "спасибо, до свидания", "bye", "thanks, bye!", "see ya later",
                                  "good night"])
def test_goodbyes_are_recognised(text: str) -> None:
    assert FAREWELL.match(text)


@pytest.mark.parametrize("text", ["пока не знаю, какую карту брать", "bye the way, what is nvlink", "привет",
                                  "later today I need 4 h100"])
def test_words_of_a_goodbye_inside_a_question_are_not_one(text: str) -> None:
    assert not FAREWELL.match(text)


@pytest.mark.parametrize("lang", LANGS)
def test_a_complaint_apologises_in_one_line_and_says_how_to_ask(lang: Lang) -> None:
    first, second, *rest = render_smalltalk("complaint", lang).split("\n")
    assert first == t("smalltalk_complaint", lang)
    assert first.startswith("Извините" if lang == "ru" else "Sorry")
    assert second == t("smalltalk_complaint_how", lang)
    # the 👎 and «неверно» buttons exist under glossary answers (bot/routers/feedback.py)
    assert {"down", "wrong"} <= set(VOTES)
    assert t("feedback_down", lang) in second and t("feedback_wrong", lang) in second
    assert rest[0] == t("smalltalk_examples_intro", lang)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("lang", LANGS)
def test_every_kind_renders_in_both_languages_and_as_html(kind: SmallTalkKind, lang: Lang) -> None:
    plain, html = render_smalltalk(kind, lang), render_smalltalk(kind, lang, HTML)
    assert plain.strip() and "<" not in plain
    if kind not in ("thanks", "farewell"):
        for example in EXAMPLES[lang]:
            assert f"<code>{example}</code>" in html
    assert html.replace("<code>", "").replace("</code>", "") == plain


def test_an_unknown_kind_is_refused() -> None:
    with pytest.raises(ValueError):
        render_smalltalk("weather", "ru")  # type: ignore[arg-type]


def test_the_catalog_keys_exist_in_both_languages_with_the_same_placeholders() -> None:
    document = yaml.safe_load((MESSAGES_DIR / "smalltalk.yaml").read_text(encoding="utf-8"))
    expected = {"smalltalk_greeting", "smalltalk_help", "smalltalk_thanks", "smalltalk_farewell", "smalltalk_complaint",
                "smalltalk_complaint_how", "smalltalk_examples_intro", "smalltalk_all_commands", *EXAMPLE_KEYS}
    assert set(document) == expected
    for key in document:
        assert set(MESSAGES[key]) == set(LANGS)
        assert placeholders(MESSAGES[key]["ru"]) == placeholders(MESSAGES[key]["en"]), key
