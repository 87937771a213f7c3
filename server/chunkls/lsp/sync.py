"""Keeping the index true: start-up, documents, saves, disk changes, folders, settings."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types

from chunkls.chunking.corpus import RULES_FILE
from chunkls.lsp.documents import forget
from chunkls.lsp.uris import folder_uris, path_of

if TYPE_CHECKING:
    from chunkls.index.folder import FolderInfo
    from chunkls.lsp.server import ChunkServer

logger = logging.getLogger("chunkls")

WATCHED_FILES = "**/*.{py,md,markdown,txt,json,jsonc,jsonl,ndjson}"
"""Corpus files the client is asked to watch for create, change and delete."""


def register(server: ChunkServer) -> None:
    """Register the synchronisation handlers."""
    server.feature(types.INITIALIZE)(initialize)
    server.feature(types.INITIALIZED)(initialized)
    server.feature(types.TEXT_DOCUMENT_DID_OPEN)(text_document_did_open)
    server.feature(types.TEXT_DOCUMENT_DID_CHANGE)(text_document_did_change)
    server.feature(types.TEXT_DOCUMENT_DID_CLOSE)(text_document_did_close)
    server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))(
        text_document_did_save
    )
    server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)(workspace_did_change_watched_files)
    server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)(
        workspace_did_change_workspace_folders
    )
    server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)(workspace_did_change_configuration)
    server.feature(types.SHUTDOWN)(shutdown)


def initialize(ls: ChunkServer, params: types.InitializeParams) -> None:
    """initialize: take the initialization options as settings; the client
    listens to the server's log from now on."""
    if ls.logs is not None:
        ls.logs.listen()
    ls.apply_settings(params.initialization_options, initial=True)


def initialized(ls: ChunkServer, params: types.InitializedParams) -> None:
    """initialized: register file watchers and index every workspace folder."""
    given = [folder.uri for folder in ls.workspace.folders.values()]
    folders = [ls.add_folder(uri) for uri in folder_uris(given, ls.workspace.root_uri)]
    if ls.capability("workspace", "did_change_watched_files", "dynamic_registration"):
        ls.spawn(_register_watchers(ls), "register file watchers")
    added = [folder for folder in folders if folder is not None]
    if added:
        ls.index_folders(added)
    else:
        logger.info("no workspace folder: single-file mode (open documents only)")
        ls.send_status()


async def _register_watchers(ls: ChunkServer) -> None:
    watchers = [
        types.FileSystemWatcher(glob_pattern=WATCHED_FILES),
        types.FileSystemWatcher(glob_pattern=f"**/{RULES_FILE}"),
        # a deleted, renamed or moved-in folder is reported for the folder only
        # (its files get no events of their own): the old name as deleted, the
        # new one as created, and the server re-reads the whole folder
        types.FileSystemWatcher(
            glob_pattern="**/*", kind=types.WatchKind.Create | types.WatchKind.Delete
        ),
    ]
    registration = types.Registration(
        id="chunkls-watched-files",
        method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
        register_options=types.DidChangeWatchedFilesRegistrationOptions(watchers=watchers),
    )
    await asyncio.wait_for(
        ls.client_register_capability_async(types.RegistrationParams([registration])), 10
    )


def text_document_did_open(ls: ChunkServer, params: types.DidOpenTextDocumentParams) -> None:
    """textDocument/didOpen: forget any stale chunking of this URI."""
    forget(ls, params.text_document.uri)
    for callback in ls.on_document_changed:
        callback(params.text_document.uri, False)


def text_document_did_change(ls: ChunkServer, params: types.DidChangeTextDocumentParams) -> None:
    """textDocument/didChange: lenses follow the buffer (recomputed on request)."""
    for callback in ls.on_document_changed:
        callback(params.text_document.uri, True)


def text_document_did_close(ls: ChunkServer, params: types.DidCloseTextDocumentParams) -> None:
    """textDocument/didClose: drop the buffer's chunking."""
    forget(ls, params.text_document.uri)
    for callback in ls.on_document_closed:
        callback(params.text_document.uri)


def text_document_did_save(ls: ChunkServer, params: types.DidSaveTextDocumentParams) -> None:
    """textDocument/didSave: re-chunk the file from disk into the index and search."""
    path = path_of(params.text_document.uri)
    found = ls.queries.folder_of(path) if path else None
    if found is not None:
        folder, rel_path = found
        if rel_path == RULES_FILE:
            ls.reload_rules([folder])
        else:
            ls.session.note_changed(folder, [rel_path])
            ls.catch_up()  # (now: a save)


def workspace_did_change_watched_files(
    ls: ChunkServer, params: types.DidChangeWatchedFilesParams
) -> None:
    """workspace/didChangeWatchedFiles: re-read the changed paths, batched; a
    folder's rules again when its ``pyproject.toml`` was created, changed or deleted."""
    rules_changed: list[FolderInfo] = []
    for change in params.changes:
        path = path_of(change.uri)
        found = ls.queries.folder_of(path) if path else None
        if found is None:
            continue
        folder, rel_path = found
        if rel_path == RULES_FILE:
            if folder not in rules_changed:
                rules_changed.append(folder)
            continue
        if Path(rel_path).name == RULES_FILE:
            continue  # a nested project's: not this folder's rules, and no corpus file
        ls.session.note_changed(folder, [rel_path])
        ls.queue_catch_up()  # (together with the rest of a burst, shortly)
    if rules_changed:
        ls.reload_rules(rules_changed)


def workspace_did_change_workspace_folders(
    ls: ChunkServer, params: types.DidChangeWorkspaceFoldersParams
) -> None:
    """workspace/didChangeWorkspaceFolders: index added folders, drop removed ones."""
    for removed in params.event.removed:
        path = path_of(removed.uri)
        for folder in list(ls.queries.folders):
            if path is not None and folder.root == Path(path):
                ls.session.remove_folder(folder)
    added = [ls.add_folder(folder.uri) for folder in params.event.added]
    new = [folder for folder in added if folder is not None]
    if new:
        ls.index_folders(new, "Indexing added folders")
    else:
        ls.index_changed()


def workspace_did_change_configuration(
    ls: ChunkServer, params: types.DidChangeConfigurationParams
) -> None:
    """workspace/didChangeConfiguration: apply settings, re-index what they affect."""
    if params.settings:
        ls.apply_settings(params.settings)
    elif ls.capability("workspace", "configuration"):
        ls.spawn(_pull_settings(ls), "pull settings")


async def _pull_settings(ls: ChunkServer) -> None:
    params = types.ConfigurationParams(items=[types.ConfigurationItem(section="chunkls")])
    values = await asyncio.wait_for(ls.workspace_configuration_async(params), 10)
    if values:
        ls.apply_settings(values[0])


def shutdown(ls: ChunkServer, params: None) -> None:
    """shutdown: write the folders' caches (pending rows and search snapshot)."""
    ls.shutting_down = True
    try:
        ls.session.close()
    except Exception:  # a cache problem must not turn a clean exit into an error
        logger.warning("could not save the index cache", exc_info=True)
