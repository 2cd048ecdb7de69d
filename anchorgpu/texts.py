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
        "ru": "Настройки группы\nЯзык: {language}\nДлина ответа: {length}",
        "en": "Group settings\nLanguage: {language}\nAnswer length: {length}",
    },
    "settings_title_user": {
        "ru": "Ваши настройки\nЯзык: {language}\nДлина ответа: {length}",
        "en": "Your settings\nLanguage: {language}\nAnswer length: {length}",
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
    "gpus_price": {"ru": "{price} {currency}/ч", "en": "{price} {currency}/h"},
    "gpus_spot": {"ru": " (spot {price})", "en": " (spot {price})"},
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
    "category_basics": {"ru": "Основы", "en": "Basics"},
    "category_comparisons": {"ru": "Сравнения", "en": "Comparisons"},
    "category_hardware": {"ru": "Железо", "en": "Hardware"},
    "category_images": {"ru": "Изображения", "en": "Images"},
    "category_inference": {"ru": "Инференс", "en": "Inference"},
    "category_infrastructure": {"ru": "Инфраструктура", "en": "Infrastructure"},
    "category_rental": {"ru": "Аренда", "en": "Rental"},
    "category_retrieval": {"ru": "Поиск (RAG)", "en": "Retrieval (RAG)"},
    "category_speech": {"ru": "Речь", "en": "Speech"},
    "category_training": {"ru": "Обучение", "en": "Training"},
    "category_video": {"ru": "Видео", "en": "Video"},
    # /quote and /quotes (gpu/quote/render.py, bot/routers/quote.py)
    "quote_usage": {
        "ru": (
            "Расчёт аренды: /quote GPU xN СРОК [on-demand|spot|committed] [key=КЛЮЧ]\n"
            "Например: /quote h100 x8 2 недели, /quote a100 x4 1 month 2 weeks committed.\n"
            "Неделя = 7 дней, месяц = 30 дней. Без параметров /quote проведёт по шагам."
        ),
        "en": (
            "Price a rental: /quote GPU xN DURATION [on-demand|spot|committed] [key=KEY]\n"
            "For example: /quote h100 x8 2 weeks, /quote a100 x4 1 month 2 weeks committed.\n"
            "A week is 7 days, a month 30 days. Plain /quote walks you through it step by step."
        ),
    },
    "quote_title": {"ru": "Расчёт {quote_id}", "en": "Quote {quote_id}"},
    "quote_preview_title": {"ru": "Предварительный расчёт (ещё не сохранён)",
                            "en": "Quote preview (not saved yet)"},
    "quote_replayed": {
        "ru": "Повтор: этот расчёт уже выдан {issued} UTC по тому же ключу, цены не пересчитывались.",
        "en": "Replayed: issued earlier ({issued} UTC) with the same key; prices were not recalculated.",
    },
    "quote_pricing_on_demand": {"ru": "по требованию", "en": "on-demand"},
    "quote_pricing_spot": {"ru": "спот (прерываемый)", "en": "spot (interruptible)"},
    "quote_pricing_committed": {"ru": "фиксированный срок", "en": "committed term"},
    "quote_line_hours": {
        "ru": "{label}: {count} GPU × {hours} ч = {quantity} GPU-ч × {unit_price} = {amount}",
        "en": "{label}: {count} GPU × {hours} h = {quantity} GPU-h × {unit_price} = {amount}",
    },
    "quote_line_term": {
        "ru": "срок {periods} (по {hours} ч, −{discount}%): {count} GPU × {n} × {unit_price} = {amount}",
        "en": "term of {periods} ({hours} h each, −{discount}%): {count} GPU × {n} × {unit_price} = {amount}",
    },
    "quote_total": {"ru": "Итого: {total}", "en": "Total: {total}"},
    "quote_hours": {"ru": "Оплачиваемые часы: {billable} (запрошено: {requested})",
                    "en": "Billable hours: {billable} (requested: {requested})"},
    "quote_rate": {
        "ru": "Эффективная ставка: {rate} за GPU-час, {cluster} в час за все GPU",
        "en": "Effective rate: {rate} per GPU-hour, {cluster} per hour for all GPUs",
    },
    "quote_valid": {"ru": "Действует до {valid_until} UTC · прайс-лист {version}",
                    "en": "Valid until {valid_until} UTC · price list {version}"},
    "quote_rule_example_prices": {
        "ru": "Цены — пример из демонстрационного прайс-листа, это не оферта.",
        "en": "Prices come from an example price list; this is not an offer.",
    },
    "quote_rule_week_month": {"ru": "Неделя — ровно 7 дней, месяц — ровно 30 дней.",
                              "en": "A week is exactly 7 days, a month exactly 30 days."},
    "quote_rule_started_hour": {"ru": "Оплачивается каждый начатый час, минимум 1 час.",
                                "en": "Every started hour is billed, at least one hour."},
    "quote_rule_spot_interruptible": {
        "ru": "Спот-мощности могут быть прерваны в любой момент; прерванное время не оплачивается.",
        "en": "Spot capacity can be interrupted at any time; interrupted time is not billed.",
    },
    "quote_rule_term_paid_in_full": {
        "ru": "Фиксированный срок оплачивается полностью: досрочная остановка не приостанавливает "
              "оплаченный период.",
        "en": "A committed term is paid in full: stopping early does not pause a paid period.",
    },
    "quote_rule_term_covers_more": {
        "ru": "Более длинный срок дешевле, поэтому оплачивается больше часов, чем запрошено.",
        "en": "A longer term is cheaper, so more hours are billed than requested.",
    },
    "quote_rule_no_term_cheaper": {
        "ru": "Для такого срока фиксированный тариф не дешевле: посчитано по требованию.",
        "en": "No committed term is cheaper for this duration: priced on-demand.",
    },
    "quote_rule_rounding": {
        "ru": "Каждая строка округлена до центов (половина — вверх), итог — сумма строк.",
        "en": "Each line is rounded to cents (half up); the total is the sum of the lines.",
    },
    "quote_err_no_gpu": {"ru": "Какой GPU? Например: /quote h100 x8 2 недели. Есть: {suggestions}",
                         "en": "Which GPU? For example: /quote h100 x8 2 weeks. Available: {suggestions}"},
    "quote_err_unknown_gpu": {"ru": "Не знаю GPU «{name}». Возможно: {suggestions}",
                              "en": "Unknown GPU “{name}”. Did you mean: {suggestions}"},
    "quote_err_unknown_words": {
        "ru": "Не понял «{words}». Напишите GPU, количество и срок, например: /quote h100 x8 2 недели.",
        "en": "I did not understand “{words}”. Write the GPU, count and duration, e.g. /quote h100 x8 2 weeks.",
    },
    "quote_err_no_duration": {
        "ru": "На какой срок? Например: 3 часа, 45 дней, 2 недели, 1 месяц 2 недели.",
        "en": "For how long? For example: 3 hours, 45 days, 2 weeks, 1 month 2 weeks.",
    },
    "quote_err_bad_duration": {
        "ru": "Не понял срок «{text}». Например: 3 часа, 45 дней, 2 недели, 1 месяц 2 недели.",
        "en": "Could not read the duration “{text}”. For example: 3 hours, 45 days, 2 weeks, 1 month 2 weeks.",
    },
    "quote_err_zero_duration": {"ru": "Срок должен быть больше нуля.",
                                "en": "The duration must be longer than zero."},
    "quote_err_bad_count": {"ru": "Число GPU — от 1 до {max}; больше — через отдел продаж.",
                            "en": "The number of GPUs must be from 1 to {max}; for more, contact sales."},
    "quote_err_too_long": {"ru": "Автоматический расчёт — до {days} дней; дольше — через отдел продаж.",
                           "en": "Automatic quotes go up to {days} days; for longer, contact sales."},
    "quote_err_not_priced": {"ru": "{gpu} сейчас не сдаётся. Есть: {suggestions}",
                             "en": "{gpu} is not for rent right now. Available: {suggestions}"},
    "quote_err_spot_unavailable": {
        "ru": "Для {gpu} спот не предлагается; выберите по требованию или фиксированный срок.",
        "en": "Spot is not offered for {gpu}; choose on-demand or a committed term.",
    },
    "quote_err_bad_pricing": {"ru": "Не знаю тип цены «{value}»: on-demand, spot или committed.",
                              "en": "Unknown pricing “{value}”: use on-demand, spot or committed."},
    "quote_err_bad_key": {
        "ru": "Ключ идемпотентности — 4–128 символов: латиница, цифры, «.», «_», «:», «-».",
        "en": "An idempotency key is 4-128 characters: Latin letters, digits, '.', '_', ':', '-'.",
    },
    "quote_err_two_keys": {"ru": "Указано два разных ключа; оставьте один.",
                           "en": "Two different keys were given; keep one."},
    "quote_err_invalid": {"ru": "Не получилось посчитать: {detail}", "en": "Could not price this: {detail}"},
    "quote_conflict": {
        "ru": "Ключ «{idem_key}» уже использован для другого запроса: расчёт {quote_id} ({summary}). Ключ "
              "повторяют только для того же запроса; для другой конфигурации нужен новый ключ.",
        "en": "The key “{idem_key}” was already used for a different request: quote {quote_id} ({summary}). "
              "Reuse a key only to repeat the same request; a different configuration needs a new key.",
    },
    "quote_conflict_edited": {
        "ru": "Это сообщение уже дало расчёт {quote_id} ({summary}); изменённое сообщение не создаёт "
              "второй расчёт. Отправьте новое сообщение с /quote.",
        "en": "This message already produced quote {quote_id} ({summary}); an edited message does not "
              "create a second quote. Send a new /quote message instead.",
    },
    # price questions are answered from the price list, never by the model (bot/routers/prices.py)
    "price_intro": {"ru": "Цены берутся только из прайс-листа (модель их не называет):",
                    "en": "Prices come only from the price list (the model never quotes them):"},
    "price_line": {"ru": "• {gpu}: {price} за GPU-час по требованию{spot}",
                   "en": "• {gpu}: {price} per GPU-hour on demand{spot}"},
    "price_spot": {"ru": ", spot {price}", "en": ", spot {price}"},
    "price_no_gpu": {"ru": "Цены всех GPU — в /gpus.", "en": "See /gpus for the prices of every GPU."},
    "price_how_to_quote": {"ru": "Точный расчёт со скидками за срок: {example}",
                           "en": "An exact quote with term discounts: {example}"},
    "quote_unavailable": {"ru": "Расчёты сейчас недоступны, попробуйте позже.",
                          "en": "Quotes are unavailable right now, please try again later."},
    "quotes_title": {"ru": "Ваши последние расчёты", "en": "Your recent quotes"},
    "quotes_empty": {"ru": "Расчётов пока нет. Попробуйте: /quote h100 x8 2 недели",
                     "en": "No quotes yet. Try: /quote h100 x8 2 weeks"},
    "quote_flow_gpu": {"ru": "Расчёт аренды, шаг 1/5: выберите GPU.", "en": "Rental quote, step 1/5: pick a GPU."},
    "quote_flow_count": {"ru": "Шаг 2/5: {gpu} — сколько GPU?", "en": "Step 2/5: {gpu} — how many GPUs?"},
    "quote_flow_duration": {
        "ru": "Шаг 3/5: {gpu} × {count} — на какой срок? Выберите или напишите, например «10 дней».",
        "en": "Step 3/5: {gpu} × {count} — for how long? Pick one or type it, e.g. “10 days”.",
    },
    "quote_flow_pricing": {"ru": "Шаг 4/5: {gpu} × {count} · {duration} — тип цены?",
                           "en": "Step 4/5: {gpu} × {count} · {duration} — which pricing?"},
    "quote_flow_confirm": {"ru": "Шаг 5/5: проверьте и подтвердите.", "en": "Step 5/5: check and confirm."},
    "quote_btn_confirm": {"ru": "✅ Подтвердить", "en": "✅ Confirm"},
    "quote_btn_cancel": {"ru": "✖ Отмена", "en": "✖ Cancel"},
    "quote_flow_cancelled": {"ru": "Расчёт отменён.", "en": "Quote cancelled."},
    "quote_flow_stale": {"ru": "Эта кнопка устарела — начните заново: /quote",
                         "en": "This button is out of date — start again with /quote"},
    # ---- /fit (gpu/fit) ----
    "fit_usage": {
        "ru": ("Напишите модель и (необязательно) GPU, например:\n/fit llama-3.1-70b q4_k_m 2xH100 ctx=32k batch=4\n"
               "/fit qwen2.5-7b на 4090\nили пришлите config.json / GGUF-файл с подписью /fit."),
        "en": ("Give a model and (optionally) GPUs, for example:\n/fit llama-3.1-70b q4_k_m 2xH100 ctx=32k batch=4\n"
               "/fit qwen2.5-7b on 4090\nor send a config.json / GGUF file captioned /fit."),
    },
    "fit_error": {"ru": "Не получилось: {error}", "en": "Could not do that: {error}"},
    "fit_did_you_mean": {"ru": "Возможно, вы имели в виду: {options}", "en": "Did you mean: {options}"},
    "fit_fits": {"ru": "✅ Помещается", "en": "✅ Fits"},
    "fit_no_fit": {"ru": "❌ Не помещается", "en": "❌ Does not fit"},
    "fit_weights": {"ru": "веса", "en": "weights"},
    "fit_kv": {"ru": "KV-кэш", "en": "KV cache"},
    "fit_activations": {"ru": "активации и буферы", "en": "activations and buffers"},
    "fit_gradients": {"ru": "градиенты", "en": "gradients"},
    "fit_optimizer": {"ru": "оптимизатор", "en": "optimizer"},
    "fit_overhead": {"ru": "накладные расходы (CUDA и др.)", "en": "runtime overhead (CUDA etc.)"},
    "fit_total": {"ru": "всего на GPU: {total} из {usable} ГиБ доступных (запас {headroom} ГиБ)",
                  "en": "total per GPU: {total} of {usable} GiB usable (headroom {headroom} GiB)"},
    "fit_min_gpus": {"ru": "минимум {gpu}: {count}", "en": "minimum {gpu} count: {count}"},
    "fit_min_none": {"ru": "ни одно число до 64", "en": "none up to 64"},
    "fit_max_context": {"ru": "максимальный контекст: {tokens} токенов", "en": "longest context: {tokens} tokens"},
    "fit_max_batch": {"ru": "параллельных запросов при этом контексте: {count}",
                      "en": "concurrent sequences at this context: {count}"},
    "fit_decode": {"ru": "потолок скорости генерации: ≤ {tps} ток/с на запрос",
                   "en": "decode ceiling: ≤ {tps} tok/s per sequence"},
    "fit_cheapest": {"ru": "Самые дешёвые подходящие конфигурации:", "en": "Cheapest fitting configurations:"},
    "fit_per_hour": {"ru": "{price} {currency}/ч", "en": "{price} {currency}/h"},
    "fit_button_quote": {"ru": "💰 Рассчитать аренду {count}× {gpu}", "en": "💰 Quote {count}× {gpu}"},
    "fit_chart_caption": {"ru": "Память на GPU: {model}", "en": "Memory per GPU: {model}"},
    "fit_file_too_big": {
        "ru": "Файл слишком большой ({size} МБ). Пришлите config.json или начало GGUF-файла до {limit} МБ.",
        "en": "The file is too big ({size} MB). Send a config.json or the first {limit} MB of a GGUF file.",
    },
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
