"""Small talk: a greeting, thanks, a goodbye, "what can you do" and complaints get a short, friendly reply.

Every reply but a thanks says what the bot does and gives example requests it really answers (a fit, a
price and a glossary question, in the user's language), so a greeting leads somewhere. A thanks is one line;
a complaint apologises in one line, says how to ask, and points at the 👎 button under glossary answers.
A goodbye is one line too: «пока» is not a greeting to introduce the bot to.
"""

from __future__ import annotations

import re
from typing import Literal

from infra.i18n import Lang, t
from infra.markup import PLAIN, Markup

SmallTalkKind = Literal["greeting", "thanks", "farewell", "help", "complaint"]
# a goodbye, alone or after thanks: «пока», «спасибо, до свидания», "bye", "see ya", "good night"
FAREWELL = re.compile(r"(?i)^\W*((спасибо|thanks|thank\s+you|thx|ok|okay|ок|ладно)\W+)?(пока(-пока)?|до\s+свидания"
                      r"|до\s+встречи|до\s+завтра|всего\s+(доброго|хорошего)|спокойной\s+ночи|bye(-bye)?|good\s*bye|see\s+(ya|you)(\s+later)?|cya"
                      r"|good\s+night|later)\W*$")

EXAMPLE_KEYS = ("smalltalk_example_fit", "smalltalk_example_price", "smalltalk_example_glossary")


def example_requests(lang: Lang) -> tuple[str, ...]:
    """Requests the bot answers (fit, price, glossary), as a user would type them."""
    return tuple(t(key, lang) for key in EXAMPLE_KEYS)


def _examples(lang: Lang, markup: Markup) -> list[str]:
    return [markup.text(t("smalltalk_examples_intro", lang)),
            *(f"• {markup.code(example)}" for example in example_requests(lang))]


def render_smalltalk(kind: SmallTalkKind, lang: Lang, markup: Markup = PLAIN) -> str:
    if kind == "thanks":
        return markup.text(t("smalltalk_thanks", lang))
    if kind == "farewell":
        return markup.text(t("smalltalk_farewell", lang))
    if kind == "complaint":
        lines = [markup.text(t("smalltalk_complaint", lang)), markup.text(t("smalltalk_complaint_how", lang))]
        return "\n".join(lines + _examples(lang, markup))
    if kind == "greeting":
        lines = [markup.text(t("smalltalk_greeting", lang)), *_examples(lang, markup),
                 markup.text(t("smalltalk_all_commands", lang))]
        return "\n".join(lines)
    if kind == "help":
        lines = [markup.text(t("smalltalk_help", lang)), *_examples(lang, markup),
                 markup.text(t("smalltalk_all_commands", lang))]
        return "\n".join(lines)
    raise ValueError(f"not a small-talk kind: {kind!r}")
