"""The one write path: create, guaranteed update and delete for every resource (kube's generic store).

k8s.io/apiserver ``pkg/registry/generic/registry/store.go`` in the
gateway's terms. Every write — POST, PUT, the four PATCH types, server-side
apply (create and update), ``/status``, ``/scale``, ``/approval``,
``/finalize``, ``pods/binding``, ``pods/ephemeralcontainers``, ``pods/resize``, ``pods/eviction``, DELETE and
deletecollection, with or without ``dryRun`` — reaches storage only through
:func:`create`, :func:`guaranteed_update` or :func:`delete`. Each runs, in
order:

1. admission (one call, a message on the admission Call stream: mutating plugins and webhooks, defaulting, the
   kind's strategy and validation, validating plugins, webhooks and
   policies; services/admission/pipeline.py);
2. managedFields tracking for non-apply writes (services/gateway/fieldmanager.py);
3. the resource's hooks (services/gateway/registry/hooks.py: RBAC
   escalation prevention, Service IP allocation, CSR signer checks), on
   the object about to be stored, dry run or not;
4. the storage write, conditioned on the revision read (409 Conflict
   otherwise) — skipped for a dry run, whose answer is the would-be object.

Before admission, an object larger than the request body limit (3 MiB:
what a JSON, merge or strategic patch or an apply produced) is refused
with 413 RequestEntityTooLarge, so no patch grows a document past what a
client could have sent (services/gateway/patch.py bounds JSON patch copies
while applying).

Handlers only decode the request into an object or a transform, call one
of these, and encode the answer. See docs/architecture.md, "The request path".
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from typing import Any

from kapi import errors, grpcutil, jsonutil, limits
from kapi.k8sproto import goorder
from kapi_proto.kapi.storage.v1 import storage_pb2
from services.gateway import audit, fieldmanager
from services.gateway.apifilters import authorization

# The hook modules register themselves on import; importing them here ties the hooks to the write path.
from services.gateway.registry import certificates, deletion, priorityclasses, rbac, services  # noqa: F401
from services.gateway.registry.hooks import CREATE, DELETE, UPDATE, Write, hooks_for
from services.gateway.scope import RequestScope, parse_resource_version, resource_version_of

# Like kube's GuaranteedUpdate, an update whose precondition is only "unchanged since read" retries on
# Conflict until it succeeds or the request's deadline (the chain's timeout) ends it.
CONFLICT_RETRIES = 1000

Transform = Callable[[dict[str, Any] | None], Awaitable[dict[str, Any]]]


# metav1.DeleteOptions' fields in Go struct order (its JSON encoding in an AdmissionReview's options).
_DELETE_OPTIONS = ("gracePeriodSeconds", "preconditions", "orphanDependents", "propagationPolicy", "dryRun",
                   "ignoreStoreReadErrorWithClusterBreakingPotential")


def admission_options(scope: RequestScope, operation: str, delete_options: dict[str, Any] | None = None) -> bytes:
    """The operation's options as kube-apiserver hands them to admission (AdmitRequest.options, a webhook's
    ``request.options``), JSON: CreateOptions or UpdateOptions (a PATCH's PatchOptions converted, ``force``
    dropped: handlers/patch.go patchToUpdateOptions / patchToCreateOptions) with ``dryRun``, ``fieldManager`` and
    ``fieldValidation`` as the query gave them; for DELETE the decoded DeleteOptions. Empty fields are left out
    (Go's omitempty)."""
    kind = {CREATE: "CreateOptions", UPDATE: "UpdateOptions", DELETE: "DeleteOptions"}[operation]
    out: dict[str, Any] = {"kind": kind, "apiVersion": "meta.k8s.io/v1"}
    if operation == DELETE:
        given = delete_options or {}
        out.update((key, given[key]) for key in _DELETE_OPTIONS if given.get(key) not in (None, "", [], {}))
        if scope.dry_run() and "dryRun" not in out:
            out["dryRun"] = ["All"]
        return jsonutil.dumps(out)
    if scope.dry_run():
        out["dryRun"] = ["All"]
    for key in ("fieldManager", "fieldValidation"):
        if scope.param(key):
            out[key] = scope.param(key)
    return jsonutil.dumps(out)


async def admit(scope: RequestScope, operation: str, obj: dict[str, Any], old: bytes, dry_run: bool) -> bytes:
    """Admission of one CREATE or UPDATE of ``obj`` (``old``: the stored object's JSON, b"" for a create) as
    ``scope.resource.kind``, with the operation's options (:func:`admission_options`); returns the admitted
    object's JSON. Its warnings and audit annotations go on the request, also with a refusal (raised as
    admission's StatusError); 413 when ``obj`` outgrew a request body. Also for a subresource create whose body
    is no object of the resource (pods/eviction's Eviction: kube's createHandler admits it before the REST
    Create runs)."""
    body = jsonutil.dumps(obj)
    if len(body) > limits.MAX_BODY_BYTES:  # what a patch or apply produced may not outgrow a request body
        raise errors.too_large()
    try:
        admitted, warnings, annotations = await scope.backends.admission.admit(
            operation, scope.attrs, scope.resource.kind, body, old, dry_run, scope.field_validation(),
            timeout=scope.timeout, patch_type=scope.patch_type, patch_value=scope.patch_value,
            options=admission_options(scope, operation))
    except errors.StatusError as err:
        scope.warnings.extend(err.warnings)  # what admission gathered before refusing goes out with the refusal
        _annotate(scope, err.audit_annotations)
        raise
    scope.warnings.extend(warnings)
    _annotate(scope, annotations)
    return admitted


def _annotate(scope: RequestScope, annotations: dict[str, str]) -> None:
    """Admission's audit annotations on the request's audit events (kube's admission audit handler)."""
    for key, value in annotations.items():
        audit.annotate(scope.request, key, value)


async def _run_hooks(write: Write) -> None:
    for hook in hooks_for(write.scope.resource.group, write.scope.resource.resource):
        if write.operation == CREATE:
            await hook.before_create(write)
        elif write.operation == UPDATE:
            await hook.before_update(write)
        else:
            await hook.after_delete(write)


async def _undo(write: Write) -> None:
    for callback in reversed(write.undo):
        await callback()


async def _done(write: Write) -> None:
    for callback in write.done:
        await callback()


async def create(scope: RequestScope, obj: dict[str, Any]) -> bytes:
    """Admit and store ``obj`` (a decoded object of the request's resource); returns the stored object's JSON.

    With ``dryRun=All`` everything runs but the write, and the answer is
    the object that would have been stored. Errors: admission's refusals
    (400/403/404/422), 422 when neither name nor generateName is set, the
    hooks' refusals (403 escalation, 422 allocation), 409 AlreadyExists
    (dry runs too: kube's dry-run storage reads the key it would write).
    """
    fieldmanager.check_write_options(scope)  # the handlers validate their options before anything else
    dry_run = scope.dry_run()
    admitted = fieldmanager.track_update(scope, None, await admit(scope, CREATE, obj, b"", dry_run), obj)
    final: dict[str, Any] = jsonutil.loads(admitted)
    name = (final.get("metadata") or {}).get("name") or ""
    if not name:
        raise errors.invalid(scope.resource.kind, "", [errors.Cause(
            "FieldValueRequired", "Required value: name or generateName is required", "metadata.name")],
            scope.resource.group)
    write = Write(scope, CREATE, final, dry_run=dry_run)
    await _run_hooks(write)
    if dry_run:  # what storage would write, in the order it writes it (kapi.k8sproto.goorder)
        await _refuse_existing(scope, write, name)
        return jsonutil.dumps(goorder.wire_order(write.obj))
    try:
        reply: Any = await grpcutil.call("storage", scope.backends.storage.Create, storage_pb2.CreateRequest(
            key=scope.key(name=name), object=jsonutil.dumps(write.obj)), timeout=scope.timeout)
    except BaseException:
        await _undo(write)
        raise
    await _done(write)
    return bytes(reply.object)


async def _refuse_existing(scope: RequestScope, write: Write, name: str) -> None:
    """A dry-run create of a name already stored: 409 AlreadyExists, as the real create would answer.

    kube's ``DryRunnableStorage.Create`` reads the key instead of writing it and answers KeyExists when it is
    there (``registry/generic/registry/dryrun.go``), after admission and validation ran; the hooks' dry-run
    work is undone as after a failed write.
    """
    try:
        await grpcutil.call("storage", scope.backends.storage.Get, storage_pb2.GetRequest(key=scope.key(name=name)),
                            timeout=scope.timeout)
    except errors.StatusError as err:
        if err.reason == "NotFound":
            return
        raise
    await _undo(write)
    raise errors.already_exists(scope.resource.resource, name, scope.resource.group)


def stale(scope: RequestScope) -> errors.StatusError:
    """kube's 409 for a write conditioned on a resourceVersion the object has moved past."""
    return errors.conflict(scope.resource.resource, scope.info.name, "the object has been modified; please apply "
                           "your changes to the latest version and try again", scope.resource.group)


async def guaranteed_update(scope: RequestScope, transform: Transform, *, create_missing: bool = False
                            ) -> tuple[bytes, bool]:
    """Read the object, ``transform`` it, admit, run hooks and write it if unchanged since the read.

    ``transform(live)`` gets the stored object (a fresh dict per attempt;
    None when absent and ``create_missing``) and returns the object to
    write; it may raise a StatusError, which ends the update. When the
    returned object carries a ``metadata.resourceVersion`` other than the
    one read (and other than ``"0"``, which kube treats as none), the write is
    refused with 409 Conflict (a client's precondition); otherwise a Conflict from storage (someone wrote in
    between) re-reads and transforms again, as kube's ``GuaranteedUpdate``.
    ``create_missing`` (server-side apply) creates the object through
    :func:`create` when it does not exist. Returns (stored object JSON,
    True if it was created). Errors: 404 when absent (unless
    ``create_missing``), 409, and everything admission and hooks refuse.
    """
    fieldmanager.check_write_options(scope)  # the handlers validate their options before the read
    for attempt in range(CONFLICT_RETRIES):
        last = attempt == CONFLICT_RETRIES - 1
        try:
            current: Any = await grpcutil.call("storage", scope.backends.storage.Get,
                                               storage_pb2.GetRequest(key=scope.key()), timeout=scope.timeout)
        except errors.StatusError as err:
            if err.reason != "NotFound" or not create_missing:
                raise
            await _authorize_create(scope)
            try:
                return await create(scope, await transform(None)), True
            except errors.StatusError as create_err:
                if create_err.reason != "AlreadyExists" or last:
                    raise
                continue
        obj = await transform(jsonutil.loads(current.object))
        pinned = resource_version_of(scope, obj)
        # "0" is no precondition: kube's Store.Update updates unconditionally when the new resourceVersion parses
        # to 0 (and the strategy AllowUnconditionalUpdate, as every kind kapi serves does)
        if pinned and parse_resource_version(pinned) not in (0, current.resource_version):
            raise stale(scope)
        try:
            return await _update(scope, obj, current), False
        except _Retry:
            if last:
                raise stale(scope) from None
    raise AssertionError("unreachable")


async def _authorize_create(scope: RequestScope) -> None:
    """A patch that creates needs the ``create`` verb too: 403 Forbidden unless the authorizer allows it.

    The request was authorized as ``patch``; kube's patch handler wraps the
    create it falls back to in withAuthorization with the same attributes but
    verb ``create`` (``handlers/patch.go`` applyPatch, ``handlers/rest.go``
    withAuthorization), so a user who may patch but not create cannot create
    by server-side apply. Runs before transform and admission, on dry runs too.
    """
    attrs = dataclasses.replace(scope.attrs, verb="create")
    allowed, reason = await scope.backends.authz.authorize(attrs, timeout=scope.timeout)
    if not allowed:
        raise authorization.forbidden(attrs, reason)


# kinds whose REST Delete checks preconditions itself, with storage's "Precondition failed" text, and whose first
# DELETE skips BeforeDelete (pkg/registry/core/namespace/storage, apiextensions customresourcedefinition/etcd.go)
_OWN_PRECONDITIONS = frozenset({("", "namespaces"), ("apiextensions.k8s.io", "customresourcedefinitions")})


def check_delete_preconditions(scope: RequestScope, obj: dict[str, Any], revision: int,
                               options: dict[str, Any]) -> None:
    """kube's ``rest.BeforeDelete`` precondition check, before admission and on dry runs too: 409 Conflict
    ``Operation cannot be fulfilled on <Kind>[.<group>] "<name>": the UID in the precondition (<uid>) does not
    match the UID in record (<uid>). The object might have been deleted and then recreated`` or ``the
    ResourceVersion in the precondition (<rv>) does not match the ResourceVersion in record (<rv>). The object
    might have been modified`` (BeforeDelete names the kind where a resource usually stands). ``revision``: the
    stored object's resourceVersion. Namespaces and CRDs check their own (storage's text, at the write)."""
    if (scope.resource.group, scope.resource.resource) in _OWN_PRECONDITIONS:
        return
    pre = options.get("preconditions") or {}
    meta = obj.get("metadata") or {}
    name, kind, group = str(meta.get("name") or ""), scope.resource.kind, scope.resource.group
    uid, record_uid = pre.get("uid"), str(meta.get("uid") or "")
    if uid is not None and str(uid) != record_uid:
        raise errors.conflict(kind, name, f"the UID in the precondition ({uid}) does not match the UID in record "
                              f"({record_uid}). The object might have been deleted and then recreated", group)
    rv = pre.get("resourceVersion")
    if rv is not None and str(rv) != str(revision):
        raise errors.conflict(kind, name, f"the ResourceVersion in the precondition ({rv}) does not match the "
                              f"ResourceVersion in record ({revision}). The object might have been modified", group)


class _Retry(Exception):
    """Storage answered Conflict: the object changed between the read and the write."""


async def _update(scope: RequestScope, obj: dict[str, Any], current: Any) -> bytes:
    dry_run = scope.dry_run()
    old_raw = bytes(current.object)
    admitted = fieldmanager.track_update(scope, old_raw, await admit(scope, UPDATE, obj, old_raw, dry_run), obj)
    write = Write(scope, UPDATE, jsonutil.loads(admitted), jsonutil.loads(old_raw), old_raw, dry_run)
    await _run_hooks(write)
    if dry_run:  # what storage would write, in the order it writes it (kapi.k8sproto.goorder)
        return jsonutil.dumps(goorder.wire_order(write.obj))
    try:
        reply: Any = await grpcutil.call("storage", scope.backends.storage.Update, storage_pb2.UpdateRequest(
            key=scope.key(), object=jsonutil.dumps(write.obj), expected_resource_version=current.resource_version),
            timeout=scope.timeout)
    except errors.StatusError as err:
        await _undo(write)
        if err.reason == "Conflict":
            raise _Retry() from err
        raise
    except BaseException:
        await _undo(write)
        raise
    await _done(write)
    if finishes_deletion(write.obj, write.old or {}, scope.resource.group, scope.resource.resource):
        await _run_hooks(Write(scope, DELETE, write.obj))  # storage removed it: kube's AfterDelete runs here too
    return bytes(reply.object)


def finishes_deletion(obj: dict[str, Any], old: dict[str, Any], group: str, resource: str) -> bool:
    """Whether storage removes ``obj`` instead of writing it: an update clearing the last finalizer of an object
    marked for deletion with grace period 0 (kube's generic ``Store.Update`` ``ShouldDeleteDuringUpdate``, a
    Namespace also waiting for ``spec.finalizers``), the rule :mod:`services.storage.store` applies.

    The write path then runs the hooks' ``after_delete`` as for a DELETE (kube's Store calls ``AfterDelete``
    from ``deleteWithoutFinalizers`` on both paths: a Service's clusterIP, nodePorts and IPAddress are released,
    kubernetes issue 87603)."""
    meta, old_meta = obj.get("metadata") or {}, old.get("metadata") or {}
    if not meta.get("deletionTimestamp") or meta.get("finalizers") or not old_meta.get("deletionTimestamp"):
        return False
    if old_meta.get("deletionGracePeriodSeconds", 0) not in (0, None):
        return False
    return not (group == "" and resource == "namespaces" and (obj.get("spec") or {}).get("finalizers"))


async def delete(scope: RequestScope, name: str, options: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """Delete one object: returns (its last state, True when finalizers keep it, only marked for deletion).

    ``options`` is a decoded DeleteOptions (``preconditions`` uid and
    resourceVersion -> 409 when they do not hold; ``propagationPolicy``;
    ``dryRun``). Admission runs DELETE first (403 from plugins), with the
    options as kube's registry filled them in (:func:`deletion.admission_options`:
    a Pod's grace period, a namespace's or CRD's UID precondition) and not
    for a Pod whose graceful deletion is pending; graceful
    marks (namespaces, Foreground/Orphan propagation) are
    :mod:`services.gateway.registry.deletion`; the hooks' ``before_delete``
    runs first (403 for a system PriorityClass), their ``after_delete`` once
    the object is gone. Errors: 404 when absent, 403, 409, 503.
    """
    current: Any = await grpcutil.call("storage", scope.backends.storage.Get,
                                       storage_pb2.GetRequest(key=scope.key(name=name)), timeout=scope.timeout)
    dry_run = scope.dry_run() or bool(options.get("dryRun"))
    hooks = hooks_for(scope.resource.group, scope.resource.resource)
    if hooks:
        refusal = Write(scope, DELETE, dict(jsonutil.loads(current.object)), dry_run=dry_run)
        for hook in hooks:
            await hook.before_delete(refusal)
    check_delete_preconditions(scope, dict(jsonutil.loads(current.object)), current.resource_version, options)
    admitted, admit = deletion.admission_options(scope, dict(jsonutil.loads(current.object)), options)
    if admit:  # not for a Pod whose graceful deletion is pending (Store.Delete's gracefulPending)
        try:
            _, warnings, annotations = await scope.backends.admission.admit(
                DELETE, scope.attrs, scope.resource.kind, b"", current.object, dry_run, "", timeout=scope.timeout,
                options=admission_options(scope, DELETE, admitted))
        except errors.StatusError as err:
            scope.warnings.extend(err.warnings)
            _annotate(scope, err.audit_annotations)
            raise
        scope.warnings.extend(warnings)
        _annotate(scope, annotations)
    if dry_run:
        preview = deletion.dry_run_mark(scope, current, options)
        return (preview, True) if preview is not None else (dict(jsonutil.loads(current.object)), False)
    marked = await deletion.mark(scope, name, current, options)
    if marked is not None:
        return marked, True
    pre = options.get("preconditions") or {}
    expected_rv = parse_resource_version(str(pre.get("resourceVersion") or ""))
    reply: Any = await grpcutil.call("storage", scope.backends.storage.Delete, storage_pb2.DeleteRequest(
        key=scope.key(name=name), expected_resource_version=expected_rv, expected_uid=str(pre.get("uid") or "")),
        timeout=scope.timeout)
    deleted = dict(jsonutil.loads(reply.object))
    pending = bool(getattr(reply, "deletion_pending", False))
    if not pending:
        await _run_hooks(Write(scope, DELETE, deleted))
    return deleted, pending
