"""Learning from agents' feedback, behind guards, and per-tenant A/B tests: one capability, one folder.

It owns the query log and the feedback index (their records: ``querylog_doc``, ``feedback_doc``; the
stores: ``querylog``, ``feedback``), feedback as training pairs (``feedback_pairs``) and as MFTR
training queries (``training_queries``), the guarded learners of ``toolsift learn weights`` and
``toolsift learn reembed`` (``learner``, ``reembed``), the tenants' experiments and their reports
(``experiments``, ``ab_report``) and ``toolsift bench feedback`` (``feedback_sim``).

Its modules sit at different layers of the pipeline (``tests/unit/test_layering.py`` holds each to its
own): the records at the mappings' layer; pairs and experiments at the ranker's (the search backend
reads a tenant's arm); the log, the feedback store and the reports at the backend's (they may import
``toolsift.search``); the learners at evaluation's (they search again to guard); the simulation with
the benchmarks. This front door is for front ends (``cli``, ``api``).
"""

from __future__ import annotations

from toolsift.lazy import lazy_exports

#: Public name → the module that defines it, imported on first use (:mod:`toolsift.lazy`).
_EXPORTS: dict[str, str] = {
    "FeedbackStore": "toolsift.learning.feedback",
    "ToolOutcome": "toolsift.learning.feedback",
    "load_feedback": "toolsift.learning.feedback",
    "QueryLog": "toolsift.learning.querylog",
    "issuing": "toolsift.learning.querylog",
    "feedback_pairs": "toolsift.learning.feedback_pairs",
    "LearningPolicy": "toolsift.learning.feedback_pairs",
    "TenantExperiment": "toolsift.learning.experiments",
    "start_experiment": "toolsift.learning.experiments",
    "promote": "toolsift.learning.experiments",
    "rollback": "toolsift.learning.experiments",
    "ab_report": "toolsift.learning.ab_report",
    "learn_weights": "toolsift.learning.learner",
    "reembed_guarded": "toolsift.learning.learner",
    "reembed_version": "toolsift.learning.reembed",
    "run_feedback_curve": "toolsift.learning.feedback_sim",
}

__all__ = list(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)
