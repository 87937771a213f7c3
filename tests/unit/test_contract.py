"""The server<->client contract: ``package.json``'s ``contributes``, the
server's settings, command IDs and status notification, and the VS Code
client's ``constants.ts`` must agree.

``disagreements`` reads the three sides from their text and lists every
difference; the last tests feed it altered copies to show it can fail.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import attrs
import pytest

from chunkls.lsp import contract
from chunkls.lsp.settings import CLIENT_SETTINGS, SECTION, SettingSpec, setting_specs

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "vscode-client" / "src"


@attrs.frozen
class ServerSide:
    """What the Python server declares."""

    settings: tuple[SettingSpec, ...]
    client_settings: tuple[str, ...]
    commands: tuple[str, ...]
    lens_commands: tuple[str, ...]
    notification: str
    status_fields: dict[str, str]
    """Field -> JSON type of the notification's payload."""
    search_args: tuple[str, ...]
    """``chunkls.search``'s argument fields, by their wire names."""
    search_answer: dict[str, str]
    """Field (wire name) -> TypeScript type of ``chunkls.search``'s ``SearchAnswer``."""


@attrs.frozen
class ClientSide:
    """What the VS Code client declares: its manifest and its TypeScript."""

    manifest: dict[str, Any]
    constants: str
    """``constants.ts``."""
    status: str
    """``status.ts`` (the notification payload's interface)."""
    sources: dict[str, str]
    """Every other ``src/*.ts`` file, by name."""


def ts_type(annotation: Any) -> str:
    """The TypeScript type of a wire field's Python annotation (a list of result
    objects is ``SearchResult[]``)."""
    named = {bool: "boolean", int: "number", str: "string", str | None: "string | null"}
    if annotation in named:
        return named[annotation]
    if getattr(annotation, "__origin__", None) is list:
        return "SearchResult[]"
    raise TypeError(f"no TypeScript type for {annotation!r}")


def server_side() -> ServerSide:
    json_types = {bool: "boolean", int: "number"}
    attrs.resolve_types(contract.Status)
    attrs.resolve_types(contract.SearchAnswer)
    return ServerSide(
        settings=tuple(setting_specs()),
        client_settings=CLIENT_SETTINGS,
        commands=contract.SERVER_COMMANDS,
        lens_commands=contract.CLIENT_COMMANDS,
        notification=contract.STATUS_NOTIFICATION,
        status_fields={
            field.name: json_types[field.type] for field in attrs.fields(contract.Status)
        },
        search_args=tuple(contract.wire_name(f.name) for f in attrs.fields(contract.SearchArgs)),
        search_answer={
            contract.wire_name(field.name): ts_type(field.type)
            for field in attrs.fields(contract.SearchAnswer)
        },
    )


def client_side() -> ClientSide:
    sources = {
        path.name: path.read_text(encoding="utf-8")
        for path in sorted(SRC.glob("*.ts"))
        if path.name not in ("constants.ts",)
    }
    return ClientSide(
        manifest=json.loads((ROOT / "package.json").read_text(encoding="utf-8")),
        constants=(SRC / "constants.ts").read_text(encoding="utf-8"),
        status=sources["status.ts"],
        sources=sources,
    )


# -- reading TypeScript constants ---------------------------------------------------

DECLARATION = r"export const {name}(?:\s*:[^=]+)?\s*=\s*"


def ts_value(text: str) -> Any:
    """A TypeScript literal written as JSON with single quotes (no quote inside)."""
    text = re.sub(r"\s+as const$", "", text.strip().rstrip(",").strip())
    return json.loads(text.replace("'", '"'))


def ts_string(source: str, name: str) -> str | None:
    """``export const NAME = '...';``"""
    found = re.search(DECLARATION.format(name=name) + r"'([^']*)';", source)
    return None if found is None else found.group(1)


def ts_array(source: str, name: str) -> list[Any] | None:
    """``export const NAME: T = [...];`` (on one line)."""
    found = re.search(DECLARATION.format(name=name) + r"(\[[^\]\n]*\])", source)
    return None if found is None else list(ts_value(found.group(1)))


