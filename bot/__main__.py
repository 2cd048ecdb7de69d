"""`python -m bot`: the Telegram bot alone (``anchorgpu run`` also starts the console chat without a token)."""

import sys

from bot.event_loop import run_event_loop
from bot.runners import run_bot
from infra.logs import setup_logging
from infra.settings import SettingsError, get_settings

try:
    settings = get_settings()
except SettingsError as exc:
    raise SystemExit(f"python -m bot: {exc}") from None
if settings.telegram.bot_token is None:
    raise SystemExit("python -m bot: TELEGRAM_BOT_TOKEN is not set (anchorgpu run starts the console chat)")
setup_logging(settings.data)
print(f"Starting the Telegram bot ({settings.telegram.mode}) against {settings.telegram.api_base}.", file=sys.stderr)
run_event_loop(run_bot(settings), settings.telegram.event_loop)
