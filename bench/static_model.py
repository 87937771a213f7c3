"""The model lead of issue 43 (point 7), measured: a static code embedding trained
here, from code whose licence allows it, re-ranking ``hybrid``'s best candidates.

    uv run python bench/static_model.py train --out DIR [--dims D] [--vocab V] [--epochs E]
    uv run python bench/static_model.py measure --model DIR [--retrieval SET ...]
        [--peer CHECKOUTS ANNOTATIONS REPOS.json] [--weight W] [--depth N]

``train`` collects docstring-to-code pairs as ``bench/retrieval.py`` makes its
queries (each top-level function's and class's docstring, first sentence, its name
taken out; the definition's chunk, as chunkls chunks the copy with the docstrings
removed), from the standard library (PSF) and the permissively licensed packages of
this project's locked environment (``.venv``), LESS every tree a benchmark uses:
``bench/retrieval.py``'s standard-library sets and every Python repository of the
peer benchmark's ``repos.json`` (held-out ones included). It writes ``DIR/manifest.json``
(each package, its licence and its pair count) and ``DIR/model.npz`` (the token
vectors, int8, with the vocabulary and each token's IDF).

The model: a text's vector is the normalised weighted sum of its tokens' vectors
(chunkls's tokenizer); a token's weight is its IDF (a chunk's body: times ``1 + log
tf``), times ``NAME`` for the chunk ID's name parts and ``PATH`` for its path parts;
a token outside the vocabulary gets a fixed pseudo-random vector (seeded by the
token). Trained with in-batch negatives (symmetric InfoNCE), numpy only, a few
minutes on one core.

``measure`` re-ranks ``hybrid``'s top ``--depth`` (64) by ``(1 - W) * score / max +
W * cosine`` (W = 0.65: the hybrid score scaled by the best candidate's) and prints
MRR@10 on ``bench/retrieval.py``'s pairs (each ``--retrieval`` set of standard-library
packages, 500 pairs, seed 0) and semble's NDCG@10 on the peer development set, each
beside ``hybrid`` alone. Training never runs in tests except on a tiny tree.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import re
import shutil
import sys
import sysconfig
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "server"))
sys.path.insert(0, str(REPO / "bench"))

import retrieval  # noqa: E402  (its corpus, queries and pairs)

# -- what training may read ---------------------------------------------------------------

RETRIEVAL_SETS = {
    "std": list(retrieval.DEFAULT_PACKAGES),
    "std2": ["unittest", "xml", "multiprocessing", "idlelib", "ctypes"],
}
"""``bench/retrieval.py``'s standard-library sets (``std2`` as docs/search.md names it)."""
PEER_TREES = {
    # every Python repository of semble's benchmarks/repos.json, held-out ones included
    "aiohttp", "fastapi", "flask", "httpx", "model2vec", "pydantic", "requests",
    "starlette", "click",
    # the other trees bench/retrieval.py was run on (docs/search.md)
    "sqlalchemy", "django",
    # the peer's own compiled core (pydantic's), kept out with it
    "pydantic_core",
}  # fmt: skip
STDLIB_SKIPPED = {"test", "site-packages", "lib2to3", "tkinter", "turtledemo"}
"""Standard-library folders not read: its test suite (test docstrings describe tests),
the installed packages, and folders of little code."""
PERMISSIVE = {
    "mit", "mit-0", "bsd", "bsd-2-clause", "bsd-3-clause", "0bsd", "apache-2.0",
    "apache 2.0", "apache2.0", "apache software license", "isc", "psf-2.0", "python-2.0", "zlib",
    "cc0-1.0", "unlicense", "mit license", "bsd license", "isc license (iscl)",
    "python software foundation license", "apache license 2.0",
}  # fmt: skip


def licence_of(dist: metadata.Distribution) -> str | None:
    """A distribution's licence as its metadata states it (an SPDX expression, the
    ``License`` field, or the classifiers), or None."""
    meta = dist.metadata
    expression = meta.get("License-Expression")
    if expression:
        return str(expression).strip()
    licences = [
        c.split("::")[-1].strip()
        for c in meta.get_all("Classifier") or []
        if c.startswith("License ::")
    ]
    if licences:
        return " OR ".join(licences)
    field = meta.get("License")
    return str(field).strip().splitlines()[0] if field and len(str(field)) < 80 else None


