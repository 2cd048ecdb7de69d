"""Questions about managing a simulated rental: extend, stop, start again, the end of the term, reminders,
group chats, the list, how to rent.

The answer is what the product does, never the model's guess: the glossary's own sentence where the glossary
speaks (``data/glossary/rules.yaml``, quoted verbatim, with the curator's English marked as a translation), and
otherwise the product's rule as the code implements it (:mod:`gpu.placements.engine`, the Telegram buttons of
``bot/routers/placements.py``, the console's command table, the CLI), with the command or button that does it.
An answer citing a glossary entry ends with its seed's disclaimer, like every other answer citing it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from app.intents import CatalogSource
from app.views.answer import render_caveats, source_title
from gpu.placements.reminders import REMIND_BEFORE
from infra.i18n import Lang, Phrase, t
from infra.markup import PLAIN, Markup
from rag.rules import Caveat, RuleBook

LifecycleTopic = Literal["extend", "stop", "start", "end_of_term", "reminders", "group", "list", "rent", "billing",
                         "spot", "resize", "data", "whole_gpus", "how_soon", "access"]
# the topics that are how the product bills, not how a rental is managed: answered on the "rule" route
BillingTopic = Literal["billing", "spot"]
Front = Literal["chat", "console", "cli"]

# the glossary rules (ids in data/glossary/rules.yaml) each topic quotes
STOP_RULE = "stop-does-not-pause"
TERM_LENGTHS_RULE = "week-and-month-lengths"
TOPIC_RULES: dict[LifecycleTopic, tuple[str, ...]] = {
    "extend": (TERM_LENGTHS_RULE,),
    "stop": (STOP_RULE,),
    "start": (STOP_RULE,),
    "end_of_term": (TERM_LENGTHS_RULE, STOP_RULE),
    "reminders": (),
    "group": (),
    "list": (),
    "rent": (TERM_LENGTHS_RULE, STOP_RULE),
    "billing": (TERM_LENGTHS_RULE, STOP_RULE),
    "spot": (),
    "resize": (STOP_RULE,),
    "data": (),
    "whole_gpus": (),
    "how_soon": (),
    "access": (),
}

_REMIND_HOURS = int(REMIND_BEFORE.total_seconds() // 3600)
TOPIC_FACTS: dict[LifecycleTopic, tuple[Phrase, ...]] = {
    "extend": (Phrase.of("lifecycle_extend_committed"), Phrase.of("lifecycle_extend_whole_terms"),
               Phrase.of("lifecycle_extend_hourly"), Phrase.of("lifecycle_extend_telegram")),
    "stop": (Phrase.of("lifecycle_stop_committed"), Phrase.of("lifecycle_stop_hourly"),
             Phrase.of("lifecycle_stop_telegram")),
    "start": (Phrase.of("lifecycle_start_committed"), Phrase.of("lifecycle_start_hourly"),
              Phrase.of("lifecycle_start_telegram")),
    "end_of_term": (Phrase.of("lifecycle_end_when"), Phrase.of("lifecycle_end_after"),
                    Phrase.of("lifecycle_end_extend_before"), Phrase.of("lifecycle_end_hourly")),
    "reminders": (Phrase.of("lifecycle_reminders_when", hours=_REMIND_HOURS),
                  Phrase.of("lifecycle_reminders_short", hours=_REMIND_HOURS),
                  Phrase.of("lifecycle_reminders_other_fronts")),
    "group": (Phrase.of("lifecycle_group_owner"), Phrase.of("lifecycle_group_admins"),
              Phrase.of("lifecycle_group_rent"), Phrase.of("lifecycle_group_private")),
    "list": (Phrase.of("lifecycle_list_telegram"), Phrase.of("lifecycle_list_group"),
             Phrase.of("lifecycle_list_quotes")),
    "rent": (Phrase.of("lifecycle_rent_telegram"), Phrase.of("lifecycle_rent_pricing"),
             Phrase.of("lifecycle_rent_simulated")),
    # the quote engine's own rules (gpu/quote/engine.py), in the words its quotes print them
    "billing": (Phrase.of("quote_rule_started_hour"), Phrase.of("lifecycle_billing_terms"),
                Phrase.of("quote_rule_term_paid_in_full"), Phrase.of("lifecycle_billing_no_refund_rule")),
    "spot": (Phrase.of("quote_rule_spot_interruptible"), Phrase.of("lifecycle_spot_where"),
             Phrase.of("quote_rule_started_hour"), Phrase.of("lifecycle_spot_hourly_only")),
    # a placement is the quote it was rented from (gpu/placements): its GPU and count never change
    "resize": (Phrase.of("lifecycle_resize_fixed"), Phrase.of("lifecycle_resize_more"),
               Phrase.of("lifecycle_resize_other_gpu")),
    # what becomes of files: the glossary and the rules say nothing, and a simulated placement holds none
    "data": (Phrase.of("lifecycle_data_simulated"), Phrase.of("lifecycle_data_not_in_rules")),
    # the quote engine counts whole GPUs (gpu/quote/request.py) and the price list prices a GPU-hour
    "whole_gpus": (Phrase.of("lifecycle_whole_gpus"), Phrase.of("lifecycle_whole_gpus_smallest")),
    # how soon a rented GPU is there: a simulated placement is active when confirmed; a real boot time is in no rule
    "how_soon": (Phrase.of("lifecycle_how_soon_simulated"), Phrase.of("lifecycle_how_soon_not_in_rules"),
                 Phrase.of("lifecycle_rent_telegram")),
    # connecting to a rented machine: a simulated placement has no address or login; a real one is in no rule
    "access": (Phrase.of("lifecycle_access_simulated"), Phrase.of("lifecycle_access_not_in_rules")),
}

# the topics whose product rules are the price list's billing rules (its terms and their discount, the started
# hour, spot), stated with their figures: the answer cites the price list too
TOPIC_CATALOGS: dict[LifecycleTopic, tuple[CatalogSource, ...]] = {"billing": ("price_list",), "spot": ("price_list",)}

# real commands: the bot's (bot/routers), the console chat's (anchorgpu/console.py), the CLI's (anchorgpu/cli)
EXAMPLE_REQUEST = "h100 x8 1 week committed"
TOPIC_COMMANDS: dict[LifecycleTopic, tuple[str, ...]] = {
    "extend": ("/placements", "/extend P-… 1 month", 'anchorgpu extend P-… "1 month"'),
    "stop": ("/placements", "/stop_placement P-…", "anchorgpu stop P-…"),
    "start": ("/placements", "/start_placement P-…", "anchorgpu start P-…"),
    "end_of_term": ("/placements", f"/quote {EXAMPLE_REQUEST}", "/extend P-… 1 week"),
    "reminders": ("/placements",),
    "group": ("/placements", f"/quote {EXAMPLE_REQUEST}"),
    "list": ("/placements", "anchorgpu placements"),
    "rent": (f"/quote {EXAMPLE_REQUEST}", f"/rent {EXAMPLE_REQUEST}", f'anchorgpu rent "{EXAMPLE_REQUEST}"'),
    "billing": ("/quote h100 x1 10 hours", f"/quote {EXAMPLE_REQUEST}"),
    "spot": ("/quote h100 x1 10 hours spot",),
    "resize": (f"/quote {EXAMPLE_REQUEST}", "/placements"),
    "data": ("/placements",),
    "whole_gpus": ("/quote l4 x1 10 hours", "/gpus"),
    "how_soon": (f"/quote {EXAMPLE_REQUEST}",),
    "access": ("/placements",),
}
# where a command works: /quote and /placements in Telegram and the console chat alike; placement ids are
# typed only in the console chat (Telegram acts through the buttons under /placements) and the CLI
CHAT_COMMANDS = frozenset({"/quote", "/quotes", "/placements", "/gpus"})
CONSOLE_COMMANDS = frozenset({"/rent", "/extend", "/stop_placement", "/start_placement"})


def command_front(command: str) -> Front:
    if command.startswith("anchorgpu "):
        return "cli"
    name = command.split()[0]
    if name in CHAT_COMMANDS:
        return "chat"
    if name in CONSOLE_COMMANDS:
        return "console"
    raise ValueError(f"unknown command {command!r}")


# ---- which topic a message is about ---------------------------------------------------------------------
def _re(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


# what is rented: the rental itself, the server or GPU as customers call them (slang included), a placement id
RENTAL = _re(r"ар[еи]нд|сервер|сервак|размещени|инстанс|машин|тачк|\bгпу|гпух|\bgpu|видеокарт|видюх|карт[уыо]|"
             r"\bнод[уы]?\b|rental|\brent|placement|server|instance|machine|\bbox\b|\brig\b|\bnode\b|\bvm\b|lease|"
             r"\bp-[a-z2-7]{4,}")
# the paid period and its lengths
PERIOD = _re(r"оплач|оплат|срок|период|недел|месяц|\bдн[яеи]|\bсут|\bterm\b|period|paid|\bweek|\bmonth|\bdays?\b")
# more or other GPUs in a placement one has: "add 8 more to the same placement", «добавить ещё 4 карты к аренде»
RESIZE = _re(r"\badd(ing)?\s+(\d+\s+|a\s+few\s+|some\s+|another\s+|an?\s+(second\s+|third\s+|extra\s+)?|extra\s+)?"
             r"(more\s+)?(gpus?|cards?|nodes?|[ahl]\d+\w*)?\s*"
             r"(more\s+)?(to|into)\s+(the\s+same|my|this|our|the|an?\s+existing|existing)\b|"
             r"\bscale\s+(it\s+|my\s+\w+\s+)?(up|down)\b|\bupgrade\s+(my|the|this|our)\s+(rental|placement|instance|server)|"
             r"\bresiz|\b(more|fewer)\s+(gpus?|cards?)\s+(to|in|on)\s+(my|the\s+same|this|an?\s+existing)\b|"
             r"(добав|докуп|подключ)\w*\s+(ещ[её]\s+)?(\d+\s+|пар\w+\s+|одн\w+\s+)?(карт|gpu|гпу|видеокарт|видюх|h\d)|"
             r"(увелич|уменьш|нарастит|измени)\w*\s+(количеств|числ)\w*\s+(карт|gpu|гпу|видеокарт)|"
             r"(сменить|поменять|заменить|перейти\s+с)\s+\S+\s+(на|в)\s+\S+\s+(в|внутри)\s+(текущ|мо[еёй]|это[йм]|той\s+же)\w*|"
             r"в\s+(то\s+же|тот\s+же|текущ\w+|мо[её]\w*)\s+(размещени|аренд)\w*\s+(добав|ещ[её])")
EXTEND = _re(r"пр[оа]дл[еиёя]|пр[оа]лонг|докупи|доплатить\s+за\s+(ещ|ещ[её]\s+)?(недел|месяц|дн|сут)|"
             r"(добав|накин)\w*\s+(ещ[её]\s+)?(одн\w+\s+)?(недел|месяц|дн|сут)|"
             r"\bext[ae]?n?d\b|\bext[ae]nd|\bextension|\brenew|prolong|\badd\s+(another|one\s+more|a|an|more|\d+)\s+(weeks?|months?|days?)|"
             r"\bmore\s+(weeks?|months?|days?)\b|\bkeep\s+it\s+(for|another)")
# extending something else: the context window, a dataset, a model's vocabulary
NOT_RENTAL = _re(r"контекст|context|окн[оа]|window|токен|token|словар|vocab|датасет|dataset|lora|памят|memory|"
                 r"обучени|training|\btrain|чекпоинт|checkpoint|генерац|generat|early\s+stopping|ранн\w+\s+останов")
# what a rental is for («арендую h100 под обучение», "renting for training") names no other thing to stop or extend
RENTAL_PURPOSE = _re(r"\b(под|для)\s+(\w+\s+)?(обучени|дообучени|инференс|трениров|файнтюн)\w*"
                     r"|\bfor\s+(\w+\s+)?(training|inference|fine-?tuning)\b")
STOP = _re(r"\b[ао]стан[ао]в|\bвыключ|\bотключ|\bвырубит|\bвырублю|\bпауз|приостанов|\bстопн|\bтормозн|"
           r"\bstop|\bshut\s*(\w+\s+){0,2}(down|off)|"
           r"\bturn\w*\s+(it\s+|\w+\s+)?off|\bpaus|\bkill\b|\bhalt|\bterminat|\bcancel|\bотмен\w*\s+(\w+\s+)?(аренд|размещ)"
           r"|\bdelete\s+(my\s+|the\s+|a\s+)?(rental|placement|instance|server)|\bend\s+(my\s+|the\s+|a\s+)?(rental|placement|lease)")
START_AGAIN = _re(r"(запуст|включ|врубит|поднят|подним)\w*\s+(\w+\s+){0,2}(снова|опять|обратно|заново|ещ[её]\s+раз|"
                  r"повторно|после\s+(остановк|выключ|отключ|паузы))|(снова|опять|обратно|заново|повторно)\s+"
                  r"(\w+\s+)?(запуст|включ|врубит|поднят)|возобнов|перезапуст|"
                  r"(запуст|включ)\w*\s+(\w+\s+){0,2}остановленн|"
                  r"\brestart|\bresum|\bstart\w*\s+(\w+\s+){0,3}(again|back\s+up)|\bturn\w*\s+(it\s+|\w+\s+)?back\s+on|"
                  r"\bbring\s+(it\s+)?back|\bstart\w*\s+(a|the|my)\s+stopped|\bunpause|\bre-?start")
END = _re(r"законч|заканчива|кончит|кончает|истеч|ист[её]к|истека|окончани|конец\s+срок|конц[еау]\s+срок|"
          r"срок\s+(выйд|выход|подход)|выйдет\s+срок|\bexpir|\bends?\b|\bended\b|\bending\b|\brun\w*\s+out|\bis\s+over\b|"
          r"\bend\s+of\b|\bfinish")
# a share of one GPU: a MIG slice, half a card, a fraction («кусок H100», "half an A100", "0.5 gpu")
FRACTION = _re(r"\bкус(ок|оч\w*|ки)\s+(\w+\s+)?(карт|gpu|гпу|видеокарт|видюх|[ahlb]\d|rtx)|"
               r"\bчаст\w*\s+(одной\s+)?(карт|gpu|гпу|видеокарт|[ahl]\d)|"
               r"\bпол[\s-]*(карт\w*\s+)?(карт|видеокарт|видюх|gpu|гпу|[ahl]\d)|"  # «пол карты», «полкарты h100»
               r"(половин\w*|четверт\w*|\bтреть\w*)\s+(\w+\s+)?(карт|gpu|гпу|видеокарт|[ahl]\d)|"
               r"\bдол(ю|я)\s+(\w+\s+)?(карт|gpu|гпу)|\bmig\b|\bслайс|\bslices?\b|"
               r"\bfraction\w*|\bhalf\s+(an?\s+|of\s+an?\s+)?(gpu|card|[ahl]\d)|\bpartial\s+gpu|\bshared\s+gpu|"
               r"\bvgpu\b|\b0[.,]\d+\s*(x\s*)?(gpu|[ahl]\d)|\bpart\s+of\s+(an?\s+|one\s+)?(gpu|card|[ahl]\d)")
RENT_VERB = _re(r"ар[еи]нд|\brent|\bbook|взять|снять|купить|\bbuy|\bget\b|дадите|даёте|даете|можно|\bcan\s+i|"
                r"\bdo\s+you\s+(offer|have|sell)|есть\s+ли|сдаёте|сдаете")
# what becomes of one's files, models, checkpoints when a rental stops or ends
DATA = _re(r"\b(my|our)\s+(\w+\s+)?(data|files?|datasets?|checkpoints?|weights|models?|disks?|storage|volumes?)\b|"
           r"\b(data|files?)\s+(safe|kept|stay|remain|deleted|wiped|erased|lost|gone|persist)|"
           r"\b(delete|wipe|erase|keep|lose|back\s*up)\w*\s+(my|our)\s+(data|files?|disk)|"
           r"\b(мо[иеёя]\w*|наш\w*|сво\w+)\s+(\w+\s+)?(данн|файл|датасет|чекпоинт|вес|модел|диск)\w*|"
           r"\bданн\w+\s+(сохран|удал|останут|пропад|сотр|потер)|\b(сохран|удал|останут|пропад|сотр|потер)\w*\s+"
           r"(ли\s+)?(мои\s+|наши\s+)?(данн|файл|диск)|"
           # what one downloaded gone, or where to keep it: "the weights i downloaded are gone", «где хранить веса»
           r"\b(data|files?|datasets?|checkpoints?|weights|models?)\b[^.?!]{0,30}\b(gone|lost|deleted|wiped|disappear\w*"
           r"|vanish\w*)|\bwhere\s+(\w+\s+){0,4}(keep|store|put|save|persist)\b|"
           r"\b(данн|файл|датасет|чекпоинт|вес|модел)\w*\b[^.?!]{0,30}(пропад|исчез|удаля|стира|теря)\w*|"
           r"\bгде\s+(\w+\s+){0,3}(хранить|держать|сохранять|положить)")
DATA_FATE = _re(r"safe|kept|keep|stay|remain|delet|wip|eras|lost|lose|gone|persist|happen|back\s*up|vanish|disappear|"
                r"surviv|исчез|"
                r"сохран|удал|останут|остан|пропад|сотр|потер|будет\s+с|случится|денутся|бэкап")
AUTOMATIC = _re(r"автоматическ|\bсам[оа]?\b|automatic|by\s+itself|on\s+its\s+own")
REMIND = _re(r"напом[ни]|напомин|уведом|оповест|предупред|\bremind|notif|\balert|\bwarn|\bping\s+me")
GROUP = _re(r"групп|\bчат[еа]?\b|коллег|(мо[ея]й?|наш\w*|сво\w*|в|из)\s+команд[еыау]\b|\bадмин|участник|"
            r"\bgroup|\bteam|teammate|colleague|coworker|co-worker|\bchat\b|\badmins?\b|administrator|\bmembers?\b")
GROUP_CONTEXT = _re(r"ар[еи]нд|размещ|продл|[ао]станов|запуск|запуст|управля|доступ|видят|видеть|\brent|placement|"
                    r"\bstop|\bstart|\bextend|control|manage|\bsee\b|access")
LIST = _re(r"\bмои\s+(\w+\s+)?(аренд|размещ|сервер|сервак|инстанс)|"
           r"(список|перечень)\s+(\w+\s+)?(аренд|размещ|сервер|инстанс)|"
           r"(посмотреть|увидеть|глянуть|найти|показать|покажи)\s+(мои\s+|свои\s+)?(аренд|размещ|сервер|инстанс)|"
           r"(где|какие)\s+(мои|у\s+меня)\s+(\w+\s+)?(аренд|размещ|сервер|инстанс)|что\s+я\s+(уже\s+)?арендовал|"
           r"\bmy\s+(\w+\s+)?(rentals|placements|leases)\b|"
           r"\b(see|view|find|show|list|check)\s+(me\s+)?(all\s+)?(of\s+)?(my\s+|the\s+)?(rentals|placements|rented)|"
           r"\blist\s+of\s+(my\s+)?(rentals|placements|servers|instances)|\bwhat\s+(have|did)\s+i\s+rent|/placements|"
           # what one's rentals have cost so far: what /placements shows (paid until, accrued)
           r"\bсколько\s+(я|мы)\s+(уже\s+)?(потратил|заплатил|наплатил|проплатил)\w*|\bсколько\s+(уже\s+)?(набежало|накапало"
           r"|начислено|списано)|\bhow\s+much\s+(have\s+(i|we)|did\s+(i|we)|i'?ve|we'?ve)\s+(already\s+)?(spent|paid|been\s+"
           r"(charged|billed))|\bwhat\s+do\s+(i|we)\s+owe\b|"
           # how long it is paid for: «до какого числа оплачена моя аренда», "paid until when?"
           r"\bдо\s+какого\s+(числа|дня|момента|времени|срока)\s+(\w+\s+)?(оплачен|продлен|действу)\w*|\bpaid\s+(up\s+)?until\b")
RENT_HOW = _re(r"\bкак\s+(\w+\s+){0,2}(арендова|взять\s+(\w+\s+)?в\s+аренд|оформить\s+аренд|снять\s+(сервер|gpu|гпу)|"
               r"заказать\s+(сервер|gpu|гпу|видеокарт))|"
               r"\bhow\s+(do|can|would|should)\s+(i|we|you)\s+(\w+\s+)?(rent|book|lease)\b|\bhow\s+to\s+(rent|book|lease)\b|"
               r"\bhow\s+(do|can)\s+(i|we)\s+(get|order)\s+(a\s+|an\s+)?(\w+\s+)?(gpus?|servers?|instances?|machines?)\b|"
               r"\bwhere\s+(do|can)\s+i\s+rent")
# connecting to a rented machine: "how do i connect via ssh", «как подключиться к серверу по ssh?»
ACCESS = _re(r"\b(how|where|can\s+i|can\s+we)\b(\s+\S+){0,4}\s+(connect|ssh|log\s*in|login|sign\s+in|access|get\s+into)"
             r"\b(\s+\S+){0,5}\s+(via\s+|over\s+|with\s+|through\s+)?(ssh|jupyter|terminal|gpus?|instances?|servers?"
             r"|machines?|placements?|rentals?|box|node|vm|it)\b|"
             r"\b(how|where)\b(\s+\S+){0,3}\s+(ssh|jupyter)\b(?!\s+(is|means?|stands))|"
             r"\b(ip(\s+address)?|ssh\s+keys?|credentials|password|login)\s+(of|for|to)\s+(my|the|our)\s+(gpu|instance|server"
             r"|machine|placement|rental|box|node|vm)|"
             r"\b(как|куда|где|можно\s+ли)\b(\s+\S+){0,4}\s+(подключ|зайти|войти|залогин|попасть|законнект)\w*"
             r"(\s+\S+){0,4}\s+(по\s+ssh|ssh|через\s+ssh|юпитер|jupyter|к\s+(\w+\s+)?(сервер|машин|инстанс|gpu|гпу|видеокарт"
             r"|размещени|аренд|ноде|ноду|тачке))\w*|"
             r"\b(ip|айпи|адрес|пароль|логин|доступы|ssh-?ключ)\w*\s+(от\s+|к\s+|для\s+)?(мо\w+\s+|наш\w+\s+)?"
             r"(сервер|машин|инстанс|аренд|размещени|gpu|гпу)\w*")
# GPUs connected to each other ("how do i connect two gpus with nvlink"): an interconnect, not a login
INTERCONNECT = _re(r"nvlink|nvswitch|pcie|infiniband|\btogether\b|each\s+other|между\s+собой|друг\s+с\s+другом|"
                   r"\b(two|2|several|multiple|many|\d+)\s+(gpus|cards|nodes)|\b(две|двух|2|несколько|нескольк\w+|\d+)\s+"
                   r"(карт|gpu|гпу|видеокарт|нод)")
# how soon a rented GPU is there: "how long does it take to get a gpu after I pay?", «через сколько запустится?»
HOW_SOON = _re(r"\bhow\s+(long|soon|quickly|fast)\s+(\w+\s+){0,5}"
               r"(get|access|start|boot|ready|provision\w*|spin\w*\s+up)\w*\b(\s+\w+){0,6}\s+(gpus?|instances?|servers?|machines?|placements?|rentals?|after\s+(i\s+)?(pay|rent))\b|"
               r"\bhow\s+(long|soon|quickly|fast)\s+(\w+\s+){0,4}(gpus?|instances?|servers?|machines?|placements?|rentals?)"
               r"\s+(\w+\s+){0,2}(start|boot|ready|provision|spin|come\s+up|available|up\b)\w*|"
               r"\bкак\s+(быстро|скоро)\s+(\w+\s+){0,4}(получ|доступ|запуст|выда|предоставл|будет\s+готов)\w*|"
               r"через\s+сколько\s+(\w+\s+){0,4}(получ|доступ|запуст|выда|будет\s+готов|заработа)\w*")


# money back for time not used («вернёте деньги?», "do i get a refund for unused days?")
_REFUND = (r"\brefund|money\s+back|\bunused\s+(time|hours?|days?)|\bprorat"
           r"|возвра\w*\s+(\w+\s+){0,3}?(деньг|средств|оплат)|"
           r"верн[её]т\w*\s+(\w+\s+){0,2}?(деньг|средств)|неиспользованн\w*\s+(час|врем|дн|сут|срок)")
REFUND = _re(_REFUND)
# how time is billed: the unit, rounding, the shortest rental, a double charge
BILLING = _re(r"\bbill(ed|ing)?\b|\bcharg\w*\s+(per|by|for\s+(each|every|a\s+partial|partial))|"
              r"\bpartial\s+hours?|\bstarted\s+hours?|"
              # the shortest rental asked as one: "can I rent for just 1 hour?", «можно арендовать на час?»
              r"\b(just|only)\s+(for\s+)?(1|one|an?)\s+hour\b|\brent\w*\s+(\w+\s+)?for\s+(1|one|an?)\s+hour\b|"
              r"\bвсего\s+на\s+(один\s+|1\s+)?час|(арендова\w*|взять|снять)\s+(\w+\s+)?на\s+(один\s+|1\s+)?час(ок)?\b|"
              # a few hours asked as a rental's length, no GPU named: billed by the started hour («на 2 часа»)
              r"\bможно\s+(ли\s+)?(\w+\s+)?(арендова\w*|взять|снять)\s+(\w+\s+)?на\s+([1-5]|пару|два|три|четыре|пять"
              r"|несколько)\s+час(а|ов)?\b|"
              r"\b(can|could|may)\s+(i|we)\s+(\w+\s+){0,2}rent\w*\s+(\w+\s+){0,2}for\s+([1-5]|a\s+couple\s+of|two|three|four"
              r"|five|a\s+few)\s+hours?\b|"
              # shorter than the first hour: «меньше чем на час», «на полчаса», "less than an hour", "for 20 minutes"
              r"\b(меньше|менее|короче)\s+(чем\s+)?(на\s+)?(один\s+|1\s+)?час\w*|\bна\s+(полчаса|\d+\s+минут\w*)|"
              r"\b(less|shorter)\s+than\s+(an?|one|1)\s+hour|\bunder\s+an\s+hour|\bfor\s+(half\s+an\s+hour|\d+\s+min(ute)?s)\b|"
              r"\b(minimum|minimal|shortest|smallest|least)\s+(\w+\s+)?(rental|rent|billing|charge|term|period|time|"
              r"duration|order|booking|lease)|\bround\w*\s+(up|down)|"
              r"тарифиц|неполн\w*\s+час|"
              r"начат\w*\s+час|округл|\bминимальн\w*\s+(\w+\s+)?(срок|время|период|аренд|заказ|оплат|длительн)|"
              r"\bминимум\s+(на\s+)?(сколько|какой)|(самый\s+)?(короткий|маленький)\s+срок|"
              r"как\s+часто\s+(\w+\s+)?(списыва|спиш|снима|плат|оплач|выставля)|how\s+often\s+(\w+\s+){0,2}(charg|bill|pay)|"
              # when the money is taken: monthly, upfront («можно платить помесячно?», "can i pay monthly?")
              # the whole term paid at once: "do i pay for the whole month upfront", «платить за месяц сразу вперёд»
              r"\bpay\w*\s+(\w+\s+){1,4}(upfront|up\s+front|in\s+advance)\b|\bплат\w*\s+(\w+\s+){1,4}(вперёд|вперед|заранее)\b|"
              r"\b(pay|paying|paid|billed|charged|invoiced)\s+(monthly|weekly|upfront|in\s+advance|per\s+month|every\s+month|"
              r"by\s+the\s+month)|(плат\w*|оплач\w*|спис\w*)\s+(помесячно|ежемесячно|понедельно|вперёд|вперед|заранее|"
              r"раз\s+в\s+месяц|каждый\s+месяц)|(помесячн|ежемесячн|предварительн)\w*\s+оплат|предоплат|"
              # money back for time not used
              + _REFUND)
# spot capacity being taken back
SPOT = _re(r"\bспот\w*|\bspot\b|прерываем|interruptib|preemptib")
# whether spot can be relied on ("is spot safe for a 3 day training run?", «спот надёжный для обучения?»): it can be
# taken back, which is the answer
SPOT_RISK = _re(r"\bsafe\b|\bsafely\b|\brisk\w*|\breliab\w*|\bstable\b|\bguarantee\w*|надежн|надёжн|безопасн|рискован"
                r"|\bриск\w*|стабильн|\bопасн\w*|гарант\w*")
RECLAIMED = _re(r"отобр|отбер|отним|забер[уе]т|забрать|прерв(ут|ать|ет|ал|ан)|прерыва(ют|ет|ть|ни)|выкин|выгон|"
                r"вытесн|отключ\w*\s+посреди|остановят|\binterrupt(ed|ion|s)?\b|\bpreempt(ed|ion|s)?\b|\breclaim|"
                r"\bevict|taken\s+(away|back)|kick\w*\s+(\w+\s+)?(off|out)|\byank|\bpulled\b|\bterminated\b|"
                r"\bcut\s+off|отруб|вырубят|снимут|"
                r"\bget\s+killed|shut\s+down\s+(on|by)\s+(you|them)|take\s+(it|the\s+\w+)\s+(away|back)")


# paying before the time is used: a term paid up front
PREPAID = _re(r"заране|вперед|авансом|предоплат|\bupfront|\bup\s+front|\bprepa(y|id)|\bin\s+advance|\bcommit\w*|"
              r"\breserv\w*|фиксированн")
# a unit of time that is a billing unit only when paying is the subject ("answers take a minute" is not)
TIME_UNIT = _re(r"\bper\s+(minute|second)|\bby\s+the\s+(minute|second)|посекундн|поминутн|"
                r"\b(за|по)\s+(кажд\w+\s+)?(начат\w+\s+)?(минут|секунд)|почасов\w*\s+оплат|оплат\w*\s+почасов")
PAYING = _re(r"плат|оплат|тариф|списыв|спиш|сч[её]т|деньг|\bpa(y|id)|charg|cost|\bbill|invoice|стоим|\brent|аренд")
# the ways of paying the price list has, as customers name them
PAYING_MODE = _re(r"(?P<on_demand>\bon[\s-]?demand|по\s+требованию|почасов\w*|\bhourly\b|\bpay[\s-]as[\s-]you[\s-]go)|"
                  r"(?P<committed>\bcommit\w*|\breserved\b|\breservation|фиксированн\w*\s+срок\w*|\bрезерв\w*)|"
                  r"(?P<spot>\bspot\b|\bспот\w*|\binterruptible\b|прерываем\w*)")
_PAYING_MODES = {"on_demand": "on_demand", "committed": "committed", "spot": "spot"}
# what one of our ways of paying means ("what's a committed term?", «что значит on-demand в расчёте?»): the product's
# own word, not the glossary's (spot is the glossary's concept too)
# «коммит на 3 месяца», "a commitment of a month": a term said in slang (a commit alone may be git's)
_MODE = (r"(committed(\s+term)?|on[\s-]?demand|reserved|fixed[\s-]term|фиксированн\w*\s+срок\w*|по\s+требованию"
         r"|резерв\w*|коммит\w*\s+на\b|commit(ment)?\s+(for|of)\b)")
MODE_MEANING = _re(r"\bwhat('?s|\s+is|\s+are)\s+(an?\s+|the\s+)?\W?" + _MODE + r"\W?\s*(\?|$|in\b|mean)"
                   r"|\bwhat\s+does\s+\W?" + _MODE + r"\W?\s+mean|\bчто\s+(такое|значит|означает)\s+\W?" + _MODE
                   + r"|\b" + _MODE + r"\W?\s+(—\s+|-\s+)?(это\s+)?что(\s+такое|\s+значит)?\s*\??\s*$")
# a rental with a paid period: a committed term, or a term length said as what was rented for
FIXED_TERM = _re(r"\bcommit\w*|\breserved\b|\breservation|fixed[\s-]term|\bpaid\s+(period|term)|\bprepaid|"
                 r"\b(for|on)\s+(a|one|the|\d+|\w+\s+\w+)\s+(weeks?|months?)|\bterm\b|"
                 r"\b(rest|remainder)\s+of\s+(the|my)\s+(week|month|term|period)|\b(remaining|unused|left\s+over)\s+"
                 r"(days?|weeks?|time|period|term)|фиксированн|оплаченн|предоплач|\bсрок|"
                 r"(на|за)\s+(\S+\s+)?(недел|месяц)|остат\w*\s+(\w+\s+)?(дн|недел|месяц|срок|времен)|"
                 r"оставш\w+\s+(дн|недел|месяц|срок|врем)|неиспользованн|помесячн|понедельн|"
                 # ending it before its time: a term it had («отменю раньше», "cancel early")
                 r"раньше(\s+(срока|времени))?|досрочн|\bearly\b|\bearlier\b|before\s+(it|the\s+\w+)\s+(ends|is\s+over)")


def stop_depends_on_billing(text: str) -> bool:
    """A question about stopping to stop paying that names no paid period: whether the money stops depends
    on how the placement is billed (an hourly one stops billing, a committed term is paid in full), so it is
    answered with both, never with the committed term's bare "no"."""
    return not FIXED_TERM.search(_folded(text))