def ts_object(source: str, name: str) -> dict[str, Any] | None:
    """``export const NAME = { key: literal, ... }``: one entry a line, comments
    and spreads skipped."""
    found = re.search(DECLARATION.format(name=name) + r"\{\n(.*?)\n\}", source, re.DOTALL)
    if found is None:
        return None
    entries = {}
    for line in found.group(1).splitlines():
        entry = re.match(r"\s*(\w+):\s*(.+?),?\s*$", line)
        if entry is not None and not line.strip().startswith(("/", "*")):
            entries[entry.group(1)] = ts_value(entry.group(2))
    return entries


def ts_interface(source: str, name: str) -> dict[str, str] | None:
    """``export interface NAME { field: type; ... }``: field -> type."""
    found = re.search(r"export interface " + name + r"\s*\{(.*?)\}", source, re.DOTALL)
    if found is None:
        return None
    return dict(re.findall(r"(\w+)\??:\s*([^;\n]+);", found.group(1)))


TOKENS = re.compile(
    r"/\*.*?\*/|//[^\n]*"  # comments
    r"|'((?:[^'\\\n]|\\.)*)'|\"((?:[^\"\\\n]|\\.)*)\"|`((?:[^`\\]|\\.)*)`",
    re.DOTALL,
)


def string_literals(source: str) -> set[str]:
    """The quoted strings of a TypeScript file, read left to right (comments
    and templates with ``${`` left out)."""
    found = set()
    for single, double, template in TOKENS.findall(source):
        if template and "${" not in template:
            found.add(template)
        elif single or double:
            found.add(single or double)
    return found


# -- the check ---------------------------------------------------------------------