def permissive(licence: str | None) -> bool:
    """Whether a licence (expression) lets the weights go out under MIT: every part
    of an AND, one part of an OR, is permissive."""
    if not licence:
        return False
    for alternative in re.split(r"\s+OR\s+", licence.replace("(", "").replace(")", "")):
        parts = [p.strip().lower() for p in re.split(r"\s+AND\s+", alternative)]
        if all(p in PERMISSIVE for p in parts):
            return True
    return False


def training_sources(site: Path) -> tuple[list[tuple[Path, str]], list[dict[str, Any]]]:
    """The folders to read, each with its name in the corpus, and the manifest rows
    (every package considered, its licence, and whether it is used)."""
    excluded_std = {p for packages in RETRIEVAL_SETS.values() for p in packages}
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    sources: list[tuple[Path, str]] = []
    rows: list[dict[str, Any]] = []
    for entry in sorted(stdlib.iterdir()):
        name = entry.name.removesuffix(".py")
        if entry.name.startswith(("_", ".")) or name in STDLIB_SKIPPED:
            continue
        if not (entry.is_dir() and (entry / "__init__.py").exists()) and entry.suffix != ".py":
            continue
        used = name not in excluded_std
        why = "PSF-2.0" if used else "PSF-2.0 (a bench/retrieval.py tree: left out)"
        rows.append({"package": f"stdlib:{name}", "licence": why, "used": used})
        if used:
            sources.append((entry, f"stdlib/{entry.name}"))
    for dist in sorted(metadata.distributions(path=[str(site)]), key=lambda d: d.name.lower()):
        tops = _top_levels(dist, site)
        licence = licence_of(dist)
        name = dist.name.lower().replace("-", "_")
        tree = {name, *tops} & PEER_TREES
        used = permissive(licence) and not tree and bool(tops)
        note = licence or "unknown"
        if tree:
            note += " (a benchmark tree: left out)"
        elif not permissive(licence):
            note += " (not permissive: left out)"
        elif not tops:
            note += " (no package in site-packages, e.g. this project's own: left out)"
        rows.append({"package": dist.name, "version": dist.version, "licence": note, "used": used})
        if used:
            sources += [(site / top, f"{dist.name}/{top}") for top in sorted(tops)]
    return sources, rows


def _top_levels(dist: metadata.Distribution, site: Path) -> set[str]:
    """A distribution's top-level package folders and modules in ``site``."""
    tops: set[str] = set()
    for file in dist.files or []:
        parts = Path(str(file)).parts
        if not parts or parts[0].endswith((".dist-info", ".data")) or parts[0] == "..":
            continue
        top = parts[0]
        if (site / top).is_dir() or top.endswith(".py"):
            tops.add(top)
    return {t for t in tops if not t.startswith("__")}


# -- the model ----------------------------------------------------------------------------

NAME = 2.0
"""A chunk ID's name parts' weight (times their IDF)."""
PATH = 1.0
"""A chunk ID's path parts' weight (times their IDF)."""
MAX_TOKENS = 192
"""A chunk's heaviest tokens kept (its vector; the rest add little)."""


def tokens(text: str) -> list[str]:
    from chunkls.search.tokens import tokenize

    return [t for t in tokenize(text) if not t.isdigit()]


def query_bag(text: str, idf: dict[str, float], default_idf: float) -> dict[str, float]:
    """A query's tokens and weights (each once, by its IDF)."""
    return {t: idf.get(t, default_idf) for t in sorted(set(tokens(text)))}


def chunk_bag(
    chunk_id: str, text: str, idf: dict[str, float], default_idf: float
) -> dict[str, float]:
    """A chunk's tokens and weights: its body's ``(1 + log tf) * idf``, plus its ID's
    path parts (``PATH``) and name parts (``NAME``)."""
    path, _, identity = chunk_id.partition("#")
    bag: dict[str, float] = {}
    for token, count in Counter(tokens(text)).items():
        bag[token] = (1 + math.log(count)) * idf.get(token, default_idf)
    name = identity.partition("-")[2]
    for weight, part in ((PATH, path.removesuffix(".py")), (NAME, name)):
        for token in sorted(set(tokens(part))):
            bag[token] = bag.get(token, 0.0) + weight * idf.get(token, default_idf)
    if len(bag) > MAX_TOKENS:
        bag = dict(sorted(bag.items(), key=lambda kv: -kv[1])[:MAX_TOKENS])
    return bag


