"""The screen of hostile tool text: flagged with reasons at ingest, never obeyed, in every language.

It owns what the screen reads through (``unicode_fold``: invisible characters, look-alike letters,
leetspeak, encodings), the sentence-level rules (``intent``), the meaning screen (``meaning``, over
multilingual-e5-small in ``e5``; its trained adapter and description in ``data/``), the screen applied
to a catalog (``screening``), its measurement (``screen_bench``: ``toolsift bench screen``, on the
labelled sets in ``data/``) and the adapter's training (``adapter_training``, on ``data/train/``).

The screen runs inside ingest (ingest's layer); the benchmark and the training sit at evaluation's
(``tests/unit/test_layering.py``).
"""

from __future__ import annotations

from toolsift.lazy import lazy_exports

#: Public name → the module that defines it, imported on first use (:mod:`toolsift.lazy`).
_EXPORTS: dict[str, str] = {
    "screen_catalog": "toolsift.screen.screening",
    "screen_text": "toolsift.screen.screening",
    "ScreenedTool": "toolsift.screen.screening",
    "meaning_screen": "toolsift.screen.meaning",
    "run_screen_bench": "toolsift.screen.screen_bench",
    "run_catalog_screen": "toolsift.screen.screen_bench",
}

__all__ = list(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)
