"""``toolsift approvals``: the review queue of tool definitions whose change waits (rug-pull defence)."""

from __future__ import annotations

import click

from toolsift.cli._context import AppContext, pass_app
from toolsift.cli._output import emit_json, safe_lines, table
from toolsift.cli.options import index_option, json_flag


@click.group()
def approvals() -> None:
    """Review changed tool definitions before any agent receives them.

    A tool's definition is pinned when it is approved (on first sight by default, see `default_approval`
    and `approval_policy`); when a later ingest changes it, or another catalog of the same tenants names
    the same server, search keeps serving the pinned version and the change waits here. A tenant
    catalog's ids are scoped to its tenants (`@beta/server/tool`): two tenants' servers of one name are
    two records, each listed with its tenants.
    """


@approvals.command("list")
@index_option("The catalog's index alias (default: the configured one).")
@json_flag("Print the queue as JSON.")
@pass_app
def list_pending(app: AppContext, index_alias: str | None, as_json: bool) -> None:
    """The changes waiting for approval, oldest first."""
    from toolsift.ingest.approvals import ApprovalStore

    pending = ApprovalStore(app.client(), app.settings(index=index_alias).index).pending()
    if as_json:
        emit_json([{"id": r.doc_id, "entity": r.entity, "tenants": list(r.tenants), "reason": r.reason,
                    "source": r.pending_source,
                    "approved_source": r.approved_source or None, "since": r.pending_since, "risk": list(r.pending_risk)}
                   for r in pending])
        return
    click.echo(table(["id", "reason", "source", "pinned from", "since", "risk"], [
        [r.doc_id, r.reason, r.pending_source, r.approved_source or "– (nothing served)", (r.pending_since or "")[:19],
         f"{len(r.pending_risk)} reason(s)" if r.pending_risk else ""] for r in pending
    ]))
    click.echo(f"{len(pending)} change(s) waiting; `toolsift approvals show ID` shows one's diff", err=True)


@approvals.command("show")
@click.argument("doc_id")
@index_option("The catalog's index alias (default: the configured one).")
@json_flag("Print the record and its diff as JSON.")
@pass_app
def show(app: AppContext, doc_id: str, index_alias: str | None, as_json: bool) -> None:
    """The diff from DOC_ID's pinned definition to the one waiting (invisible characters escaped)."""
    from toolsift.ingest.approvals import ApprovalStore, definition_diff

    record = ApprovalStore(app.client(), app.settings(index=index_alias).index).one(doc_id)
    diff = definition_diff(record) if record.status == "pending" else []
    if as_json:
        emit_json({"id": record.doc_id, "status": record.status, "tenants": list(record.tenants),
                   "reason": record.reason,
                   "approved_source": record.approved_source, "pending_source": record.pending_source,
                   "risk": list(record.pending_risk), "diff": diff})
        return
    click.echo(safe_lines(f"{record.doc_id}: {record.status}" + (f" ({record.reason})" if record.reason else "")))
    for reason in record.pending_risk:
        click.echo(safe_lines(f"  screen: {reason}"))
    click.echo(safe_lines("\n".join(diff) if diff else "nothing waits"))


def _decide(app: AppContext, doc_ids: tuple[str, ...], index_alias: str | None, approve: bool) -> None:
    from toolsift.ingest.approvals import ApprovalStore, approve_pending

    settings = app.settings(index=index_alias)
    client = app.client()
    store = ApprovalStore(client, settings.index)
    ids = list(doc_ids) or [r.doc_id for r in store.pending()]
    embedder = None
    for doc_id in ids:
        if approve:
            if embedder is None:
                from toolsift.encoders.embedding import load_embedder

                embedder = load_embedder(settings)
            approve_pending(client, settings, embedder, doc_id, by="cli")
            click.echo(safe_lines(f"approved {doc_id}: its new definition is indexed and pinned"))
        else:
            store.write([store.reject(doc_id, by="cli")])
            click.echo(safe_lines(f"rejected {doc_id}: the pinned definition stays; this version is not queued again"))


@approvals.command("approve")
@click.argument("doc_ids", nargs=-1)
@index_option("The catalog's index alias (default: the configured one).")
@click.option("--all", "approve_all", is_flag=True, help="Approve every change waiting.")
@pass_app
def approve(app: AppContext, doc_ids: tuple[str, ...], index_alias: str | None, approve_all: bool) -> None:
    """Approve the changes of DOC_IDS (or --all): index each new definition and pin it."""
    if not doc_ids and not approve_all:
        raise click.UsageError("name the ids to approve, or --all")
    _decide(app, doc_ids, index_alias, approve=True)


@approvals.command("reject")
@click.argument("doc_ids", nargs=-1, required=True)
@index_option("The catalog's index alias (default: the configured one).")
@pass_app
def reject(app: AppContext, doc_ids: tuple[str, ...], index_alias: str | None) -> None:
    """Reject the changes of DOC_IDS: the pinned definitions stay served."""
    _decide(app, doc_ids, index_alias, approve=False)