def oov_vector(token: str, dims: int, scale: float) -> np.ndarray:
    """A token outside the vocabulary: a fixed pseudo-random vector (seeded by it)."""
    seed = int.from_bytes(hashlib.blake2b(token.encode(), digest_size=8).digest(), "little")
    return np.random.default_rng(seed).standard_normal(dims).astype(np.float32) * scale


class Model:
    """Token vectors, a vocabulary and IDFs: texts to unit vectors."""

    def __init__(self, vectors: np.ndarray, vocab: list[str], idf: np.ndarray) -> None:
        self.vectors = vectors.astype(np.float32)
        self.index = {token: i for i, token in enumerate(vocab)}
        self.idf = dict(zip(vocab, idf.tolist(), strict=True))
        self.chunks: dict[tuple[str, int], np.ndarray] = {}
        self.default_idf = float(idf.max()) if len(idf) else 1.0
        self.scale = float(np.linalg.norm(self.vectors, axis=1).mean()) / math.sqrt(
            self.vectors.shape[1]
        )

    @classmethod
    def load(cls, path: Path) -> Model:
        data = np.load(path / "model.npz", allow_pickle=False)
        vectors = data["vectors"].astype(np.float32) * data["scales"][:, None]
        return cls(vectors, data["vocab"].tolist(), data["idf"])

    def embed(self, bag: dict[str, float]) -> np.ndarray:
        dims = self.vectors.shape[1]
        total = np.zeros(dims, dtype=np.float32)
        for token, weight in bag.items():
            i = self.index.get(token)
            vector = self.vectors[i] if i is not None else oov_vector(token, dims, self.scale)
            total += weight * vector
        norm = float(np.linalg.norm(total))
        return total / norm if norm else total

    def query(self, text: str) -> np.ndarray:
        return self.embed(query_bag(text, self.idf, self.default_idf))

    def chunk(self, chunk_id: str, text: str) -> np.ndarray:
        key = (chunk_id, hash(text))
        vector = self.chunks.get(key)
        if vector is None:
            vector = self.embed(chunk_bag(chunk_id, text, self.idf, self.default_idf))
            self.chunks[key] = vector
        return vector


def save(path: Path, vectors: np.ndarray, vocab: list[str], idf: np.ndarray) -> int:
    """The model as int8 rows with a scale each; its size in bytes."""
    scales = np.abs(vectors).max(axis=1) / 127.0
    scales[scales == 0] = 1.0
    quantised = np.round(vectors / scales[:, None]).astype(np.int8)
    path.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(
        path / "model.npz",
        vectors=quantised,
        scales=scales.astype(np.float32),
        vocab=np.array(vocab),
        idf=idf.astype(np.float32),
    )
    return (path / "model.npz").stat().st_size


# -- training -----------------------------------------------------------------------------


def collect_pairs(
    sources: list[tuple[Path, str]], work: Path
) -> tuple[list[tuple[str, str, str]], Counter[str]]:
    """(query, chunk ID, chunk text) for every eligible docstring of the sources, and
    the pair count per corpus folder."""
    staging = work.parent / "modules"  # (single modules: copy_corpus copies folders)
    folders: list[tuple[Path, str]] = []
    for path, name in sources:
        if path.is_file():
            (staging / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, staging / name)
        else:
            folders.append((path, name))
    if staging.exists():
        folders.append((staging, "."))
    candidates = retrieval.copy_corpus(folders, work)
    index = retrieval.chunkls_index(work, "hybrid")
    chunks = retrieval.chunkls_chunks(index)
    texts = dict(chunks)
    id_counts = Counter(chunk_id for chunk_id, _ in chunks)
    pairs, _ = retrieval.eligible_pairs(candidates, id_counts)
    seen: set[str] = set()
    found: list[tuple[str, str, str]] = []
    per_source: Counter[str] = Counter()
    docstrings = {c.target: (c.docstring, c.name) for c in candidates}
    for pair in pairs:
        queries = [pair.query]
        if PARAGRAPHS:
            queries.append(paragraph(*docstrings[pair.target]))
        for query in queries:
            if not query or query.lower() in seen:
                continue
            seen.add(query.lower())
            found.append((query, pair.target, texts[pair.target]))
        parts = pair.target.split("/")
        per_source["/".join(parts[:2]) if parts[0] == "stdlib" else parts[0]] += 1
    for query, target, code in method_pairs(work) if METHODS else []:
        if query.lower() in seen:
            continue
        seen.add(query.lower())
        found.append((query, target, code))
        parts = target.split("/")
        per_source["/".join(parts[:2]) if parts[0] == "stdlib" else parts[0]] += 1
    return found, per_source


