"""A local Telegram Bot API server for tests: real HTTP, real Bot API JSON shapes, recorded calls.

The bot under test points ``TELEGRAM_API_BASE`` at :attr:`TelegramStub.base_url`; aiogram then calls
``{base}/bot{token}/{method}``. Tests push updates (served through ``getUpdates`` long polling), read
every call the bot made, and inject faults (429 with ``retry_after``, 5xx, dropped connections, delays).
The stub enforces the limits that break real bots: 4096 characters after entity parsing, valid HTML in
``parse_mode=HTML``, "message is not modified" on no-op edits, 1-64 byte ``callback_data``.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import json
import time
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import TYPE_CHECKING, Any, cast

from aiohttp import web

BOT_ID = 7000000001
BOT_USERNAME = "anchorgpu_test_bot"
NUMERIC_FIELDS = {"chat_id", "message_id", "message_thread_id", "user_id", "offset", "limit", "timeout",
                  "draft_id", "reply_to_message_id", "cache_time", "receiver_user_id", "ephemeral_message_id"}
ALLOWED_TAGS = {"b", "strong", "i", "em", "u", "ins", "s", "strike", "del", "span", "tg-spoiler", "a",
                "code", "pre", "blockquote", "tg-emoji"}


class BotAPIError(Exception):
    def __init__(self, code: int, description: str, parameters: dict[str, Any] | None = None) -> None:
        super().__init__(description)
        self.code = code
        self.description = description
        self.parameters = parameters


@dataclass
class Call:
    method: str
    params: dict[str, Any]
    ts: float
    files: dict[str, int] = field(default_factory=dict)  # field name -> size in bytes
    content_type: str = ""


@dataclass
class Fault:
    status: int = 429
    retry_after: int | None = None
    description: str | None = None
    drop_connection: bool = False
    delay_s: float = 0.0
    raw_body: str | None = None  # answered as is: what a proxy or an emulator says instead of a Bot API body


class _TelegramHTML(HTMLParser):
    """Validates Bot API HTML the way Telegram does: known tags, balanced, known entities only."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=False)
        self.stack: list[str] = []
        self.text_parts: list[str] = []
        self.error: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in ALLOWED_TAGS:
            self.error = self.error or f"Unsupported start tag \"{tag}\""
        self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.error = self.error or f"Can't find end tag corresponding to start tag \"{tag}\""
            return
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        if "<" in data or ">" in data:
            self.error = self.error or "Unexpected end tag"
        self.text_parts.append(data)

    def handle_entityref(self, name: str) -> None:
        mapping = {"lt": "<", "gt": ">", "amp": "&", "quot": '"'}
        if name not in mapping:
            self.error = self.error or f"Unsupported entity &{name};"
        self.text_parts.append(mapping.get(name, "?"))

    def handle_charref(self, name: str) -> None:
        self.text_parts.append("?")


def parse_html(text: str) -> str:
    """The plain text Telegram would show, or BotAPIError 400 "can't parse entities"."""
    if text.count("<") != text.count(">"):
        raise BotAPIError(400, "Bad Request: can't parse entities: unbalanced angle brackets")
    parser = _TelegramHTML()
    parser.feed(text)
    parser.close()
    if parser.error is None and parser.stack:
        parser.error = f"Can't find end tag corresponding to start tag \"{parser.stack[-1]}\""
    if parser.error:
        raise BotAPIError(400, f"Bad Request: can't parse entities: {parser.error}")
    return "".join(parser.text_parts)


def visible_length(text: str, parse_mode: str | None) -> int:
    plain = parse_html(text) if parse_mode == "HTML" else text
    # Telegram counts UTF-16 code units
    return len(plain.encode("utf-16-le")) // 2



# ---- Bot API 10.3: drafts with a stop button, stopped_message_generation, ephemeral messages ----------------
# Kept in one mixin, apart from the rest of the stub. Where Telegram's documentation is silent the stub is
# stricter than the real server and says so: better a test that fails here than a bot that fails there.
EPHEMERAL_WINDOW_S = 15.0  # an eligible action (a button press, a reply to an ephemeral message) lasts 15 s
BUTTON_STYLES = {"danger", "success", "primary"}


@dataclass
class IssuedCallback:
    user_id: int
    chat_id: int | None
    ts: float


