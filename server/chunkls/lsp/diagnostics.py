"""Chunk IDs that do not resolve: diagnostics (pull or push) and quick fixes. Computed once
per version and index state (quick fixes come at every cursor move), a large document's in
slices."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from chunkls.ids.grammar import ChunkRef, find_chunk_refs_between
from chunkls.ids.rewrite import rewrite
from chunkls.index.citations import Problem
from chunkls.lsp.documents import DocumentContext, is_open
from chunkls.lsp.ranges import overlaps, ref_range, text_edit
from chunkls.lsp.written_ids import navigable, refs_of

if TYPE_CHECKING:
    from chunkls.lsp.server import ChunkServer

FIX_ALL = "source.fixAll.chunkls"
"""The code action kind that rewrites a document's stale IDs with certain replacements."""
CODE = "unknown-chunk"
"""Diagnostic code of a chunk ID that resolves to nothing."""
SOURCE = "chunkls"
DEBOUNCE = 0.3
"""Seconds of quiet typing before pushed diagnostics are recomputed."""
MAX_DIAGNOSTICS = 1000
"""Diagnostics reported per document at most (the first ones in the text)."""
LARGE_DOCUMENT = 1_000_000
"""Characters from which a document's diagnostics are computed in slices."""
SLICE = 250_000
"""Characters recognised per slice (whole lines)."""
CHECK_BATCH = 5_000
"""References checked per slice."""
SUGGEST_IN_LARGE = 10
"""Distinct unknown IDs of a large document suggested up front (the rest by a quick fix)."""


def register(server: ChunkServer) -> None:
    """Register pull diagnostics, push triggers and quick fixes."""
    server.feature(
        types.TEXT_DOCUMENT_DIAGNOSTIC,
        types.DiagnosticOptions(
            identifier=SOURCE, inter_file_dependencies=True, workspace_diagnostics=False
        ),
    )(text_document_diagnostic)
    server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL]),
    )(text_document_code_action)
    pushes = Pushes(server)
    server.on_index_changed.append(pushes.index_changed)
    server.on_document_changed.append(pushes.document_changed)
    server.on_document_closed.append(pushes.document_closed)


def pull_supported(ls: ChunkServer) -> bool:
    """Whether the client pulls diagnostics and can be told to pull again when the
    index moves (else the server pushes them and answers pulls with none: Neovim
    0.10+ pulls only on open and change, so pulled ones would go stale)."""
    return ls.capability("text_document", "diagnostic") is not None and bool(
        ls.capability("workspace", "diagnostics", "refresh_support")
    )


def _cached(ls: ChunkServer, context: DocumentContext) -> tuple[dict[object, Any], object]:
    """Where this document's diagnostics are kept while nothing they depend on moves."""
    answers = context.answers((ls.queries.version, ls.queries.folders_version, ls.indexing > 0))
    return answers, ("diagnostics", ls.settings.diagnostics)


def diagnostics_for(ls: ChunkServer, context: DocumentContext) -> list[types.Diagnostic]:
    """Warnings for the chunk IDs of a document that resolve to nothing."""
    if not ls.settings.diagnostics.enabled or ls.indexing:
        return []
    answers, key = _cached(ls, context)
    if key not in answers:
        refs = refs_of(context)
        problems = _check(ls, context, refs, {}) if refs else []
        answers[key] = _diagnostics(ls, context, problems[:MAX_DIAGNOSTICS])
    return answers[key]  # type: ignore[no-any-return]


async def diagnostics_for_async(
    ls: ChunkServer, context: DocumentContext
) -> list[types.Diagnostic]:
    """``diagnostics_for``, in slices for a large document (others answered between)."""
    if not ls.settings.diagnostics.enabled or ls.indexing:
        return []
    answers, key = _cached(ls, context)
    if key in answers or len(context.text) < LARGE_DOCUMENT or context.language == "python":
        return diagnostics_for(ls, context)
    problems: list[Problem] = []
    suggested: dict[str, list[str]] = {}
    for refs in _ref_slices(context):
        for at in range(0, len(refs), CHECK_BATCH):
            batch = refs[at : at + CHECK_BATCH]
            problems += _check(ls, context, batch, suggested, SUGGEST_IN_LARGE)
            await asyncio.sleep(0)
        if len(problems) >= MAX_DIAGNOSTICS:
            break  # the rest of the text is not read
    with_suggestions = set(list(suggested)[:SUGGEST_IN_LARGE])
    answers, key = _cached(ls, context)  # the index may have moved meanwhile
    answers[key] = _diagnostics(ls, context, problems[:MAX_DIAGNOSTICS], with_suggestions)
    return answers[key]  # type: ignore[no-any-return]