PARAGRAPHS = False
"""Whether each docstring's first paragraph (up to ``PARAGRAPH_WORDS``) makes a
second pair beside its first sentence."""
PARAGRAPH_WORDS = 64


def paragraph(docstring: str, name: str) -> str:
    """A docstring's first paragraph without the name, its first words."""
    text = re.split(r"\n[ \t]*\n", docstring.strip(), maxsplit=1)[0]
    words = retrieval.remove_name(" ".join(text.split()), name).split()
    return " ".join(words[:PARAGRAPH_WORDS]) if len(words) >= retrieval.MIN_WORDS else ""


METHODS = True
"""Whether methods' docstrings make pairs too (the method's code, its docstring cut)."""


def method_pairs(corpus: Path) -> list[tuple[str, str, str]]:
    """(query, ID, code) per documented method of a top-level class: its query as
    ``bench/retrieval.py`` makes one, its ID ``path#function-Class.method``, its
    code without the docstring."""
    import ast

    found: list[tuple[str, str, str]] = []
    for path in sorted(corpus.rglob("*.py")):
        try:
            source = path.read_text(encoding="utf-8")
            module = ast.parse(source)
        except (UnicodeDecodeError, SyntaxError, ValueError):
            continue
        lines = source.splitlines()
        rel = path.relative_to(corpus).as_posix()
        for node in module.body:
            if not isinstance(node, ast.ClassDef):
                continue
            for method in node.body:
                if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                docstring = ast.get_docstring(method)
                query = retrieval.make_query(docstring, method.name) if docstring else None
                if query is None or docstring is None or method.end_lineno is None:
                    continue
                doc_node = method.body[0]
                assert doc_node.end_lineno is not None
                code = lines[method.lineno - 1 : doc_node.lineno - 1]
                code += lines[doc_node.end_lineno : method.end_lineno]
                target = f"{rel}#function-{node.name}.{method.name}"
                found.append((query, target, "\n".join(code)))
                if PARAGRAPHS:
                    found.append((paragraph(docstring, method.name), target, "\n".join(code)))
    return found