def stops_something_else(text: str) -> bool:
    """A stop of something other than a rental: training, generation, a context («остановить обучение на плато»,
    "stop the training when loss plateaus") — early stopping, a concept, not the stop rule."""
    text = _folded(text)
    return bool(STOP.search(text)) and not RENTAL.search(text) \
        and bool(NOT_RENTAL.search(RENTAL_PURPOSE.sub(" ", text)))


def _folded(text: str) -> str:
    """One spacing, е for ё: the form the topic patterns are written for."""
    return " ".join(text.replace("ё", "е").replace("Ё", "Е").split())


def billing_topic(text: str) -> BillingTopic | None:
    """How the product bills time ("is billing per minute or per hour?", «минимальный срок аренды?») or what
    becomes of spot capacity taken back («спот могут отобрать?»), or None."""
    text = _folded(text)
    if SPOT.search(text) and (RECLAIMED.search(text) or PREPAID.search(text) or SPOT_RISK.search(text)):
        return "spot"  # capacity taken back, or spot paid in advance («оплатить спот заранее на месяц»)
    # two ways of paying compared ("on-demand vs committed?", «чем спот отличается от почасовой?»)
    modes = {_PAYING_MODES[name] for match in PAYING_MODE.finditer(text)
             for name, value in match.groupdict().items() if value}
    if len(modes) >= 2 and not NOT_RENTAL.search(text):
        return "spot" if "spot" in modes else "billing"
    if MODE_MEANING.search(text) and not NOT_RENTAL.search(text):
        return "billing"
    billing = BILLING.search(text) or (TIME_UNIT.search(text) and PAYING.search(text))
    if billing and not NOT_RENTAL.search(text):
        return "billing"
    return None


