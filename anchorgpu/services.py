"""The heavy singletons, built once at start-up and shared by the bot, the console chat and the CLI."""

from __future__ import annotations

from dataclasses import dataclass

from anchorgpu.settings import Settings


@dataclass
class Services:
    settings: Settings

    @classmethod
    async def create(cls, settings: Settings) -> Services:
        return cls(settings=settings)

    async def aclose(self) -> None:
        return None
