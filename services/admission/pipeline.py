"""One admission request end to end: decode -> mutate -> strategy -> validate -> validating plugins.

The order is kube-apiserver's REST handler order (k8s.io/apiserver
``pkg/endpoints/handlers/create.go``/``update.go`` with
``pkg/registry/generic/registry/store.go``): mutating admission, then
``rest.BeforeCreate``/``BeforeUpdate`` (the shared :mod:`kapi.strategy`),
schema and ObjectMeta validation (422 Invalid), then validating admission.
Unknown fields are dropped and handled per ``fieldValidation`` (400 under
Strict, warnings under Warn). DELETE and CONNECT run the plugins only.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from kapi import canonical, crd, errors, jsonutil, kinds, objectmeta, schema, strategy
from kapi.attributes import Attributes
from kapi.crd import validation as crdvalidation
from kapi.kinds import podspec
from kapi.resources import REGISTRY, Registry, Resource
from services.admission import crd_schema
from services.admission.chain import CONNECT, CREATE, DELETE, OPERATIONS, UPDATE, AdmissionRequest, Chain


@dataclass
class AdmitResult:
    """The admitted object (JSON bytes; empty for DELETE and CONNECT), warnings and audit annotations."""

    object: bytes
    warnings: list[str] = field(default_factory=list)
    audit_annotations: dict[str, str] = field(default_factory=dict)


def _now() -> datetime:
    return datetime.now(UTC)


def _decode(data: bytes, what: str) -> dict[str, Any]:
    try:
        obj = jsonutil.loads(data)
    except ValueError as exc:
        raise errors.bad_request(f"{what} is not valid JSON: {exc}") from None
    if not isinstance(obj, dict):
        raise errors.bad_request(f"{what} must be a JSON object")
    return obj


def _options_kind(attributes: Attributes, operation: str) -> str:
    if attributes.verb == "patch":
        return "PatchOptions"
    return "CreateOptions" if operation == CREATE else "UpdateOptions"


# The patchers whose patched object kube decodes into the Go struct (apiserver handlers/patch.go: jsonPatcher,
# smpPatcher); a decode error there is a 422 ``patch: Invalid value`` (server-side apply has its own errors).
PATCHERS = ("application/json-patch+json", "application/merge-patch+json", "application/strategic-merge-patch+json")


def _patch_value(obj: bytes, patch_type: str, patch_value: str) -> str:
    """The bad value a patcher's 422 shows: the strategic merge patch's Go %+v, else the patched object's JSON."""
    return patch_value if patch_type == PATCHERS[2] else obj.decode("utf-8", "replace")


def _field_validation(request: AdmissionRequest, unknown: Sequence[str], field_validation: str,
                      patch: str | None = None) -> list[str]:
    """:func:`kapi.schema.apply_field_validation` for this request: the warnings of ``unknown`` (Strict: 400, or
    for a patched object the patchers decode, ``patch`` its bad value, kube's 422 ``patch: Invalid value: ...:
    strict decoding error: ...``)."""
    options_kind = _options_kind(request.attributes, request.operation)
    # A create or update body is decoded by kube-apiserver, which names the kind in a strict decoding error; a
    # patch's errors come from applying the patch and carry no prefix.
    decoded = options_kind != "PatchOptions"
    try:
        return schema.apply_field_validation(unknown, field_validation, options_kind,
                                             kind=request.resource.kind if decoded else "",
                                             version=request.resource.version)
    except errors.StatusError as err:
        if patch is None or err.code != 400:
            raise
        raise errors.invalid_patch(patch, err.message) from None