def disagreements(server: ServerSide, client: ClientSide) -> list[str]:
    """Every way the server, the manifest and the client's constants disagree."""
    out: list[str] = []
    contributes = client.manifest.get("contributes", {})
    properties: dict[str, Any] = contributes.get("configuration", {}).get("properties", {})
    manifest_keys = {key.removeprefix(f"{SECTION}.") for key in properties}
    server_keys = {spec.key for spec in server.settings}

    # settings: names
    for key in sorted(server_keys - manifest_keys):
        out.append(f"setting {key}: read by the server, not in package.json")
    for key in sorted(manifest_keys - server_keys - set(server.client_settings)):
        out.append(f"setting {key}: in package.json, unknown to the server")
    for key in sorted(set(server.client_settings) - manifest_keys):
        out.append(f"setting {key}: client-only for the server, not in package.json")
    if server_keys & set(server.client_settings):
        out.append(f"settings {sorted(server_keys & set(server.client_settings))}: both sides'")
    ts_server = ts_object(client.constants, "ServerSettingKeys") or {}
    ts_client = ts_object(client.constants, "ClientSettingKeys") or {}
    if set(ts_server.values()) != server_keys:
        out.append(f"constants.ts ServerSettingKeys {sorted(ts_server.values())} != server's")
    if set(ts_client.values()) != set(server.client_settings):
        out.append(f"constants.ts ClientSettingKeys {sorted(ts_client.values())} != server's")

    # settings: types, defaults, allowed values
    for spec in server.settings:
        schema = properties.get(f"{SECTION}.{spec.key}")
        if schema is None:
            continue
        if schema.get("type") != spec.type:
            out.append(f"setting {spec.key}: type {schema.get('type')} != server's {spec.type}")
        if spec.type == "array" and schema.get("items", {}).get("type") != "string":
            out.append(f"setting {spec.key}: items are not strings in package.json")
        if schema.get("default") != spec.default:
            out.append(f"setting {spec.key}: default {schema.get('default')!r} != {spec.default!r}")
        enum = schema.get("enum")
        if (tuple(enum) if enum is not None else None) != spec.enum:
            out.append(f"setting {spec.key}: enum {enum} != server's {spec.enum}")
    defaults = ts_object(client.constants, "SettingDefaults") or {}
    for name, key in {**ts_server, **ts_client}.items():
        schema = properties.get(f"{SECTION}.{key}", {})
        if name not in defaults:
            out.append(f"constants.ts SettingDefaults has no {name}")
        elif defaults[name] != schema.get("default"):
            out.append(f"constants.ts SettingDefaults.{name} {defaults[name]!r} != package.json's")
    for key, constant in (
        ("diagnostics.severity", "DIAGNOSTIC_SEVERITIES"),
        ("search.mode", "SEARCH_MODES"),
    ):
        spec = next((s for s in server.settings if s.key == key), None)
        allowed = ts_array(client.constants, constant)
        if spec is None or tuple(allowed or ()) != spec.enum:
            out.append(f"constants.ts {constant} {allowed} != server's")
    # every setting the server reads is sent to it (settings.ts reads each one)
    for name in sorted(ts_server):
        if f"Settings.{name})" not in client.sources.get("settings.ts", ""):
            out.append(f"settings.ts: Settings.{name} is not read (never sent to the server)")
    restricted = client.manifest.get("capabilities", {}).get("untrustedWorkspaces", {})
    for key in restricted.get("restrictedConfigurations", []):
        if key not in properties:
            out.append(f"restricted setting {key}: not in package.json")

    # activation: opening a document the extension works on activates it (lenses in
    # Python and Markdown, navigation in the default navigation languages)
    activation = set(client.manifest.get("activationEvents", []))
    navigation = properties.get(f"{SECTION}.navigation.languages", {}).get("default", [])
    for language in sorted({"python", "markdown", *navigation}):
        if f"onLanguage:{language}" not in activation:
            out.append(f"activation: no onLanguage:{language}")

    # commands
    ts_commands = set((ts_object(client.constants, "Commands") or {}).values())
    ts_server_commands = set((ts_object(client.constants, "ServerCommands") or {}).values())
    if ts_server_commands != set(server.commands):
        out.append(
            f"server commands: constants.ts {sorted(ts_server_commands)}"
            f" != server's {sorted(server.commands)}"
        )
    for command in sorted(ts_commands & ts_server_commands):
        out.append(f"command {command}: both a client and a server command")
    for command in sorted(set(server.lens_commands) - ts_commands):
        out.append(f"command {command}: run by the server's lenses, not a client command")
    contributed = {item.get("command") for item in contributes.get("commands", [])}
    for command in sorted(contributed - ts_commands - ts_server_commands):
        out.append(f"command {command}: in package.json, implemented by neither side")
    for command in sorted(ts_commands - contributed - set(server.lens_commands)):
        out.append(f"command {command}: a client command missing from package.json")
    for menu in contributes.get("menus", {}).values():
        for item in menu:
            if item.get("command") not in contributed:
                out.append(f"menu command {item.get('command')}: not contributed")
    registered = set()
    for name, source in client.sources.items():
        for group, key in re.findall(r"registerCommand\(\s*(\w+)\.(\w+)", source):
            if group != "Commands":
                out.append(f"{name}: registers {group}.{key} (only client commands are registered)")
            registered.add(key)
        if re.search(r"registerCommand\(\s*['\"`]", source):
            out.append(f"{name}: registers a command by a string literal")
    names = set((ts_object(client.constants, "Commands") or {}).keys())
    for key in sorted(names - registered):
        out.append(f"client command Commands.{key}: never registered")

    # the status notification
    if ts_string(client.constants, "STATUS_NOTIFICATION") != server.notification:
        out.append(f"constants.ts STATUS_NOTIFICATION != server's {server.notification}")
    fields = ts_interface(client.status, "IndexStatus")
    if fields != server.status_fields:
        out.append(f"status.ts IndexStatus {fields} != server's Status {server.status_fields}")

    # chunkls.search: the arguments the client sends, the answer it reads
    search = client.sources.get("search.ts", "")  # (its argument and answer interfaces)
    sent = ts_interface(search, "SearchArguments") or {}
    for name in sorted(set(sent) - set(server.search_args)):
        out.append(f"search.ts SearchArguments.{name}: not an argument of the server's")
    answer = ts_interface(search, "SearchAnswer")
    if answer != server.search_answer:
        out.append(f"search.ts SearchAnswer {answer} != server's {server.search_answer}")

    # every shared identifier is written once, in constants.ts
    shared = (
        ts_commands
        | ts_server_commands
        | {server.notification}
        | {f"{SECTION}.{key}" for key in manifest_keys}
        | manifest_keys
    )
    for name, source in client.sources.items():
        for literal in sorted(string_literals(source) & shared):
            out.append(f"{name}: literal {literal!r} (use constants.ts)")
    return out


