"""OpenSearch Dashboards saved objects for toolsift and their one-command import.

``saved_objects.ndjson`` (package data) holds the index patterns of the query log, the judgments and
the eval runs, the visualisations over them, a saved search per index and the dashboard
"toolsift — relevance tuning"; :func:`import_saved_objects` posts it to a Dashboards instance
(``toolsift dashboards import``).
"""

from __future__ import annotations

from toolsift.dashboards.importer import (
    DEFAULT_URL,
    ImportSummary,
    check_saved_objects,
    import_saved_objects,
    load_saved_objects,
    validate_saved_objects,
)

__all__ = [
    "DEFAULT_URL",
    "ImportSummary",
    "check_saved_objects",
    "import_saved_objects",
    "load_saved_objects",
    "validate_saved_objects",
]