class Batches:
    """Bags as flat (row, token, weight) arrays, for a batch's sums and gradients."""

    def __init__(self, bags: list[dict[int, float]]) -> None:
        self.starts = np.zeros(len(bags) + 1, dtype=np.int64)
        self.starts[1:] = np.cumsum([len(b) for b in bags])
        self.tokens = np.fromiter(
            (t for b in bags for t in b), dtype=np.int64, count=int(self.starts[-1])
        )
        self.weights = np.fromiter(
            (w for b in bags for w in b.values()), dtype=np.float32, count=int(self.starts[-1])
        )

    def take(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(row in batch, token, weight) of the given bags."""
        lengths = self.starts[rows + 1] - self.starts[rows]
        where = np.concatenate([np.arange(self.starts[r], self.starts[r + 1]) for r in rows])
        return np.repeat(np.arange(len(rows)), lengths), self.tokens[where], self.weights[where]


def _sums(
    vectors: np.ndarray, part: tuple[np.ndarray, np.ndarray, np.ndarray], n: int
) -> np.ndarray:
    rows, toks, weights = part
    out = np.zeros((n, vectors.shape[1]), dtype=np.float32)
    np.add.at(out, rows, vectors[toks] * weights[:, None])
    return out


def _scatter(
    grad_rows: np.ndarray, part: tuple[np.ndarray, np.ndarray, np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """Each token's gradient: the sum over its (row, weight) of weight * the row's."""
    rows, toks, weights = part
    order = np.argsort(toks, kind="stable")
    toks_sorted = toks[order]
    contrib = grad_rows[rows[order]] * weights[order][:, None]
    unique, starts = np.unique(toks_sorted, return_index=True)
    return unique, np.add.reduceat(contrib, starts, axis=0)


def train(
    pairs: list[tuple[str, str, str]],
    dims: int,
    vocab_size: int,
    epochs: int,
    seed: int,
    lr: float = 0.01,
    tau: float = 0.05,
    batch: int = 256,
) -> tuple[np.ndarray, list[str], np.ndarray]:
    """Token vectors trained with in-batch negatives on (query, chunk) pairs."""
    rng = np.random.default_rng(seed)
    doc_freq: Counter[str] = Counter()
    for query, chunk_id, text in pairs:
        doc_freq.update(sorted(set(tokens(f"{chunk_id}\n{text}"))))
        doc_freq.update(sorted(set(tokens(query))))
    vocab = [t for t, c in doc_freq.most_common(vocab_size) if c >= 3]
    n_docs = 2 * len(pairs)
    idf_values = np.array([math.log(1 + n_docs / doc_freq[t]) for t in vocab], dtype=np.float32)
    idf = dict(zip(vocab, idf_values.tolist(), strict=True))
    default_idf = float(idf_values.max())
    index = {t: i for i, t in enumerate(vocab)}

    def ids(bag: dict[str, float]) -> dict[int, float]:
        return {index[t]: w for t, w in bag.items() if t in index}

    queries = Batches([ids(query_bag(q, idf, default_idf)) for q, _, _ in pairs])
    chunks = Batches([ids(chunk_bag(c, t, idf, default_idf)) for _, c, t in pairs])
    vectors = (rng.standard_normal((len(vocab), dims)) / math.sqrt(dims)).astype(np.float32)
    m = np.zeros_like(vectors)
    v = np.zeros_like(vectors)
    beta1, beta2 = 0.9, 0.999
    step = 0
    for epoch in range(epochs):
        order = rng.permutation(len(pairs))
        losses = []
        for start in range(0, len(order) - batch + 1, batch):
            rows = order[start : start + batch]
            qp, cp = queries.take(rows), chunks.take(rows)
            q_raw, c_raw = _sums(vectors, qp, batch), _sums(vectors, cp, batch)
            q_norm = np.linalg.norm(q_raw, axis=1, keepdims=True) + 1e-8
            c_norm = np.linalg.norm(c_raw, axis=1, keepdims=True) + 1e-8
            q, c = q_raw / q_norm, c_raw / c_norm
            scores = q @ c.T / tau
            row_p = np.exp(scores - scores.max(axis=1, keepdims=True))
            row_p /= row_p.sum(axis=1, keepdims=True)
            col_p = np.exp(scores - scores.max(axis=0, keepdims=True))
            col_p /= col_p.sum(axis=0, keepdims=True)
            diag = np.arange(batch)
            losses.append(
                float(-(np.log(row_p[diag, diag]) + np.log(col_p[diag, diag])).mean() / 2)
            )
            eye = np.eye(batch, dtype=np.float32)
            d_scores = ((row_p - eye) + (col_p - eye)) / (2 * batch * tau)
            d_q = d_scores @ c
            d_c = d_scores.T @ q
            d_q_raw = (d_q - q * (d_q * q).sum(axis=1, keepdims=True)) / q_norm
            d_c_raw = (d_c - c * (d_c * c).sum(axis=1, keepdims=True)) / c_norm
            step += 1
            for toks, grad in (_scatter(d_q_raw, qp), _scatter(d_c_raw, cp)):
                m[toks] = beta1 * m[toks] + (1 - beta1) * grad
                v[toks] = beta2 * v[toks] + (1 - beta2) * grad * grad
                m_hat = m[toks] / (1 - beta1**step)
                v_hat = v[toks] / (1 - beta2**step)
                vectors[toks] -= lr * m_hat / (np.sqrt(v_hat) + 1e-8)
        print(f"epoch {epoch + 1}: loss {np.mean(losses):.3f}", flush=True)
    return vectors, vocab, idf_values


def train_command(args: argparse.Namespace) -> int:
    global PARAGRAPHS
    PARAGRAPHS = args.paragraphs
    site = Path(args.site or sysconfig.get_paths()["purelib"])
    sources, rows = training_sources(site)
    if args.only:
        sources = [(path, name) for path, name in sources if any(o in name for o in args.only)]
    started = time.perf_counter()
    if args.pairs is not None and args.pairs.exists():
        cached = json.loads(args.pairs.read_text())
        pairs, per_source = [tuple(p) for p in cached["pairs"]], Counter(cached["per_source"])
    else:
        with tempfile.TemporaryDirectory(prefix="chunkls-model-") as tmp:
            pairs, per_source = collect_pairs(sources, Path(tmp) / "corpus")
        if args.pairs is not None:
            args.pairs.write_text(json.dumps({"pairs": pairs, "per_source": per_source}))
    print(f"{len(pairs)} pairs from {len(sources)} folders ({time.perf_counter() - started:.0f} s)")
    for row in rows:
        key = row["package"].replace("stdlib:", "stdlib/")
        row["pairs"] = sum(n for s, n in per_source.items() if s == key or s.startswith(f"{key}."))
        if not key.startswith("stdlib/"):
            row["pairs"] = per_source.get(row["package"], 0)
    started = time.perf_counter()
    hyper = {"lr": args.lr, "tau": args.tau, "batch": args.batch}
    vectors, vocab, idf = train(pairs, args.dims, args.vocab, args.epochs, args.seed, **hyper)
    size = save(args.out, vectors, vocab, idf)
    seconds = time.perf_counter() - started
    manifest = {
        "pairs": len(pairs),
        "dims": args.dims,
        "vocab": len(vocab),
        "epochs": args.epochs,
        **hyper,
        "seed": args.seed,
        "train_s": round(seconds, 1),
        "model_bytes": size,
        "excluded_trees": sorted(PEER_TREES)
        + [f"stdlib:{p}" for s in RETRIEVAL_SETS.values() for p in s],
        "packages": rows,
    }
    (args.out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(f"trained in {seconds:.0f} s; {len(vocab)} tokens x {args.dims}; {size / 1e6:.1f} MB")
    return 0


# -- measuring ----------------------------------------------------------------------------


def rerank(
    model: Model, query: str, hits: Sequence[Any], weights: Sequence[float]
) -> list[list[Any]]:
    """Hits re-ordered by ``(1 - weight) * score / max + weight * cosine``, per weight."""
    if not hits:
        return [[] for _ in weights]
    best = max(hit.score for hit in hits) or 1.0
    q = model.query(query)
    cosines = [float(q @ model.chunk(h.item.chunk.chunk_id, h.item.chunk.text)) for h in hits]
    orders = []
    for weight in weights:
        scored = [
            ((1 - weight) * hit.score / best + weight * cosine, i)
            for i, (hit, cosine) in enumerate(zip(hits, cosines, strict=True))
        ]
        orders.append([hits[i] for _, i in sorted(scored, key=lambda s: (-s[0], s[1]))])
    return orders


def mrr(ranks: Iterable[int | None], k: int = 10) -> float:
    ranks = list(ranks)
    return sum(1 / r for r in ranks if r is not None and r <= k) / (len(ranks) or 1)


def measure_retrieval(
    model: Model, packages: list[str], weights: list[float], depth: int
) -> dict[str, float]:
    """MRR@10 of hybrid and of hybrid re-ranked (per weight), on bench/retrieval.py's pairs."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    with tempfile.TemporaryDirectory(prefix="chunkls-model-r-") as tmp:
        corpus = Path(tmp) / "corpus"
        candidates = retrieval.copy_corpus([(stdlib / p, p) for p in packages], corpus)
        index: Any = retrieval.chunkls_index(corpus, "hybrid")
        id_counts = Counter(c for c, _ in retrieval.chunkls_chunks(index))
        pairs, _ = retrieval.eligible_pairs(candidates, id_counts)
        drawn = retrieval.draw(pairs, 500, 0)
        ranks: dict[str, list[int | None]] = {"hybrid": [], **{f"w{w}": [] for w in weights}}
        for pair in drawn:
            hits = index.queries.search(pair.query, depth, "hybrid")
            orders = [hits, *rerank(model, pair.query, hits, weights)]
            for key, ordered in zip(ranks, orders, strict=True):
                found = [h.item.chunk.chunk_id for h in ordered[:10]]
                ranks[key].append(found.index(pair.target) + 1 if pair.target in found else None)
    return {"pairs": len(drawn), **{key: mrr(r) for key, r in ranks.items()}}


def measure_peer(
    model: Model, checkouts: Path, annotations: Path, repos: Path, weights: list[float], depth: int
) -> dict[str, Any]:
    """Semble's NDCG@10 on the development set, hybrid and re-ranked (per repository)."""
    import peer_benchmark

    from chunkls.cli.gold import indexed, place, read_gold
    from chunkls.index.session import build_index
    from chunkls.search.metrics import rank_figures, target_ranks

    found: dict[str, Any] = {}
    keys = ["hybrid", *(f"w{w}" for w in weights)]
    measured = peer_benchmark.repos_to_measure(checkouts, annotations, repos, [])
    for name, (folder, annotation) in measured.items():
        gold, _ = read_gold(annotation, str(annotation))
        queries = build_index([folder], cache_dir=None).queries
        scores: dict[str, list[float]] = {key: [] for key in keys}
        for entry in gold:
            targets = [t for t in entry.relevant if indexed(queries, t)]
            hits = queries.search(entry.query, depth, "hybrid")
            orders = [hits, *rerank(model, entry.query, hits, weights)]
            for key, ordered in zip(keys, orders, strict=True):
                ranks = target_ranks([place(h) for h in ordered[:10]], targets)
                scores[key].append(rank_figures([list(ranks.values())], 10).ndcg_at_k)
        found[name] = {key: sum(s) / len(s) for key, s in scores.items()}
    found["mean"] = {key: sum(found[n][key] for n in measured) / len(measured) for key in keys}
    return found


def measure_command(args: argparse.Namespace) -> int:
    model = Model.load(args.model)
    weights = args.weight or [0.65]
    report: dict[str, Any] = {"weights": weights, "depth": args.depth}
    for name in args.retrieval:
        packages = RETRIEVAL_SETS.get(name, name.split(","))
        result = measure_retrieval(model, packages, weights, args.depth)
        report[f"retrieval:{name}"] = result
        cells = ", ".join(f"{k} {v:.3f}" for k, v in result.items() if k != "pairs")
        print(f"retrieval {name} MRR@10 ({result['pairs']} pairs): {cells}", flush=True)
    if args.peer:
        peer = measure_peer(model, *map(Path, args.peer), weights, args.depth)
        report["peer"] = peer
        for name, figures in peer.items():
            cells = ", ".join(f"{k} {v:.3f}" for k, v in figures.items())
            print(f"peer {name} NDCG@10: {cells}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    train_parser = commands.add_parser("train", help="collect the pairs, train, write the model")
    train_parser.add_argument("--out", type=Path, required=True)
    train_parser.add_argument("--dims", type=int, default=256)
    train_parser.add_argument("--vocab", type=int, default=30000)
    train_parser.add_argument("--epochs", type=int, default=4)
    train_parser.add_argument("--seed", type=int, default=0)
    train_parser.add_argument("--lr", type=float, default=0.01)
    train_parser.add_argument("--tau", type=float, default=0.05, help="InfoNCE's temperature")
    train_parser.add_argument("--batch", type=int, default=256)
    train_parser.add_argument("--pairs", type=Path, help="a cache of the pairs (read if there)")
    train_parser.add_argument(
        "--paragraphs", action="store_true", help="each docstring's first paragraph too"
    )
    train_parser.add_argument(
        "--site", help="the site-packages to read (default: this environment's)"
    )
    train_parser.add_argument(
        "--only", action="append", default=[], help="only folders naming this (tests)"
    )
    measure_parser = commands.add_parser("measure", help="re-rank hybrid's candidates, measure")
    measure_parser.add_argument("--model", type=Path, required=True)
    measure_parser.add_argument(
        "--retrieval", action="append", default=[], help="std, std2 or P1,P2"
    )
    measure_parser.add_argument("--peer", nargs=3, metavar=("CHECKOUTS", "ANNOTATIONS", "REPOS"))
    measure_parser.add_argument(
        "--weight", type=float, action="append", default=[], help="the cosine's (default 0.65)"
    )
    measure_parser.add_argument("--depth", type=int, default=64)
    measure_parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    return train_command(args) if args.command == "train" else measure_command(args)


if __name__ == "__main__":
    sys.exit(main())
