"""Rental-lifecycle questions: which topic a customer's message is about, and an answer that quotes the glossary
verbatim where it speaks and otherwise states the product's own rule with the command or button that does it."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, cast, get_args

import pytest
import yaml

from anchorgpu.cli import build_parser
from anchorgpu.console import ConsoleChat
from app.lifecycle import (
    TOPIC_COMMANDS,
    TOPIC_RULES,
    GlossaryQuote,
    LifecycleAnswer,
    LifecycleTopic,
    answer_lifecycle,
    billing_topic,
    command_front,
    lifecycle_topic,
    render_lifecycle,
)
from app.pipeline import ReplyPipeline
from bot.commands import GROUP_COMMANDS, PRIVATE_COMMANDS
from gpu.placements.reminders import REMIND_BEFORE
from infra.i18n import LANGS, MESSAGES, MESSAGES_DIR, Lang, Phrase, placeholders, t
from infra.markup import HTML, PLAIN
from rag.glossary import glossary_file
from rag.rules import RuleBook
from tests.conftest import DATA_DIR

BOOK = RuleBook(DATA_DIR, glossary_file(DATA_DIR))
TOPICS: tuple[LifecycleTopic, ...] = get_args(LifecycleTopic)
RENTAL_TERM = "002-rental-term"
STOP_QUOTE = "Остановка смоделированного размещения не приостанавливает оплаченный период."
LENGTHS_QUOTE = "В этом каталоге неделя составляет ровно 7 дней, а месяц — ровно 30 дней."


@pytest.mark.parametrize(("text", "topic"), [
    # the customers' own questions
    ("я арендовал сервер на неделю, можно продлить ещё на месяц?", "extend"),
    ("how do I extend", "extend"),
    ("как остановить аренду", "stop"),
    # what the rental is for is no other thing to stop
    ("арендую h100 на неделю под обучение. если остановлю раньше, деньги вернут?", "stop"),
    ("rented 2 a100 for training, can i stop the rental early?", "stop"),
    ("can I start it again after stopping", "start"),
    ("что будет когда оплаченный период закончится?", "end_of_term"),
    ("will you remind me before it ends", "reminders"),
    ("может ли коллега в группе остановить мою аренду", "group"),
    ("who can rent in a group chat", "group"),
    ("как посмотреть мои аренды", "list"),
    ("how do I rent a GPU", "rent"),
    # how soon a rented GPU is there
    ("how long does it take to get a gpu after I pay?", "how_soon"),
    ("через сколько после оплаты запустится gpu?", "how_soon"),
    ("как быстро я получу доступ к серверу после оплаты?", "how_soon"),
    ("how long does it take to start an instance", "how_soon"),
    ("how fast will the server be ready?", "how_soon"),
    ("how do i connect via ssh", "access"), ("как подключиться к серверу по ssh?", "access"),
    ("where do i find the ip address of my instance", "access"),
    ("how do i login to jupyter on the instance", "access"),
    # extend, with typos and slang
    ("можно прадлить аренду?", "extend"),
    ("хочу продлевать сервак каждый месяц", "extend"),
    ("can i renew my rental for another month?", "extend"),
    ("how to extnd my placement", "extend"),
    ("can I add another week to my H100 box?", "extend"),
    ("Аренда кончается. Хочу добавить ещё неделю", "extend"),
    # stop
    ("как вырубить сервак?", "stop"),
    ("а если я выключу гпу, она дальше будет списывать?", "stop"),
    ("how do i shut down my server", "stop"),
    ("pause my instance please", "stop"),
    ("можно астановить размещение P-ABCDEFGHIJKLMNOP?", "stop"),
    # start again
    ("можно ли снова запустить сервер после остановки?", "start"),
    ("как возобновить аренду", "start"),
    ("можно врубить обратно после стопа?", "start"),
    ("resume my instance", "start"),
    ("how do I turn it back on", "start"),
    # end of the term
    ("what happens when my rental expires?", "end_of_term"),
    ("когда истечёт срок, сервер выключится сам?", "end_of_term"),
    ("what happens at the end of the month on my rental", "end_of_term"),
    # reminders
    ("будут ли уведомления о конце аренды?", "reminders"),
    ("напомните за день до окончания срока", "reminders"),
    ("do you send a notification before my placement expires?", "reminders"),
    # groups
    ("can my teammate extend our rental?", "group"),
    ("кто в чате может управлять арендой", "group"),
    ("can a regular member of the group stop a placement?", "group"),
    # the list
    ("где мои размещения", "list"),
    ("show me my rentals", "list"),
    ("list my placements", "list"),
    ("что я арендовал?", "list"),
    # more or other GPUs in the placement one has (a placement is its quote: fixed GPU and count)
    ("I rented 8 h100 yesterday for a week, can I add 8 more to the same placement?", "resize"),
    ("можно добавить ещё 4 карты к моей аренде?", "resize"),
    ("can we scale up our rental to 16 gpus", "resize"),
    ("хочу поменять h100 на h200 в текущей аренде", "resize"),
    ("can I add a second gpu to my instance", "resize"),
    ("как докупить ещё неделю", "extend"),
    # what becomes of one's files (the glossary and the rules say nothing; a simulated placement holds none)
    ("is my data safe when the rental ends?", "data"),
    ("что будет с моими файлами после окончания аренды?", "data"),
    ("если остановлю сервер, данные сохранятся?", "data"),
    ("will you delete my files if I stop the instance?", "data"),
    ("when i stop my rented container, do my downloaded models vanish?", "data"),  # a word between, another verb
    ("если остановить сервер, мои скачанные модели исчезнут?", "data"),
    ("do I lose my checkpoints when the placement expires?", "data"),
    # how to rent
    ("как арендовать видеокарту", "rent"),
    ("как взять в аренду GPU?", "rent"),
    ("how can I rent 8 H100?", "rent"),
    ("how do I get a GPU server?", "rent"),
])
def test_the_topic_of_a_customers_question(text: str, topic: LifecycleTopic) -> None:
    assert lifecycle_topic(text) == topic


@pytest.mark.parametrize("text", [
    "what is NVLink?",
    "что такое KV cache?",
    "what is early stopping",
    "сколько стоит 4 A100 на две недели?",
    "потянет ли RTX 4090 qwen 2.5 32b?",
    "как запустить llama 3 на 4090",
    "можно ли арендовать B200?",
    "how do I extend the context window of llama 3",
    "restart training from a checkpoint",
    "сколько памяти нужно для llama 70b",
    "stop",
    "остановись",
    "какой командой посчитать цену?",
    "привет",
    "how do I get started",
    "which of my gpus is faster, 3090 or 4090?",
    "what is a rental term?",
    "can my team train llama 3 on a rented GPU?",
    "что такое срок аренды",
    "add a lora adapter to my model",
    # a start or a chat with no rental in the words: a generation restarted, the start of a conversation
    "сгенерил картинку, перезапустил с тем же промптом и настройками — вышло другое, почему?",
    "long chat with the bot and it forgets what i said at the start, is there a cap?",
    "",
])
def test_what_is_not_a_rental_question(text: str) -> None:
    assert lifecycle_topic(text) is None


def test_the_whole_message_counts_not_one_sentence() -> None:
    assert lifecycle_topic("Я арендовал H100 на неделю. Можно продлить?") == "extend"
    assert lifecycle_topic("Остановил сервер вчера.\nКак его запустить снова?") == "start"


@pytest.mark.parametrize("topic", TOPICS)
@pytest.mark.parametrize("lang", LANGS)
def test_every_topic_renders_with_its_rules_quotes_and_commands(topic: LifecycleTopic, lang: Lang) -> None:
    answer = answer_lifecycle(topic, BOOK)
    text = render_lifecycle(answer, lang)
    assert answer.topic == topic and answer.facts and answer.commands
    assert text.startswith(t(f"lifecycle_title_{topic}", lang))
    assert t("lifecycle_product_rules", lang) in text
    for fact in answer.facts:
        assert fact.render(lang) in text
    for command in answer.commands:
        assert command in text
    assert len(answer.quotes) == len(TOPIC_RULES[topic])
    for quote in answer.quotes:
        assert f"«{quote.quote}»" in text  # the glossary's words, verbatim and set apart
        if lang == "en":
            assert quote.en is not None and t("lifecycle_translation", "en", text=quote.en) in text
        else:
            assert quote.en is None or quote.en not in text  # Russian readers get the glossary's own words only
    if answer.quotes:
        assert answer.caveats and answer.caveats[0].quote in text  # seed 002's disclaimer ends it, like every answer
        assert text.rstrip().endswith(answer.caveats[-1].en if lang == "en" else f"«{answer.caveats[-1].quote}»")
    else:
        assert not answer.caveats


@pytest.mark.parametrize(("topic", "quotes"), [
    ("stop", [STOP_QUOTE]), ("start", [STOP_QUOTE]), ("extend", [LENGTHS_QUOTE]),
    ("end_of_term", [LENGTHS_QUOTE, STOP_QUOTE]), ("rent", [LENGTHS_QUOTE, STOP_QUOTE]),
    ("reminders", []), ("group", []), ("list", []),
])
def test_the_glossary_is_quoted_word_for_word_from_the_rental_term_entry(topic: LifecycleTopic,
                                                                        quotes: list[str]) -> None:
    answer = answer_lifecycle(topic, BOOK)
    assert [quote.quote for quote in answer.quotes] == quotes
    entry = next(e for e in glossary_file(DATA_DIR).get() if e.id == RENTAL_TERM)
    for quote in answer.quotes:
        assert (quote.entry_id, quote.term, quote.source) == (RENTAL_TERM, entry.term, entry.source)
        assert quote.quote in " ".join(entry.definition.split())
    english = {rule.quote: rule.en for rule in BOOK.rules()}
    assert [quote.en for quote in answer.quotes] == [english[q] for q in quotes]


def test_the_stop_answer_is_the_rule_not_a_promise_of_savings() -> None:
    for lang in LANGS:
        text = render_lifecycle(answer_lifecycle("stop", BOOK), lang)
        assert STOP_QUOTE in text
        assert ("деньги не возвращаются" if lang == "ru" else "nothing is refunded") in text


def test_an_entry_quoted_twice_is_introduced_once() -> None:
    text = render_lifecycle(answer_lifecycle("end_of_term", BOOK), "ru")
    assert text.count("Фиксированный срок аренды» — дословно") == 1
    assert text.index(LENGTHS_QUOTE) < text.index(STOP_QUOTE)


def test_without_the_glossary_entry_nothing_is_quoted(tmp_path: Path) -> None:
    """The product's rules still answer; the glossary's words are quoted only while the glossary says them."""
    (tmp_path / "glossary").mkdir()
    shutil.copy(DATA_DIR / "glossary" / "rules.yaml", tmp_path / "glossary" / "rules.yaml")
    entries = [{"id": "001-nvlink", "term": "NVLink", "definition": "Связь между GPU.", "source": "001.txt",
                "category": "hardware", "concept": "nvlink"}]
    (tmp_path / "glossary" / "entries.yaml").write_text(yaml.safe_dump({"entries": entries}, allow_unicode=True),
                                                        encoding="utf-8")
    answer = answer_lifecycle("stop", RuleBook(tmp_path, glossary_file(tmp_path)))
    assert answer.quotes == () and answer.caveats == ()
    assert answer.facts and STOP_QUOTE not in render_lifecycle(answer, "ru")


def test_the_facts_follow_the_code() -> None:
    hours = int(REMIND_BEFORE.total_seconds() // 3600)
    assert Phrase.of("lifecycle_reminders_when", hours=hours) in answer_lifecycle("reminders", BOOK).facts
    assert f"{hours} h before" in render_lifecycle(answer_lifecycle("reminders", BOOK), "en")
    for lang in LANGS:  # the buttons are named as the bot draws them (telegram_placements.yaml)
        extend = t("lifecycle_extend_telegram", lang)
        assert t("tgp_btn_week", lang) in extend and t("tgp_btn_month", lang) in extend
        assert t("tgp_btn_stop", lang, short="") in t("lifecycle_stop_telegram", lang)
        assert t("tgp_btn_stop_confirm", lang) in t("lifecycle_stop_telegram", lang)
        assert t("tgp_btn_start", lang, short="") in t("lifecycle_start_telegram", lang)
        rent = t("lifecycle_rent_telegram", lang)
        assert t("tgp_btn_rent", lang) in rent and t("tgp_btn_confirm", lang) in rent
        assert t("tgp_btn_rent", lang) in t("lifecycle_group_rent", lang)


def test_every_command_exists_where_the_answer_says_it_works() -> None:
    console = set(ConsoleChat(cast(Any, None)).commands)
    parser = build_parser()
    for topic in TOPICS:
        for command in TOPIC_COMMANDS[topic]:
            front = command_front(command)
            if front == "cli":
                words = command.removeprefix("anchorgpu ").replace('"', "").split()
                parser.parse_args(words)  # argparse exits on an unknown subcommand or argument
                continue
            name = command.split()[0].removeprefix("/")
            assert name in console, command
            in_telegram = name in PRIVATE_COMMANDS and name in GROUP_COMMANDS
            assert in_telegram == (front == "chat"), command
    with pytest.raises(ValueError):
        command_front("/nonsense")


def test_html_escapes_and_marks_up() -> None:
    answer = LifecycleAnswer(topic="stop", facts=(Phrase.of("lifecycle_stop_hourly"),),
                             quotes=(GlossaryQuote("x", "A<B & C", "s.txt", "1 < 2 & 3", "one < two"),),
                             commands=("/stop_placement P-…",))
    html = render_lifecycle(answer, "en", HTML)
    assert "<b>Stopping a rental (simulated)</b>" in html
    assert "<blockquote>1 &lt; 2 &amp; 3</blockquote>" in html
    assert "A&lt;B &amp; C" in html and "one &lt; two" in html and "A<B" not in html
    assert "<code>/stop_placement P-…</code>" in html
    plain = render_lifecycle(answer, "en", PLAIN)
    assert "«1 < 2 & 3»" in plain and "<" not in plain.replace("1 < 2", "").replace("A<B", "").replace("one < two", "")


def test_the_catalog_keys_exist_in_both_languages_with_the_same_placeholders() -> None:
    document = yaml.safe_load((MESSAGES_DIR / "lifecycle.yaml").read_text(encoding="utf-8"))
    assert document
    for key in document:
        assert set(MESSAGES[key]) == set(LANGS)
        assert placeholders(MESSAGES[key]["ru"]) == placeholders(MESSAGES[key]["en"]), key
    used = {fact.key for topic in TOPICS for fact in answer_lifecycle(topic, BOOK).facts}
    used |= {f"lifecycle_title_{topic}" for topic in TOPICS}
    # how time is billed is the quote engine's rule, stated in the words its quotes print (quote.yaml)
    engine_rules = {key for key in used if key.startswith("quote_rule_")}
    assert engine_rules and all(set(MESSAGES[key]) == set(LANGS) for key in engine_rules)
    assert used - engine_rules <= set(document)


def test_a_placement_has_no_way_to_change_its_gpus() -> None:
    """The resize answer says a placement's GPU and count are fixed: the placement service offers renting,
    stopping, starting and extending, and nothing that changes the GPUs of a placement."""
    from gpu.placements.service import PlacementService
    public = {name for name in dir(PlacementService) if not name.startswith("_")}
    assert {"rent_text", "rent_quote"} <= public
    assert not {name for name in public if any(word in name for word in ("resize", "scale", "add_gpu", "swap"))}
    assert "resize" in get_args(LifecycleTopic)


@pytest.mark.parametrize(("text", "topic"), [
    ("what is the difference between on-demand and committed?", "billing"),
    ("on-demand or reserved, which is better for a month?", "billing"),
    ("чем спот отличается от почасовой оплаты?", "spot"),
    ("can I rent gpus by the minute?", "billing"),
    # when the money is taken
    ("can i pay monthly?", "billing"), ("можно платить помесячно?", "billing"),
    ("do I have to pay upfront?", "billing"), ("нужна предоплата?", "billing"),
])
def test_two_ways_of_paying_compared_or_a_billing_unit_asked_is_the_billing_rule(text: str, topic: str) -> None:
    assert billing_topic(text) == topic


@pytest.mark.parametrize("text", ["what is spot?", "сколько стоит h100 по требованию", "the bot answers in a minute",
                                  "what's the monthly price of an h100?", "сколько в месяц стоит a100?"])
def test_one_way_of_paying_named_is_not_a_billing_question(text: str) -> None:
    assert billing_topic(text) is None


async def test_how_soon_a_gpu_is_there_is_the_rent_rule_not_the_price_list(pipeline: ReplyPipeline) -> None:
    reply = await pipeline.reply("how long does it take to get a gpu after I pay?")
    assert reply.routing.intent == "lifecycle", reply


@pytest.mark.parametrize("text", ["can I pause an instance and not pay?", "если остановить сервер, деньги списываются?",
                                  "can I stop an on-demand instance so I do not pay?",
                                  "if I stop the gpu will I still be charged?", "выключу карту — платить перестану?",
                                  # said with "billing", a billing-rule word: the same question
                                  "does stopping an hourly instance stop the billing?",
                                  "can i pause billing while i'm on vacation"])
async def test_stopping_to_stop_paying_without_a_term_is_answered_for_both_ways_of_paying(
        pipeline: ReplyPipeline, text: str) -> None:
    """The glossary's "a stop does not pause the paid period" is about a committed term; an hourly placement
    (on-demand, the default) stops billing when stopped. Asked with no term named, a bare "no" would be wrong
    for most rentals: the answer gives both."""
    from app.reply import LifecycleReply
    from app.views.reply import render_text

    reply = await pipeline.reply(text)
    assert isinstance(reply, LifecycleReply) and reply.answer.topic == "stop", reply
    shown = render_text(reply, pipeline.data)
    assert not shown.startswith(("No", "Нет")), shown
    assert t("lifecycle_stop_hourly", reply.lang) in shown and t("lifecycle_stop_committed", reply.lang) in shown


@pytest.mark.parametrize("text", ["можно ли остановить аренду и не платить за оставшуюся неделю?",
                                  "can I pause my committed rental and stop paying?",
                                  "I rented for a month, if I stop it do I get a refund for the unused days?",
                                  "арендовал на месяц, если остановлю — деньги вернут?",
                                  "если отменю раньше, деньги вернут?"])
async def test_with_a_paid_period_named_the_rule_says_no(pipeline: ReplyPipeline, text: str) -> None:
    from app.reply import CatalogReply
    from app.views.reply import render_text

    reply = await pipeline.reply(text)
    assert isinstance(reply, CatalogReply) and reply.intent.kind == "rule", reply
    assert render_text(reply, pipeline.data).startswith(("No", "Нет"))


@pytest.mark.parametrize("text", ["можно ли оплатить спот заранее на месяц?", "can I prepay spot for a month?",
                                  "spot with a committed term possible?"])
def test_spot_paid_in_advance_is_the_spot_rule(text: str) -> None:
    assert billing_topic(text) == "spot"
    assert Phrase.of("lifecycle_spot_hourly_only") in answer_lifecycle("spot", BOOK).facts


@pytest.mark.parametrize("text", ["что такое MIG и можно арендовать кусок H100?", "can I rent half an A100?",
                                  "do you offer MIG slices?", "можно взять 0.5 gpu?", "можно взять кусочек карты?",
                                  "можно арендовать пол карты h100?", "можно полкарты a100 взять?",
                                  "можно снять четверть a100?"])
def test_a_share_of_a_gpu_asked_for_rent_is_the_whole_gpus_rule(text: str) -> None:
    assert lifecycle_topic(text) == "whole_gpus"


@pytest.mark.parametrize("text", ["what is MIG?", "что такое MIG", "часть модели на GPU, часть на CPU — это offload?",
                                  "можно сделать, чтобы ответ печатался по кусочкам, а не весь сразу?",
                                  "можно арендовать h100 на полдня?", "сколько стоит полгода h100?",
                                  "можно взять полный a100?"])
def test_mig_or_a_part_not_asked_for_rent_is_not_the_whole_gpus_rule(text: str) -> None:
    assert lifecycle_topic(text) != "whole_gpus"


@pytest.mark.parametrize("text", ["can I rent for just 1 hour?", "можно арендовать на час?",
                                  "можно взять h100 всего на один час?", "можно ли арендовать меньше чем на час?",
                                  "can i rent an a100 for less than an hour?", "хочу взять h100 на 20 минут, можно?"])
def test_the_shortest_rental_asked_as_one_hour_is_the_billing_rule(text: str) -> None:
    assert billing_topic(text) == "billing"
    assert Phrase.of("quote_rule_started_hour") in answer_lifecycle("billing", BOOK).facts


@pytest.mark.parametrize("text", ["how much for an h100 for an hour?", "сколько стоит h100 на час?"])
def test_an_hours_price_is_not_the_billing_rule(text: str) -> None:
    assert billing_topic(text) is None


@pytest.mark.parametrize("text", ["does FSDP keep a full copy of the model on every GPU?",
                                  "what does ddp actually keep in sync between the processes on each step?",
                                  "can I keep my model weights in memory between requests?",
                                  "мои веса модели сохраняются при обучении?"])
def test_a_model_kept_in_memory_is_not_a_question_about_ones_data(text: str) -> None:
    assert lifecycle_topic(text) != "data"


@pytest.mark.parametrize("text", ["how can i connect two gpus with nvlink", "what is ssh",
                                  "как подключить wandb к обучению"])
def test_connecting_gpus_or_a_concept_is_not_logging_in_to_a_rental(text: str) -> None:
    assert lifecycle_topic(text) != "access"