def _ref_slices(context: DocumentContext) -> Iterator[list[ChunkRef]]:
    """A document's references, a slice of whole lines at a time (the last sets ``refs``)."""
    if context.refs is not None:
        yield context.refs
        return
    found: list[ChunkRef] = []
    text, start = context.text, 0
    while start < len(text):
        end = text.find("\n", min(start + SLICE, len(text)))
        end = len(text) if end < 0 else end
        refs = find_chunk_refs_between(text, start, end, context.language) or []
        found += refs
        yield refs
        start = end + 1
    context.refs = found


def _check(
    ls: ChunkServer, context: DocumentContext, refs: list[ChunkRef], *more: Any
) -> list[Problem]:
    """``Queries.check`` of a document's references."""
    folder, rel_path = context.folder, context.rel_path
    return ls.queries.check(context.text, context.language, folder, rel_path, refs, *more)


def _diagnostics(
    ls: ChunkServer,
    context: DocumentContext,
    problems: list[Problem],
    with_suggestions: set[str] | None = None,
) -> list[types.Diagnostic]:
    """Diagnostics of problems; those not ``with_suggestions`` get theirs by a quick fix."""
    severity = types.DiagnosticSeverity[ls.settings.diagnostics.severity.capitalize()]
    found = [
        _diagnostic(context, problem, severity, ls.queries.written_id(problem.ref)[1])
        for problem in problems
    ]
    if with_suggestions is not None:
        for diagnostic, problem in zip(found, problems, strict=True):
            if problem.chunk_id not in with_suggestions and isinstance(diagnostic.data, dict):
                diagnostic.data["suggestions"] = None
    return found


def _diagnostic(
    context: DocumentContext,
    problem: Problem,
    severity: types.DiagnosticSeverity,
    outside: bool = False,
) -> types.Diagnostic:
    """``outside``: its path looks absolute and lies outside every workspace root."""
    message = f"Unknown chunk ID {problem.chunk_id}"
    if outside:
        message += f": /{problem.chunk_id.partition('#')[0]} is outside every workspace root"
    replacement = problem.replacement
    if replacement is not None:
        message += f" ({replacement.said()})"
    elif problem.suggestions:
        message += " (did you mean " + ", ".join(problem.suggestions) + "?)"
    certain = replacement is not None and replacement.certain and replacement.chunk_id
    return types.Diagnostic(
        range=ref_range(context, problem.ref),
        message=message,
        severity=severity,
        code=CODE,
        source=SOURCE,
        data={
            "chunkId": problem.chunk_id,
            "suggestions": problem.suggestions,
            "form": problem.ref.form,
            # what source.fixAll rewrites it to (a certain replacement), and as what it was read
            "fix": replacement.chunk_id if certain and replacement is not None else None,
            "oldId": replacement.old_id if replacement is not None else None,
        },
    )


async def text_document_diagnostic(
    ls: ChunkServer, params: types.DocumentDiagnosticParams
) -> types.RelatedFullDocumentDiagnosticReport:
    """textDocument/diagnostic: the document's unknown chunk IDs."""
    context = navigable(ls, params.text_document.uri) if pull_supported(ls) else None
    items = await diagnostics_for_async(ls, context) if context is not None else []
    ls.session.settle()  # (an asynchronous handler: read after Session.ask returned)
    return types.RelatedFullDocumentDiagnosticReport(items=items)


def text_document_code_action(
    ls: ChunkServer, params: types.CodeActionParams
) -> list[types.CodeAction]:
    """textDocument/codeAction: "Replace with `<id>`" for unknown chunk IDs (the
    replacement their history gives first, preferred); ``source.fixAll.chunkls``:
    every certain replacement of the document in one edit."""
    only = params.context.only
    context = navigable(ls, params.text_document.uri)
    if context is None:
        return []
    if only is not None and any(kind == FIX_ALL or FIX_ALL.startswith(kind + ".") for kind in only):
        return _fix_all(ls, context)
    if only is not None and not any(
        types.CodeActionKind.QuickFix.value.startswith(kind) for kind in only
    ):
        return []
    actions: list[types.CodeAction] = []
    wanted = params.range
    for diagnostic in diagnostics_for(ls, context):
        if not overlaps(diagnostic.range, wanted):
            continue
        data: dict[str, Any] = diagnostic.data or {}
        suggestions = data.get("suggestions")
        if suggestions is None:  # a large document's: made now
            suggestions = ls.queries.fix_candidates(data["chunkId"])
        for rank, replacement in enumerate(suggestions):
            edit = _replacement(diagnostic.range, data, replacement, context)
            actions.append(
                types.CodeAction(
                    title=f"Replace with `{replacement}`",
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[diagnostic],
                    is_preferred=rank == 0,
                    edit=types.WorkspaceEdit(changes={context.uri: [edit]}),
                )
            )
    return actions


