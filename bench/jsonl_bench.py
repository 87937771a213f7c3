"""A 20 MB JSON Lines session log in the language server: time to diagnostics
and hover latency, beside baselines measured in the same run.

    uv run python bench/jsonl_bench.py [--mb 20] [--json PATH]

The log is written like an agent's (Claude Code's) session log: one JSON
object per line, assistant messages citing chunk IDs (some unknown, some
written with escapes: ``app\\/x.py``, an ID followed by ``\\n``), tool results
of escaped source text. The server runs over stdio with VS Code's pull
diagnostics. Baselines: ``json.loads`` of every line of the log (the least
any reading of it costs in Python), and hovers on the same IDs in a small
Markdown note.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

MODULES = 40
FUNCTIONS = 25
HOVERS = 50


def _uri(path: Path) -> str:
    return path.resolve().as_uri()


def make_workspace(work: Path) -> list[str]:
    """A small corpus (``MODULES`` files of ``FUNCTIONS`` functions); its function IDs."""
    ids = []
    for m in range(MODULES):
        path = work / "app" / f"mod_{m}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        body = []
        for f in range(FUNCTIONS):
            body.append(
                f"def handler_{m}_{f}(x):\n    '''Handle case {f}.'''\n    return x + {f}\n"
            )
            ids.append(f"app/mod_{m}.py#function-handler_{m}_{f}")
        path.write_text("\n\n".join(body), encoding="utf-8")
    return ids


def make_log(ids: list[str], megabytes: float, seed: int = 7) -> str:
    """A JSONL session log of about ``megabytes`` MB."""
    rng = random.Random(seed)
    source = ("def f(x):\n    return {'k': \"v\", 'path': 'a/b.py'}  # comment\n" * 40).strip()
    lines: list[str] = []
    size = 0
    n = 0
    while size < megabytes * 1_000_000:
        n += 1
        if n % 3:
            record: dict[str, Any] = {
                "type": "user",
                "toolUseResult": {"stdout": source, "n": n},
                "uuid": f"{n:08x}-0000",
            }
        else:
            cited = rng.sample(ids, 3)
            unknown = f"app/mod_{rng.randrange(MODULES)}.py#function-gone_{n}"
            text = (
                f"The handler is {cited[0]}\nand see `{cited[1]}` or [this]({cited[2]}).\n"
                f"Earlier I cited {unknown}, which no longer exists.\n" + "Details. " * 60
            )
            record = {
                "type": "assistant",
                "message": {"role": "assistant", "content": [{"type": "text", "text": text}]},
                "uuid": f"{n:08x}-0001",
            }
        line = json.dumps(record)
        if n % 2 == 0:
            line = line.replace("/", "\\/")  # some writers escape every slash
        lines.append(line)
        size += len(line) + 1
    return "\n".join(lines) + "\n"


def positions_of(text: str, needles: list[str]) -> list[dict[str, int]]:
    """An LSP position inside the first occurrence of each needle (ASCII text)."""
    found = []
    for needle in needles:
        at = text.find(needle)
        if at < 0:
            continue
        at += len(needle) // 2
        line = text.count("\n", 0, at)
        found.append({"line": line, "character": at - (text.rfind("\n", 0, at) + 1)})
    return found


def _stats(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": statistics.median(ordered),
        "p95_ms": ordered[min(len(ordered) - 1, round(0.95 * len(ordered)))],
        "n": len(ordered),
    }


def bench_jsonl(megabytes: float = 20) -> dict[str, Any]:
    """Time to diagnostics and hover latency on a ``megabytes`` MB JSONL log."""
    from lsp_client import Client

    work = Path(tempfile.mkdtemp(prefix="chunkls-bench-jsonl-"))
    try:
        ids = make_workspace(work)
        text = make_log(ids, megabytes)
        log = work / "logs" / "session.jsonl"
        log.parent.mkdir()
        log.write_text(text, encoding="utf-8")
        rng = random.Random(3)
        hovered = rng.sample(ids, HOVERS)
        # the IDs in the log as written (with "\/" on the escaped lines)
        in_log = [i for i in hovered if i in text] + [
            i.replace("/", "\\/") for i in hovered if i.replace("/", "\\/") in text
        ]
        log_positions = positions_of(text, in_log)[:HOVERS]
        note = work / "note.md"
        note_text = "# Notes\n\n" + "".join(f"- see `{i}` here\n" for i in hovered)
        note.write_text(note_text, encoding="utf-8")
        note_positions = positions_of(note_text, hovered)

        started = time.perf_counter()
        for line in text.splitlines():
            json.loads(line)
        loads_s = time.perf_counter() - started

        env = {**os.environ, "XDG_CACHE_HOME": str(work / "cache")}
        stderr = (work / "server.log").open("wb")
        client = Client([sys.executable, "-m", "chunkls", "serve"], REPO, stderr=stderr, env=env)
        try:
            client.request(
                "initialize",
                {
                    "processId": os.getpid(),
                    "rootUri": _uri(work),
                    "workspaceFolders": [{"uri": _uri(work), "name": "work"}],
                    "capabilities": {
                        "window": {"workDoneProgress": True},
                        "workspace": {
                            "workspaceFolders": True,
                            "configuration": True,
                            "diagnostics": {"refreshSupport": True},
                        },
                        "textDocument": {
                            "hover": {"contentFormat": ["markdown", "plaintext"]},
                            "diagnostic": {},
                        },
                    },
                },
            )
            client.notify("initialized", {})
            client.wait_indexed(120)

            def open_doc(path: Path, language: str, body: str) -> None:
                client.notify(
                    "textDocument/didOpen",
                    {
                        "textDocument": {
                            "uri": _uri(path),
                            "languageId": language,
                            "version": 1,
                            "text": body,
                        }
                    },
                )

            def hover_params(path: Path, position: dict[str, int]) -> dict[str, Any]:
                return {"textDocument": {"uri": _uri(path)}, "position": position}

            open_doc(note, "markdown", note_text)
            note_ms = [
                client.request("textDocument/hover", hover_params(note, p)).ms
                for p in note_positions * 2
            ]

            # the log opens; its diagnostics are pulled, and a hover comes meanwhile
            opened = time.perf_counter()
            open_doc(log, "jsonl", text)
            diagnostic = client.send(
                "textDocument/diagnostic", {"textDocument": {"uri": _uri(log)}}
            )
            sent_hover = time.perf_counter()
            first_hover = client.send("textDocument/hover", hover_params(log, log_positions[-1]))
            answers = client.collect({diagnostic, first_hover})
            diagnostics_s = answers[diagnostic].received - opened
            items = answers[diagnostic].message["result"]["items"]
            during_ms = (answers[first_hover].received - sent_hover) * 1000
            hover_first = answers[first_hover].received < answers[diagnostic].received
            assert answers[first_hover].message["result"] is not None, "no hover in the log"

            log_ms = [
                client.request("textDocument/hover", hover_params(log, p)).ms
                for p in log_positions * 2
            ]
        finally:
            client.close()
            stderr.close()
        return {
            "log_mb": len(text.encode("utf-8")) / 1_000_000,
            "log_lines": text.count("\n"),
            "json_loads_s": loads_s,
            "diagnostics_s": diagnostics_s,
            "diagnostics": len(items),
            "hover_during_diagnostics_ms": during_ms,
            "hover_answered_before_diagnostics": hover_first,
            "hover_log": _stats(log_ms),
            "hover_note": _stats(note_ms),
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)


def rows(result: dict[str, Any]) -> list[tuple[str, str, str, str, str, bool | None]]:
    """Report rows: (measurement, value, baseline, ratio, target, met)."""
    if "error" in result:
        return [("20 MB JSONL log", f"error: {result['error']}", "", "", "", False)]
    mb = f"{result['log_mb']:.0f} MB JSONL log"
    diag = result["diagnostics_s"]
    loads = result["json_loads_s"]
    log, note = result["hover_log"], result["hover_note"]
    return [
        (
            f"{mb}: open to diagnostics ({result['diagnostics']} reported)",
            f"{diag:.2f} s",
            f"{loads:.2f} s (json.loads of every line)",
            f"{diag / loads:.2f}x",
            "< 5 s",
            diag < 5,
        ),
        (
            f"{mb}: hover while diagnostics are computed",
            f"{result['hover_during_diagnostics_ms']:.0f} ms"
            + (
                " (before them)" if result["hover_answered_before_diagnostics"] else " (after them)"
            ),
            f"{diag * 1000:.0f} ms (diagnostics)",
            f"{result['hover_during_diagnostics_ms'] / (diag * 1000):.2f}x",
            "answered before the diagnostics",
            bool(result["hover_answered_before_diagnostics"]),
        ),
        (
            f"{mb}: hover p50 / p95",
            f"{log['p50_ms']:.2f} / {log['p95_ms']:.2f} ms",
            f"{note['p50_ms']:.2f} / {note['p95_ms']:.2f} ms (small Markdown note)",
            f"{log['p50_ms'] / note['p50_ms']:.2f}x",
            "p95 < 50 ms",
            log["p95_ms"] < 50,
        ),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=20)
    parser.add_argument("--json", type=Path, default=None, help="also write the results here")
    args = parser.parse_args()
    result = bench_jsonl(args.mb)
    print("| measurement | chunkls | baseline | ratio | target | met |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name, value, baseline, ratio, target, met in rows(result):
        mark = "" if met is None else ("yes" if met else "NO")
        print(f"| {name} | {value} | {baseline} | {ratio} | {target} | {mark} |")
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
