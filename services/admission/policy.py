"""ValidatingAdmissionPolicy + ValidatingAdmissionPolicyBinding with CEL ("Validating Admission Policy", KEP-3488).

For every binding whose policy exists and whose matchResources (and the
policy's matchConstraints) select the request:

- params: the policy's ``paramKind`` objects named by the binding's
  ``paramRef`` (``name``, or ``selector``; ``namespace`` defaults to the
  request's for namespaced kinds); none found -> with
  ``parameterNotFoundAction: Deny`` (default) the request is refused
  ``failed to configure binding: no params found for policy binding with
  `Deny` parameterNotFoundAction``, with Allow the binding is skipped; a
  binding without ``paramRef`` evaluates the policy once with ``params``
  null (kube's CollectParams).
- ``matchConditions`` false -> skipped; each ``validations[]`` expression
  is CEL over ``object``, ``oldObject``, ``request``, ``params``,
  ``namespaceObject`` and ``variables``.
- a false validation: action Deny -> ``ValidatingAdmissionPolicy '<p>'
  with binding '<b>' denied request: <message>`` (reason from the
  validation, default Invalid -> 422; Forbidden 403...); Warn -> a warning
  ``Validation failed for ValidatingAdmissionPolicy '<p>' with binding
  '<b>': <message>``; Audit -> audit annotation
  ``validation.policy.admission.k8s.io/validation_failure``. The message
  is ``message``, else ``messageExpression``'s result, else
  ``failed expression: <expression>``.
- an expression error obeys failurePolicy (Fail default -> refused with
  ``... denied request: expression '<e>' resulted in error: <err>``).
"""

from __future__ import annotations

from typing import Any

from kapi import errors, jsonutil
from kapi.resources import REGISTRY
from services.admission.chain import AdmissionRequest
from services.admission.informers import Informers
from services.admission.matching import evaluate_cel, labels_of, request_variable, rule_matches, selector_matches
from services.admission.namespaces import NamespaceCache

GROUP = "admissionregistration.k8s.io"
_REASON_CODES = {"Unauthorized": 401, "Forbidden": 403, "Invalid": 422, "RequestEntityTooLarge": 413}
AUDIT_KEY = "validation.policy.admission.k8s.io/validation_failure"


def _denied(request: AdmissionRequest, message: str, reason: str) -> errors.StatusError:
    """kube's denial: ``admission.NewForbidden`` (``deployments.apps "web" is forbidden: <message>``, details
    name/group/kind) with the validation's reason and its code, and the message again as a cause, so kubectl
    prints ``The deployments "web" is invalid: : <message>`` for reason Invalid."""
    resource = request.resource
    err = errors.forbidden(resource.resource, request.name, message, resource.group)
    err.code = _REASON_CODES.get(reason, 422 if reason == "Invalid" else 400)
    err.reason = reason
    err.details.setdefault("causes", []).append({"message": message})
    return err


def _cel_error(exc: Exception) -> str:
    """An evaluation error as cel-go words it: a missing map key or field is ``no such key: <key>`` (Python's
    KeyError text would be the quoted key alone)."""
    if isinstance(exc, KeyError) and exc.args:
        return f"no such key: {exc.args[0]}"
    return str(exc)


