"""The screen of hostile tool text, measured: precision and recall on a labelled injection set.

The set (``screen/data/injection_set.json``, bundled) holds small MCP servers, each labelled
``malicious`` (tool poisoning: instructions aimed at the model, hidden unicode, exfiltration,
shadowing, payloads split across tools) or ``benign`` (look-alikes: security scanners that quote
attacks, SSH clients, RTL text, emoji, legitimate ``IMPORTANT`` notes). It was written by a separate
author from the screen's rules, from published attacks, without reading them.

The servers go through the real ingest path — one MCP catalog file, loaded and normalised as
``toolsift ingest`` does — and :func:`~toolsift.screen.screening.screen_catalog` screens them all at
once, as one catalog. Two levels are scored:

* **case** — a case is flagged when any of its tools is; precision and recall of ``malicious``.
* **tool** — the tools each malicious case names (``flagged_tools``) against the tools flagged.

Every figure is given on the whole set and on its two halves (by a hash of the case id), so that a
rule changed while looking at half A can be reported on half B.

The meaning screen (:mod:`toolsift.screen.meaning`) screens too, as at ingest, unless the patterns
alone are asked for. Cases written in another language than English (a case's ``lang``) are scored
apart too, and the screen's cost is given per tool (a cold screen: every sentence read by the model).
:func:`run_catalog_screen` screens real catalogs (any format ``toolsift ingest`` reads) the same way:
how many of their tools are flagged (a false positive each, for public benchmark catalogs) and how
long the screen takes, the meaning screen's share apart.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
import time
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from toolsift.errors import CatalogError
from toolsift.ingest.loaders import load_catalog
from toolsift.ingest.loaders.naming import slugify
from toolsift.ingest.pipeline import normalised_records
from toolsift.screen.screening import RISK_KINDS, ScreenedTool, screen_catalog, screened
from toolsift.screen.meaning import MeaningScreen, meaning_screen
from toolsift.mappings.model import ToolDoc

__all__ = ["catalog_docs", "hash_part", "server_quarter", "default_injection_set", "load_injection_set", "write_set_catalog", "run_screen_bench",
           "run_catalog_screen"]


def default_injection_set() -> Path:
    """The bundled injection set."""
    return Path(str(resources.files("toolsift.screen") / "data" / "injection_set.json"))


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


def _set_docs(cases: Sequence[Mapping[str, Any]]) -> list[ToolDoc]:
    with tempfile.TemporaryDirectory() as folder:
        path = write_set_catalog(cases, Path(folder))
        return [doc for _, doc in normalised_records(load_catalog(path, "mcp"), 100_000) if isinstance(doc, ToolDoc)]


def _screen_cases(cases: Sequence[Mapping[str, Any]], meaning: MeaningScreen | None,
                  docs: Sequence[ToolDoc] | None = None) -> dict[str, dict[str, tuple[str, ...]]]:
    """case id → tool name → reasons, for the tools the screen flagged, read as ``toolsift ingest`` reads them."""
    docs = _set_docs(cases) if docs is None else docs
    risks = screen_catalog([screened(doc) for doc in docs], meaning)
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


def _meaning_info(meaning: MeaningScreen | None) -> dict[str, Any] | None:
    if meaning is None:
        return None
    return {"encoder": meaning.model.encoder, "threshold": meaning.threshold, "agree": meaning.agree}


def _language(case: Mapping[str, Any]) -> str:
    return str(case.get("lang") or "en")


def _by_language(cases: Sequence[Mapping[str, Any]], flagged: Mapping[str, Mapping[str, tuple[str, ...]]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for language in sorted({_language(c) for c in cases}):
        members = [c for c in cases if _language(c) == language]
        malicious = [c for c in members if c["label"] == "malicious"]
        benign = [c for c in members if c["label"] == "benign"]
        caught = sum(1 for c in malicious if flagged[c["id"]])
        false = sum(1 for c in benign if flagged[c["id"]])
        out[language] = {"malicious": len(malicious), "caught": caught, "benign": len(benign), "flagged": false}
    return out


def run_screen_bench(path: Path | None = None, meaning: bool = True) -> dict[str, Any]:
    """Screen the injection set at ``path`` (default: the bundled one) and score it.

    Args:
        path: the injection set.
        meaning: screen with the meaning screen too, as at ingest (False: the patterns alone).

    Returns:
        ``{"set", "meaning_screen", "all", "half_a", "half_b", "english", "other_languages", "by_language",
        "by_kind", "cost", "flagged"}``: the scores on all cases, on each half and on the English cases and
        the others, recall per language and per malicious kind (and the false-positive rate of the
        look-alikes), the screen's cost (``tools``, ``sentences``, ``seconds``, ``ms_per_tool``: a cold
        screen, every sentence read by the model) and each flagged case's tools with their reasons.
    """
    path = path or default_injection_set()
    cases = load_injection_set(path)
    screen = meaning_screen() if meaning else None
    docs = _set_docs(cases)
    start = time.perf_counter()
    flagged = _screen_cases(cases, screen, docs)
    seconds = time.perf_counter() - start
    by_kind: dict[str, Any] = {}
    for kind in sorted({c.get("kind", "") for c in cases}):
        members = [c for c in cases if c.get("kind", "") == kind]
        hits = sum(1 for c in members if flagged[c["id"]])
        key = "flagged" if members and members[0]["label"] == "benign" else "caught"
        by_kind[kind] = {"cases": len(members), key: hits, "rate": _ratio(hits, len(members))}
    return {
        "set": str(path),
        "meaning_screen": _meaning_info(screen),
        "risk_kinds": list(RISK_KINDS),
        "all": _scores(cases, flagged),
        "half_a": _scores([c for c in cases if _half(c["id"]) == "A"], flagged),
        "half_b": _scores([c for c in cases if _half(c["id"]) == "B"], flagged),
        "english": _scores([c for c in cases if _language(c) == "en"], flagged),
        "other_languages": _scores([c for c in cases if _language(c) != "en"], flagged),
        "by_language": _by_language(cases, flagged),
        "by_kind": by_kind,
        "cost": {"tools": len(docs), "sentences": screen.encoded if screen else 0, "seconds": round(seconds, 2),
                 "ms_per_tool": round(1000 * seconds / max(1, len(docs)), 2)},
        "flagged": {case_id: {name: list(reasons) for name, reasons in tools.items()}
                    for case_id, tools in flagged.items() if tools},
    }


def _tool_records_catalog(path: Path, folder: Path) -> Path | None:
    """A JSON-lines file of tool records (``{"name", "description", "parameters", "server"}`` a line, as
    the training set's ``tools.jsonl``) written as one MCP catalog in ``folder``, a server per
    ``server``; None for any other file (read by its own format).

    Raises:
        CatalogError: a line of a tool-records file is not a JSON object with a name.
    """
    if path.suffix != ".jsonl":
        return None
    servers: dict[str, list[dict[str, Any]]] = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise CatalogError(f"catalog {str(path)!r} cannot be read: {exc}") from exc
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise CatalogError(f"catalog {str(path)!r} line {number}: not JSON ({exc})") from exc
        if not servers and (not isinstance(record, dict) or not isinstance(record.get("name"), str)
                            or not {"parameters", "description"} & set(record)):
            return None  # a BEIR corpus or another JSON-lines format: the loaders read it
        if not isinstance(record, dict) or not isinstance(record.get("name"), str):
            raise CatalogError(f"catalog {str(path)!r} line {number}: expected a tool record with a name")
        schema = record.get("parameters") if isinstance(record.get("parameters"), dict) else {"type": "object", "properties": {}}
        servers.setdefault(str(record.get("server") or record.get("source") or "tools"), []).append(
            {"name": record["name"], "description": str(record.get("description") or ""), "inputSchema": schema})
    out = folder / f"{path.stem}.mcp.json"
    out.write_text(json.dumps([{"name": name, "tools": tools} for name, tools in servers.items()]), encoding="utf-8")
    return out


def catalog_docs(path: Path) -> list[ToolDoc]:
    """A real catalog's tool documents, read as ``toolsift ingest`` reads them (a JSON-lines file of tool
    records as one MCP catalog with a server per record's ``server``).

    Raises:
        CatalogError: the catalog cannot be read.
    """
    with tempfile.TemporaryDirectory() as folder:
        readable = _tool_records_catalog(path, Path(folder)) or path
        return [doc for _, doc in normalised_records(load_catalog(readable), 100_000) if isinstance(doc, ToolDoc)]


def hash_part(key: str, parts: int) -> int:
    """Which of ``parts`` parts ``key`` falls in, by the first byte of its SHA-1 (stable across runs)."""
    return hashlib.sha1(key.encode()).digest()[0] % parts


def server_quarter(doc: ToolDoc) -> int:
    """Which quarter (0-3) of a catalog a tool's server falls in, by a hash of the server's id: the
    meaning screen's trainer learns from quarter 0 of an MCP catalog and calibrates on quarter 1; the
    catalog screen reports the other half on its own (servers the screen never read)."""
    return hash_part(doc.agent_id or doc.tool_id, 4)


def _trained_quarters(screen: MeaningScreen | None, path: Path) -> tuple[int, ...]:
    """The quarters of ``path`` the screen's adapter learnt or calibrated from (none: another catalog)."""
    if screen is None:
        return ()
    mcp = screen.model.trained_on.get("mcp") or {}
    if not mcp or mcp.get("sha256") != hashlib.sha256(path.read_bytes()).hexdigest():
        return ()
    return tuple(int(q) for q in mcp.get("quarters", ()))


def run_catalog_screen(catalogs: Sequence[Path], meaning: bool = True) -> dict[str, Any]:
    """Screen real catalogs as ``toolsift ingest`` does and count what is flagged.

    Each catalog is loaded (format detected; a JSON-lines file of tool records, as the training set's
    ``tools.jsonl``, as one MCP catalog with a server per record's ``server``) and normalised, and its
    tools are screened as one catalog: first by the patterns alone (cold), then with the meaning screen
    unless ``meaning`` is False (a fresh one, so every sentence is read by the model); the meaning
    screen's time is the second run's less a third, warm run of the patterns.

    Returns:
        ``{"meaning_screen", "tools", "flagged", "ms_per_tool", "catalogs": [{"catalog", "tools", "flagged",
        "seconds_patterns", "seconds_meaning", "sentences", "flagged_tools": {tool id: reasons}}]}``;
        ``ms_per_tool`` is the whole screen's cost per tool (patterns and meaning screen, cold). A
        catalog part of which the meaning screen learnt or calibrated from (its description names the
        file by SHA-256) also has ``"unseen": {"tools", "flagged"}``: its servers in the other quarters.

    Raises:
        CatalogError: a catalog cannot be read.
    """
    rows: list[dict[str, Any]] = []
    info: dict[str, Any] | None = None
    screen: MeaningScreen | None = None
    for path in catalogs:
        docs = catalog_docs(path)
        tools: list[ScreenedTool] = [screened(doc) for doc in docs]
        start = time.perf_counter()
        risks = screen_catalog(tools)
        patterns = time.perf_counter() - start
        seconds_meaning = None
        read = 0
        if meaning:
            screen = meaning_screen()
            info = _meaning_info(screen)
            start = time.perf_counter()
            risks = screen_catalog(tools, screen)
            both = time.perf_counter() - start
            start = time.perf_counter()
            screen_catalog(tools)
            seconds_meaning = round(max(0.0, both - (time.perf_counter() - start)), 2)
            read = screen.encoded
        row = {"catalog": str(path), "tools": len(tools), "flagged": len(risks),
               "seconds_patterns": round(patterns, 2), "seconds_meaning": seconds_meaning, "sentences": read,
               "flagged_tools": {tool_id: list(reasons) for tool_id, reasons in risks.items()}}
        trained = _trained_quarters(screen, path)
        if trained:
            unseen = {doc.tool_id for doc in docs if server_quarter(doc) not in trained}
            row["unseen"] = {"tools": len(unseen), "flagged": sum(1 for tool_id in risks if tool_id in unseen)}
        rows.append(row)
    tools_total = sum(r["tools"] for r in rows)
    seconds = sum(r["seconds_patterns"] + (r["seconds_meaning"] or 0.0) for r in rows)
    return {"meaning_screen": info, "tools": tools_total, "flagged": sum(r["flagged"] for r in rows),
            "ms_per_tool": round(1000 * seconds / max(1, tools_total), 2), "catalogs": rows}
