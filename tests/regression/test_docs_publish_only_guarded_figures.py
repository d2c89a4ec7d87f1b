"""Every figure the docs publish is guarded: no number in README.md or docs/**/*.md escapes the tests.

A published figure is a number with four decimals (the precision every toolsift table prints); a
signed one is a difference between two of them. Each unsigned one must be a value of ``published.FIGURES`` (which ``test_published_figures`` re-measures), a
paper's figure (``toolsift.evaluation.mftr.ablations.PAPER_NDCG10`` and ``published.PAPER``), or one of the
few ``published.NOT_REPRODUCED`` numbers, each with the reason no command reproduces it. A new
figure in the docs without a guard, or a guarded figure re-measured without the docs following,
fails here in the fast suite.
"""

from __future__ import annotations

import re
from pathlib import Path

from published import FIGURES, NOT_REPRODUCED, PAPER

REPO = Path(__file__).resolve().parents[2]
#: The generated reference (docs/reference/: --help texts and settings' defaults, such as a learning rate of
#: 0.0001) publishes no figure.
DOCS = [REPO / "README.md", *sorted(p for p in (REPO / "docs").rglob("*.md") if "reference" not in p.parts)]
#: A four-decimal number; a signed one (+0.0247, −0.1100) is a difference of two guarded figures.
FIGURE = re.compile(r"(?<![\d.+\u2212-])[01]\.\d{4}(?![\d])")


def _guarded() -> set[str]:
    values = {f"{v:.4f}" for rows in FIGURES.values() for row in rows.values() for v in row.values()}
    return values


def _papers() -> set[str]:
    from toolsift.evaluation.mftr.ablations import PAPER_NDCG10

    values = {f"{v:.4f}" for rows in PAPER_NDCG10.values() for v in rows.values()}
    return values | {f"{v:.4f}" for v in PAPER.values()}


def test_every_four_decimal_figure_in_the_docs_is_guarded_or_declared() -> None:
    allowed = _guarded() | _papers() | {f"{v:.4f}" for v in NOT_REPRODUCED}
    unguarded = {
        f"{doc.relative_to(REPO)}:{line_no}: {match}"
        for doc in DOCS
        for line_no, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), start=1)
        for match in FIGURE.findall(line)
        if match not in allowed
    }

    assert not unguarded, "figures in the docs that no test guards:\n" + "\n".join(sorted(unguarded))


def test_the_declared_exceptions_are_still_in_the_docs() -> None:
    text = "\n".join(doc.read_text(encoding="utf-8") for doc in DOCS)

    stale = [f"{v:.4f}" for v in NOT_REPRODUCED if f"{v:.4f}" not in text]

    assert not stale, f"NOT_REPRODUCED lists numbers the docs no longer show: {stale}"
