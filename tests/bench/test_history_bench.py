"""bench/history.py end to end on a small generated history: every figure is
taken, and its ground truth judges what it should (never what a figure is)."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

from tests.unit.test_history import GONE, HELPER, PARSE, TOTAL, commit, git

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("bench_history", REPO / "bench" / "history.py")
assert _spec is not None and _spec.loader is not None
history = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(history)

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def test_the_ground_truth_is_conservative() -> None:
    old = {
        "a.py#function-parse_etag": PARSE.rstrip("\n"),
        "a.py#function-normalise_header_name": HELPER.rstrip("\n"),
        "a.py#function-launch_rockets": GONE.rstrip("\n"),
        "a.py#function-cart_total": TOTAL.replace("basket_total", "cart_total").rstrip("\n"),
        "a.py#function-kept": "def kept():\n    return 1",
    }
    today = {
        "a.py#function-kept": "def kept():\n    return 1",
        "b.py#function-normalise_header_name": HELPER.rstrip("\n"),
        "a.py#function-unquote": PARSE.replace("parse_etag", "unquote").rstrip("\n"),
        # renamed and edited: not judged
        "a.py#function-basket_total": TOTAL.replace("4.95", "5.95").rstrip("\n"),
    }
    assert history.ground_truth(old, today) == {
        "a.py#function-normalise_header_name": ("moved", "b.py#function-normalise_header_name"),
        "a.py#function-parse_etag": ("renamed", "a.py#function-unquote"),
        "a.py#function-launch_rockets": ("deleted", None),
    }


def test_every_figure_is_taken(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(history, "SCOPES", ("web/",))
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    commit(root, {"web/http.py": PARSE + "\n\n" + HELPER + "\n\n" + GONE}, "one")
    base = git(root, "rev-parse", "HEAD").strip()
    commit(
        root,
        {"web/http.py": PARSE.replace("parse_etag", "unquote_etag"), "web/headers.py": HELPER},
        "two",
    )
    figures = history.measure_repo(root, base)
    assert figures["stale_ids"] == 3
    assert figures["truth"] == {"moved": 1, "renamed": 1, "deleted": 1}
    for name in ("first_replacement_right", "fix_recall", "ms_per_stale_id_warm_p95"):
        assert isinstance(figures[name], float)
    assert isinstance(figures["fix_wrong_rewrites"], int)
    blobs = history.measure_blob_reads(root, blobs=3)  # (HEAD has two files)
    assert blobs["blobs"] == 2 and blobs["cat_file_batch_ms_per_blob"] > 0
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    jsonl = history.measure_jsonl(paths=4, ids=8, megabytes=1)
    assert (jsonl["stale_ids"], jsonl["reported"], jsonl["exit_code"]) == (8, 8, 1)
    assert jsonl["check_s_warm"] > 0
