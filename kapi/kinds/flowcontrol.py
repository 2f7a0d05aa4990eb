"""flowcontrol.apiserver.k8s.io/v1: FlowSchema and PriorityLevelConfiguration defaults, strategy and validation.

The rules of kube-apiserver's API Priority and Fairness kinds, message for
message (clients print them):

- defaults: ``pkg/apis/flowcontrol/v1/defaults.go`` (:func:`default_flow_schema`,
  :func:`default_priority_level`, :func:`default_queuing`);
- strategy: ``pkg/registry/flowcontrol/{flowschema,prioritylevelconfiguration}/strategy.go``
  (status reset on create; the main resource keeps the status and the
  ``status`` subresource keeps spec and metadata, done generically by
  :mod:`kapi.strategy`);
- validation: ``pkg/apis/flowcontrol/validation/validation.go``
  (:func:`validate_flow_schema`, :func:`validate_priority_level`, the
  status rules) with the shuffle-sharding entropy bound of
  k8s.io/apiserver ``pkg/util/shufflesharding`` (:func:`required_entropy_bits`);
- the mandatory objects' fixed specs (k8s.io/apiserver
  ``pkg/apis/flowcontrol/bootstrap``, "Mandatory Configuration Objects"):
  :func:`mandatory_flow_schema_specs` and
  :func:`mandatory_priority_level_specs` are the one copy, used both by
  validation and by the flowcontrol service that writes the objects.

kapi serves only v1 of the group (:mod:`kapi.resources`), so field names are
v1's (``nominalConcurrencyShares``). Update validation is create
validation of the new object (``ValidateFlowSchemaUpdate`` is
``ValidateFlowSchema``); the ``status`` subresource checks only the
conditions.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Iterable, Mapping
from typing import Any

from kapi.attributes import UserInfo
from kapi.errors import Cause
from kapi.gofmt import go_quote
from kapi.kinds.base import WHOLE_OBJECT_META, Obj, Strategy, register
from kapi.objectmeta import bad_value
from kapi.validation import is_dns1123_label, is_dns1123_subdomain

GROUP = "flowcontrol.apiserver.k8s.io"

EXEMPT, CATCH_ALL = "exempt", "catch-all"
NAME_ALL = "*"

# v1 defaults (pkg/apis/flowcontrol/v1/defaults.go)
DEFAULT_MATCHING_PRECEDENCE = 1000
DEFAULT_NOMINAL_CONCURRENCY_SHARES = 30
DEFAULT_QUEUES = 64
DEFAULT_HAND_SIZE = 8
DEFAULT_QUEUE_LENGTH_LIMIT = 50

MAX_MATCHING_PRECEDENCE = 10000  # flowcontrol.FlowSchemaMaxMatchingPrecedence
MAX_QUEUES = 10 * 1000 * 1000  # priorityLevelConfigurationQueuingMaxQueues
MAX_HASH_BITS = 60  # shufflesharding.MaxHashBits

SUPPORTED_DISTINGUISHER_METHODS = ("ByNamespace", "ByUser")
SUPPORTED_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "proxy", "update", "watch")
SUPPORTED_SUBJECT_KINDS = ("Group", "ServiceAccount", "User")
SUPPORTED_PRIORITY_LEVEL_TYPES = ("Exempt", "Limited")
SUPPORTED_LIMIT_RESPONSE_TYPES = ("Queue", "Reject")

NS_ERR_INTRO = "each member of this list must be '*' or a DNS-1123 label; "


# ------------------------------------------------------------ the mandatory objects' specs

def _everything(subjects: list[dict[str, Any]]) -> dict[str, Any]:
    return {"subjects": subjects,
            "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"], "clusterScope": True,
                               "namespaces": ["*"]}],
            "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}]}


def _groups(*names: str) -> list[dict[str, Any]]:
    return [{"kind": "Group", "group": {"name": n}} for n in names]


def mandatory_priority_level_specs() -> dict[str, dict[str, Any]]:
    """name -> the fixed (defaulted) spec of the mandatory ``exempt`` and ``catch-all`` levels; fresh dicts.

    k8s.io/apiserver pkg/apis/flowcontrol/bootstrap ``MandatoryPriorityLevelConfiguration{Exempt,CatchAll}``.
    """
    return {
        EXEMPT: {"type": "Exempt", "exempt": {"nominalConcurrencyShares": 0, "lendablePercent": 0}},
        CATCH_ALL: {"type": "Limited", "limited": {"nominalConcurrencyShares": 5, "lendablePercent": 0,
                                                   "limitResponse": {"type": "Reject"}}},
    }


def mandatory_flow_schema_specs() -> dict[str, dict[str, Any]]:
    """name -> the fixed (defaulted) spec of the mandatory ``exempt`` and ``catch-all`` FlowSchemas; fresh dicts.

    k8s.io/apiserver pkg/apis/flowcontrol/bootstrap ``MandatoryFlowSchema{Exempt,CatchAll}``.
    """
    return {
        EXEMPT: {"priorityLevelConfiguration": {"name": EXEMPT}, "matchingPrecedence": 1,
                 "rules": [_everything(_groups("system:masters"))]},
        CATCH_ALL: {"priorityLevelConfiguration": {"name": CATCH_ALL}, "matchingPrecedence": 10000,
                    "distinguisherMethod": {"type": "ByUser"},
                    "rules": [_everything(_groups("system:unauthenticated", "system:authenticated"))]},
    }


# ------------------------------------------------------------ defaults

def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def default_flow_schema_spec(spec: dict[str, Any]) -> None:
    """``SetDefaults_FlowSchemaSpec``: ``matchingPrecedence`` absent or 0 becomes 1000 (in place)."""
    if spec.get("matchingPrecedence") in (None, 0):
        spec["matchingPrecedence"] = DEFAULT_MATCHING_PRECEDENCE


def default_queuing(queuing: dict[str, Any]) -> None:
    """``SetDefaults_QueuingConfiguration``: ``handSize`` 8, ``queues`` 64, ``queueLengthLimit`` 50 when 0/absent."""
    for key, value in (("handSize", DEFAULT_HAND_SIZE), ("queues", DEFAULT_QUEUES),
                       ("queueLengthLimit", DEFAULT_QUEUE_LENGTH_LIMIT)):
        if queuing.get(key) in (None, 0):
            queuing[key] = value


def default_priority_level_spec(spec: dict[str, Any]) -> None:
    """``SetObjectDefaults_PriorityLevelConfiguration`` on a v1 spec, in place.

    ``limited``: ``nominalConcurrencyShares`` 30 when absent (an explicit 0
    stays), ``lendablePercent`` 0 when absent, and the queuing defaults
    when ``limitResponse.queuing`` is given; ``exempt``:
    ``nominalConcurrencyShares`` and ``lendablePercent`` 0 when absent.
    ``limitResponse.type`` has no default (kube's validation requires it).
    """
    limited = spec.get("limited")
    if isinstance(limited, dict):
        if limited.get("nominalConcurrencyShares") is None:
            limited["nominalConcurrencyShares"] = DEFAULT_NOMINAL_CONCURRENCY_SHARES
        if limited.get("lendablePercent") is None:
            limited["lendablePercent"] = 0
        queuing = _dict(limited.get("limitResponse")).get("queuing")
        if isinstance(queuing, dict):
            default_queuing(queuing)
    exempt = spec.get("exempt")
    if isinstance(exempt, dict):
        for key in ("nominalConcurrencyShares", "lendablePercent"):
            if exempt.get(key) is None:
                exempt[key] = 0


def defaulted_spec(kind: str, spec: Mapping[str, Any]) -> dict[str, Any]:
    """A defaulted deep copy of a FlowSchema (``kind`` "FlowSchema") or PriorityLevelConfiguration spec."""
    out = copy.deepcopy(dict(spec))
    if kind == "FlowSchema":
        default_flow_schema_spec(out)
    else:
        default_priority_level_spec(out)
    return out


def canonical(value: Any) -> Any:
    """``value`` without what Go's semantic equality ignores: empty lists, "", false and null members.

    ``apiequality.Semantic.DeepEqual`` of the internal types treats a nil and an
    empty slice alike and cannot tell an omitted string or bool from its zero value.
    """
    if isinstance(value, dict):
        return {k: canonical(v) for k, v in value.items()
                if not (v is None or v is False or (isinstance(v, (str, list)) and not v))}
    if isinstance(value, list):
        return [canonical(v) for v in value]
    return value


def specs_equal(kind: str, a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Semantic equality of two specs of ``kind`` after v1 defaulting (kube's ensurer and mandatory checks)."""
    return bool(canonical(defaulted_spec(kind, a)) == canonical(defaulted_spec(kind, b)))


# ------------------------------------------------------------ field errors

def _go(value: Any) -> str:
    """A bad value as field.Error prints it (:func:`kapi.objectmeta.bad_value`)."""
    return bad_value(value)


def _invalid(path: str, value: Any, detail: str, shown: str | None = None) -> Cause:
    return Cause("FieldValueInvalid", f"Invalid value: {_go(value) if shown is None else shown}: {detail}", path)


def _required(path: str, detail: str = "") -> Cause:
    return Cause("FieldValueRequired", "Required value" + (f": {detail}" if detail else ""), path)


def _forbidden(path: str, detail: str) -> Cause:
    return Cause("FieldValueForbidden", f"Forbidden: {detail}", path)


def _not_supported(path: str, shown: str, supported: Iterable[str]) -> Cause:
    allowed = ", ".join(f'"{v}"' for v in supported)
    return Cause("FieldValueNotSupported", f"Unsupported value: {shown}: supported values: {allowed}", path)


def _duplicate(path: str, value: Any) -> Cause:
    return Cause("FieldValueDuplicate", f"Duplicate value: {_go(value)}", path)


# Go's %#v of the internal flowcontrol types (a field.Invalid of a whole spec prints it that way). A type is
# ("struct", name, ((GoField, jsonKey, type), ...)), ("ptr", type), ("slice", type), "string", "int32" or "bool".
_ADDRESS = "0xc000010000"  # a pointer's address: kube prints the live heap address here
_REF = ("struct", "PriorityLevelConfigurationReference", (("Name", "name", "string"),))
_DISTINGUISHER = ("struct", "FlowDistinguisherMethod", (("Type", "type", "string"),))
_USER = ("struct", "UserSubject", (("Name", "name", "string"),))
_GROUP = ("struct", "GroupSubject", (("Name", "name", "string"),))
_SA = ("struct", "ServiceAccountSubject", (("Namespace", "namespace", "string"), ("Name", "name", "string")))
_SUBJECT = ("struct", "Subject", (("Kind", "kind", "string"), ("User", "user", ("ptr", _USER)),
                                  ("Group", "group", ("ptr", _GROUP)),
                                  ("ServiceAccount", "serviceAccount", ("ptr", _SA))))
_STRINGS = ("slice", "string")
_RESOURCE_RULE = ("struct", "ResourcePolicyRule", (
    ("Verbs", "verbs", _STRINGS), ("APIGroups", "apiGroups", _STRINGS), ("Resources", "resources", _STRINGS),
    ("ClusterScope", "clusterScope", "bool"), ("Namespaces", "namespaces", _STRINGS)))
_NON_RESOURCE_RULE = ("struct", "NonResourcePolicyRule", (
    ("Verbs", "verbs", _STRINGS), ("NonResourceURLs", "nonResourceURLs", _STRINGS)))
_RULES = ("struct", "PolicyRulesWithSubjects", (
    ("Subjects", "subjects", ("slice", _SUBJECT)), ("ResourceRules", "resourceRules", ("slice", _RESOURCE_RULE)),
    ("NonResourceRules", "nonResourceRules", ("slice", _NON_RESOURCE_RULE))))
_FLOW_SCHEMA_SPEC = ("struct", "FlowSchemaSpec", (
    ("PriorityLevelConfiguration", "priorityLevelConfiguration", _REF),
    ("MatchingPrecedence", "matchingPrecedence", "int32"),
    ("DistinguisherMethod", "distinguisherMethod", ("ptr", _DISTINGUISHER)),
    ("Rules", "rules", ("slice", _RULES))))
_QUEUING = ("struct", "QueuingConfiguration", (
    ("Queues", "queues", "int32"), ("HandSize", "handSize", "int32"),
    ("QueueLengthLimit", "queueLengthLimit", "int32")))
_LIMIT_RESPONSE = ("struct", "LimitResponse", (("Type", "type", "string"), ("Queuing", "queuing", ("ptr", _QUEUING))))
_LIMITED = ("struct", "LimitedPriorityLevelConfiguration", (
    ("NominalConcurrencyShares", "nominalConcurrencyShares", "int32"),
    ("LimitResponse", "limitResponse", _LIMIT_RESPONSE),
    ("LendablePercent", "lendablePercent", ("ptr", "int32")),
    ("BorrowingLimitPercent", "borrowingLimitPercent", ("ptr", "int32"))))
_EXEMPT = ("struct", "ExemptPriorityLevelConfiguration", (
    ("NominalConcurrencyShares", "nominalConcurrencyShares", ("ptr", "int32")),
    ("LendablePercent", "lendablePercent", ("ptr", "int32"))))
_PRIORITY_LEVEL_SPEC = ("struct", "PriorityLevelConfigurationSpec", (
    ("Type", "type", "string"), ("Limited", "limited", ("ptr", _LIMITED)), ("Exempt", "exempt", ("ptr", _EXEMPT))))


def _type_name(t: Any) -> str:
    if isinstance(t, str):
        return t
    if t[0] == "struct":
        return f"flowcontrol.{t[1]}"
    return ("*" if t[0] == "ptr" else "[]") + _type_name(t[1])


def go_struct(t: Any, value: Any) -> str:
    """``value`` (decoded JSON) as Go's ``%#v`` prints it as the internal type ``t`` (the descriptors above)."""
    if t == "string":
        return go_quote(_str(value))
    if t == "int32":
        return str(_int(value))
    if t == "bool":
        return "true" if value is True else "false"
    if t[0] == "ptr":
        return f"({_type_name(t)})({_ADDRESS if value is not None else 'nil'})"
    if t[0] == "slice":
        if not isinstance(value, list):
            return f"{_type_name(t)}(nil)"
        return _type_name(t) + "{" + ", ".join(go_struct(t[1], v) for v in value) + "}"
    fields = _dict(value)
    return _type_name(t) + "{" + ", ".join(f"{go}:{go_struct(ft, fields.get(key))}" for go, key, ft in t[2]) + "}"


# ------------------------------------------------------------ FlowSchema validation

def _verbs(verbs: list[Any], path: str) -> list[Cause]:
    if not verbs:
        return [_required(path, "verbs must contain at least one value")]
    if NAME_ALL in verbs:
        return [_invalid(path, verbs, "if '*' is present, must not specify other verbs")] if len(verbs) > 1 else []
    if not set(verbs) <= set(SUPPORTED_VERBS):
        return [_not_supported(path, _go(verbs), SUPPORTED_VERBS)]
    return []


def validate_non_resource_url_path(path: Any, field: str) -> Cause | None:
    """``ValidateNonResourceURLPath``: a leading slash, no white-space or ``//``, ``*`` only as a ``/*`` suffix."""
    path = _str(path)
    if not path:
        return _invalid(field, path, "must not be empty")
    if path == "/":
        return None
    if not path.startswith("/"):
        return _invalid(field, path, "must start with slash")
    if " " in path:
        return _invalid(field, path, "must not contain white-space")
    if "//" in path:
        return _invalid(field, path, "must not contain double slash")
    wildcards = path.count("*")
    if wildcards > 1 or (wildcards == 1 and path[-2:] != "/*"):
        return _invalid(field, path, "wildcard can only do suffix matching")
    return None


def _resource_rule(rule: dict[str, Any], path: str) -> list[Cause]:
    causes = _verbs(_list(rule.get("verbs")), f"{path}.verbs")
    for key, what in (("apiGroups", "api group"), ("resources", "resource")):
        values = _list(rule.get(key))
        if not values:
            causes.append(_required(f"{path}.{key}", f"resource rules must supply at least one {what}"))
        elif len(values) > 1 and NAME_ALL in values:
            causes.append(_invalid(f"{path}.{key}", values, f"if '*' is present, must not specify other {what}s"))
    namespaces = _list(rule.get("namespaces"))
    if not namespaces and rule.get("clusterScope") is not True:
        causes.append(_required(f"{path}.namespaces",
                                "resource rules that are not cluster scoped must supply at least one namespace"))
    elif NAME_ALL in namespaces:
        if len(namespaces) > 1:
            causes.append(_invalid(f"{path}.namespaces", namespaces,
                                   "if '*' is present, must not specify other namespaces"))
    else:
        for i, namespace in enumerate(namespaces):
            causes.extend(_invalid(f"{path}.namespaces[{i}]", namespace, NS_ERR_INTRO + msg)
                          for msg in is_dns1123_label(_str(namespace)))
    return causes


def _non_resource_rule(rule: dict[str, Any], path: str) -> list[Cause]:
    causes = _verbs(_list(rule.get("verbs")), f"{path}.verbs")
    urls = _list(rule.get("nonResourceURLs"))
    if not urls:
        causes.append(_required(f"{path}.nonResourceURLs", "nonResourceURLs must contain at least one value"))
    elif NAME_ALL in urls:
        if len(urls) > 1:
            causes.append(_invalid(f"{path}.nonResourceURLs", urls,
                                   "if '*' is present, must not specify other non-resource URLs"))
    else:
        for i, url in enumerate(urls):
            cause = validate_non_resource_url_path(url, f"{path}.nonResourceURLs[{i}]")
            if cause is not None:
                causes.append(cause)
    return causes


_MEMBERS = {"User": "user", "Group": "group", "ServiceAccount": "serviceAccount"}


def _subject(subject: dict[str, Any], path: str) -> list[Cause]:
    kind = _str(subject.get("kind"))
    member = _MEMBERS.get(kind)
    if member is None:
        return [_not_supported(f"{path}.kind", go_quote(kind), SUPPORTED_SUBJECT_KINDS)]
    causes: list[Cause] = []
    body = subject.get(member)
    if not isinstance(body, dict):
        causes.append(_required(f"{path}.{member}", f"{member} is required when subject kind is '{kind}'"))
    elif kind == "ServiceAccount":
        name, namespace = _str(body.get("name")), _str(body.get("namespace"))
        if not name:
            causes.append(_required(f"{path}.serviceAccount.name"))
        elif name != NAME_ALL:
            causes.extend(_invalid(f"{path}.serviceAccount.name", name, m) for m in is_dns1123_subdomain(name))
        if namespace:
            causes.extend(_invalid(f"{path}.serviceAccount.namespace", namespace, m)
                          for m in is_dns1123_label(namespace))
        else:
            causes.append(_required(f"{path}.serviceAccount.namespace", "must specify namespace for service account"))
    elif not _str(body.get("name")):
        causes.append(_required(f"{path}.{member}.name"))
    # kube's order: the other two members, ServiceAccount before User before Group as in its switch
    others = {"ServiceAccount": ("user", "group"), "User": ("serviceAccount", "group"),
              "Group": ("serviceAccount", "user")}[kind]
    owner = {"user": "User", "group": "Group", "serviceAccount": "ServiceAccount"}
    for other in others:
        if subject.get(other) is not None:
            causes.append(_forbidden(f"{path}.{other}",
                                     f"{other} is forbidden when subject kind is not '{owner[other]}'"))
    return causes


def _policy_rules(rule: dict[str, Any], path: str) -> list[Cause]:
    causes: list[Cause] = []
    subjects = _list(rule.get("subjects"))
    if subjects:
        for i, subject in enumerate(subjects):
            causes.extend(_subject(_dict(subject), f"{path}.subjects[{i}]"))
    else:
        causes.append(_required(f"{path}.subjects", "subjects must contain at least one value"))
    resource_rules, non_resource_rules = _list(rule.get("resourceRules")), _list(rule.get("nonResourceRules"))
    if not resource_rules and not non_resource_rules:
        causes.append(_required(path, "at least one of resourceRules and nonResourceRules has to be non-empty"))
    for i, r in enumerate(resource_rules):
        causes.extend(_resource_rule(_dict(r), f"{path}.resourceRules[{i}]"))
    for i, r in enumerate(non_resource_rules):
        causes.extend(_non_resource_rule(_dict(r), f"{path}.nonResourceRules[{i}]"))
    return causes


def validate_flow_schema_spec(name: str, spec: dict[str, Any], path: str = "spec") -> list[Cause]:
    """``ValidateFlowSchemaSpec`` of a defaulted spec; ``name`` is the FlowSchema's (only ``exempt`` may be 1)."""
    causes: list[Cause] = []
    precedence = _int(spec.get("matchingPrecedence"))
    if precedence <= 0:
        causes.append(_invalid(f"{path}.matchingPrecedence", precedence, "must be a positive value"))
    if precedence > MAX_MATCHING_PRECEDENCE:
        causes.append(_invalid(f"{path}.matchingPrecedence", precedence,
                               f"must not be greater than {MAX_MATCHING_PRECEDENCE}"))
    if precedence == 1 and name != EXEMPT:
        causes.append(_invalid(f"{path}.matchingPrecedence", precedence,
                               "only the schema named 'exempt' may have matchingPrecedence 1"))
    method = spec.get("distinguisherMethod")
    if method is not None and _str(_dict(method).get("type")) not in SUPPORTED_DISTINGUISHER_METHODS:
        causes.append(_not_supported(f"{path}.distinguisherMethod.type", go_struct(_DISTINGUISHER, method),
                                     SUPPORTED_DISTINGUISHER_METHODS))
    level = _str(_dict(spec.get("priorityLevelConfiguration")).get("name"))
    if level:
        causes.extend(_invalid(f"{path}.priorityLevelConfiguration.name", level, m)
                      for m in is_dns1123_subdomain(level))
    else:
        causes.append(_required(f"{path}.priorityLevelConfiguration.name", "must reference a priority level"))
    for i, rule in enumerate(_list(spec.get("rules"))):
        causes.extend(_policy_rules(_dict(rule), f"{path}.rules[{i}]"))
    return causes


def _conditions(status: Any, path: str = "status") -> list[Cause]:
    """``Validate{FlowSchema,PriorityLevelConfiguration}Status``: condition types present and unique."""
    causes: list[Cause] = []
    seen: set[str] = set()
    for i, condition in enumerate(_list(_dict(status).get("conditions"))):
        kind = _str(_dict(condition).get("type"))
        if kind in seen:
            causes.append(_duplicate(f"{path}.conditions[{i}].type", kind))
        seen.add(kind)
        if not kind:
            causes.append(_required(f"{path}.conditions[{i}].type", "must not be empty"))
    return causes


def _name(obj: Obj) -> str:
    return _str(_dict(obj.get("metadata")).get("name"))


def validate_flow_schema(obj: Obj) -> list[Cause]:
    """``ValidateFlowSchema`` minus ObjectMeta (kapi.objectmeta): the spec, the mandatory spec, the status."""
    name, spec = _name(obj), _dict(obj.get("spec"))
    causes = validate_flow_schema_spec(name, spec)
    mandatory = mandatory_flow_schema_specs().get(name)
    if mandatory is not None and canonical(spec) != canonical(mandatory):
        causes.append(_invalid("spec", None, f"spec of '{name}' must equal the fixed value",
                               shown=go_struct(_FLOW_SCHEMA_SPEC, spec)))
    causes.extend(_conditions(obj.get("status")))
    return causes


# ------------------------------------------------------------ PriorityLevelConfiguration validation

def required_entropy_bits(deck_size: int, hand_size: int) -> int:
    """shufflesharding.RequiredEntropyBits: ``ceil(log2(deckSize) * handSize)``, bits of hash a deal consumes."""
    return math.ceil(math.log2(deck_size) * hand_size)


def _queuing(queuing: dict[str, Any], path: str) -> list[Cause]:
    causes: list[Cause] = []
    length, queues, hand = (_int(queuing.get(k)) for k in ("queueLengthLimit", "queues", "handSize"))
    if length <= 0:
        causes.append(_invalid(f"{path}.queueLengthLimit", length, "must be positive"))
    if queues <= 0:
        causes.append(_invalid(f"{path}.queues", queues, "must be positive"))
    elif queues > MAX_QUEUES:
        causes.append(_invalid(f"{path}.queues", queues, f"must not be greater than {MAX_QUEUES}"))
    if hand <= 0:
        causes.append(_invalid(f"{path}.handSize", hand, "must be positive"))
    elif hand > queues:
        causes.append(_invalid(f"{path}.handSize", hand, f"should not be greater than queues ({queues})"))
    elif required_entropy_bits(queues, hand) > MAX_HASH_BITS:
        causes.append(_invalid(f"{path}.handSize", hand, f"required entropy bits of deckSize {queues} and handSize "
                                                         f"{hand} should not be greater than {MAX_HASH_BITS}"))
    return causes


def _limit_response(response: dict[str, Any], path: str) -> list[Cause]:
    kind, queuing = _str(response.get("type")), response.get("queuing")
    if kind == "Reject":
        if queuing is not None:
            return [_forbidden(f"{path}.queuing", "must be nil if limited.limitResponse.type is not Limited")]
        return []
    if kind == "Queue":
        if not isinstance(queuing, dict):
            return [_required(f"{path}.queuing", "must not be empty if limited.limitResponse.type is Limited")]
        return _queuing(queuing, f"{path}.queuing")
    return [_not_supported(f"{path}.type", go_quote(kind), SUPPORTED_LIMIT_RESPONSE_TYPES)]


def _percent(value: Any) -> int | None:
    return None if value is None else _int(value)


def _limited(limited: dict[str, Any], path: str) -> list[Cause]:
    causes: list[Cause] = []
    shares = _int(limited.get("nominalConcurrencyShares"))
    if shares < 0:  # AllowZeroLimitedNominalConcurrencyShares: a zero share is a "jail" level
        causes.append(_invalid(f"{path}.nominalConcurrencyShares", shares, "must be a non-negative integer"))
    causes.extend(_limit_response(_dict(limited.get("limitResponse")), f"{path}.limitResponse"))
    lendable = _percent(limited.get("lendablePercent"))
    if lendable is not None and not 0 <= lendable <= 100:
        causes.append(_invalid(f"{path}.lendablePercent", lendable, "must be between 0 and 100, inclusive"))
    borrowing = _percent(limited.get("borrowingLimitPercent"))
    if borrowing is not None and borrowing < 0:
        causes.append(_invalid(f"{path}.borrowingLimitPercent", borrowing,
                               "if specified, must be a non-negative integer"))
    return causes


def _exempt(exempt: dict[str, Any], path: str) -> list[Cause]:
    causes: list[Cause] = []
    shares = _percent(exempt.get("nominalConcurrencyShares"))
    if shares is not None and shares < 0:
        causes.append(_invalid(f"{path}.nominalConcurrencyShares", shares, "must be a non-negative integer"))
    lendable = _percent(exempt.get("lendablePercent"))
    if lendable is not None and not 0 <= lendable <= 100:
        causes.append(_invalid(f"{path}.lendablePercent", lendable, "must be between 0 and 100, inclusive"))
    return causes


def validate_priority_level_spec(name: str, spec: dict[str, Any], path: str = "spec") -> list[Cause]:
    """``ValidatePriorityLevelConfigurationSpec`` of a defaulted spec; ``name`` is the level's."""
    causes: list[Cause] = []
    kind = _str(spec.get("type"))
    if (name == EXEMPT) != (kind == "Exempt"):
        causes.append(_invalid(f"{path}.type", kind, "type must be 'Exempt' if and only if name is 'exempt'"))
    limited, exempt = spec.get("limited"), spec.get("exempt")
    if kind == "Exempt":
        if limited is not None:
            causes.append(_forbidden(f"{path}.limited", "must be nil if the type is not Limited"))
        if isinstance(exempt, dict):
            causes.extend(_exempt(exempt, f"{path}.exempt"))
    elif kind == "Limited":
        if exempt is not None:
            causes.append(_forbidden(f"{path}.exempt", "must be nil if the type is Limited"))
        if not isinstance(limited, dict):
            causes.append(_required(f"{path}.limited", "must not be empty when type is Limited"))
        else:
            causes.extend(_limited(limited, f"{path}.limited"))
    else:
        causes.append(_not_supported(f"{path}.type", go_quote(kind), SUPPORTED_PRIORITY_LEVEL_TYPES))
    return causes


def _mandatory_priority_level(name: str, spec: dict[str, Any]) -> list[Cause]:
    """``ValidateIfMandatoryPriorityLevelConfigurationObject``: ``exempt`` may change only ``spec.exempt``."""
    want = mandatory_priority_level_specs().get(name)
    if want is None:
        return []
    shown = go_struct(_PRIORITY_LEVEL_SPEC, spec)
    if name == EXEMPT:
        have = {k: v for k, v in spec.items() if k != "exempt"}
        want.pop("exempt", None)
        if canonical(have) != canonical(want):
            return [_invalid("spec", None, f"spec of '{name}' except the 'spec.exempt' field must equal the fixed "
                                           "value", shown=shown)]
        return []
    if canonical(spec) != canonical(want):
        return [_invalid("spec", None, f"spec of '{name}' must equal the fixed value", shown=shown)]
    return []


def validate_priority_level(obj: Obj) -> list[Cause]:
    """``ValidatePriorityLevelConfiguration`` minus ObjectMeta: the spec, the mandatory spec, the status."""
    name, spec = _name(obj), _dict(obj.get("spec"))
    causes = validate_priority_level_spec(name, spec)
    causes.extend(_mandatory_priority_level(name, spec))
    causes.extend(_conditions(obj.get("status")))
    return causes


# ------------------------------------------------------------ strategies

class _FlowControlStrategy(Strategy):
    """Shared by both kinds: ``PrepareForCreate`` resets the status; ``status`` updates check the conditions."""

    group = GROUP
    status_zero: dict[str, Any] = {}  # FlowSchemaStatus / PriorityLevelConfigurationStatus: conditions, omitempty
    # the validation above names every missing field as kube does (``limitResponse.type: Unsupported value: ""``,
    # never the schema's bare ``limitResponse: Required value``)
    validates_required = True

    def prepare_for_create(self, obj: Obj, *, user: UserInfo | None = None) -> None:
        """``Status = {}`` (the generic strategy sets ``generation`` 1)."""
        obj["status"] = {}

    def validate_update(self, new: Obj, old: Obj, subresource: str = "") -> list[Cause]:
        """Main resource: nothing beyond :meth:`validate` (kube's update validation is create validation);
        ``status``: ``Validate*StatusUpdate``, the conditions."""
        return _conditions(new.get("status")) if subresource == "status" else []


@register
class FlowSchemaStrategy(_FlowControlStrategy):
    """FlowSchema (flowcontrol.apiserver.k8s.io/v1): defaults and validation above."""

    kind = "FlowSchema"
    #: flowSchemaStatusStrategy.PrepareForUpdate: new.ObjectMeta = old.ObjectMeta (managedFields kept) and spec
    status_reset_metadata = WHOLE_OBJECT_META

    def default(self, obj: Obj) -> None:
        """``SetObjectDefaults_FlowSchema``: the spec (created when absent) gets ``matchingPrecedence`` 1000."""
        spec = obj.get("spec")
        if spec is None:
            spec = obj["spec"] = {}
        if isinstance(spec, dict):
            default_flow_schema_spec(spec)

    def validate(self, obj: Obj) -> list[Cause]:
        """:func:`validate_flow_schema`."""
        return validate_flow_schema(obj)


@register
class PriorityLevelConfigurationStrategy(_FlowControlStrategy):
    """PriorityLevelConfiguration (flowcontrol.apiserver.k8s.io/v1): defaults and validation above."""

    kind = "PriorityLevelConfiguration"
    #: priorityLevelConfigurationStatusStrategy.PrepareForUpdate: new.ObjectMeta = old.ObjectMeta (managedFields
    #: kept) and spec
    status_reset_metadata = WHOLE_OBJECT_META

    def default(self, obj: Obj) -> None:
        """``SetObjectDefaults_PriorityLevelConfiguration`` (:func:`default_priority_level_spec`)."""
        spec = obj.get("spec")
        if isinstance(spec, dict):
            default_priority_level_spec(spec)

    def validate(self, obj: Obj) -> list[Cause]:
        """:func:`validate_priority_level`."""
        return validate_priority_level(obj)
