"""Editor settings (initialization options, ``workspace/didChangeConfiguration``): the attrs
classes below, each key the dotted camelCase path of an attribute, as ``package.json`` has
them under ``chunkls.``."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, Literal, get_args, get_origin

import attrs
import cattrs
from cattrs.errors import ClassValidationError
from cattrs.gen import make_dict_structure_fn, override

from chunkls.lsp.contract import wire_name

SearchMode = Literal["auto", "hybrid", "bm25"]
"""What ``search.mode`` may be (``auto``: the workspace's ``[tool.chunkls]
search-mode``, else the default mode; the rest are ``chunkls.search.MODES``)."""
Severity = Literal["error", "warning", "information", "hint"]
"""What ``diagnostics.severity`` may be."""
DEFAULT_NAVIGATION_LANGUAGES = ("json", "jsonc", "jsonl", "markdown", "plaintext", "python")

SECTION = "chunkls"
"""The settings' section: a client may send them nested under it."""
CLIENT_SETTINGS = ("server.pythonPath", "trace.server", "mcp.enabled")
"""Settings of the section that only the client reads (the server ignores them)."""


@attrs.frozen
class CodeLensSettings:
    """``codeLens``: the chunk ID lenses."""

    enabled: bool = True
    """Whether chunk ID lenses are shown."""


@attrs.frozen
class NavigationSettings:
    """``navigation``: where chunk IDs get hovers, links and go to definition."""

    languages: tuple[str, ...] = DEFAULT_NAVIGATION_LANGUAGES
    """Language IDs in which chunk IDs are navigable."""


@attrs.frozen
class DiagnosticsSettings:
    """``diagnostics``: chunk IDs that resolve to no chunk."""

    enabled: bool = True
    """Whether chunk IDs that do not resolve are reported."""
    severity: Severity = "warning"
    """Severity of those reports."""


@attrs.frozen
class SearchSettings:
    """``search``: how the palette's Search Chunks and ``workspace/symbol`` rank."""

    mode: SearchMode = "auto"
    """The search mode (``auto``: as the workspace configures it)."""

    @property
    def requested(self) -> str | None:
        """The mode asked of the query API (``None``: the workspace's)."""
        return None if self.mode == "auto" else self.mode


@attrs.frozen
class Settings:
    """What the editor may configure (merged with ``[tool.chunkls]`` per folder)."""

    exclude: tuple[str, ...] = ()
    """Extra root-relative globs to leave out of the corpus."""
    code_lens: CodeLensSettings = CodeLensSettings()
    navigation: NavigationSettings = NavigationSettings()
    diagnostics: DiagnosticsSettings = DiagnosticsSettings()
    search: SearchSettings = SearchSettings()


for _cls in (CodeLensSettings, NavigationSettings, DiagnosticsSettings, SearchSettings, Settings):
    attrs.resolve_types(_cls)


@attrs.frozen
class SettingSpec:
    """One setting as the manifest declares it (JSON schema words)."""

    key: str
    """Dotted camelCase path, without the ``chunkls.`` section."""
    type: str
    """JSON type: ``boolean``, ``string`` or ``array`` (of strings)."""
    default: object
    """Default, as JSON."""
    enum: tuple[str, ...] | None = None
    """Allowed values, if only some strings are."""


def setting_specs(cls: type = Settings, prefix: str = "") -> list[SettingSpec]:
    """Every setting of an attrs settings class, in declaration order."""
    specs = []
    for field in attrs.fields(cls):
        key = prefix + wire_name(field.name)
        if attrs.has(field.type):
            specs.extend(setting_specs(field.type, key + "."))
        elif field.type is bool:
            specs.append(SettingSpec(key, "boolean", field.default))
        elif _is_strings(field.type):
            specs.append(SettingSpec(key, "array", list(field.default)))
        elif _is_literal(field.type):
            specs.append(SettingSpec(key, "string", field.default, get_args(field.type)))
        else:
            raise TypeError(f"setting {key}: no JSON type for {field.type!r}")
    return specs


class NotAnObject(TypeError):
    """A settings section that is not a JSON object."""


def _is_strings(tp: Any) -> bool:
    return bool(tp == tuple[str, ...])


def _is_literal(tp: Any) -> bool:
    return get_origin(tp) is Literal


def _structure_strings(value: object, _: type) -> tuple[str, ...]:
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return tuple(value)
    raise TypeError("not a list of strings")


