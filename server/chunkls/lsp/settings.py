"""Typed settings: initialization options and ``workspace/didChangeConfiguration``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

DEFAULT_NAVIGATION_LANGUAGES = ("markdown", "plaintext", "python")
SEVERITIES = ("error", "warning", "information", "hint")


@attrs.frozen
class Settings:
    """What the editor may configure (merged with ``[tool.chunkls]`` per folder)."""

    exclude: tuple[str, ...] = ()
    """Extra root-relative globs to leave out of the corpus."""
    code_lens_enabled: bool = True
    """Whether chunk ID lenses are shown."""
    navigation_languages: tuple[str, ...] = DEFAULT_NAVIGATION_LANGUAGES
    """Language IDs in which chunk IDs are navigable."""
    diagnostics_enabled: bool = True
    """Whether chunk IDs that do not resolve are reported."""
    diagnostics_severity: str = "warning"
    """Severity of those reports: error, warning, information or hint."""


def parse_settings(raw: Any, problems: list[str] | None = None) -> Settings:
    """Settings from ``{"exclude": [...], "codeLens": {"enabled": b},
    "navigation": {"languages": [...]}}`` (or that object under ``"chunkls"``).

    Bad values are reported in ``problems`` and replaced by defaults.
    """
    problems = problems if problems is not None else []
    if not isinstance(raw, Mapping):
        if raw is not None:
            problems.append(f"settings must be an object, got {type(raw).__name__}")
        return Settings()
    nested = raw.get("chunkls")
    if isinstance(nested, Mapping):
        raw = nested
    defaults = Settings()
    exclude = _strings(raw.get("exclude"), "exclude", problems)
    code_lens = _section(raw, "codeLens", problems)
    enabled = code_lens.get("enabled", defaults.code_lens_enabled)
    if not isinstance(enabled, bool):
        problems.append("codeLens.enabled must be true or false")
        enabled = defaults.code_lens_enabled
    navigation = _section(raw, "navigation", problems)
    languages = _strings(navigation.get("languages"), "navigation.languages", problems)
    diagnostics = _section(raw, "diagnostics", problems)
    diagnostics_enabled = diagnostics.get("enabled", defaults.diagnostics_enabled)
    if not isinstance(diagnostics_enabled, bool):
        problems.append("diagnostics.enabled must be true or false")
        diagnostics_enabled = defaults.diagnostics_enabled
    severity = diagnostics.get("severity", defaults.diagnostics_severity)
    if severity not in SEVERITIES:
        problems.append(f"diagnostics.severity must be one of {', '.join(SEVERITIES)}")
        severity = defaults.diagnostics_severity
    return Settings(
        exclude=tuple(exclude) if exclude is not None else defaults.exclude,
        code_lens_enabled=enabled,
        navigation_languages=(
            tuple(languages) if languages is not None else defaults.navigation_languages
        ),
        diagnostics_enabled=diagnostics_enabled,
        diagnostics_severity=severity,
    )


def _section(raw: Mapping[str, Any], key: str, problems: list[str]) -> Mapping[str, Any]:
    value = raw.get(key)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        problems.append(f"{key} must be an object")
        return {}
    return value


def _strings(value: object, key: str, problems: list[str]) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return value
    problems.append(f"{key} must be a list of strings")
    return None
