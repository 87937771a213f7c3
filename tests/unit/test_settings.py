"""Editor settings: what ``parse_settings`` keeps, replaces and reports."""

from __future__ import annotations

from typing import get_args

import pytest

from chunkls.lsp.settings import (
    CLIENT_SETTINGS,
    CodeLensSettings,
    SearchMode,
    Settings,
    SettingSpec,
    parse_settings,
    setting_specs,
)
from chunkls.search import MODES

DEFAULTS = Settings()


def test_absent_settings_are_the_defaults() -> None:
    for raw in (None, {}, {"chunkls": {}}, {"chunkls": None}):
        problems: list[str] = []
        assert parse_settings(raw, problems) == DEFAULTS
        assert problems == []


def test_defaults() -> None:
    assert DEFAULTS.exclude == ()
    assert DEFAULTS.code_lens.enabled is True
    assert DEFAULTS.navigation.languages == (
        *("json", "jsonc", "jsonl"),
        *("markdown", "plaintext", "python"),
    )
    assert DEFAULTS.diagnostics.enabled is True
    assert DEFAULTS.diagnostics.severity == "warning"


@pytest.mark.parametrize("nested", [False, True])
def test_every_setting_is_read(nested: bool) -> None:
    raw: dict[str, object] = {
        "exclude": ["gen/**", "*.md"],
        "codeLens": {"enabled": False},
        "navigation": {"languages": ["markdown"]},
        "diagnostics": {"enabled": False, "severity": "hint"},
    }
    problems: list[str] = []
    settings = parse_settings({"chunkls": raw} if nested else raw, problems)
    assert problems == []
    assert settings.exclude == ("gen/**", "*.md")
    assert settings.code_lens.enabled is False
    assert settings.navigation.languages == ("markdown",)
    assert settings.diagnostics.enabled is False
    assert settings.diagnostics.severity == "hint"


def test_nulls_of_lists_and_sections_mean_the_default() -> None:
    problems: list[str] = []
    raw = {"exclude": None, "codeLens": None, "navigation": {"languages": None}}
    assert parse_settings(raw, problems) == DEFAULTS
    assert problems == []


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ([1, 2], "settings must be an object, got list"),
        ("x", "settings must be an object, got str"),
        ({"exclude": "*.py"}, "exclude must be a list of strings"),
        ({"exclude": ["a", 1]}, "exclude must be a list of strings"),
        ({"codeLens": []}, "codeLens must be an object"),
        ({"codeLens": "on"}, "codeLens must be an object"),
        ({"codeLens": {"enabled": "yes"}}, "codeLens.enabled must be true or false"),
        ({"codeLens": {"enabled": 1}}, "codeLens.enabled must be true or false"),
        ({"codeLens": {"enabled": None}}, "codeLens.enabled must be true or false"),
        ({"navigation": 3}, "navigation must be an object"),
        (
            {"navigation": {"languages": "markdown"}},
            "navigation.languages must be a list of strings",
        ),
        ({"diagnostics": {"enabled": "no"}}, "diagnostics.enabled must be true or false"),
        (
            {"diagnostics": {"severity": "fatal"}},
            "diagnostics.severity must be one of error, warning, information, hint",
        ),
        (
            {"diagnostics": {"severity": None}},
            "diagnostics.severity must be one of error, warning, information, hint",
        ),
        ({"chunkls": {"exclude": 5}}, "exclude must be a list of strings"),
    ],
)
def test_a_bad_value_is_reported_and_replaced_by_its_default(raw: object, message: str) -> None:
    problems: list[str] = []
    assert parse_settings(raw, problems) == DEFAULTS
    assert problems == [message]


def test_only_the_bad_values_fall_back() -> None:
    problems: list[str] = []
    settings = parse_settings(
        {
            "exclude": ["ok/**"],
            "codeLens": {"enabled": "maybe"},
            "navigation": {"languages": ["python"]},
            "diagnostics": {"enabled": False, "severity": 3},
        },
        problems,
    )
    assert settings.exclude == ("ok/**",)
    assert settings.code_lens.enabled is True
    assert settings.navigation.languages == ("python",)
    assert settings.diagnostics.enabled is False
    assert settings.diagnostics.severity == "warning"
    assert sorted(problems) == [
        "codeLens.enabled must be true or false",
        "diagnostics.severity must be one of error, warning, information, hint",
    ]


def test_problems_list_is_optional() -> None:
    assert parse_settings({"exclude": 1}) == DEFAULTS


@pytest.mark.parametrize(
    ("raw", "messages"),
    [
        ({"exclud": ["x"]}, ["unknown key 'exclud'"]),
        ({"codeLens": {"enable": False}}, ["unknown key 'codeLens.enable'"]),
        (
            {"chunkls": {"diagnostics": {"level": 1, "other": 2}}},
            [
                "unknown key 'diagnostics.level'",
                "unknown key 'diagnostics.other'",
            ],
        ),
    ],
)
def test_an_unknown_key_is_reported_and_ignored(raw: object, messages: list[str]) -> None:
    problems: list[str] = []
    assert parse_settings(raw, problems) == DEFAULTS
    assert problems == messages


def test_unknown_and_bad_keys_are_reported_together_and_the_rest_kept() -> None:
    problems: list[str] = []
    settings = parse_settings(
        {"codeLens": {"enabled": False, "colour": "red"}, "navigation": [], "x": 1}, problems
    )
    assert settings == Settings(code_lens=CodeLensSettings(enabled=False))
    assert problems == [
        "unknown key 'codeLens.colour'",
        "unknown key 'x'",
        "navigation must be an object",
    ]


def test_the_client_only_settings_are_not_the_servers_business() -> None:
    problems: list[str] = []
    raw = {
        "server": {"pythonPath": "/usr/bin/python3"},
        "trace": {"server": "verbose"},
        "mcp": {"enabled": False},
    }
    assert parse_settings({"chunkls": raw}, problems) == DEFAULTS
    assert parse_settings({**raw, "chunkls": 3}, problems) == DEFAULTS
    assert problems == []
    assert CLIENT_SETTINGS == ("server.pythonPath", "trace.server", "mcp.enabled")


def test_setting_specs_list_every_setting_with_its_json_type_and_default() -> None:
    assert setting_specs() == [
        SettingSpec("exclude", "array", []),
        SettingSpec("codeLens.enabled", "boolean", True),
        SettingSpec(
            "navigation.languages",
            "array",
            ["json", "jsonc", "jsonl", "markdown", "plaintext", "python"],
        ),
        SettingSpec("diagnostics.enabled", "boolean", True),
        SettingSpec(
            "diagnostics.severity", "string", "warning", ("error", "warning", "information", "hint")
        ),
        SettingSpec("search.mode", "string", "auto", ("auto", "hybrid", "bm25")),
    ]


def test_the_search_mode_setting_offers_every_mode() -> None:
    assert get_args(SearchMode)[1:] == MODES
    assert Settings().search.requested is None
    assert parse_settings({"search": {"mode": "bm25"}}, []).search.requested == "bm25"
    problems: list[str] = []
    assert parse_settings({"search": {"mode": "dense"}}, problems).search.mode == "auto"
    assert problems and "search.mode" in problems[0]
