"""The relevance-tuning workbench (``toolsift serve ui``): see why a tool ranked where it did, tune
weights on live results, judge results, and follow the metrics.

Modules: :mod:`.tuning` (re-ranking candidates with proposed weights), :mod:`.judgments` and
:mod:`.querysets` (their OpenSearch indices), :mod:`.comparison` (NDCG@10 of current vs proposed
weights on a query set), :mod:`.metrics` (eval runs and query-log latency over time),
:mod:`.session` (the state one workbench holds), :mod:`.app` (the FastAPI routes and the static
front end in ``static/``).
"""