class _DraftsAndEphemeral:
    """sendMessageDraft (``can_stop``/``keep_on_stop``), a stop button a test can press, and ephemeral
    messages (``ephemeral_message_parameters``: message_id 0, ``ephemeral_message_id``, ``receiver_user``),
    refused like Telegram does: outside groups, and without an eligible action unless the bot is an admin."""

    bot_user: dict[str, Any]
    admins: dict[int, set[int]]
    calls: list[Call]

    def push_update(self, update: dict[str, Any], update_id: int | None = None) -> int:
        raise NotImplementedError

    def _check_text(self, text: str, parse_mode: str | None, allow_empty: bool = False) -> None:
        raise NotImplementedError

    @functools.cached_property
    def drafts(self) -> dict[tuple[int, int], dict[str, Any]]:
        """(chat_id, draft_id) -> the draft as shown now: text, can_stop, keep_on_stop, thread."""
        return {}

    @functools.cached_property
    def ephemeral(self) -> dict[tuple[int, int, int], dict[str, Any]]:
        """(chat_id, receiver_user_id, ephemeral_message_id) -> the ephemeral message as it is now."""
        return {}

    @functools.cached_property
    def issued_callbacks(self) -> dict[str, IssuedCallback]:
        return {}

    @functools.cached_property
    def _ephemeral_ids(self) -> itertools.count[int]:
        return itertools.count(1)

    # ---- test API ------------------------------------------------------------------------------------
    def press_draft_stop(self, chat_id: int, draft_id: int | None = None) -> int:
        """The user presses the stop button of the chat's draft: the real-shaped update Telegram sends.

        Only a live draft sent with ``can_stop`` has that button; a final message dismisses the draft.
        """
        live = [(key, draft) for key, draft in self.drafts.items() if key[0] == chat_id
                and (draft_id is None or key[1] == draft_id)]
        if not live:
            raise AssertionError(f"no live draft in chat {chat_id}: nothing to press")
        (_, shown_id), draft = max(live, key=lambda item: item[1]["ts"])
        if not draft["can_stop"]:
            raise AssertionError(f"draft {shown_id} was sent without can_stop: it has no stop button")
        event: dict[str, Any] = {"chat": {"id": chat_id, "type": "private", "first_name": "Test"},
                                 "draft_id": shown_id}
        if draft.get("message_thread_id"):
            event["message_thread_id"] = draft["message_thread_id"]
        return self.push_update({"stopped_message_generation": event})

    def ephemeral_to(self, user_id: int, chat_id: int | None = None) -> list[dict[str, Any]]:
        """The ephemeral messages a member received (current state), oldest first."""
        return [m for (chat, receiver, _), m in sorted(self.ephemeral.items())
                if receiver == user_id and (chat_id is None or chat == chat_id)]

    def _issue_callback(self, query_id: str, user_id: int, message: dict[str, Any]) -> None:
        chat = message.get("chat") or {}
        self.issued_callbacks[query_id] = IssuedCallback(user_id, chat.get("id"), time.monotonic())

    # ---- checks used by the general handlers ---------------------------------------------------------------
    def _check_button(self, button: dict[str, Any]) -> None:
        style = button.get("style")
        if style is not None and style not in BUTTON_STYLES:
            raise BotAPIError(400, "Bad Request: BUTTON_STYLE_INVALID")

    def _dismiss_drafts(self, chat_id: int) -> None:
        """Any real message from the bot dismisses the chat's drafts."""
        for key in [key for key in self.drafts if key[0] == chat_id]:
            del self.drafts[key]

    # ---- methods --------------------------------------------------------------------------------------------
    async def _m_sendMessageDraft(self, params: dict[str, Any]) -> bool:
        chat_id = int(params.get("chat_id", 0))
        if chat_id <= 0:  # what Telegram answers for a group (fastagent-sh/fastagent#96)
            raise BotAPIError(400, "Bad Request: TEXTDRAFT_PEER_INVALID")
        draft_id = int(params.get("draft_id") or 0)
        if not draft_id:
            raise BotAPIError(400, "Bad Request: draft_id must be non-zero")
        for flag in ("can_stop", "keep_on_stop"):
            if flag in params and not isinstance(params[flag], bool):
                raise BotAPIError(400, f"Bad Request: field \"{flag}\" must be of type Boolean")
        # stricter than the docs say: keeping a draft "on stop" means nothing without a stop button
        if params.get("keep_on_stop") and not params.get("can_stop"):
            raise BotAPIError(400, "Bad Request: keep_on_stop requires can_stop")
        text = str(params.get("text", ""))
        self._check_text(text, params.get("parse_mode"), allow_empty=True)
        self.drafts[(chat_id, draft_id)] = {
            "text": text, "can_stop": bool(params.get("can_stop")), "keep_on_stop": bool(params.get("keep_on_stop")),
            "message_thread_id": params.get("message_thread_id"), "ts": time.monotonic()}
        return True

    def _send_ephemeral(self, params: dict[str, Any], content: dict[str, Any]) -> dict[str, Any]:
        chat_id = int(params["chat_id"])
        options = params.get("ephemeral_message_parameters")
        if not isinstance(options, dict) or "receiver_user_id" not in options:
            raise BotAPIError(400, "Bad Request: receiver_user_id is required")
        receiver = int(options["receiver_user_id"])
        if chat_id > 0:
            raise BotAPIError(400, "Bad Request: ephemeral messages can be sent only to groups")
        query_id = options.get("callback_query_id")
        given = params.get("reply_parameters")
        reply: dict[str, Any] = given if isinstance(given, dict) else {}
        now = time.monotonic()
        if query_id is not None:
            issued = self.issued_callbacks.get(str(query_id))
            if issued is None or issued.user_id != receiver or issued.chat_id != chat_id:
                raise BotAPIError(400, "Bad Request: QUERY_ID_INVALID")
            if now - issued.ts > EPHEMERAL_WINDOW_S:
                raise BotAPIError(400, "Bad Request: query is too old and response timeout expired")
        elif reply.get("ephemeral_message_id"):
            if (chat_id, receiver, int(reply["ephemeral_message_id"])) not in self.ephemeral:
                raise BotAPIError(400, "Bad Request: message to be replied not found")
        elif int(self.bot_user["id"]) not in self.admins[chat_id]:
            # the stub's wording: only an administrator bot may send one without an eligible action
            raise BotAPIError(400, "Bad Request: not enough rights to send ephemeral messages")
        ephemeral_id = next(self._ephemeral_ids)
        message: dict[str, Any] = {
            "message_id": 0, "ephemeral_message_id": ephemeral_id, "date": int(time.time()),
            "chat": {"id": chat_id, "type": "supergroup"}, "from": self.bot_user,
            "receiver_user": {"id": receiver, "is_bot": False, "first_name": "Test"}, **content}
        if params.get("message_thread_id"):
            message["message_thread_id"] = params["message_thread_id"]
        if isinstance(params.get("reply_markup"), dict) and "inline_keyboard" in params["reply_markup"]:
            message["reply_markup"] = params["reply_markup"]
        self.ephemeral[(chat_id, receiver, ephemeral_id)] = message
        return message

    def _find_ephemeral(self, params: dict[str, Any]) -> tuple[tuple[int, int, int], dict[str, Any]]:
        key = (int(params["chat_id"]), int(params["receiver_user_id"]), int(params["ephemeral_message_id"]))
        message = self.ephemeral.get(key)
        if message is None:
            raise BotAPIError(400, "Bad Request: message not found")
        return key, message

    async def _m_editEphemeralMessageText(self, params: dict[str, Any]) -> bool:
        _, message = self._find_ephemeral(params)
        text = str(params.get("text", ""))
        self._check_text(text, params.get("parse_mode"))
        message["text"] = text
        message["edit_date"] = int(time.time())
        return True

    async def _m_deleteEphemeralMessage(self, params: dict[str, Any]) -> bool:
        key, _ = self._find_ephemeral(params)
        del self.ephemeral[key]
        return True


