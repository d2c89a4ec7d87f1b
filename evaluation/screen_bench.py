"""The screen of hostile tool text, measured: precision and recall on a labelled injection set.

The set (``evaluation/data/injection_set.json``, bundled) holds small MCP servers, each labelled
``malicious`` (tool poisoning: instructions aimed at the model, hidden unicode, exfiltration,
shadowing, payloads split across tools) or ``benign`` (look-alikes: security scanners that quote
attacks, SSH clients, RTL text, emoji, legitimate ``IMPORTANT`` notes). It was written by a separate
author from the screen's rules, from published attacks, without reading them.

The servers go through the real ingest path — one MCP catalog file, loaded and normalised as
``toolsift ingest`` does — and :func:`~toolsift.ingest.screen.screen_catalog` screens them all at
once, as one catalog. Two levels are scored:

* **case** — a case is flagged when any of its tools is; precision and recall of ``malicious``.
* **tool** — the tools each malicious case names (``flagged_tools``) against the tools flagged.

Every figure is given on the whole set and on its two halves (by a hash of the case id), so that a
rule changed while looking at half A can be reported on half B.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from toolsift.errors import CatalogError
from toolsift.ingest.loaders import load_catalog
from toolsift.ingest.loaders.naming import slugify
from toolsift.ingest.pipeline import normalised_records
from toolsift.ingest.screen import RISK_KINDS, screen_catalog, screened
from toolsift.mappings.model import ToolDoc

__all__ = ["default_injection_set", "load_injection_set", "write_set_catalog", "run_screen_bench"]


def default_injection_set() -> Path:
    """The bundled injection set."""
    return Path(str(resources.files("toolsift.evaluation") / "data" / "injection_set.json"))


def load_injection_set(path: Path) -> list[dict[str, Any]]:
    """The cases of an injection set file.

    Raises:
        CatalogError: the file is not an injection set (``{"cases": [...]}`` with labelled servers).
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CatalogError(f"injection set {str(path)!r} cannot be read: {exc}") from exc
    cases = data.get("cases") if isinstance(data, dict) else None
    if not isinstance(cases, list) or not cases:
        raise CatalogError(f"injection set {str(path)!r}: expected an object with a non-empty 'cases' list")
    for index, case in enumerate(cases):
        ok = (isinstance(case, dict) and case.get("label") in ("malicious", "benign")
              and isinstance(case.get("id"), str) and isinstance(case.get("server"), dict)
              and isinstance(case["server"].get("tools"), list))
        if not ok:
            raise CatalogError(f"injection set {str(path)!r} case {index}: needs an id, a label "
                               f"(malicious or benign) and a server with tools")
    return cases


def _half(case_id: str) -> str:
    return "A" if hashlib.sha256(case_id.encode()).digest()[0] % 2 == 0 else "B"


def write_set_catalog(cases: Sequence[Mapping[str, Any]], folder: Path) -> Path:
    """The cases' servers as one MCP catalog file in ``folder``, each server named by its case id (so a
    tool's id is ``<case id>/<tool name>``)."""
    servers = [{**case["server"], "name": f"{case['id']}"} for case in cases]
    path = folder / "injection-set.json"
    path.write_text(json.dumps(servers, ensure_ascii=False), encoding="utf-8")
    return path


def _screen_cases(cases: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, tuple[str, ...]]]:
    """case id → tool name → reasons, for the tools the screen flagged, read as ``toolsift ingest`` reads them."""
    with tempfile.TemporaryDirectory() as folder:
        path = write_set_catalog(cases, Path(folder))
        docs = [doc for _, doc in normalised_records(load_catalog(path, "mcp"), 100_000) if isinstance(doc, ToolDoc)]
    risks = screen_catalog([screened(doc) for doc in docs])
    case_of = {f"agent:{slugify(case['id'])}": case["id"] for case in cases}
    out: dict[str, dict[str, tuple[str, ...]]] = {case["id"]: {} for case in cases}
    for doc in docs:
        if doc.tool_id in risks and doc.agent_id in case_of:
            out[case_of[doc.agent_id]][doc.name] = risks[doc.tool_id]
    return out


def _ratio(numerator: int, denominator: int) -> float | None:
    return round(numerator / denominator, 4) if denominator else None


def _scores(cases: Sequence[Mapping[str, Any]], flagged: Mapping[str, Mapping[str, tuple[str, ...]]]) -> dict[str, Any]:
    malicious = [c for c in cases if c["label"] == "malicious"]
    caught = [c for c in cases if flagged[c["id"]]]
    true_positives = [c for c in caught if c["label"] == "malicious"]
    gold_tools = {(c["id"], name) for c in malicious for name in c.get("flagged_tools") or ()}
    flagged_tools = {(case_id, name) for case_id, names in flagged.items() for name in names
                     if case_id in {c["id"] for c in cases}}
    return {
        "cases": len(cases),
        "malicious": len(malicious),
        "benign": len(cases) - len(malicious),
        "case_precision": _ratio(len(true_positives), len(caught)),
        "case_recall": _ratio(len(true_positives), len(malicious)),
        "tool_precision": _ratio(len(gold_tools & flagged_tools), len(flagged_tools)),
        "tool_recall": _ratio(len(gold_tools & flagged_tools), len(gold_tools)),
        "false_positives": sorted(c["id"] for c in caught if c["label"] == "benign"),
        "missed": sorted(c["id"] for c in malicious if not flagged[c["id"]]),
    }


def run_screen_bench(path: Path | None = None) -> dict[str, Any]:
    """Screen the injection set at ``path`` (default: the bundled one) and score it.

    Returns:
        ``{"set", "all", "half_a", "half_b", "by_kind", "flagged"}``: the scores on all cases and on
        each half, recall per malicious kind (and the false-positive rate of the look-alikes), and
        each flagged case's tools with their reasons.
    """
    path = path or default_injection_set()
    cases = load_injection_set(path)
    flagged = _screen_cases(cases)
    by_kind: dict[str, Any] = {}
    for kind in sorted({c.get("kind", "") for c in cases}):
        members = [c for c in cases if c.get("kind", "") == kind]
        hits = sum(1 for c in members if flagged[c["id"]])
        key = "flagged" if members and members[0]["label"] == "benign" else "caught"
        by_kind[kind] = {"cases": len(members), key: hits, "rate": _ratio(hits, len(members))}
    return {
        "set": str(path),
        "risk_kinds": list(RISK_KINDS),
        "all": _scores(cases, flagged),
        "half_a": _scores([c for c in cases if _half(c["id"]) == "A"], flagged),
        "half_b": _scores([c for c in cases if _half(c["id"]) == "B"], flagged),
        "by_kind": by_kind,
        "flagged": {case_id: {name: list(reasons) for name, reasons in tools.items()}
                    for case_id, tools in flagged.items() if tools},
    }