def _fix_all(ls: ChunkServer, context: DocumentContext) -> list[types.CodeAction]:
    """One action rewriting every stale ID of the document whose replacement is certain."""
    edits = [
        _replacement(diagnostic.range, diagnostic.data, diagnostic.data["fix"], context)
        for diagnostic in diagnostics_for(ls, context)
        if isinstance(diagnostic.data, dict) and diagnostic.data.get("fix")
    ]
    if not edits:
        return []
    noun = "ID" if len(edits) == 1 else "IDs"
    return [
        types.CodeAction(
            title=f"Fix {len(edits)} stale chunk {noun} (chunkls)",
            kind=FIX_ALL,
            edit=types.WorkspaceEdit(changes={context.uri: edits}),
        )
    ]


def _replacement(
    written: types.Range, data: dict[str, Any], replacement: str, context: DocumentContext
) -> types.TextEdit:
    """``ids.rewrite``'s edit of the ID written at ``written``, as ``check --fix`` makes it."""
    lines = context.lines
    start = lines.offset(written.start.line, written.start.character)
    end = lines.offset(written.end.line, written.end.character)
    ref = ChunkRef(start, end, "", "", data.get("form", "bare"))
    old_id = data.get("oldId") or data["chunkId"]
    return text_edit(context, rewrite(context.text, ref, old_id, replacement, context.language))


class Pushes:
    """Pushed diagnostics for clients that do not pull: debounced per document."""

    def __init__(self, ls: ChunkServer) -> None:
        self.ls = ls
        self.pending: dict[str, asyncio.TimerHandle] = {}
        self.all_pending: asyncio.Handle | None = None

    def publish(self, uri: str) -> None:
        """Compute and send one document's diagnostics."""
        self.pending.pop(uri, None)
        if self.ls.shutting_down or not is_open(self.ls, uri):
            return
        context = navigable(self.ls, uri)
        doc = self.ls.workspace.get_text_document(uri)
        if context is not None and len(context.text) >= LARGE_DOCUMENT:
            try:
                asyncio.get_running_loop()
            except RuntimeError:  # no event loop (unit use): computed now, below
                pass
            else:
                self.ls.spawn(self._publish_large(uri, context, doc.version), "diagnostics")
                return
        items = diagnostics_for(self.ls, context) if context is not None else []
        self._send(uri, items, doc.version)

    async def _publish_large(self, uri: str, context: DocumentContext, version: int | None) -> None:
        """Publish a large document's diagnostics unless it changed or closed meanwhile."""
        items = await diagnostics_for_async(self.ls, context)
        if self.ls.shutting_down or not is_open(self.ls, uri):
            return
        if self.ls.workspace.get_text_document(uri).version == version:
            self._send(uri, items, version)

    def _send(self, uri: str, items: list[types.Diagnostic], version: int | None = None) -> None:
        self.ls.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=items, version=version)
        )

    def document_changed(self, uri: str, typing: bool) -> None:
        """A document opened or changed: publish now, or after typing pauses."""
        if pull_supported(self.ls):
            return
        self._cancel(uri)
        if typing:
            loop = asyncio.get_running_loop()
            self.pending[uri] = loop.call_later(DEBOUNCE, self.publish, uri)
        else:
            self.publish(uri)

    def _cancel(self, uri: str) -> None:
        handle = self.pending.pop(uri, None)
        if handle is not None:
            handle.cancel()

    def document_closed(self, uri: str) -> None:
        """A document closed: clear what was published for it."""
        self._cancel(uri)
        if not pull_supported(self.ls):
            self._send(uri, [])

    def index_changed(self) -> None:
        """The index moved: pulled diagnostics are refreshed, pushed ones re-sent."""
        if pull_supported(self.ls):
            self.ls.spawn(self._refresh(), "diagnostic refresh")
            return
        if self.all_pending is None:
            # after the requests already received (a save is followed by a lens
            # request the user waits for), and once for a burst of changes
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # no event loop (unit use): now
                self.publish_all()
                return
            self.all_pending = loop.call_soon(self.publish_all)

    def publish_all(self) -> None:
        """Re-send every open document's diagnostics."""
        self.all_pending = None
        for document in list(self.ls.workspace.text_documents.values()):
            self.publish(document.uri)

    async def _refresh(self) -> None:
        await asyncio.wait_for(self.ls.workspace_diagnostic_refresh_async(None), 10)
