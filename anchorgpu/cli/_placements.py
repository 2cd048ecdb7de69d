"""What `anchorgpu rent / placements / stop / start / extend` share: the services, owner, exit codes.

Exit codes: 0 done (or replayed), 1 the database could not be reached, 2 bad input (an id of the wrong
shape, a duration that cannot be read or is negative, a malformed key), 3 refused: the idempotency key was
used for something else (``"code": "idempotency_conflict"``) or the placement's state does not allow it
(``"code": "invalid_state"``), 4 no such placement or quote for this owner (another owner's reads the same).
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, cast

from anchorgpu.cli._common import emit, owner_of
from infra.i18n import Lang
from infra.settings import SettingsError, get_settings

if TYPE_CHECKING:
    from gpu.placements.service import PlacementResult, PlacementService

EXIT_DB = 1
EXIT_BAD_INPUT = 2
EXIT_CONFLICT = 3
EXIT_NOT_FOUND = 4


def add_common(parser: argparse.ArgumentParser, *, key: bool = True) -> None:
    if key:
        parser.add_argument("--key", help="idempotency key: repeating the same request with it changes nothing "
                                          "and returns the original result")
    parser.add_argument("--user", help="owner the placement belongs to (e.g. tg:123); default cli:<login>")
    parser.add_argument("--json", action="store_true", help="print the machine-readable JSON object")
    parser.add_argument("--lang", choices=["ru", "en"], default="en", help="language of the text output")


Action = Callable[["PlacementService"], Awaitable[tuple[dict[str, Any], str]]]


async def _with_service(action: Action, lang: Lang) -> tuple[int, dict[str, Any], str]:
    # imported here, not at the top: `anchorgpu --help` and the other subcommands start without them
    from app.views.placements import render_placement_error
    from gpu.data import GpuData
    from gpu.placements.engine import PlacementStateError
    from gpu.placements.service import PlacementConflictError, PlacementService
    from gpu.placements.store import PlacementNotFoundError
    from gpu.quote.request import QuoteInputError
    from gpu.quote.service import QuoteService
    from gpu.quote.store import IdempotencyConflictError
    from infra.clock import ClockError, build_clock
    from infra.db import create_engine, dispose_engine

    settings = get_settings()
    try:
        clock = build_clock(settings.data.clock_offset, settings.data.clock_file)
    except ClockError as exc:
        raise SettingsError(f"invalid settings: {exc}") from None
    engine = create_engine(settings.db.url)
    data = GpuData(settings.data.data_dir)
    retention = settings.db.idempotency_retention_hours
    quotes = QuoteService(engine, data, retention_hours=retention, clock=clock)
    service = PlacementService(engine, data, quotes, retention_hours=retention, clock=clock)
    try:
        payload, human = await action(service)
        return 0, payload, human
    except QuoteInputError as exc:
        error: dict[str, Any] = {"error": str(exc), "code": exc.code}
        if exc.suggestions:
            error["suggestions"] = exc.suggestions
        if exc.field:
            error["field"] = exc.field
        return EXIT_BAD_INPUT, error, render_placement_error(exc, lang)
    except PlacementNotFoundError as exc:
        return EXIT_NOT_FOUND, {"error": str(exc), "code": "not_found"}, render_placement_error(exc, lang)
    except PlacementConflictError as exc:
        return (EXIT_CONFLICT, {"error": str(exc), "code": "idempotency_conflict",
                                "placement_id": exc.placement_id}, render_placement_error(exc, lang))
    except IdempotencyConflictError as exc:  # the quote under a rent key (a concurrent other request)
        return EXIT_CONFLICT, {"error": str(exc), "code": "idempotency_conflict"}, str(exc)
    except PlacementStateError as exc:
        return (EXIT_CONFLICT, {"error": str(exc), "code": "invalid_state", "reason": exc.code},
                render_placement_error(exc, lang))
    finally:
        await dispose_engine(engine)



def run_action(args: argparse.Namespace, name: str, action: Action) -> int:
    try:
        code, payload, human = asyncio.run(_with_service(action, cast(Lang, args.lang)))
    except SettingsError:
        raise
    except Exception as exc:  # the database is down or misconfigured: say so, no traceback
        code = EXIT_DB
        payload = {"error": f"could not reach the placements database: {type(exc).__name__}: {exc}"}
        human = payload["error"]
    return emit(args, name, code, payload, human)


def result_payload(result: PlacementResult) -> dict[str, Any]:
    from gpu.placements.engine import placement_contract

    payload = placement_contract(result.placement, result.as_of, replayed=result.replayed)
    payload["changed"] = result.changed
    if result.extension is not None:
        payload["extension"] = {"hours": result.extension.get("hours"), "total": result.extension.get("total")}
    return payload


def result_output(result: PlacementResult, lang: Lang) -> tuple[dict[str, Any], str]:
    from app.views.placements import render_result

    return result_payload(result), render_result(result, lang)


def register_state_change(sub: argparse._SubParsersAction, name: str, help_text: str) -> None:
    """`anchorgpu stop|start PLACEMENT_ID`: one state change through the service method of that name."""
    parser = sub.add_parser(name, help=help_text)
    parser.add_argument("placement_id", help="the placement id, P-…")
    add_common(parser)

    def run(args: argparse.Namespace) -> int:
        owner = owner_of(args)
        lang = cast(Lang, args.lang)

        async def action(service: PlacementService) -> tuple[dict[str, Any], str]:
            change = service.stop if name == "stop" else service.start
            return result_output(await change(args.placement_id, owner=owner, key=args.key), lang)

        return run_action(args, name, action)

    parser.set_defaults(handler=run)
