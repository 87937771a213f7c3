"""The MCP server's figures (``chunkls mcp`` over stdio), each beside its baseline.

    uv run python bench/mcp_bench.py [--corpus DIR] [--files 2000]

- tool-call latency, p50/p95, of ``search_chunks`` and ``read_chunk`` on the
  corpus, its index loaded, beside a ``ping`` (the SDK's stdio round trip with no
  work: the floor); and of the first searches after the start, answered from
  the cache read in place while the index loads (in the default mode and in
  ``bm25``, the ranking of a server without search modes);
- process start to the first answered search on a warm cache (either mode), beside the start
  of a Python that only imports the MCP SDK's server (what a start costs that
  waits for the SDK; ``chunkls mcp`` answers before it has loaded);
- the chunks as resources, the index loaded: one ``resources/list`` page (the
  first, and each page after it, walking every page by its cursor) and
  ``completion/complete`` of a chunk ID (path prefixes, names, an ID's start),
  p50/p95, beside a ``ping`` (``--resources-only`` measures these alone);
- freshness lag on a generated 2,000-file tree: a file written, then
  ``read_chunk`` asked for its new ID until it resolves; beside what the
  alternative design costs per call (one ``os.stat`` of every indexed file).

A plain JSON-RPC client over pipes (no SDK client: its schema checks would be
timed too). ``bench/run.py`` calls ``measure`` and ``rows``; run alone it prints
the rows.
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
import threading
import time
from pathlib import Path
from typing import Any

from stats import percentile

CALLS = 200
LAG_WRITES = 20
Result = dict[str, Any]


class Session:
    """``chunkls mcp --root ROOT`` with a bare JSON-RPC client on its pipes."""

    def __init__(self, root: Path, env: dict[str, str]) -> None:
        self.started = time.perf_counter()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "chunkls", "mcp", "--root", str(root)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        self.loaded = threading.Event()
        """Set once the server logs that its index is loaded."""
        threading.Thread(target=self._read_log, daemon=True).start()
        self.next_id = 0
        self.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "0"},
            },
        )
        self.notify("notifications/initialized")

    def _read_log(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            if b"chunkls mcp: indexed" in line:
                self.loaded.set()

    def wait_loaded(self) -> None:
        """Wait until the index is loaded (calls until then are answered from
        the cache read in place, while the load takes the CPU)."""
        if not self.loaded.wait(120):
            raise TimeoutError("the MCP server's index did not load within 120 s")

    def notify(self, method: str) -> None:
        self._write({"jsonrpc": "2.0", "method": method})

    def _write(self, message: Result) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write((json.dumps(message) + "\n").encode())
        self.process.stdin.flush()

    def request(self, method: str, params: Result) -> Result:
        self.next_id += 1
        self._write({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        assert self.process.stdout is not None
        while True:
            message = json.loads(self.process.stdout.readline())
            if message.get("id") == self.next_id:
                return message  # type: ignore[no-any-return]

    def tool(self, name: str, arguments: Result) -> Result:
        result: Result = self.request("tools/call", {"name": name, "arguments": arguments})[
            "result"
        ]
        return result

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=60)


def _timed(fn: Any, arguments: list[Any]) -> list[float]:
    samples = []
    for argument in arguments:
        started = time.perf_counter()
        fn(argument)
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def _stats(samples: list[float]) -> Result:
    return {"p50_ms": percentile(samples, 50), "p95_ms": percentile(samples, 95)}


QUERIES = [
    "parse arguments",
    "socket connect timeout",
    "json decode error",
    "thread lock acquire",
    "read file encoding",
    "http request header",
    "regular expression match",
    "path join normalize",
    "unicode escape",
    "datetime timezone offset",
]


def measure_calls(corpus: Path, env: dict[str, str]) -> Result:
    """Start on a cold cache, then again on the warm one; time the calls."""
    first = Session(corpus, env)
    first.tool("search_chunks", {"query": "warm"})  # indexes cold and fills the cache
    first.close()
    # the same starts ranking by ``bm25`` (a server without search modes has only
    # that ranking: what to set beside its start), alternated with the default's
    starts: list[float] = []
    starts_bm25: list[float] = []
    for n in range(6):
        bm25 = {"mode": "bm25"} if n % 2 else {}
        session = Session(corpus, env)
        answer = session.tool("search_chunks", {"query": "parse arguments", **bm25})
        (starts_bm25 if bm25 else starts).append(time.perf_counter() - session.started)
        assert not answer["isError"], answer
        if n < 5:
            session.close()
    loading: list[float] = []
    loading_bm25: list[float] = []
    for query in QUERIES:  # each query in both modes, the default first
        loading += _timed(lambda q: session.tool("search_chunks", {"query": q}), [query])
        loading_bm25 += _timed(
            lambda q: session.tool("search_chunks", {"query": q, "mode": "bm25"}), [query]
        )
    session.wait_loaded()
    ids = [
        hit["chunk_id"]
        for query in QUERIES
        for hit in session.tool("search_chunks", {"query": query})["structuredContent"]["results"]
    ]
    queries = [QUERIES[n % len(QUERIES)] for n in range(CALLS)]
    searches = _timed(lambda q: session.tool("search_chunks", {"query": q}), queries)
    reads = _timed(
        lambda i: session.tool("read_chunk", {"chunk_id": i}),
        [ids[n % len(ids)] for n in range(CALLS)],
    )
    pings = _timed(lambda _: session.request("ping", {}), list(range(CALLS)))
    resources = measure_resources(session)
    session.close()
    import_floor = []
    for _ in range(3):
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-c", "import mcp.server.lowlevel, mcp.server.stdio"],
            check=True,
            env=env,
        )
        import_floor.append(time.perf_counter() - started)
    return {
        "search": _stats(searches),
        "search_while_loading": _stats(loading),
        "search_while_loading_bm25": _stats(loading_bm25),
        "read": _stats(reads),
        "ping": _stats(pings),
        "resources": resources,
        "start_s": statistics.median(starts),
        "start_bm25_s": statistics.median(starts_bm25),
        "sdk_import_s": statistics.median(import_floor),
    }


COMPLETIONS = [
    "json/",
    "asyncio/base_",
    "http/client.py#class-HTTP",
    "email/_header_value_parser.py#function-get_",
    "Lib",
    "parse arguments",
    "HTTPConnection",
    "urlsplit",
    "ThreadPoolExecutor",
    "decode error",
    "",
    "HTTPConection",
    "ThrdPoolExec",
    "urlspilt",
    "jsndecoder",
]
"""What a person may type for the template's variable: path prefixes, an ID's
start, names and words, mistyped or abbreviated names (the fuzzy tier)."""


def measure_resources(session: Session) -> Result:
    """``resources/list`` pages (every one, by its cursor) and completions, timed
    over stdio once the index is loaded."""
    firsts = _timed(lambda _: session.request("resources/list", {}), list(range(20)))
    pages: list[float] = []
    listed = 0
    cursor: str | None = None
    while True:
        started = time.perf_counter()
        answer = session.request("resources/list", {"cursor": cursor} if cursor else {})
        pages.append((time.perf_counter() - started) * 1000)
        listed += len(answer["result"]["resources"])
        cursor = answer["result"].get("nextCursor")
        if cursor is None:
            break
    reference = {"type": "ref/resource", "uri": "chunkls:///{chunk_id}"}
    typed = [COMPLETIONS[n % len(COMPLETIONS)] for n in range(CALLS)]
    completions = _timed(
        lambda value: session.request(
            "completion/complete",
            {"ref": reference, "argument": {"name": "chunk_id", "value": value}},
        ),
        typed,
    )
    return {
        "list_first_page": _stats(firsts),
        "list_page": _stats(pages),
        "pages": len(pages),
        "listed": listed,
        "complete": _stats(completions),
    }


def measure_resources_only(corpus: Path, env: dict[str, str]) -> Result:
    """The resource figures alone, on a session of their own."""
    session = Session(corpus, env)
    session.wait_loaded()
    try:
        pings = _timed(lambda _: session.request("ping", {}), list(range(CALLS)))
        return {"ping": _stats(pings), "resources": measure_resources(session)}
    finally:
        session.close()


def make_tree(root: Path, files: int) -> None:
    """A tree of ``files`` Python and Markdown files in folders of 50."""
    for n in range(files):
        folder = root / f"pkg{n // 50:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        if n % 5 == 4:
            (folder / f"notes{n}.md").write_text(f"# Notes {n}\n\nAbout module {n}.\n")
        else:
            (folder / f"mod{n}.py").write_text(
                f'"""Module {n}."""\n\n\ndef work_{n}(x):\n    return x + {n}\n\n\n'
                f"class Thing{n}:\n    def run(self):\n        return {n}\n"
            )


def measure_freshness(files: int, env: dict[str, str]) -> Result:
    """Write a file, ask for its new chunk until it is there; the alternative's cost."""
    tree = Path(tempfile.mkdtemp(prefix="chunkls-mcp-tree-"))
    try:
        make_tree(tree, files)
        session = Session(tree, env)
        session.tool("search_chunks", {"query": "work"})
        lags = []
        folders = -(-files // 50)  # (``make_tree``'s; each write goes to one of them)
        for n in range(LAG_WRITES):
            path = tree / f"pkg{n % folders:03d}" / f"fresh{n}.py"
            started = time.perf_counter()
            path.write_text(f"def fresh_{n}():\n    return {n}\n")
            while session.tool(
                "read_chunk", {"chunk_id": f"{path.relative_to(tree)}#function-fresh_{n}"}
            )["isError"]:
                pass
            lags.append((time.perf_counter() - started) * 1000)
            time.sleep(0.05)
        session.close()
        indexed = [os.path.join(d, f) for d, _, names in os.walk(tree) for f in names]
        stat_costs = []
        for _ in range(5):
            started = time.perf_counter()
            for path_name in indexed:
                os.stat(path_name)
            stat_costs.append((time.perf_counter() - started) * 1000)
        return {
            "files": len(indexed),
            "lag": _stats(lags),
            "stat_check_ms": statistics.median(stat_costs),
        }
    finally:
        shutil.rmtree(tree, ignore_errors=True)


def measure(corpus: Path, files: int = 2000, resources_only: bool = False) -> Result:
    """Every MCP figure (on a cache of its own), or the resources' alone."""
    cache = tempfile.mkdtemp(prefix="chunkls-mcp-bench-")
    # bytecode written (outside the trees), as an installed chunkls and SDK have
    # it: this environment may set PYTHONDONTWRITEBYTECODE, and the SDK's modules
    # compiled from source at every start would be timed instead of the start
    env = {
        **os.environ,
        "XDG_CACHE_HOME": cache,
        "PYTHONPYCACHEPREFIX": os.path.join(cache, "pycache"),
    }
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    try:
        if resources_only:
            return measure_resources_only(corpus, env)
        return {**measure_calls(corpus, env), "freshness": measure_freshness(files, env)}
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def rows(result: Result) -> list[tuple[str, str, str, str, str, bool | None]]:
    """(measurement, value, baseline, ratio, target, met) rows for bench/run.py's table."""
    ping = result["ping"]["p50_ms"]
    out: list[tuple[str, str, str, str, str, bool | None]] = []
    resources = result.get("resources")
    if resources is not None:
        for key, name, goal, target in (
            ("list_first_page", "resources/list, the first page", "p95 < 50 ms", 50),
            ("list_page", f"resources/list, each of {resources['pages']} pages", "p95 < 50 ms", 50),
            ("complete", "completion/complete of a chunk ID", "p95 < 20 ms", 20),
        ):
            stats = resources[key]
            out.append(
                (
                    f"MCP {name}, p50 / p95",
                    f"{stats['p50_ms']:.2f} / {stats['p95_ms']:.2f} ms",
                    f"ping {ping:.2f} ms",
                    f"{stats['p50_ms'] / ping:.1f}x",
                    goal,
                    stats["p95_ms"] < target,
                )
            )
    if "search" not in result:
        return out
    for key, name in (("search", "search_chunks"), ("read", "read_chunk")):
        stats = result[key]
        out.append(
            (
                f"MCP {name} over stdio, p50 / p95",
                f"{stats['p50_ms']:.2f} / {stats['p95_ms']:.2f} ms",
                f"ping {ping:.2f} ms",
                f"{stats['p50_ms'] / ping:.1f}x",
                "p50 < 5 ms",
                stats["p50_ms"] < 5,
            )
        )
    for key, name in (
        ("search_while_loading", "while the index loads (the cache read in place)"),
        ("search_while_loading_bm25", "while the index loads, `bm25` mode"),
    ):
        loading = result.get(key)
        if loading is not None:
            out.append(
                (
                    f"MCP search_chunks {name}, p50 / p95",
                    f"{loading['p50_ms']:.2f} / {loading['p95_ms']:.2f} ms",
                    f"ping {ping:.2f} ms",
                    f"{loading['p50_ms'] / ping:.1f}x",
                    "",
                    None,
                )
            )
    floor = result["sdk_import_s"]
    for key, mode in (("start_s", ""), ("start_bm25_s", ", `bm25` mode")):
        if key in result:
            start = result[key]
            out.append(
                (
                    f"MCP process start to first answered search (warm cache){mode}",
                    f"{start:.2f} s",
                    f"{floor:.2f} s (python importing the MCP SDK server)",
                    f"{start / floor:.2f}x",
                    "< 1 s",
                    start < 1,
                )
            )
    fresh = result["freshness"]
    out.append(
        (
            f"MCP freshness lag after a write ({fresh['files']:,} files), p50 / p95",
            f"{fresh['lag']['p50_ms']:.1f} / {fresh['lag']['p95_ms']:.1f} ms",
            f"a stat check of every file: {fresh['stat_check_ms']:.1f} ms a call",
            "",
            "< 100 ms",
            fresh["lag"]["p95_ms"] < 100,
        )
    )
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=Path(sysconfig.get_paths()["stdlib"]))
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--resources-only", action="store_true", help="the resources' figures")
    args = parser.parse_args()
    result = measure(args.corpus.resolve(), args.files, args.resources_only)
    print(json.dumps(result, indent=2))
    for name, value, baseline, ratio, target, met in rows(result):
        mark = "" if met is None else ("yes" if met else "NO")
        print(f"| {name} | {value} | {baseline} | {ratio} | {target} | {mark} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
