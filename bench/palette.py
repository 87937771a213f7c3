"""Search as you type, this tree against another: the palette's and Go to Symbol's requests.

    uv run python bench/palette.py --baseline TREE [--corpus DIR] [--rounds N] [--json PATH]

The palette's Search Chunks sends `workspace/executeCommand chunkls.search` for what
is typed (after a 150 ms pause, so a fast typist's every prefix can be a request),
and "Go to Symbol in Workspace" sends `workspace/symbol` for each prefix. This starts
both trees' `chunkls serve` on the same corpus (default: the standard library), each
with a warm cache of its own, waits until both are indexed, then sends every prefix
(from two characters) of a fixed list of typed queries, names and questions, to one
server and then the other, alternating which goes first, ``--rounds`` times. Each
side gets the arguments its own client sends (the search command's `withReason`
exists only where the tree's server accepts it; `parts: false` where its client
lists results without their best parts, and then, when a whole query is typed,
opening the first result costs one `chunkls.jumpTarget`; both declare, as VS Code's
client does, that they resolve a workspace symbol's range, and choosing the first
symbol listed without one costs one `workspaceSymbol/resolve`). It prints p50 / p95
per request kind and side, and the ratio this tree / baseline; nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

from lsp_client import Client  # noqa: E402

TYPED = [
    "ThreadPoolExecutor",
    "urlretrieve",
    "BaseHTTPRequestHandler",
    "get_event_loop",
    "json decoder",
    "parse arguments",
    "how are http headers parsed",
    "read a zip file",
    "thread safe queue",
    "SequenceMatcher",
]
"""What is typed: names (whole, as one types them) and questions (a word at a time)."""


_SOURCE = "import chunkls.lsp.commands as m, inspect; print(inspect.getsource(m))"


LABELS = {
    "search": "chunkls.search (Search Chunks)",
    "symbol": "workspace/symbol",
    "open": "opening the first result (chunkls.jumpTarget, once per query)",
    "resolve": "choosing the first symbol (workspaceSymbol/resolve, once per query)",
}


def prefixes(typed: str) -> list[str]:
    """Every prefix one types on the way to ``typed``, from two characters."""
    return [typed[:end] for end in range(2, len(typed) + 1) if not typed[:end].endswith(" ")]


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


class Side:
    """One tree's server on the corpus, with a cache of its own."""

    def __init__(self, name: str, tree: Path, cache: Path, corpus: Path) -> None:
        self.name = name
        python = tree / ".venv" / "bin" / "python"
        env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
        for key in ("PYTHONPATH", "VIRTUAL_ENV"):
            env.pop(key, None)
        self.python = str(python if python.exists() else Path(sys.executable))
        source = subprocess.run(
            [self.python, "-c", _SOURCE],
            cwd=tree,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        self.with_reason = "with_reason" in source or "withReason" in source
        """Whether this tree's client asks for the reason too (its server reads it)."""
        self.lazy = "jump_target" in source
        """Whether this tree's client lists results without their parts (``parts:
        false``) and asks ``chunkls.jumpTarget`` for the one opened."""
        # a cold index fills the cache; the timed server restarts on it (warm)
        subprocess.run(
            [self.python, "-m", "chunkls", "search", "warm up", "--root", str(corpus)],
            cwd=tree,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=False,
        )
        self.client = Client([self.python, "-m", "chunkls", "serve"], tree, env=env)
        uri = corpus.resolve().as_uri()
        self.client.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": uri,
                "workspaceFolders": [{"uri": uri, "name": "corpus"}],
                # as VS Code's client: a symbol's range resolved when it is chosen
                "capabilities": {
                    "window": {"workDoneProgress": True},
                    "workspace": {"symbol": {"resolveSupport": {"properties": ["location.range"]}}},
                },
            },
        )
        self.client.notify("initialized", {})
        self.client.wait_indexed(600)
        self.samples: dict[str, list[float]] = {
            "search": [],
            "symbol": [],
            "open": [],
            "resolve": [],
        }

    def search(self, query: str) -> list[dict[str, Any]]:
        argument: dict[str, Any] = {"query": query, "topK": 50}
        if self.with_reason:
            argument["withReason"] = True
        if self.lazy:
            argument["parts"] = False
        answer = self.client.request(
            "workspace/executeCommand", {"command": "chunkls.search", "arguments": [argument]}
        )
        if "error" in answer.message:
            raise RuntimeError(f"{self.name}: chunkls.search {query!r}: {answer.message['error']}")
        self.samples["search"].append(answer.ms)
        result = answer.message.get("result")
        found: list[dict[str, Any]] = result["results"] if isinstance(result, dict) else result
        return found

    def open(self, query: str, result: dict[str, Any]) -> None:
        """What opening a result costs beyond its listing: one ``chunkls.jumpTarget``
        where the client asks one (else nothing: 0 ms)."""
        if not self.lazy:
            self.samples["open"].append(0.0)
            return
        argument = {
            "query": query,
            "chunkId": result["chunkId"],
            "uri": result["uri"],
            "line": result["range"]["start"]["line"],
        }
        answer = self.client.request(
            "workspace/executeCommand", {"command": "chunkls.jumpTarget", "arguments": [argument]}
        )
        if "error" in answer.message or not answer.message.get("result"):
            raise RuntimeError(f"{self.name}: chunkls.jumpTarget {argument}: {answer.message}")
        self.samples["open"].append(answer.ms)

    def symbol(self, query: str) -> list[dict[str, Any]]:
        answer = self.client.request("workspace/symbol", {"query": query})
        if "error" in answer.message:
            error = answer.message["error"]
            raise RuntimeError(f"{self.name}: workspace/symbol {query!r}: {error}")
        self.samples["symbol"].append(answer.ms)
        return answer.message.get("result") or []

    def resolve(self, symbol: dict[str, Any]) -> None:
        """What choosing a symbol costs beyond its listing: one
        ``workspaceSymbol/resolve`` when it came without its range (else 0 ms)."""
        if "range" in symbol["location"]:
            self.samples["resolve"].append(0.0)
            return
        answer = self.client.request("workspaceSymbol/resolve", symbol)
        if "error" in answer.message or "range" not in answer.message["result"]["location"]:
            raise RuntimeError(f"{self.name}: workspaceSymbol/resolve {symbol}: {answer.message}")
        self.samples["resolve"].append(answer.ms)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, required=True, help="the other tree, its .venv")
    parser.add_argument("--corpus", type=Path, default=Path(sysconfig.get_paths()["stdlib"]))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="chunkls-palette-"))
    sides: list[Side] = []
    try:
        for name, tree in (("chunkls", REPO), ("baseline", args.baseline.resolve())):
            print(f"starting {name} ({tree}) ...", file=sys.stderr)
            sides.append(Side(name, tree, work / name, args.corpus))
        time.sleep(1.0)
        for turn in range(args.rounds):
            order = sides if turn % 2 == 0 else sides[::-1]
            for typed in TYPED:
                for query in prefixes(typed):
                    for side in order:
                        found = side.search(query)
                        symbols = side.symbol(query)
                        if query == typed and found:  # what was typed is done: one is opened
                            side.open(query, found[0])
                        if query == typed and symbols:
                            side.resolve(symbols[0])
        figures: dict[str, Any] = {"corpus": str(args.corpus), "rounds": args.rounds}
        print("| request, each prefix | this tree p50 / p95 | baseline p50 / p95 | ratio (p50) |")
        print("| --- | --- | --- | --- |")
        for kind in ("search", "symbol", "open", "resolve"):
            row = {}
            for side in sides:
                samples = side.samples[kind]
                row[side.name] = {
                    "p50_ms": statistics.median(samples),
                    "p95_ms": percentile(samples, 0.95),
                    "n": len(samples),
                }
            figures[kind] = row
            ours, base = row["chunkls"], row["baseline"]
            label = LABELS[kind]
            ratio = f"{ours['p50_ms'] / base['p50_ms']:.2f}x" if base["p50_ms"] else "-"
            print(
                f"| {label} | {ours['p50_ms']:.2f} / {ours['p95_ms']:.2f} ms"
                f" | {base['p50_ms']:.2f} / {base['p95_ms']:.2f} ms | {ratio} |"
            )
        if args.json:
            args.json.write_text(json.dumps(figures, indent=2) + "\n")
        return 0
    finally:
        for side in sides:
            side.client.close()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
