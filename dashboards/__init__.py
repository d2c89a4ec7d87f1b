"""OpenSearch Dashboards saved objects for toolsift and their one-command import.

``saved_objects.ndjson`` (package data) holds the index patterns of the query log, the judgments and
the eval runs, the visualisations over them, a saved search per index and the dashboard
"toolsift — relevance tuning"; :func:`import_saved_objects` posts it to a Dashboards instance
(``toolsift dashboards import``).
"""

from __future__ import annotations

from toolsift.lazy import lazy_exports

#: Public name → the module that defines it, imported on first use (:mod:`toolsift.lazy`).
_EXPORTS: dict[str, str] = {
    "DEFAULT_URL": "toolsift.dashboards.importer",
    "ImportSummary": "toolsift.dashboards.importer",
    "check_saved_objects": "toolsift.dashboards.importer",
    "import_saved_objects": "toolsift.dashboards.importer",
    "load_saved_objects": "toolsift.dashboards.importer",
    "validate_saved_objects": "toolsift.dashboards.importer",
}

__all__ = list(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)