STOP_IT = _re(r"^\W*(пожалуйста\s+|плиз\s+|please\s+|ok\s+|ок\s+)?(останови|выключи|отключи|стопни|вырубли|вырубай"
              r"|заверши"
              r"|stop|shut|kill|terminate|turn)\w*\s+(её|ее|его|их|это|(it|them|that|this)\b)")
# «что такое mig, правда что одну карту можно нарезать?»: a concept asked first; «что такое MIG и можно арендовать
# кусок H100?» still asks to rent a piece
RENTING = _re(r"ар[еи]нд|\brent|\bbook|\bснять|\bвзять|\bкупить|\bbuy")
DEFINITION_FIRST = _re(r"^\W*(что\s+такое|что\s+за|what\s+is|what'?s|what\s+are)\b")
HOW_SHORT = _re(r"^\W*(how\b|как\b|где\b|where\b|can\s+i\b|можно\s+ли\b)")


def lifecycle_topic(text: str) -> LifecycleTopic | None:
    """The rental-management question a message asks, or None (the whole message at once, not per sentence:
    «я арендовал на неделю. Можно продлить?» is one question about extending).

    Several can match; the more specific wins: who may act in a group, then reminders, then starting again
    (which usually mentions the stop before it), extending, stopping (unless it asks whether the end of the
    term stops it by itself), the end of the term, the list, renting. Words about training, context windows
    or memory ("restart training", "extend the context") make it a question about something else.
    """
    text = _folded(text)
    if not text:
        return None
    rental = bool(RENTAL.search(text))
    period = bool(PERIOD.search(text))
    other = bool(NOT_RENTAL.search(RENTAL_PURPOSE.sub(" ", text)))
    end = bool(END.search(text))
    # what is asked of a rental needs a rental, a term or a stop in the words: "it forgets what i said at the
    # start of a long chat with the bot", «перезапустил генерацию с тем же промптом» ask about something else
    about_rental = rental or period or bool(STOP.search(text))
    if GROUP.search(text) and GROUP_CONTEXT.search(text) and about_rental and not other:
        return "group"
    # «можно арендовать кусок H100?», "can I rent a MIG slice?": rentals are whole GPUs
    if FRACTION.search(text) and RENT_VERB.search(text) and not other \
            and not (DEFINITION_FIRST.search(text) and not RENTING.search(text)):
        return "whole_gpus"
    # "is my data safe when the rental ends?", «что будет с моими файлами после остановки?»
    if DATA.search(text) and DATA_FATE.search(text) and (end or STOP.search(text)):
        return "data"
    if REMIND.search(text) and (rental or period or end or EXTEND.search(text)):
        return "reminders"
    if RESIZE.search(text) and not other:  # «добавить ещё 4 карты к аренде» is not an extension
        return "resize"
    if START_AGAIN.search(text) and (about_rental or len(text.split()) <= 8 or HOW_SHORT.search(text)) and not other:
        return "start"
    if EXTEND.search(text) and not other:
        return "extend"
    if end and (rental or period) and AUTOMATIC.search(text):  # "does it stop by itself when the term ends?"
        return "end_of_term"
    # "how do i cancel": a short how-question about stopping needs no word for the rental
    asked_how = len(text.split()) <= 6 and HOW_SHORT.search(text) is not None
    # «останови её», "shut it down": a stop said to us of the rental talked about
    if STOP.search(text) and (rental or asked_how or STOP_IT.search(text)) and not other:
        return "stop"
    if end and (rental or period) and not other:
        return "end_of_term"
    if LIST.search(text):
        return "list"
    if HOW_SOON.search(text):
        return "how_soon"
    if ACCESS.search(text) and not other and not INTERCONNECT.search(text):
        return "access"
    if RENT_HOW.search(text):
        return "rent"
    return None