# ---- Bot API 10.x: rich messages, guest mode, private-chat topics -----------------------------------------
RICH_ALIGN = {"left", "center", "right"}
RICH_VALIGN = {"top", "middle", "bottom"}
RICH_MAX_BLOCKS = 500  # per message, counting nested blocks, list items and table rows
RICH_MAX_COLUMNS = 20
RICH_MAX_CHARS = 32_768


def rich_plain(value: Any) -> str:
    """The visible text of rich text (a string, a list, or a RichText object with ``text``)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(rich_plain(item) for item in value)
    if isinstance(value, dict):
        return rich_plain(value.get("text"))
    raise BotAPIError(400, f"Bad Request: can't parse rich text: {type(value).__name__}")


def rich_tables(blocks: list[dict[str, Any]]) -> list[list[list[dict[str, Any]]]]:
    """The cells of every table block, in order (nested blocks included)."""
    tables = []
    for block in blocks:
        if block.get("type") == "table":
            tables.append(block["cells"])
        for nested in _nested_blocks(block):
            tables.extend(rich_tables(nested))
    return tables


def _nested_blocks(block: dict[str, Any]) -> list[list[dict[str, Any]]]:
    nested = []
    if isinstance(block.get("blocks"), list):
        nested.append(block["blocks"])
    for item in block.get("items") or []:
        nested.append(item.get("blocks") or [])
    return nested


class _RichBlockCount:
    def __init__(self) -> None:
        self.blocks = 0
        self.chars = 0

    def text(self, value: Any) -> None:
        self.chars += len(rich_plain(value).encode("utf-16-le")) // 2

    def walk(self, blocks: Any, depth: int = 1) -> None:
        if not isinstance(blocks, list):
            raise BotAPIError(400, "Bad Request: rich message blocks must be an array")
        if depth > 16:
            raise BotAPIError(400, "Bad Request: RICH_MESSAGE_TOO_DEEP")
        for block in blocks:
            if not isinstance(block, dict) or not block.get("type"):
                raise BotAPIError(400, "Bad Request: rich block type is required")
            self.blocks += 1
            for key in ("text", "caption", "summary", "credit", "expression"):
                if key in block:
                    self.text(block[key])
            if block["type"] == "table":
                self.table(block)
            for nested in _nested_blocks(block):
                self.blocks += 1 if nested is not block.get("blocks") else 0  # a list item counts
                self.walk(nested, depth + 1)

    def table(self, block: dict[str, Any]) -> None:
        cells = block.get("cells")
        if not isinstance(cells, list) or not cells:
            raise BotAPIError(400, "Bad Request: table cells must be a non-empty array of arrays")
        for row in cells:
            if not isinstance(row, list):
                raise BotAPIError(400, "Bad Request: table row must be an array")
            if len(row) > RICH_MAX_COLUMNS:
                raise BotAPIError(400, "Bad Request: RICH_TABLE_TOO_MANY_COLUMNS")
            self.blocks += 1  # every row counts against the 500
            for cell in row:
                if cell.get("align") not in RICH_ALIGN or cell.get("valign") not in RICH_VALIGN:
                    raise BotAPIError(400, "Bad Request: table cell align and valign are required")
                self.text(cell.get("text"))


class BotApi10Methods:
    """sendRichMessage, answerGuestQuery, createForumTopic (private chats) and the updates that go with them.

    Defaults are class attributes so that the stub's constructor is unchanged; tests switch them per stub.
    """

    # Like a server before Bot API 10.1 by default: sendRichMessage is "404 Not Found" (every older e2e test
    # then checks the HTML fallback); a test that wants rich messages sets ``rich_messages = True``.
    rich_messages: bool = False
    refuse_rich: int = 0  # the next N sendRichMessage calls get a 400 (the per-chat fallback)
    if TYPE_CHECKING:  # provided by TelegramStub
        calls: list[Call]
        bot_user: dict[str, Any]
        files: dict[str, bytes]
        photo_uploads: int
        _message_ids: dict[int, itertools.count[int]]

        def push_update(self, update: dict[str, Any], update_id: int | None = None) -> int: ...

        def _check_markup(self, markup: Any) -> None: ...

        def _store(self, params: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]: ...

    @property
    def guest_queries(self) -> dict[str, dict[str, Any]]:
        """Guest query id -> the triggering message; ``answered`` is set once it was answered."""
        if "_guest_queries" not in self.__dict__:
            self.__dict__["_guest_queries"] = {}
        return self.__dict__["_guest_queries"]

    @property
    def guest_posts(self) -> list[dict[str, Any]]:
        """What answerGuestQuery posted into the guest chats (the inline message as Telegram shows it)."""
        if "_guest_posts" not in self.__dict__:
            self.__dict__["_guest_posts"] = []
        return self.__dict__["_guest_posts"]

    @property
    def topics(self) -> dict[int, dict[int, str]]:
        """Topics created with createForumTopic: chat id -> {message_thread_id: name}."""
        if "_topics" not in self.__dict__:
            self.__dict__["_topics"] = defaultdict(dict)
        return self.__dict__["_topics"]

    # ---- test API ----------------------------------------------------------------------------------------
    def guest_message_update(self, text: str, *, chat_id: int = -900, user_id: int = 900,
                             chat_type: str = "supergroup", language_code: str = "ru") -> str:
        """Someone @mentions the bot in a chat it is not in (Bot API 10.0); returns the guest_query_id."""
        query_id = f"gq-{time.monotonic_ns()}"
        chat: dict[str, Any] = {"id": chat_id, "type": chat_type}
        if chat_type != "private":
            chat["title"] = "Somebody else's chat"
        msg: dict[str, Any] = {
            "message_id": next(self._message_ids[chat_id]), "date": int(time.time()), "chat": chat,
            "from": {"id": user_id, "is_bot": False, "first_name": "Guest", "language_code": language_code},
            "text": text, "guest_query_id": query_id,
        }
        mention = "@" + self.bot_user["username"]
        if mention in text:
            offset = len(text[: text.index(mention)].encode("utf-16-le")) // 2
            msg["entities"] = [{"type": "mention", "offset": offset, "length": len(mention)}]
        self.guest_queries[query_id] = {"message": msg, "answered": False}
        self.push_update({"guest_message": msg})
        return query_id

    def rich_calls(self, chat_id: int | None = None) -> list[Call]:
        return [c for c in self.calls if c.method == "sendRichMessage"
                and (chat_id is None or c.params.get("chat_id") == chat_id)]

    @staticmethod
    def rich_text(call: Call) -> str:
        """Everything a rich message shows, headings, paragraphs and table cells, one line per block/row."""
        lines: list[str] = []

        def walk(blocks: list[dict[str, Any]]) -> None:
            for block in blocks:
                if block.get("type") == "table":
                    if block.get("caption"):
                        lines.append(rich_plain(block["caption"]))
                    lines.extend(" | ".join(rich_plain(cell.get("text")) for cell in row) for row in block["cells"])
                elif "text" in block:
                    lines.append(rich_plain(block["text"]))
                for nested in _nested_blocks(block):
                    walk(nested)

        walk(call.params["rich_message"].get("blocks") or [])
        return "\n".join(lines)

    # ---- methods -----------------------------------------------------------------------------------------
    async def _m_sendRichMessage(self, params: dict[str, Any]) -> dict[str, Any]:
        if not self.rich_messages:
            raise BotAPIError(404, "Not Found")
        if self.refuse_rich > 0:
            self.refuse_rich -= 1
            raise BotAPIError(400, "Bad Request: RICH_MESSAGE_INVALID")
        rich = params.get("rich_message")
        if not isinstance(rich, dict):
            raise BotAPIError(400, "Bad Request: rich_message is required")
        given = [key for key in ("html", "markdown", "blocks") if rich.get(key) is not None]
        if len(given) != 1:
            raise BotAPIError(400, "Bad Request: exactly one of html, markdown and blocks must be given")
        count = _RichBlockCount()
        if "blocks" in given:
            count.walk(rich["blocks"])
        else:
            count.text(rich[given[0]])
            count.blocks = 1
        if count.blocks > RICH_MAX_BLOCKS:
            raise BotAPIError(400, "Bad Request: RICH_MESSAGE_TOO_MANY_BLOCKS")
        if count.chars > RICH_MAX_CHARS:
            raise BotAPIError(400, "Bad Request: RICH_MESSAGE_TOO_LONG")
        self._check_markup(params.get("reply_markup"))
        # received back as a RichMessage: the same block shapes (html/markdown arrive parsed; kept as one paragraph)
        blocks = [self._received_block(block) for block in rich["blocks"]] if "blocks" in given \
            else [{"type": "paragraph", "text": str(rich[given[0]])}]
        extra: dict[str, Any] = {"rich_message": {"blocks": blocks}}
        if params.get("message_thread_id"):
            extra["is_topic_message"] = True
        return self._store(params, extra)

    def _received_block(self, block: dict[str, Any]) -> dict[str, Any]:
        """A block as the returned RichMessage holds it: a photo block's InputMediaPhoto becomes PhotoSizes
        (an ``attach://`` upload is kept and gets a file_id; an unknown file_id is refused like sendPhoto)."""
        if block.get("type") != "photo":
            return block
        media = block.get("photo")
        if not isinstance(media, dict) or media.get("type") != "photo" or not media.get("media"):
            raise BotAPIError(400, "Bad Request: photo block needs an InputMediaPhoto")
        reference = str(media["media"])
        if reference.startswith("attach://"):
            file_id = f"photo-{len(self.files) + 1}"
            self.files[file_id] = b"uploaded photo"
            self.photo_uploads += 1
        elif reference in self.files:
            file_id = reference
        else:
            raise BotAPIError(400, "Bad Request: wrong file identifier/HTTP URL specified")
        received = {key: value for key, value in block.items() if key != "photo"}
        received["photo"] = [{"file_id": file_id, "file_unique_id": f"u{file_id}", "width": 1, "height": 1}]
        return received

    async def _m_answerGuestQuery(self, params: dict[str, Any]) -> dict[str, Any]:
        query = self.guest_queries.get(str(params.get("guest_query_id")))
        if query is None:
            raise BotAPIError(400, "Bad Request: QUERY_ID_INVALID")
        if query["answered"]:  # one answer per query
            raise BotAPIError(400, "Bad Request: QUERY_ALREADY_ANSWERED")
        result = params.get("result")
        if not isinstance(result, dict) or not result.get("type") or not result.get("id"):
            raise BotAPIError(400, "Bad Request: RESULT_INVALID")
        if not 1 <= len(str(result["id"]).encode()) <= 64:
            raise BotAPIError(400, "Bad Request: RESULT_ID_INVALID")
        content = result.get("input_message_content") or {}
        if result["type"] == "article":
            if not result.get("title") or not content:
                raise BotAPIError(400, "Bad Request: article needs a title and input_message_content")
            if "message_text" in content:
                length = visible_length(str(content["message_text"]), content.get("parse_mode"))
                if not 1 <= length <= 4096:
                    raise BotAPIError(400, "Bad Request: MESSAGE_TOO_LONG" if length else
                                           "Bad Request: message text is empty")
        self._check_markup(result.get("reply_markup"))
        query["answered"] = True
        trigger = query["message"]
        inline_message_id = f"gim-{len(self.guest_posts) + 1}"
        self.guest_posts.append({
            "inline_message_id": inline_message_id, "chat": trigger["chat"], "from": self.bot_user,
            "guest_bot_caller_user": trigger["from"], "result": result,
            "text": content.get("message_text"), "parse_mode": content.get("parse_mode"),
        })
        return {"inline_message_id": inline_message_id}

    async def _m_createForumTopic(self, params: dict[str, Any]) -> dict[str, Any]:
        chat_id = int(params["chat_id"])
        name = str(params.get("name") or "")
        if not 1 <= len(name) <= 128:
            raise BotAPIError(400, "Bad Request: TOPIC_NAME_INVALID")
        if chat_id > 0 and not self.bot_user.get("has_topics_enabled"):
            raise BotAPIError(400, "Bad Request: the chat is not a forum")
        thread_id = next(self._message_ids[chat_id])  # a topic's id is the id of its service message
        self.topics[chat_id][thread_id] = name
        return {"message_thread_id": thread_id, "name": name, "icon_color": 7322096}



class TelegramStub(_DraftsAndEphemeral, BotApi10Methods):
    def __init__(self, *, bot_username: str = BOT_USERNAME, bot_id: int = BOT_ID) -> None:
        self.bot_user = {"id": bot_id, "is_bot": True, "first_name": "AnchorGPU", "username": bot_username,
                         "can_join_groups": True, "can_read_all_group_messages": False,
                         "supports_inline_queries": True}
        self.calls: list[Call] = []
        self._updates: list[dict[str, Any]] = []
        self._update_ids = itertools.count(1)
        self._message_ids: dict[int, itertools.count[int]] = defaultdict(lambda: itertools.count(1000))
        self._messages: dict[tuple[int, int], dict[str, Any]] = {}
        self._new_update = asyncio.Condition()
        self._call_event = asyncio.Condition()
        self._faults: dict[str, deque[Fault]] = defaultdict(deque)
        self.admins: dict[int, set[int]] = defaultdict(set)
        self.creators: dict[int, set[int]] = defaultdict(set)  # getChatMember status "creator"
        self._runner: web.AppRunner | None = None
        self.port = 0
        self.tokens_seen: set[str] = set()
        # called with every recorded call (benchmarks match replies without rescanning ``calls``)
        self.listeners: list[Callable[[Call], None]] = []
        # opt-in flood control (see enable_flood_control); 429s it produced, by method
        self.flood_control = False
        self.flood_429s: dict[str, int] = defaultdict(int)
        self._sent_at: dict[int, deque[float]] = defaultdict(deque)
        self.files: dict[str, bytes] = {}  # file_id -> content, served by getFile + /file/bot…/documents/…
        self.photo_uploads = 0

    # ---- lifecycle -------------------------------------------------------------------------------
    async def start(self, host: str = "127.0.0.1", port: int = 0) -> str:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/bot{token}/{method}", self._handle)
        app.router.add_route("*", "/file/bot{token}/{path:.*}", self._file)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, port)
        await site.start()
        server = cast("asyncio.Server | None", site._server)  # aiohttp types it as the abstract base
        sockets = server.sockets if server is not None else ()
        self.port = sockets[0].getsockname()[1]
        return self.base_url

    async def stop(self) -> None:
        if self._runner:
            await self._runner.cleanup()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # ---- test API --------------------------------------------------------------------------------
    def push_update(self, update: dict[str, Any], update_id: int | None = None) -> int:
        """Queue an update; pass an old ``update_id`` to simulate a redelivery."""
        uid = update_id if update_id is not None else next(self._update_ids)
        self._updates.append({"update_id": uid, **update})

        async def notify() -> None:
            async with self._new_update:
                self._new_update.notify_all()

        asyncio.get_running_loop().create_task(notify())
        return uid

    def message_update(self, text: str, *, chat_id: int = 100, user_id: int = 100, chat_type: str = "private",
                       language_code: str = "ru", thread_id: int | None = None,
                       reply_to: dict[str, Any] | None = None, message_id: int | None = None,
                       username: str = "tester", edited: bool = False) -> int:
        chat: dict[str, Any] = {"id": chat_id, "type": chat_type}
        if chat_type == "private":
            chat.update(first_name="Test", username=username)
        else:
            chat.update(title="Team chat", is_forum=thread_id is not None)
        msg: dict[str, Any] = {
            "message_id": message_id or next(self._message_ids[chat_id]),
            "date": int(time.time()),
            "chat": chat,
            "from": {"id": user_id, "is_bot": False, "first_name": "Test", "username": username,
                     "language_code": language_code},
            "text": text,
        }
        entities = []
        if text.startswith("/"):
            command = text.split()[0]
            entities.append({"type": "bot_command", "offset": 0, "length": len(command.encode("utf-16-le")) // 2})
        mention = "@" + self.bot_user["username"]
        if mention in text and not text.startswith("/"):
            offset = len(text[: text.index(mention)].encode("utf-16-le")) // 2
            entities.append({"type": "mention", "offset": offset, "length": len(mention)})
        if entities:
            msg["entities"] = entities
        if thread_id is not None:
            msg["message_thread_id"] = thread_id
            msg["is_topic_message"] = True
        if reply_to is not None:
            msg["reply_to_message"] = reply_to
        if edited:
            msg["edit_date"] = int(time.time())
            return self.push_update({"edited_message": msg})
        return self.push_update({"message": msg})

    def document_update(self, content: bytes, file_name: str, *, caption: str | None = None, chat_id: int = 100,
                        user_id: int = 100, chat_type: str = "private", language_code: str = "ru") -> int:
        """A user sends a file; the bot can fetch it with getFile and a download from /file/."""
        file_id = f"doc-{len(self.files) + 1}"
        self.files[file_id] = content
        chat: dict[str, Any] = {"id": chat_id, "type": chat_type}
        msg: dict[str, Any] = {
            "message_id": next(self._message_ids[chat_id]), "date": int(time.time()), "chat": chat,
            "from": {"id": user_id, "is_bot": False, "first_name": "Test", "language_code": language_code},
            "document": {"file_id": file_id, "file_unique_id": f"u{file_id}", "file_name": file_name,
                         "file_size": len(content)},
        }
        if caption:
            msg["caption"] = caption
            if caption.startswith("/"):
                length = len(caption.split()[0].encode("utf-16-le")) // 2
                msg["caption_entities"] = [{"type": "bot_command", "offset": 0, "length": length}]
        return self.push_update({"message": msg})

    def callback_update(self, data: str, *, message: dict[str, Any], user_id: int = 100,
                        language_code: str = "ru") -> int:
        query_id = str(next(self._update_ids) * 7919)
        self._issue_callback(query_id, user_id, message)
        return self.push_update({"callback_query": {
            "id": query_id, "chat_instance": "ci-1", "data": data, "message": message,
            "from": {"id": user_id, "is_bot": False, "first_name": "Test", "language_code": language_code},
        }})

    def inline_update(self, query: str, *, user_id: int = 100, language_code: str = "ru") -> int:
        return self.push_update({"inline_query": {
            "id": f"iq-{time.monotonic_ns()}", "query": query, "offset": "",
            "from": {"id": user_id, "is_bot": False, "first_name": "Test", "language_code": language_code},
        }})

    def enable_flood_control(self, enabled: bool = True) -> None:
        """Answer 429 like Telegram when a chat gets messages or edits too fast (Bots FAQ limits): more
        than 1 a second per chat (bursts of 3 tolerated) or more than 20 a minute in a group."""
        self.flood_control = enabled

    def _check_flood(self, method: str, chat_id: int) -> None:
        now = time.monotonic()
        sent = self._sent_at[chat_id]
        while sent and now - sent[0] > 60:
            sent.popleft()
        recent = sum(1 for ts in sent if now - ts < 3.0)
        retry_after = 0
        if recent >= 3:  # more than ~1/s sustained
            retry_after = 1
        if chat_id < 0 and len(sent) >= 20:
            retry_after = max(retry_after, int(60 - (now - sent[0])) + 1)
        if retry_after:
            self.flood_429s[method] += 1
            raise BotAPIError(429, f"Too Many Requests: retry after {retry_after}", {"retry_after": retry_after})
        sent.append(now)

    def unconfirmed(self) -> list[int]:
        """The ids of the queued updates no ``getUpdates`` offset has confirmed yet."""
        return [u["update_id"] for u in self._updates]

    def inject(self, method: str, fault: Fault, times: int = 1) -> None:
        for _ in range(times):
            self._faults[method].append(fault)

    def calls_to(self, method: str, chat_id: int | None = None) -> list[Call]:
        return [c for c in self.calls if c.method == method
                and (chat_id is None or c.params.get("chat_id") == chat_id)]

    def sent_texts(self, chat_id: int | None = None) -> list[str]:
        """What the chat was sent: message texts and photo captions, in order."""
        return [str(c.params.get("text", c.params.get("caption", ""))) for c in self.calls
                if c.method in ("sendMessage", "sendPhoto") and (chat_id is None or c.params.get("chat_id") == chat_id)]

    async def wait_for(self, method: str, predicate: Callable[[Call], bool] = lambda c: True,
                       timeout: float = 30.0, count: int = 1) -> list[Call]:
        deadline = time.monotonic() + timeout
        async with self._call_event:
            while True:
                found = [c for c in self.calls if c.method == method and predicate(c)]
                if len(found) >= count:
                    return found
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    seen = [(c.method, str(c.params.get("text", ""))[:80]) for c in self.calls[-15:]]
                    raise TimeoutError(f"no {count}x {method} matching within {timeout}s; last calls: {seen}")
                try:
                    await asyncio.wait_for(self._call_event.wait(), remaining)
                except TimeoutError:
                    continue

    def message(self, chat_id: int, message_id: int) -> dict[str, Any] | None:
        return self._messages.get((chat_id, message_id))

    def bot_messages(self, chat_id: int) -> list[dict[str, Any]]:
        """The messages the bot has sent to a chat (current state, edits applied), oldest first."""
        return [m for (chat, _), m in sorted(self._messages.items()) if chat == chat_id]

    def messages_in(self, chat_id: int) -> list[dict[str, Any]]:
        """The bot's messages in a chat as they are now (after edits), oldest first."""
        return [m for (chat, _), m in sorted(self._messages.items()) if chat == chat_id]

    # ---- HTTP ------------------------------------------------------------------------------------
    async def _file(self, request: web.Request) -> web.StreamResponse:
        content = self.files.get(request.match_info["path"].rsplit("/", 1)[-1])
        return web.Response(body=content) if content is not None else web.Response(status=404)

    async def _read_params(self, request: web.Request) -> tuple[dict[str, Any], dict[str, int]]:
        params: dict[str, Any] = {}
        files: dict[str, int] = {}
        if request.content_type == "application/json":
            params = await request.json()
        elif request.can_read_body:
            form = await request.post()
            for key, value in form.items():
                if isinstance(value, web.FileField):
                    files[key] = len(value.file.read())
                    continue
                params[key] = value
        for key, value in list(params.items()):
            if isinstance(value, str) and value[:1] in "{[":
                with contextlib.suppress(json.JSONDecodeError):
                    params[key] = json.loads(value)
            elif key in NUMERIC_FIELDS and isinstance(value, str) and value.lstrip("-").isdigit():
                params[key] = int(value)
            elif isinstance(value, str) and value in {"true", "false"}:
                params[key] = value == "true"
        return params, files

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        token = request.match_info["token"]
        method = request.match_info["method"]
        params, files = await self._read_params(request)
        self.tokens_seen.add(token)
        if method != "getUpdates":
            call = Call(method=method, params=params, ts=time.monotonic(), files=files,
                        content_type=request.content_type)
            self.calls.append(call)
            for listener in self.listeners:
                listener(call)
            async with self._call_event:
                self._call_event.notify_all()
        if self._faults[method]:
            fault = self._faults[method].popleft()
            if fault.delay_s:
                await asyncio.sleep(fault.delay_s)
            if fault.drop_connection:
                assert request.transport is not None
                request.transport.close()
                return web.Response(status=500)
            if fault.raw_body is not None:
                return web.Response(status=fault.status, text=fault.raw_body, content_type="text/html")
            if fault.status != 200:
                body: dict[str, Any] = {"ok": False, "error_code": fault.status,
                                        "description": fault.description or _default_description(fault)}
                if fault.retry_after is not None:
                    body["parameters"] = {"retry_after": fault.retry_after}
                return web.json_response(body, status=fault.status)
        try:
            if self.flood_control and method in {"sendMessage", "editMessageText", "sendPhoto"}:
                self._check_flood(method, int(params.get("chat_id") or 0))
            handler = getattr(self, f"_m_{method}", None)
            result = await handler(params) if handler else True
        except BotAPIError as exc:
            body = {"ok": False, "error_code": exc.code, "description": exc.description}
            if exc.parameters:
                body["parameters"] = exc.parameters
            return web.json_response(body, status=exc.code)
        return web.json_response({"ok": True, "result": result})

    # ---- methods ---------------------------------------------------------------------------------
    async def _m_getFile(self, params: dict[str, Any]) -> dict[str, Any]:
        file_id = str(params.get("file_id"))
        if file_id not in self.files:
            raise BotAPIError(400, "Bad Request: invalid file_id")
        return {"file_id": file_id, "file_unique_id": f"u{file_id}", "file_size": len(self.files[file_id]),
                "file_path": f"documents/{file_id}"}

    async def _m_getMe(self, params: dict[str, Any]) -> dict[str, Any]:
        return self.bot_user

    async def _m_deleteWebhook(self, params: dict[str, Any]) -> bool:
        return True

    async def _m_getUpdates(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        offset = int(params.get("offset") or 0)
        timeout = float(params.get("timeout") or 0)
        limit = int(params.get("limit") or 100)
        if offset:
            # confirming: drop everything below offset (Telegram's semantics)
            self._updates = [u for u in self._updates if u["update_id"] >= offset]
        deadline = time.monotonic() + min(timeout, 5.0)
        async with self._new_update:
            while not self._updates and time.monotonic() < deadline:
                try:
                    await asyncio.wait_for(self._new_update.wait(), max(0.0, deadline - time.monotonic()))
                except TimeoutError:
                    break
        allowed = params.get("allowed_updates")
        if isinstance(allowed, list) and allowed:
            # like Telegram: a type the bot did not ask for is never delivered (it is dropped, not held)
            self._updates = [u for u in self._updates if any(kind in u for kind in allowed)]
        return self._updates[:limit]

    def _check_text(self, text: str, parse_mode: str | None, allow_empty: bool = False) -> None:
        length = visible_length(text, parse_mode)
        if length == 0 and not allow_empty:
            raise BotAPIError(400, "Bad Request: message text is empty")
        if length > 4096:
            raise BotAPIError(400, "Bad Request: message is too long")

    def _check_markup(self, markup: Any) -> None:
        if not isinstance(markup, dict):
            return
        for row in markup.get("inline_keyboard", []):
            for button in row:
                self._check_button(button)
                data = button.get("callback_data")
                if data is not None and not 1 <= len(str(data).encode()) <= 64:
                    raise BotAPIError(400, "Bad Request: BUTTON_DATA_INVALID")

    def _store(self, params: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
        chat_id = int(params["chat_id"])
        message = {
            "message_id": next(self._message_ids[chat_id]),
            "date": int(time.time()),
            "chat": {"id": chat_id, "type": "private" if chat_id > 0 else "supergroup"},
            "from": self.bot_user,
            **extra,
        }
        if params.get("message_thread_id"):
            message["message_thread_id"] = params["message_thread_id"]
        # like Telegram: a sent message carries only an inline keyboard (ForceReply / reply keyboards are not echoed)
        if isinstance(params.get("reply_markup"), dict) and "inline_keyboard" in params["reply_markup"]:
            message["reply_markup"] = params["reply_markup"]
        self._messages[(chat_id, message["message_id"])] = message
        return message

    async def _m_sendMessage(self, params: dict[str, Any]) -> dict[str, Any]:
        text = str(params.get("text", ""))
        self._check_text(text, params.get("parse_mode"))
        self._check_markup(params.get("reply_markup"))
        if "ephemeral_message_parameters" in params:
            return self._send_ephemeral(params, {"text": text})
        self._dismiss_drafts(int(params["chat_id"]))
        return self._store(params, {"text": text})

    async def _m_editMessageText(self, params: dict[str, Any]) -> dict[str, Any]:
        key = (int(params["chat_id"]), int(params["message_id"]))
        message = self._messages.get(key)
        if message is None:
            raise BotAPIError(400, "Bad Request: message to edit not found")
        text = str(params.get("text", ""))
        self._check_text(text, params.get("parse_mode"))
        self._check_markup(params.get("reply_markup"))
        if message.get("text") == text and message.get("reply_markup") == params.get("reply_markup"):
            raise BotAPIError(400, "Bad Request: message is not modified: specified new message content and "
                                   "reply markup are exactly the same as a current content and reply markup "
                                   "of the message")
        message["text"] = text
        message["edit_date"] = int(time.time())
        if "reply_markup" in params:
            message["reply_markup"] = params["reply_markup"]
        return message

    async def _m_editMessageReplyMarkup(self, params: dict[str, Any]) -> dict[str, Any]:
        key = (int(params["chat_id"]), int(params["message_id"]))
        message = self._messages.get(key)
        if message is None:
            raise BotAPIError(400, "Bad Request: message to edit not found")
        message["reply_markup"] = params.get("reply_markup")
        return message

    async def _m_sendPhoto(self, params: dict[str, Any]) -> dict[str, Any]:
        caption = str(params.get("caption", ""))
        if visible_length(caption, params.get("parse_mode")) > 1024:
            raise BotAPIError(400, "Bad Request: message caption is too long")
        self._check_markup(params.get("reply_markup"))
        photo = str(params.get("photo", ""))
        if photo.startswith("attach://"):  # an upload: Telegram keeps it and answers with its file_id
            file_id = f"photo-{len(self.files) + 1}"
            self.files[file_id] = b"uploaded photo"
            self.photo_uploads += 1
        elif photo in self.files:  # a file_id sent again: no upload
            file_id = photo
        else:
            raise BotAPIError(400, "Bad Request: wrong file identifier/HTTP URL specified")
        return self._store(params, {"photo": [{"file_id": file_id, "file_unique_id": f"u{file_id}", "width": 1,
                                               "height": 1}], "caption": caption})

    async def _m_answerInlineQuery(self, params: dict[str, Any]) -> bool:
        results = params.get("results") or []
        if len(results) > 50:
            raise BotAPIError(400, "Bad Request: RESULTS_TOO_MUCH")
        return True

    async def _m_getChatMember(self, params: dict[str, Any]) -> dict[str, Any]:
        chat_id, user_id = int(params["chat_id"]), int(params["user_id"])
        status = "administrator" if user_id in self.admins[chat_id] else "member"
        user = {"id": user_id, "is_bot": False, "first_name": "Test"}
        if user_id in self.creators[chat_id]:  # ChatMemberOwner
            return {"status": "creator", "user": user, "is_anonymous": False}
        if status == "administrator":
            return {"status": status, "user": user, "can_be_edited": False, "is_anonymous": False,
                    "can_manage_chat": True, "can_delete_messages": True, "can_manage_video_chats": True,
                    "can_restrict_members": True, "can_promote_members": False, "can_change_info": True,
                    "can_invite_users": True, "can_post_stories": False, "can_edit_stories": False,
                    "can_delete_stories": False, "can_send_welcome_messages": False}
        return {"status": status, "user": user}


def _default_description(fault: Fault) -> str:
    if fault.status == 429:
        return f"Too Many Requests: retry after {fault.retry_after or 1}"
    if fault.status >= 500:
        return "Internal Server Error"
    return "Bad Request"