# -- tests -------------------------------------------------------------------------


def test_the_three_copies_agree() -> None:
    assert disagreements(server_side(), client_side()) == []


def test_the_client_reads_what_it_needs() -> None:
    client = client_side()
    assert ts_object(client.constants, "ServerCommands") is not None
    assert ts_object(client.constants, "Commands") is not None
    assert ts_object(client.constants, "SettingDefaults") is not None
    assert ts_interface(client.status, "IndexStatus") is not None
    assert ts_interface(client.sources["search.ts"], "SearchArguments") is not None
    assert ts_interface(client.sources["search.ts"], "SearchAnswer") is not None
    assert "server.ts" in client.sources


def altered_manifest(change: Any) -> ClientSide:
    client = client_side()
    manifest = copy.deepcopy(client.manifest)
    change(manifest)
    return attrs.evolve(client, manifest=manifest)


def props(manifest: dict[str, Any]) -> dict[str, Any]:
    return manifest["contributes"]["configuration"]["properties"]  # type: ignore[no-any-return]


def altered_constants(old: str, new: str) -> ClientSide:
    client = client_side()
    assert old in client.constants
    return attrs.evolve(client, constants=client.constants.replace(old, new, 1))


def altered_source(name: str, old: str, new: str) -> ClientSide:
    client = client_side()
    assert old in client.sources[name]
    sources = {**client.sources, name: client.sources[name].replace(old, new, 1)}
    return attrs.evolve(client, sources=sources)


@pytest.mark.parametrize(
    ("client", "expected"),
    [
        (
            altered_manifest(lambda m: props(m)["chunkls.codeLens.enabled"].update(default=False)),
            "setting codeLens.enabled: default False != True",
        ),
        (
            altered_manifest(lambda m: props(m).pop("chunkls.exclude")),
            "setting exclude: read by the server, not in package.json",
        ),
        (
            altered_manifest(lambda m: props(m).update({"chunkls.colour": {"type": "string"}})),
            "setting colour: in package.json, unknown to the server",
        ),
        (
            altered_manifest(
                lambda m: props(m)["chunkls.diagnostics.severity"]["enum"].append("fatal")
            ),
            "setting diagnostics.severity: enum",
        ),
        (
            altered_manifest(
                lambda m: props(m)["chunkls.navigation.languages"].update(type="string")
            ),
            "setting navigation.languages: type string != server's array",
        ),
        (
            altered_manifest(
                lambda m: m["contributes"]["commands"].append({"command": "chunkls.bogus"})
            ),
            "command chunkls.bogus: in package.json, implemented by neither side",
        ),
        (
            altered_manifest(
                lambda m: m["contributes"]["commands"].remove(
                    {"command": "chunkls.showOutput", "title": "Show Output", "category": "Chunks"}
                )
            ),
            "command chunkls.showOutput: a client command missing from package.json",
        ),
        (
            altered_manifest(lambda m: m["activationEvents"].remove("onLanguage:jsonc")),
            "activation: no onLanguage:jsonc",
        ),
        (
            altered_manifest(
                lambda m: props(m)["chunkls.navigation.languages"]["default"].append("log")
            ),
            "activation: no onLanguage:log",
        ),
        (
            altered_constants("  chunks: 'chunkls.chunks',\n", ""),
            "server commands: constants.ts",
        ),
        (
            altered_constants("'chunkls/status'", "'chunkls/state'"),
            "constants.ts STATUS_NOTIFICATION",
        ),
        (
            altered_constants("diagnosticsSeverity: 'warning'", "diagnosticsSeverity: 'error'"),
            "constants.ts SettingDefaults.diagnosticsSeverity 'error' != package.json's",
        ),
        (
            altered_constants("'information', 'hint']", "'information']"),
            "constants.ts DIAGNOSTIC_SEVERITIES",
        ),
        (
            altered_constants("'auto', 'hybrid', 'bm25']", "'auto', 'hybrid']"),
            "constants.ts SEARCH_MODES",
        ),
        (
            altered_source(
                "settings.ts", "config.get(Settings.searchMode)", "SettingDefaults.searchMode"
            ),
            "settings.ts: Settings.searchMode is not read (never sent to the server)",
        ),
        (
            altered_constants("  traceServer: 'trace.server',\n", ""),
            "constants.ts ClientSettingKeys",
        ),
        (
            altered_constants(
                "  showReferences: 'chunkls.showReferences',", "  reindex: 'chunkls.reindex',"
            ),
            "command chunkls.reindex: both a client and a server command",
        ),
        (
            altered_source("search.ts", "  reason: string | null;", "  why: string | null;"),
            "search.ts SearchAnswer",
        ),
        (
            altered_source("search.ts", "  reason: string | null;", "  reason?: string;"),
            "search.ts SearchAnswer",
        ),
        (
            altered_source("search.ts", "  withReason: boolean;", "  explain: boolean;"),
            "search.ts SearchArguments.explain: not an argument of the server's",
        ),
        (
            altered_source("server.ts", "ServerCommands.stats", "'chunkls.stats'"),
            "server.ts: literal 'chunkls.stats' (use constants.ts)",
        ),
        (
            altered_source("settings.ts", "config.get(Settings.exclude)", "config.get('exclude')"),
            "settings.ts: literal 'exclude' (use constants.ts)",
        ),
        (
            altered_source(
                "extension.ts",
                "registerCommand(Commands.restartServer",
                "registerCommand(ServerCommands.reindex",
            ),
            "extension.ts: registers ServerCommands.reindex",
        ),
        (
            altered_source(
                "extension.ts", "registerCommand(Commands.showOutput", "x(Commands.showOutput"
            ),
            "client command Commands.showOutput: never registered",
        ),
    ],
)
def test_an_altered_copy_disagrees(client: ClientSide, expected: str) -> None:
    found = disagreements(server_side(), client)
    assert any(line.startswith(expected) for line in found), found


