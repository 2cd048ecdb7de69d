"""User-facing strings in Russian and English.

A typed in-code catalog rather than gettext .mo files: nothing to compile at install time, and a test
checks that every key exists in every language with the same placeholders.
"""

from __future__ import annotations

from typing import Literal

Lang = Literal["ru", "en"]
DEFAULT_LANG: Lang = "ru"

MESSAGES: dict[str, dict[Lang, str]] = {
    "start": {
        "ru": (
            "Привет! Я ассистент AnchorGPU.\n"
            "Отвечаю на вопросы о GPU и ML по глоссарию компании, проверяю, поместится ли модель "
            "в видеопамять (/fit), и считаю стоимость аренды (/quote).\n"
            "Просто задайте вопрос или наберите /help."
        ),
        "en": (
            "Hi! I am the AnchorGPU assistant.\n"
            "I answer GPU and ML questions from the company glossary, check whether a model fits in "
            "VRAM (/fit) and price rentals (/quote).\n"
            "Just ask a question or type /help."
        ),
    },
    "help": {
        "ru": (
            "Команды:\n"
            "/ask ВОПРОС — ответ по глоссарию с источниками\n"
            "/fit МОДЕЛЬ [КВАНТ] [NxGPU] [ctx=N] — поместится ли модель в VRAM\n"
            "/quote GPU xN СРОК — расчёт стоимости аренды\n"
            "/quotes — мои последние расчёты\n"
            "/gpus — доступные GPU и цены\n"
            "/terms — глоссарий по разделам\n"
            "/stop — остановить мой ответ\n"
            "/help — эта справка\n"
            "В личном чате можно писать вопросы без команды."
        ),
        "en": (
            "Commands:\n"
            "/ask QUESTION — an answer from the glossary, with sources\n"
            "/fit MODEL [QUANT] [NxGPU] [ctx=N] — will the model fit in VRAM\n"
            "/quote GPU xN DURATION — price a rental\n"
            "/quotes — my recent quotes\n"
            "/gpus — available GPUs and prices\n"
            "/terms — browse the glossary by category\n"
            "/stop — stop my answer\n"
            "/help — this help\n"
            "In a private chat you can just type a question."
        ),
    },
    # ---- Telegram experience (bot/) ----
    "sources_title": {"ru": "Источники", "en": "Sources"},
    "source_label": {"ru": "Источник", "en": "Source"},
    "answer_empty": {"ru": "Не удалось сформулировать ответ.", "en": "I could not put an answer together."},
    "queue_position": {
        "ru": "⏳ Вы в очереди: {position}. Начну отвечать, как только она подойдёт.",
        "en": "⏳ You are number {position} in the queue. I will start answering as soon as it is your turn.",
    },
    "thinking": {"ru": "✍️ Пишу ответ…", "en": "✍️ Writing the answer…"},
    "stopped_suffix": {"ru": "⏹ Остановлено.", "en": "⏹ Stopped."},
    "stop_done": {"ru": "Останавливаю ваш ответ.", "en": "Stopping your answer."},
    "stop_nothing": {"ru": "Сейчас нечего останавливать.", "en": "There is nothing to stop right now."},
    "ask_usage": {
        "ru": "Напишите вопрос после команды, например: /ask что такое KV-кэш?",
        "en": "Put the question after the command, for example: /ask what is a KV cache?",
    },
    "question_too_long": {
        "ru": "Вопрос слишком длинный ({length} символов). Сократите его до {limit}.",
        "en": "The question is too long ({length} characters). Please keep it under {limit}.",
    },
    "rate_limited": {
        "ru": "Слишком много запросов. Подождите {seconds} с и попробуйте снова.",
        "en": "Too many requests. Please wait {seconds} s and try again.",
    },
    "error_apology": {
        "ru": "Извините, что-то пошло не так. Код ошибки: {error_id}",
        "en": "Sorry, something went wrong. Error id: {error_id}",
    },
    "answers_unavailable": {
        "ru": "Ответы на вопросы сейчас недоступны. Попробуйте /terms или /help.",
        "en": "Question answering is not available right now. Try /terms or /help.",
    },
    "busy": {
        "ru": "Сейчас слишком много вопросов. Попробуйте через {seconds} с.",
        "en": "Too many questions right now. Please try again in {seconds} s.",
    },
    "feature_unavailable": {
        "ru": "Эта функция пока недоступна.",
        "en": "This feature is not available yet.",
    },
    "settings_title_chat": {
        "ru": "Настройки группы\nЯзык: {lang}\nДлина ответа: {length}",
        "en": "Group settings\nLanguage: {lang}\nAnswer length: {length}",
    },
    "settings_title_user": {
        "ru": "Ваши настройки\nЯзык: {lang}\nДлина ответа: {length}",
        "en": "Your settings\nLanguage: {lang}\nAnswer length: {length}",
    },
    "settings_admin_only": {
        "ru": "Настройки группы могут менять только её администраторы.",
        "en": "Only the group's administrators can change its settings.",
    },
    "settings_saved": {"ru": "Сохранено.", "en": "Saved."},
    "setting_auto": {"ru": "авто", "en": "auto"},
    "length_short": {"ru": "кратко", "en": "short"},
    "length_normal": {"ru": "обычно", "en": "normal"},
    "length_long": {"ru": "подробно", "en": "detailed"},
    "terms_categories": {
        "ru": "Глоссарий: выберите раздел.",
        "en": "Glossary: pick a category.",
    },
    "terms_category": {
        "ru": "Раздел «{category}», терминов: {count}. Выберите термин.",
        "en": "Category “{category}”, {count} terms. Pick a term.",
    },
    "terms_empty": {"ru": "Глоссарий пока пуст.", "en": "The glossary is empty so far."},
    "button_back": {"ru": "« Назад", "en": "« Back"},
    "button_prev": {"ru": "‹ Пред.", "en": "‹ Prev"},
    "button_next": {"ru": "След. ›", "en": "Next ›"},
    "button_expired": {
        "ru": "Эта кнопка устарела, откройте меню заново.",
        "en": "This button has expired, please open the menu again.",
    },
    "gpus_title": {"ru": "Доступные GPU", "en": "Available GPUs"},
    "gpus_price": {"ru": "от {price} {currency}/ч", "en": "from {price} {currency}/h"},
    "gpus_footer": {
        "ru": "Поместится ли модель: /fit. Расчёт аренды: /quote.",
        "en": "Will a model fit: /fit. Price a rental: /quote.",
    },
    "inline_nothing": {"ru": "Ничего не нашлось", "en": "Nothing found"},
    "inline_nothing_hint": {
        "ru": "Попробуйте другой термин, например «kv cache».",
        "en": "Try another term, for example “kv cache”.",
    },
    # grounded answers (rag/answer.py)
    "answer_out_of_scope": {
        "ru": "Я отвечаю только на вопросы о GPU, машинном обучении и аренде вычислений по глоссарию "
              "AnchorGPU. На этот вопрос в глоссарии ответа нет — попробуйте спросить о термине, "
              "например: «что такое PagedAttention?»",
        "en": "I only answer questions about GPUs, machine learning and compute rental from the AnchorGPU "
              "glossary. The glossary has nothing on this — try asking about a term, for example "
              "\"what is PagedAttention?\"",
    },
    "answer_model_unavailable": {
        "ru": "⚠️ Языковая модель сейчас недоступна, поэтому привожу определения из глоссария:",
        "en": "⚠️ The language model is unavailable right now, so here are the glossary definitions:",
    },
    "answer_model_failed": {
        "ru": "⚠️ Модель не смогла ответить, поэтому привожу определения из глоссария:",
        "en": "⚠️ The model failed to answer, so here are the glossary definitions:",
    },
    "answer_no_citations": {
        "ru": "Ответ модели не опирался на глоссарий, поэтому привожу определения из него:",
        "en": "The model's answer did not rest on the glossary, so here are its definitions:",
    },
    "answer_timeout": {
        "ru": "⚠️ Модель не успела ответить вовремя, поэтому привожу определения из глоссария:",
        "en": "⚠️ The model did not answer in time, so here are the glossary definitions:",
    },
    "answer_busy": {
        "ru": "⏳ Сейчас много вопросов, попробуйте ещё раз через {seconds} с. Пока — определения из "
              "глоссария:",
        "en": "⏳ Busy right now, try again in {seconds} s. Meanwhile, the glossary definitions:",
    },
    "answer_cancelled": {"ru": "⏹ Ответ остановлен.", "en": "⏹ Answer stopped."},
    "answer_queued": {
        "ru": "⏳ Вы в очереди: {position}-й, примерно {seconds} с.",
        "en": "⏳ You are number {position} in line, about {seconds} s.",
    },
    "cmd_start": {"ru": "Начать", "en": "Start"},
    "cmd_help": {"ru": "Справка", "en": "Help"},
    "cmd_ask": {"ru": "Вопрос по глоссарию", "en": "Ask a question"},
    "cmd_fit": {"ru": "Поместится ли модель в VRAM", "en": "Will a model fit in VRAM"},
    "cmd_quote": {"ru": "Расчёт стоимости аренды", "en": "Price a rental"},
    "cmd_quotes": {"ru": "Мои расчёты", "en": "My quotes"},
    "cmd_gpus": {"ru": "GPU и цены", "en": "GPUs and prices"},
    "cmd_terms": {"ru": "Глоссарий по разделам", "en": "Browse the glossary"},
    "cmd_stop": {"ru": "Остановить мой ответ", "en": "Stop my answer"},
    "cmd_settings": {"ru": "Язык и длина ответов", "en": "Language and answer length"},
}


def pick_lang(language_code: str | None) -> Lang:
    """Russian for ru/uk/be/kk speakers, English for everyone else; Russian when Telegram says nothing."""
    if not language_code:
        return DEFAULT_LANG
    base = language_code.split("-")[0].lower()
    return "ru" if base in {"ru", "uk", "be", "kk"} else "en"


def t(key: str, lang: Lang, **params: object) -> str:
    text = MESSAGES[key][lang]
    return text.format(**params) if params else text