# ---- the answer ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class GlossaryQuote:
    """A sentence of a glossary entry, word for word (``quote``, Russian), and the curator's English rendering
    (``en``, from rules.yaml: a translation, never presented as the glossary's words)."""

    entry_id: str
    term: str
    source: str
    quote: str
    en: str | None


@dataclass(frozen=True)
class LifecycleAnswer:
    topic: LifecycleTopic
    facts: tuple[Phrase, ...]  # the product's own rules, as catalog phrases
    quotes: tuple[GlossaryQuote, ...]  # what the glossary says about it, verbatim
    commands: tuple[str, ...]  # the commands that do it (see command_front for where each works)
    caveats: tuple[Caveat, ...] = ()  # the quoted entries' seed disclaimers, verbatim
    catalogs: tuple[CatalogSource, ...] = ()  # where the facts' figures come from besides the product's rules


def answer_lifecycle(topic: LifecycleTopic, rules: RuleBook) -> LifecycleAnswer:
    quotes: list[GlossaryQuote] = []
    caveats: list[Caveat] = []
    for rule_id in TOPIC_RULES[topic]:
        rule = next((r for r in rules.rules() if r.id == rule_id), None)
        if rule is None:
            continue
        # the rule book finds a rule's entry only through a question; the rule's own sentence is one that is
        # about it (tests check it). No entry, no quote: the glossary does not say it any more.
        found = next((a for a in rules.match(rule.quote) if a.rule.id == rule.id), None)
        if found is None:
            continue
        quotes.append(GlossaryQuote(entry_id=found.entry.id, term=found.entry.term, source=found.entry.source,
                                    quote=rule.quote, en=rule.en or None))
        caveats.extend(c for c in found.caveats if c not in caveats)
    return LifecycleAnswer(topic=topic, facts=TOPIC_FACTS[topic], quotes=tuple(quotes),
                           commands=TOPIC_COMMANDS[topic], caveats=tuple(caveats),
                           catalogs=TOPIC_CATALOGS.get(topic, ()))