class Admitter:
    """Runs the admission pipeline for one write against a :class:`Chain`.

    ``registry`` resolves the request's group/version/resource; ``now``
    (the clock, UTC datetimes) and ``rng`` (generateName suffixes and uids)
    are injectable for tests.
    """

    def __init__(self, chain: Chain, registry: Registry = REGISTRY, now: Callable[[], datetime] = _now,
                 rng: random.Random | None = None, custom_resources: crd_schema.CustomResources | None = None):
        self.chain = chain
        self.custom_resources = custom_resources  # CRD lookup: custom resources validate with crd_schema
        self.registry = registry
        self.now = now
        self.rng = rng

    def resource_for(self, attributes: Attributes, kind: str) -> Resource:
        """The served resource row; a resource not in the table is described from the request itself."""
        row = self.registry.get(attributes.api_group, attributes.api_version, attributes.resource)
        if row is not None:
            return row
        return Resource(attributes.api_group, attributes.api_version, attributes.resource, kind,
                        bool(attributes.namespace))

    async def admit(self, operation: str, attributes: Attributes, kind: str, obj: bytes, old_obj: bytes = b"", *,
                    dry_run: bool = False, field_validation: str = "", timeout: float = 10.0, patch_type: str = "",
                    patch_value: str = "", options: bytes = b"", skip_plugins: bool = False) -> AdmitResult:
        """Admit one write; returns the object to store or raises the refusal's StatusError.

        ``obj``/``old_obj`` are JSON (empty when absent). Raises 400 for a
        bad operation, body or Strict unknown fields; 422 Invalid with field
        causes; 403/404 and others from plugins (e.g. NamespaceLifecycle).
        A refusal carries in its ``warnings`` those gathered before it, in
        kube's order: the decoded body's unknown fields' (kube's decoder, so
        also before a mutating webhook's refusal), mutating webhooks',
        PrepareForCreate's, then (validation passed) WarningsOnCreate/Update's,
        validating webhooks' and policies' (k8s.io/apiserver
        ``rest.BeforeCreate``; the webhook dispatchers add a response's
        warnings before they look at ``allowed``). Its ``audit_annotations`` are those added before the refusal.
        ``dry_run`` runs everything the same way. ``timeout`` (seconds)
        bounds the calls plugins make. ``patch_type`` (a PATCH's Content-Type) and ``patch_value`` (a strategic
        merge patch's Go %+v): a patched object that does not decode (a wrong type; unknown fields under Strict)
        is kube's patchers' 422 ``"" is invalid: patch: Invalid value: "<patch or patched JSON>": <error>``.
        ``options``: the operation's options JSON (CreateOptions, UpdateOptions, DeleteOptions) webhooks and
        policies see as ``request.options``; empty: built from ``dry_run`` alone. ``skip_plugins``: a write kube's
        registry makes through its own store with ``rest.ValidateAllObjectFunc`` / ``ValidateAllObjectUpdateFunc``
        (pods/eviction's DisruptionTarget condition): decoding, defaulting, the strategy and validation run, no
        mutating or validating plugin, webhook or policy.
        """
        if operation not in OPERATIONS:
            raise errors.bad_request(f"unknown admission operation {operation!r}")
        definition = None
        if self.custom_resources is not None and self.registry.get(
                attributes.api_group, attributes.api_version, attributes.resource) is None:
            definition = await self.custom_resources.crd_for(attributes.api_group, attributes.resource, timeout)
        resource = crd_schema.resource_row(definition, attributes.api_version) if definition \
            else self.resource_for(attributes, kind)
        new = _decode(obj, "the object") if operation in (CREATE, UPDATE) else None
        old = _decode(old_obj, "the old object") if old_obj else None
        if operation == UPDATE and old is None:
            raise errors.bad_request("an UPDATE needs the stored object (old_object)")
        decoded_unknown: list[str] = []
        patch = _patch_value(obj, patch_type, patch_value) if patch_type in PATCHERS else None
        if new is not None and kind == resource.kind and definition is None:
            # kube decodes the body into the typed struct before defaulting, admission or validation: a null is
            # the field's zero value, a wrong JSON type is a 400 decode error, and unknown fields are gone.
            if b"null" in obj:
                schema.nulls_to_zero(new, resource.group, resource.version, resource.kind)
            decoded = schema.validate(new, resource.group, resource.version, resource.kind)
            type_errors = [c for c in decoded.causes if c.type == "FieldValueTypeInvalid"]
            if type_errors and patch is not None:
                raise errors.invalid_patch(patch, schema.decode_error_text(resource.kind, type_errors[0]))
            if type_errors:
                raise schema.decode_error(resource.kind, resource.version, type_errors[0])
            # metav1.Time / MicroTime UnmarshalJSON: a string time.Parse refuses is the decoder's error
            time_error = canonical.time_error(new, resource.group, resource.version, resource.kind)
            if time_error is not None and patch is not None:
                raise errors.invalid_patch(patch, time_error)
            if time_error is not None:
                raise errors.bad_request(f'{resource.kind} in version "{resource.version}" cannot be handled as a '
                                         f"{resource.kind}: {time_error}")
            decoded_unknown = decoded.unknown
            # A top-level null (``"spec": null``) decodes to the Go struct's zero value, which encodes as absent
            # or empty: drop it, as plugins and strategies expect a missing field, never a None (a 500 before).
            for key in [k for k, v in new.items() if v is None]:
                del new[key]
            # the Go struct holds parsed quantities and times: plugins and webhooks see their canonical form
            canonical.canonicalize(new, resource.group, resource.version, resource.kind)
            kinds.strategy_for(resource.group, resource.kind).default(new)
        request = AdmissionRequest(operation, attributes, resource, kind, new, old, dry_run, timeout,
                                   options=_decode(options, "the options") if options else None)
        try:
            if decoded_unknown:  # kube's decoder warns (Strict: refuses) before admission runs (handlers/create.go)
                request.warnings.extend(_field_validation(request, decoded_unknown, field_validation, patch))
            if request.object is not None and not patch_type:  # POST and PUT: before mutating admission too
                self._dedup_owner_references(request, after_mutating_admission=False)
            if not skip_plugins:
                await self.chain.admit(request)
            if request.object is not None:
                self._dedup_owner_references(request, after_mutating_admission=True)
            if request.object is not None and kind == resource.kind and definition is not None:
                crd_schema.prepare_and_validate(request, definition, field_validation,
                                                _options_kind(attributes, operation), self.now())
            elif request.object is not None and kind == resource.kind:
                self._prepare_and_validate(request, field_validation, decoded_unknown)
            if not skip_plugins:
                await self.chain.validate(request)
        except errors.StatusError as err:
            # kube's warning recorder keeps what was added before the refusal (a denying webhook's own warnings,
            # PrepareForCreate's; WarningsOnCreate/Update only once validation passed) and sends it with the error.
            err.warnings = [*request.warnings, *err.warnings]
            # ...and kube's admission audit handler has put the annotations added so far on the audit event
            # (PodSecurity's enforce-policy and audit-violations of the pod it refuses).
            err.audit_annotations = {**request.audit_annotations, **err.audit_annotations}
            raise

        body = jsonutil.dumps(request.object) if request.object is not None and operation not in (DELETE, CONNECT) \
            else b""
        return AdmitResult(body, request.warnings, request.audit_annotations)

    @staticmethod
    def _dedup_owner_references(request: AdmissionRequest, after_mutating_admission: bool) -> None:
        if isinstance(request.object, dict):
            warning = objectmeta.dedup_owner_references(request.object, after_mutating_admission)
            if warning:
                request.warnings.append(warning)

    def _prepare_and_validate(self, request: AdmissionRequest, field_validation: str,
                              decoded_unknown: Sequence[str] = ()) -> None:
        resource = request.resource
        kind = kinds.strategy_for(resource.group, resource.kind)
        assert request.object is not None
        # what mutating plugins and webhooks wrote is decoded into the Go struct again (kube re-decodes a patched
        # object): the stored and answered quantities and times are canonical (kapi.canonical)
        canonical.canonicalize(request.object, resource.group, resource.version, resource.kind)
        if request.operation == CREATE:
            request.warnings.extend(kind.warnings_on_prepare(request.object))  # PrepareForCreate's AddWarning
            request.object = strategy.prepare_for_create(request.object, resource, request.namespace, self.now(),
                                                         rng=self.rng, user=request.attributes.user, kind=kind)
        else:
            assert request.old_object is not None
            request.object = strategy.prepare_for_update(request.object, request.old_object, resource,
                                                         subresource=request.subresource, now=self.now(), kind=kind)
        result = schema.validate(request.object, resource.group, resource.version, resource.kind)
        type_errors = [c for c in result.causes if c.type == "FieldValueTypeInvalid"]
        if type_errors:
            raise schema.decode_error(resource.kind, resource.version, type_errors[0])
        # the decoded body's unknown fields were handled before admission; these are the ones mutation added
        unknown = [path for path in dict.fromkeys(result.unknown) if path not in decoded_unknown]
        request.warnings.extend(_field_validation(request, unknown, field_validation))
        causes = objectmeta.validate_object_meta(request.object, resource, request.operation == CREATE,
                                                 old=request.old_object)
        old = request.old_object if request.operation == UPDATE else None
        with podspec.stored_object(old):  # ValidatePodSpec's update options come from the stored object
            update_causes = kind.validate_update(request.object, old, request.subresource) if old is not None else []
        if not kind.revalidates_first:
            causes.extend(update_causes)
        causes.extend(c for c in result.causes if not (kind.validates_required and c.type == "FieldValueRequired"))
        if not request.subresource:  # pkg/apis/*/validation: per-kind semantic rules
            with podspec.stored_object(old):
                causes.extend(kind.validate(request.object) if old is None
                              else kind.validate_again(request.object, old))
        if kind.revalidates_first:
            causes.extend(update_causes)
        if resource.group == crd.GROUP and resource.resource == crd.RESOURCE and not request.subresource:
            # The cleanup finalizer is added by the first DELETE (kube's REST.Delete), not here.
            causes.extend(crdvalidation.validate(request.object, request.old_object, crd_schema.value_causes))
        if causes:
            # the schema and the kind's validation may both name one missing field: kube reports it once
            causes = list(dict.fromkeys(causes))
            meta = request.object.get("metadata") or {}
            name = meta.get("name") or request.attributes.name or ""
            raise errors.invalid(resource.kind, name if isinstance(name, str) else "", causes, resource.group)
        if request.operation == CREATE and not request.subresource:  # rest.BeforeCreate, once validation passed
            request.warnings.extend(kind.warnings_on_create(request.object))
        elif request.operation == UPDATE and not request.subresource and request.old_object is not None:
            request.warnings.extend(kind.warnings_on_update(request.object, request.old_object))  # rest.BeforeUpdate
