"""The one HTML escaper: text from users, the model, the glossary or the catalogs placed in Telegram HTML.

Telegram's ``parse_mode=HTML`` knows only ``&lt; &gt; &amp; &quot;``; quotes need escaping in attributes
only. The views build a reply once and render it as Telegram HTML or as plain text (console, CLI) through
:class:`Markup`, so both fronts show the same words.
"""

from __future__ import annotations

import html
from dataclasses import dataclass


def escape(text: str) -> str:
    """Escape user or model text for ``parse_mode=HTML``."""
    return html.escape(text, quote=False)


def escape_attr(text: str) -> str:
    return html.escape(text, quote=True).replace("&#x27;", "'")


@dataclass(frozen=True)
class Markup:
    """Plain text or Telegram HTML: the few constructions the views use."""

    html: bool

    def text(self, value: str) -> str:
        return escape(value) if self.html else value

    def bold(self, value: str) -> str:
        return f"<b>{escape(value)}</b>" if self.html else value

    def italic(self, value: str) -> str:
        return f"<i>{escape(value)}</i>" if self.html else value

    def details(self, label: str, value: str) -> str:
        """A collapsed block one tap away (Telegram's expandable blockquote); plain text shows it labelled."""
        if self.html:
            return f"<blockquote expandable>{escape(label)}\n{escape(value)}</blockquote>"
        return f"{label} «{value}»"

    def code(self, value: str) -> str:
        return f"<code>{escape(value)}</code>" if self.html else value

    def quote(self, value: str) -> str:
        """A verbatim quotation (the glossary's own words): a blockquote in Telegram, « » in plain text."""
        return f"<blockquote>{escape(value)}</blockquote>" if self.html else f"«{value}»"

    def link(self, label: str, url: str) -> str:
        if self.html and url.startswith(("http://", "https://")):
            return f'<a href="{escape_attr(url)}">{escape(label)}</a>'
        return self.text(label) if label == url or not url else self.text(f"{label} ({url})")


PLAIN = Markup(html=False)
HTML = Markup(html=True)