def render_lifecycle(answer: LifecycleAnswer, lang: Lang, markup: Markup = PLAIN) -> str:
    """The title, the glossary's words (verbatim, by entry), the product's rules, the commands, the caveats."""
    parts = [markup.bold(t(f"lifecycle_title_{answer.topic}", lang))]
    introduced: set[str] = set()
    for quote in answer.quotes:
        if quote.entry_id not in introduced:  # two sentences of one entry: one introduction
            introduced.add(quote.entry_id)
            parts.append(markup.text(t("lifecycle_glossary_intro", lang, term=quote.term)))
        parts.append(markup.quote(quote.quote))
        if lang == "en" and quote.en:
            parts.append(markup.italic(t("lifecycle_translation", lang, text=quote.en)))
    if answer.quotes:
        sources = dict.fromkeys(f"{quote.term} — {source_title(quote.source, lang)}" for quote in answer.quotes)
        parts.append(markup.italic(t("lifecycle_glossary_source", lang, sources="; ".join(sources))))
    parts.append("")
    parts.append(markup.bold(t("lifecycle_product_rules", lang)))
    parts.extend(markup.text(f"• {fact.render(lang)}") for fact in answer.facts)
    if answer.catalogs:
        catalogs = "; ".join(t(f"source_{catalog}", lang) for catalog in answer.catalogs)
        parts.append(markup.italic(f"{t('source_label', lang)}: {catalogs}."))
    if answer.commands:
        parts.append("")
        parts.append(markup.bold(t("lifecycle_commands", lang)))
        parts.extend(f"• {markup.code(command)} — {markup.text(t(f'lifecycle_front_{command_front(command)}', lang))}"
                     for command in answer.commands)
    if answer.caveats:
        parts.append("")
        parts.append(render_caveats(answer.caveats, lang, markup))
    return "\n".join(parts)
