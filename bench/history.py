"""History-aware resolution measured on this repository's own history (issue 45).

    uv run python bench/history.py [--base 4bb6c77] [--repo DIR] [--json PATH]

Every chunk ID of ``server/``, ``bench/`` and ``docs/`` at ``--base`` that no
longer resolves in the working tree is a stale ID. The ground truth is
conservative, and built without the code it measures:

- **moved**: exactly one chunk of today has the old text, under another ID;
- **renamed**: no chunk has the old text, and exactly one function or class
  has it once the old name is replaced by the new one;
- **deleted**: no chunk of today shares even a third of the old text's words;
- the rest (edited as well as moved or renamed) is counted, not judged.

It prints the first replacement's accuracy on moved and renamed IDs (what
``chunkls check`` and ``resolve`` offer first), ``--fix``'s recall (certain and
right) and its wrong rewrites (certain and wrong, or any rewrite of a deleted
one), the time per stale ID on a cold session (its git history opened) and a
warm one, ``git cat-file --batch`` against a ``git show`` per blob, and the time
``chunkls check`` takes over a 20 MB JSONL citing 1,000 stale IDs over 200 paths
of a generated repository whose functions were all renamed (cold: the first
run, which indexes; warm: the next). No figure is asserted here: the goals are
in docs/performance.md.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "server"))

from chunkls.chunking.chunker import ChunkingError, chunk_source, decode_source  # noqa: E402
from chunkls.cli import main as chunkls  # noqa: E402
from chunkls.index.session import Session  # noqa: E402

SCOPES = ("server/", "bench/", "docs/")
WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
GIT_ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
}


def git(root: Path, *args: str, data: bytes | None = None) -> bytes:
    return subprocess.run(
        ["git", *args], cwd=root, input=data, capture_output=True, check=True, env=GIT_ENV
    ).stdout


def chunks_at(root: Path, commit: str) -> dict[str, str]:
    """Every chunk ID of the scoped files at a commit, with its text."""
    listing = git(root, "ls-tree", "-r", "-z", commit).split(b"\0")
    wanted = []
    for entry in listing:
        if not entry:
            continue
        info, _, path = entry.decode("utf-8", "surrogateescape").partition("\t")
        mode, kind, blob = info.split()
        scoped = path.startswith(SCOPES) and path.endswith((".py", ".md"))
        if kind == "blob" and mode != "120000" and scoped:
            wanted.append((path, blob))
    batch = git(root, "cat-file", "--batch", data="".join(f"{b}\n" for _, b in wanted).encode())
    found: dict[str, str] = {}
    at = 0
    for path, _ in wanted:
        end = batch.index(b"\n", at)
        size = int(batch[at:end].split()[2])
        data = batch[end + 1 : end + 1 + size]
        at = end + 1 + size + 1
        try:
            for chunk in chunk_source(decode_source(data), path, path.rsplit("/", 1)[-1]):
                found.setdefault(chunk.chunk_id, chunk.text)
        except ChunkingError:
            continue
    return found


def unnamed(text: str, name: str) -> str:
    return re.sub(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", "\0", text)


def ground_truth(old: dict[str, str], today: dict[str, str]) -> dict[str, tuple[str, str | None]]:
    """Stale ID -> (kind, expected new ID) for the IDs the truth can judge."""
    by_text: dict[str, list[str]] = {}
    by_unnamed: dict[str, list[str]] = {}
    by_word: dict[str, set[str]] = {}
    for chunk_id, text in today.items():
        by_text.setdefault(text, []).append(chunk_id)
        kind, _, name = chunk_id.partition("#")[2].partition("-")
        if kind in ("function", "class"):
            by_unnamed.setdefault(unnamed(text, name), []).append(chunk_id)
        for word in set(WORD.findall(text)):
            by_word.setdefault(word, set()).add(chunk_id)
    truth: dict[str, tuple[str, str | None]] = {}
    for chunk_id, text in old.items():
        if chunk_id in today:
            continue
        same = by_text.get(text, [])
        if len(same) == 1:
            truth[chunk_id] = ("moved", same[0])
            continue
        if same:
            continue  # the same text in several places: not judged
        kind, _, name = chunk_id.partition("#")[2].partition("-")
        if kind in ("function", "class"):
            renamed = [
                cid
                for cid in by_unnamed.get(unnamed(text, name), [])
                if cid.partition("#")[2].startswith(kind)
            ]
            if len(renamed) == 1:
                truth[chunk_id] = ("renamed", renamed[0])
                continue
        words = set(WORD.findall(text))
        shared: dict[str, int] = {}
        for word in words:
            for cid in by_word.get(word, ()):
                shared[cid] = shared.get(cid, 0) + 1
        if words and all(count < len(words) / 3 for count in shared.values()):
            truth[chunk_id] = ("deleted", None)
    return truth


def ask(session: Session, question: Any) -> Any:
    return session.ask(question)


def measure_repo(root: Path, base: str) -> dict[str, Any]:
    old = chunks_at(root, base)
    session = Session(None, workers=1)
    session.add_root(root)
    session.catch_up()
    today = {entry.chunk.chunk_id: entry.chunk.text for entry in session.queries.chunks()}
    stale = sorted(cid for cid in old if cid not in today)
    truth = ground_truth(old, today)
    session.close()

    cold = Session(None, workers=1)  # a cold one: its git history opened by the first lookup
    cold.add_root(root)
    cold.catch_up()
    started = time.perf_counter()
    answers = {cid: ask(cold, lambda q, c=cid: q.replacement(c)) for cid in stale}
    cold_s = time.perf_counter() - started
    started = time.perf_counter()
    each = []
    for cid in stale:  # what a hover asks, once its path's history was read
        asked = time.perf_counter()
        ask(cold, lambda q, c=cid: q.replacement(c))
        each.append(time.perf_counter() - asked)
    warm_s = time.perf_counter() - started
    p95 = statistics.quantiles(each, n=20)[-1] if len(each) >= 2 else 0.0
    firsts = {cid: ask(cold, lambda q, c=cid: q.fix_candidates(c)) for cid in truth}
    cold.close()

    judged = {cid: row for cid, row in truth.items() if row[0] in ("moved", "renamed")}
    right_first = sum(1 for cid, (_, new) in judged.items() if firsts[cid][:1] == [new])
    fixed_right = sum(
        1
        for cid, (_, new) in judged.items()
        if (a := answers[cid]) is not None and a.certain and a.chunk_id == new
    )
    wrong = [
        cid
        for cid, (_, new) in truth.items()
        if (a := answers[cid]) is not None and a.certain and a.chunk_id != new
    ]
    unjudged_rewrites = sum(
        1 for cid in stale if cid not in truth and (a := answers[cid]) is not None and a.certain
    )
    kinds: dict[str, int] = {}
    for answer in answers.values():
        kind = answer.kind if answer is not None else "no history"
        kinds[kind] = kinds.get(kind, 0) + 1
    return {
        "base": base,
        "old_ids": len(old),
        "stale_ids": len(stale),
        "truth": {
            k: sum(1 for r in truth.values() if r[0] == k) for k in ("moved", "renamed", "deleted")
        },
        "answered": kinds,
        "first_replacement_right": round(right_first / max(1, len(judged)), 4),
        "fix_recall": round(fixed_right / max(1, len(judged)), 4),
        "fix_wrong_rewrites": len(wrong),
        "wrong": wrong[:10],
        "fix_rewrites_not_judged": unjudged_rewrites,
        "ms_per_stale_id_cold": round(cold_s * 1000 / max(1, len(stale)), 3),
        "ms_per_stale_id_warm": round(warm_s * 1000 / max(1, len(stale)), 3),
        "ms_per_stale_id_warm_p95": round(p95 * 1000, 3),
    }


def measure_blob_reads(root: Path, blobs: int = 300) -> dict[str, float]:
    """``git cat-file --batch`` (one process) against ``git show`` per blob."""
    names = [
        line.split()[2]
        for line in git(root, "ls-tree", "-r", "HEAD").decode().splitlines()
        if line.split()[1] == "blob"
    ][:blobs]
    started = time.perf_counter()
    process = subprocess.Popen(
        ["git", "cat-file", "--batch"], cwd=root, stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert process.stdin is not None and process.stdout is not None
    for name in names:
        process.stdin.write(f"{name}\n".encode())
        process.stdin.flush()
        size = int(process.stdout.readline().split()[2])
        process.stdout.read(size + 1)
    process.stdin.close()
    process.wait()
    batch = time.perf_counter() - started
    started = time.perf_counter()
    for name in names:
        git(root, "show", name)
    shown = time.perf_counter() - started
    return {
        "blobs": len(names),
        "cat_file_batch_ms_per_blob": round(batch * 1000 / len(names), 3),
        "git_show_ms_per_blob": round(shown * 1000 / len(names), 3),
    }


def measure_jsonl(paths: int = 200, ids: int = 1000, megabytes: int = 20) -> dict[str, Any]:
    """``chunkls check`` over a 20 MB JSONL citing 1,000 stale IDs over 200 paths
    of a generated repository whose every function was renamed since."""
    with tempfile.TemporaryDirectory() as temporary:
        root = Path(temporary) / "repo"
        root.mkdir()
        git(root, "init", "-q", "-b", "main")
        per_file = ids // paths
        rng = random.Random(45)
        for number in range(paths):
            body = "\n\n".join(
                f"def task_{number}_{n}(value):\n"
                f'    """Step {n} of stage {number}: {rng.random():.12f}."""\n'
                f"    return value * {number} + {n} - {rng.randrange(10**6)}\n"
                for n in range(per_file)
            )
            (root / "pkg").mkdir(exist_ok=True)
            (root / "pkg" / f"mod_{number}.py").write_text(body)
        git(root, "add", "-A")
        git(root, "commit", "-qm", "one")
        stale = []
        for number in range(paths):
            path = root / "pkg" / f"mod_{number}.py"
            path.write_text(path.read_text().replace("def task_", "def job_"))
            stale += [f"pkg/mod_{number}.py#function-task_{number}_{n}" for n in range(per_file)]
        git(root, "commit", "-qam", "renamed every function")
        filler = "x" * 200
        lines = []
        size = 0
        turn = 0
        while size < megabytes * 1024 * 1024:
            cited = stale[turn % len(stale)] if turn < len(stale) else "no citation"
            line = json.dumps({"turn": turn, "role": "assistant", "text": f"{cited} {filler}"})
            lines.append(line)
            size += len(line) + 1
            turn += 1
        log = root / "session.jsonl"
        log.write_text("\n".join(lines) + "\n")
        cache = Path(temporary) / "cache"
        os.environ["XDG_CACHE_HOME"] = str(cache)
        times = []
        for _ in range(2):
            out, err = io.StringIO(), io.StringIO()
            started = time.perf_counter()
            code = chunkls(["check", str(log), "--format", "json", "--root", str(root)], out, err)
            times.append(time.perf_counter() - started)
        found = json.loads(out.getvalue())
        renamed = sum(1 for item in found if (item["replacement"] or {}).get("kind") == "renamed")
        return {
            "jsonl_mb": round(log.stat().st_size / 1024 / 1024, 1),
            "stale_ids": len(stale),
            "paths": paths,
            "exit_code": code,
            "reported": len(found),
            "replaced_as_renamed": renamed,
            "check_s_cold": round(times[0], 3),
            "check_s_warm": round(times[1], 3),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default="4bb6c77")
    parser.add_argument("--repo", type=Path, default=REPO)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    try:
        git(args.repo, "cat-file", "-e", f"{args.base}^{{commit}}")
    except subprocess.CalledProcessError:
        sys.exit(f"history.py: {args.base} is not in {args.repo}'s history (a shallow clone?)")
    results = {
        "repo": measure_repo(args.repo, args.base),
        "blob_reads": measure_blob_reads(args.repo),
        "jsonl": measure_jsonl(),
    }
    repo = results["repo"]
    print(f"stale IDs since {args.base}: {repo['stale_ids']} (truth: {repo['truth']})")
    print(f"answered as: {repo['answered']}")
    print(f"first replacement right, moved and renamed: {repo['first_replacement_right']:.1%}")
    print(f"--fix recall: {repo['fix_recall']:.1%}; wrong rewrites: {repo['fix_wrong_rewrites']}")
    print(f"--fix rewrites the truth does not judge: {repo['fix_rewrites_not_judged']}")
    cold, warm = repo["ms_per_stale_id_cold"], repo["ms_per_stale_id_warm"]
    p95 = repo["ms_per_stale_id_warm_p95"]
    print(f"per stale ID: {cold} ms cold, {warm} ms warm (p95 {p95} ms: a hover's lookup)")
    blobs = results["blob_reads"]
    print(
        f"blob reads ({blobs['blobs']}): cat-file --batch {blobs['cat_file_batch_ms_per_blob']} ms,"
        f" git show {blobs['git_show_ms_per_blob']} ms per blob"
    )
    jsonl = results["jsonl"]
    print(
        f"check of a {jsonl['jsonl_mb']} MB JSONL, {jsonl['stale_ids']} stale IDs over"
        f" {jsonl['paths']} paths: {jsonl['check_s_cold']} s cold, {jsonl['check_s_warm']} s warm"
        f" ({jsonl['replaced_as_renamed']} renamed found)"
    )
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