def test_an_altered_server_disagrees() -> None:
    server = server_side()
    specs = tuple(
        attrs.evolve(spec, default=["python"]) if spec.key == "navigation.languages" else spec
        for spec in server.settings
    )
    found = disagreements(attrs.evolve(server, settings=specs), client_side())
    assert found == [
        "setting navigation.languages: default ['json', 'jsonc', 'jsonl', 'markdown',"
        " 'plaintext', 'python'] != ['python']"
    ]
    found = disagreements(attrs.evolve(server, commands=server.commands[:-1]), client_side())
    assert len(found) == 1
    assert found[0].startswith("server commands: constants.ts")
    fields = {**server.status_fields, "errors": "number"}
    found = disagreements(attrs.evolve(server, status_fields=fields), client_side())
    assert len(found) == 1
    assert found[0].startswith("status.ts IndexStatus")
    answer = {**server.search_answer, "total": "number"}
    found = disagreements(attrs.evolve(server, search_answer=answer), client_side())
    assert len(found) == 1
    assert found[0].startswith("search.ts SearchAnswer")


def test_the_status_payload_travels_under_its_field_names() -> None:
    from lsprotocol.converters import get_converter

    converter = get_converter()
    contract.configure_converter(converter)
    status = contract.Status(indexing=True, chunks=3, files=2, skipped=1)
    assert converter.unstructure(status) == {
        "indexing": True,
        "chunks": 3,
        "files": 2,
        "skipped": 1,
    }
    args = converter.structure({"query": "q", "topK": 5}, contract.SearchArgs)
    assert args == contract.SearchArgs("q", 5)
    asked = converter.structure({"query": "q", "withReason": True}, contract.SearchArgs)
    assert asked.with_reason and not args.with_reason
    answer = contract.SearchAnswer([], "hybrid", "why")
    assert converter.unstructure(answer) == {"results": [], "mode": "hybrid", "reason": "why"}
    assert converter.structure({"uri": "u", "line": 2}, contract.ChunkAtArgs).line == 2
