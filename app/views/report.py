"""The operators' report and the /admin status as plain text, ru or en (``anchorgpu report`` and /report)."""

from __future__ import annotations

from typing import Any

from infra.i18n import Lang, t

MAX_CLUSTERS = 10
MAX_WEEKS = 8


def _share(value: float | None) -> str:
    return "—" if value is None else f"{value:.0%}"


def render_report_text(report: dict[str, Any], lang: Lang) -> str:
    feedback = report["feedback"]
    lines = [t("report_title", lang, since=report.get("since") or "—", up=feedback["up"], down=feedback["down"])]
    clusters = report["clusters"][:MAX_CLUSTERS]
    lines += [t("report_cluster_line", lang, count=c["count"], kind=c["kind"], example=c["examples"][0],
                nearest=", ".join(c["nearest"]) or "—") for c in clusters if c["examples"]]
    if not clusters:
        lines.append(t("report_no_clusters", lang))
    lines += [t("report_week_line", lang, week=w["week"], answers=w["answers"], ratio=_share(w["feedback_ratio"]),
                fallback=_share(w["fallback_share"]), refusal=_share(w["refusal_share"]))
              for w in report["weeks"][-MAX_WEEKS:]]
    return "\n".join(lines)


def _flag(value: bool | None, lang: Lang) -> str:
    return t("admin_off", lang) if value is None else t("admin_yes" if value else "admin_no", lang)


def render_admin_status(*, model: str | None, index: bool, database: bool, redis: bool | None, waiting: int,
                        today: dict[str, int], top_gaps: list[tuple[int, str, str]], lang: Lang) -> str:
    lines = [t("admin_title", lang),
             t("admin_health", lang, model=model or t("admin_no", lang), index=_flag(index, lang),
               database=_flag(database, lang), redis=_flag(redis, lang)),
             t("admin_queue", lang, waiting=waiting),
             t("admin_today", lang, **{key: today.get(key, 0) for key in
                                       ("answers", "up", "down", "unanswered", "fallback", "rejected")}),
             t("admin_gaps_title", lang)]
    lines += [t("admin_gap_line", lang, count=count, kind=kind, question=question)
              for count, kind, question in top_gaps] or [t("admin_no_gaps", lang)]
    return "\n".join(lines)
