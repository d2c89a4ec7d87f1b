"""The sentence encoder and the trained ones (Tool-Embed): one capability, one folder.

It owns :class:`Embedder` (torch or ONNX Runtime: ``embedding``, ``onnx_encoder``), the encoders that
ship in the package (``shipped``), the on-disk cache of document vectors (``vectorcache``), Tool-Embed's
training pairs, training and artifacts (``encoder_pairs``, ``encoder_training``, ``encoder_artifact``)
and ``toolsift bench embedder`` (``encoder_eval``). Re-embedding a live index is
:mod:`toolsift.learning.reembed`'s.

The encoder itself is part of the ground (every layer embeds): ``embedding``, ``onnx_encoder``,
``shipped`` and ``vectorcache`` import only ``toolsift``'s ground modules; training sits at the
ranker's layer, the benchmark at evaluation's (``tests/unit/test_layering.py``).
"""

from __future__ import annotations

from toolsift.lazy import lazy_exports

#: Public name → the module that defines it, imported on first use (:mod:`toolsift.lazy`).
_EXPORTS: dict[str, str] = {
    "Embedder": "toolsift.encoders.embedding",
    "load_embedder": "toolsift.encoders.embedding",
    "OnnxEncoder": "toolsift.encoders.onnx_encoder",
    "VectorCache": "toolsift.encoders.vectorcache",
    "CachedEncoder": "toolsift.encoders.vectorcache",
    "load_training_pairs": "toolsift.encoders.encoder_pairs",
    "train_embedder": "toolsift.encoders.encoder_training",
    "EmbedderTrainingConfig": "toolsift.encoders.encoder_training",
    "EmbedderArtifact": "toolsift.encoders.encoder_artifact",
    "run_embedder_bench": "toolsift.encoders.encoder_eval",
}

__all__ = list(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)