def _name(obj: dict[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("name", ""))


class _Failed(Exception):
    pass


class ValidatingAdmissionPolicy:
    """The ValidatingAdmissionPolicy plugin (validation phase)."""

    name = "ValidatingAdmissionPolicy"

    def __init__(self, informers: Informers, namespaces: NamespaceCache):
        self.informers = informers
        self.namespaces = namespaces
        self.policies = informers.cache(GROUP, "validatingadmissionpolicies")
        self.bindings = informers.cache(GROUP, "validatingadmissionpolicybindings")

    def handles(self, operation: str) -> bool:
        """Every operation."""
        return True

    async def _matches(self, match: Any, request: AdmissionRequest, ns_obj: dict[str, Any] | None) -> bool:
        if not isinstance(match, dict):
            return True
        ns_labels = labels_of(request.object) if request.resource.resource == "namespaces" and not \
            request.resource.group else (labels_of(ns_obj) if ns_obj is not None else None)
        if ns_labels is not None and not selector_matches(match.get("namespaceSelector"), ns_labels):
            return False
        obj_sel = match.get("objectSelector")
        if not (selector_matches(obj_sel, labels_of(request.object))
                or (request.old_object is not None and selector_matches(obj_sel, labels_of(request.old_object)))):
            return False
        rules = match.get("resourceRules")
        if rules is not None and not any(self._rule(r, request) for r in rules):
            return False
        return not any(self._rule(r, request) for r in match.get("excludeResourceRules") or [])

    @staticmethod
    def _rule(rule: dict[str, Any], request: AdmissionRequest) -> bool:
        names = rule.get("resourceNames")
        if names and request.review_name not in names:
            return False
        return rule_matches(rule, request)

    async def validate(self, request: AdmissionRequest) -> None:
        """Evaluate every matching binding; raises the first Deny refusal."""
        await self.bindings.wait_synced(min(request.timeout, 5.0))
        bindings = self.bindings.list()
        if not bindings:
            return
        await self.policies.wait_synced(min(request.timeout, 5.0))
        ns_obj = await self.namespaces.get(request.namespace, request.timeout) if request.namespace else None
        for binding in bindings:
            spec = binding.get("spec") or {}
            policy = self.policies.get("", str(spec.get("policyName", "")))
            if policy is None:
                continue
            pspec = policy.get("spec") or {}
            if not await self._matches(pspec.get("matchConstraints") or {"resourceRules": []}, request, ns_obj):
                continue
            if not await self._matches(spec.get("matchResources"), request, ns_obj):
                continue
            await self._evaluate(policy, binding, request, ns_obj)

    async def _params(self, policy: dict[str, Any], binding: dict[str, Any], request: AdmissionRequest
                      ) -> list[Any] | None:
        """The param objects to evaluate with; None = skip binding (kube's generic.CollectParams).

        [None] (``params`` is null) when the policy has no paramKind, or when it has one and the binding no
        ``paramRef``; a namespaced paramKind without ``paramRef.namespace`` for a cluster-scoped request fails
        the binding (:class:`_Failed`, then failurePolicy) instead of searching every namespace."""
        kind = (policy.get("spec") or {}).get("paramKind")
        ref = (binding.get("spec") or {}).get("paramRef")
        if not kind or not isinstance(ref, dict):
            return [None]
        api_version = str(kind.get("apiVersion", "v1"))
        group, _, version = api_version.rpartition("/")
        row = REGISTRY.by_kind(group, version, str(kind.get("kind", "")))
        action = ref.get("parameterNotFoundAction") or "Deny"
        found: list[Any] = []
        if row is not None:
            cache = self.informers.cache(row.group, row.resource)
            await cache.wait_synced(min(request.timeout, 5.0))
            ns = ref.get("namespace") or (request.namespace if row.namespaced else "")
            if row.namespaced and not ns:
                raise _Failed("failed to configure binding: cannot use namespaced paramRef in policy binding that "
                              "matches cluster-scoped resources")
            if ref.get("name"):
                obj = cache.get(ns if row.namespaced else "", ref["name"])
                found = [obj] if obj is not None else []
            else:
                found = [o for o in cache.list(ns if row.namespaced else None)
                         if selector_matches(ref.get("selector") or {}, labels_of(o))]
        if found:
            return found
        if action == "Allow":
            return None
        raise _Failed("failed to configure binding: no params found for policy binding with `Deny` "
                      "parameterNotFoundAction")

    async def _evaluate(self, policy: dict[str, Any], binding: dict[str, Any], request: AdmissionRequest,
                        ns_obj: dict[str, Any] | None) -> None:
        pspec, bspec = policy.get("spec") or {}, binding.get("spec") or {}
        pname, bname = _name(policy), _name(binding)
        actions = bspec.get("validationActions") or ["Deny"]
        fail = (pspec.get("failurePolicy") or "Fail") == "Fail"
        prefix = f"ValidatingAdmissionPolicy '{pname}' with binding '{bname}' denied request"
        try:
            params_list = await self._params(policy, binding, request)
        except _Failed as exc:
            if fail:
                raise _denied(request, f"{prefix}: {exc}", "Forbidden") from None
            return
        if params_list is None:
            return
        base = {"object": request.object, "oldObject": request.old_object, "request": request_variable(request),
                "namespaceObject": ns_obj}
        for params in params_list:
            env = {**base, "params": params}
            try:
                env["variables"] = {v["name"]: evaluate_cel(v["expression"], env)
                                    for v in pspec.get("variables") or []}
                if not all(evaluate_cel(c["expression"], env) is True for c in pspec.get("matchConditions") or []):
                    continue
            except Exception as exc:
                if fail:
                    raise _denied(request, f"{prefix}: {exc}", "Forbidden") from None
                continue
            for validation in pspec.get("validations") or []:
                expression = str(validation.get("expression", ""))
                try:
                    ok = evaluate_cel(expression, env) is True
                except Exception as exc:
                    if not fail:
                        continue
                    ok, message = False, f"expression '{expression}' resulted in error: {_cel_error(exc)}"
                    reason = "Invalid"
                else:
                    if ok:
                        continue
                    message = self._message(validation, expression, env)
                    reason = str(validation.get("reason") or "Invalid")
                self._act(actions, prefix, pname, bname, message, reason, request)

    @staticmethod
    def _message(validation: dict[str, Any], expression: str, env: dict[str, Any]) -> str:
        if validation.get("message"):
            return str(validation["message"])
        if validation.get("messageExpression"):
            try:
                value = evaluate_cel(str(validation["messageExpression"]), env)
                if isinstance(value, str) and value.strip():
                    return value
            except Exception:  # a broken messageExpression falls back to the default
                pass
        return f"failed expression: {expression}"

    @staticmethod
    def _act(actions: list[str], prefix: str, pname: str, bname: str, message: str, reason: str,
             request: AdmissionRequest) -> None:
        if "Warn" in actions:
            request.warnings.append(
                f"Validation failed for ValidatingAdmissionPolicy '{pname}' with binding '{bname}': {message}")
        if "Audit" in actions:
            entries = jsonutil.loads(request.audit_annotations.get(AUDIT_KEY, "[]"))
            entries.append({"message": message, "policy": pname, "binding": bname, "expressionIndex": 0,
                            "validationActions": actions})
            request.audit_annotations[AUDIT_KEY] = jsonutil.dumps(entries).decode()
        if "Deny" in actions:
            raise _denied(request, f"{prefix}: {message}", reason)