def _structure_bool(value: object, _: type) -> bool:
    if isinstance(value, bool):
        return value
    raise TypeError("not a boolean")


def _structure_literal(value: object, tp: Any) -> object:
    if isinstance(value, str) and value in get_args(tp):
        return value
    raise ValueError(f"not one of {get_args(tp)}")


def _make_converter() -> cattrs.Converter:
    """A strict converter: no coercion, every bad value collected."""
    converter = cattrs.Converter(detailed_validation=True)
    converter.register_structure_hook(bool, _structure_bool)
    converter.register_structure_hook_func(_is_strings, _structure_strings)
    converter.register_structure_hook_func(_is_literal, _structure_literal)

    def section_hook(cls: type) -> Callable[[object, type], object]:
        renames: dict[str, Any] = {
            field.name: override(rename=wire_name(field.name)) for field in attrs.fields(cls)
        }
        structure: Callable[[Mapping[str, Any], Any], object] = make_dict_structure_fn(
            cls, converter, **renames
        )

        def hook(value: object, _: type) -> object:
            if not isinstance(value, Mapping):
                raise NotAnObject(f"not an object: {type(value).__name__}")
            return structure(value, cls)

        return hook

    converter.register_structure_hook_factory(attrs.has, section_hook)
    return converter


SETTINGS_CONVERTER = _make_converter()
"""Reads the settings classes from JSON (strict: no coercion, every bad value collected)."""


def parse_settings(raw: Any, problems: list[str] | None = None) -> Settings:
    """Settings from their JSON (or under ``"chunkls"``); unknown keys and bad values are
    reported in ``problems``, a bad value replaced by its default."""
    problems = problems if problems is not None else []
    if not isinstance(raw, Mapping):
        if raw is not None:
            problems.append(f"settings must be an object, got {type(raw).__name__}")
        return Settings()
    nested = raw.get(SECTION)
    if isinstance(nested, Mapping):
        raw = nested
    client_only = {key.split(".", 1)[0] for key in CLIENT_SETTINGS} | {SECTION}
    mine = {key: item for key, item in raw.items() if key not in client_only}
    value = _known(mine, Settings, (), problems)
    for _ in range(len(setting_specs()) + 2):  # each round drops what failed
        try:
            settings: Settings = SETTINGS_CONVERTER.structure(value, Settings)
        except ClassValidationError as error:
            for path, tp in _failures(error, Settings, ()):
                problems.append(_message(path, tp))
                value = _without(value, path)
        else:
            return settings
    return Settings()


def _known(
    value: Mapping[str, Any], cls: type, path: tuple[str, ...], problems: list[str]
) -> dict[str, Any]:
    """The value without its unknown keys (reported) and ``null``s (the default)."""
    fields = {wire_name(field.name): field.type for field in attrs.fields(cls)}
    kept = {}
    for key, item in value.items():
        tp = fields.get(key)
        if tp is None:
            problems.append(f"unknown key {'.'.join((*path, key))!r}")
        elif item is None and (attrs.has(tp) or _is_strings(tp)):
            continue
        elif attrs.has(tp) and isinstance(item, Mapping):
            kept[key] = _known(item, tp, (*path, key), problems)
        else:
            kept[key] = item
    return kept


def _failures(
    error: BaseException, tp: Any, path: tuple[str, ...]
) -> Iterator[tuple[tuple[str, ...], Any]]:
    """(path, expected type) of each bad value in a cattrs error."""
    if isinstance(error, ClassValidationError):
        with_notes, others = error.group_exceptions()
        for sub, note in with_notes:
            yield from _failures(sub, note.type, (*path, wire_name(note.name)))
        for sub in others:
            yield from _failures(sub, tp, path)
    else:
        yield path, tp


def _message(path: tuple[str, ...], tp: Any) -> str:
    name = ".".join(path)
    if tp is bool:
        return f"{name} must be true or false"
    if _is_strings(tp):
        return f"{name} must be a list of strings"
    if _is_literal(tp):
        return f"{name} must be one of {', '.join(get_args(tp))}"
    return f"{name} must be an object"


def _without(value: Mapping[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    """A copy of the value without the key at ``path``."""
    copy = dict(value)
    head, *rest = path
    if not rest:
        copy.pop(head, None)
    elif isinstance(copy.get(head), Mapping):
        copy[head] = _without(copy[head], tuple(rest))
    return copy
