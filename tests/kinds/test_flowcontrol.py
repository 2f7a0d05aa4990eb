"""FlowSchema and PriorityLevelConfiguration defaults and validation (kapi.kinds.flowcontrol), rule by rule.

Each row is one of kube's rules (pkg/apis/flowcontrol/validation, v1
defaults.go) with its field path and message.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kapi.kinds import flowcontrol as fc
from kapi.kinds import strategy_for
from services.flowcontrol import defaults

FS = strategy_for(fc.GROUP, "FlowSchema")
PL = strategy_for(fc.GROUP, "PriorityLevelConfiguration")

VERBS = '"create", "delete", "deletecollection", "get", "list", "patch", "proxy", "update", "watch"'
DNS_LABEL = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
             "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
             "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')")


def rule(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"subjects": [{"kind": "User", "user": {"name": "alice"}}],
                            "resourceRules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"],
                                               "namespaces": ["default"]}]}
    base.update(overrides)
    return {k: v for k, v in base.items() if v is not None}


def flow_schema(spec: dict[str, Any] | None = None, name: str = "team-a", **spec_overrides: Any) -> dict[str, Any]:
    body = spec if spec is not None else {"priorityLevelConfiguration": {"name": "global-default"},
                                          "rules": [rule()]}
    body = {**body, **spec_overrides}
    obj = {"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema", "metadata": {"name": name},
           "spec": body}
    FS.default(obj)
    return obj


def fs_causes(spec: dict[str, Any] | None = None, name: str = "team-a", **kw: Any) -> list[tuple[str, str]]:
    return [(c.field, c.message) for c in FS.validate(flow_schema(spec, name, **kw))]


def level(spec: dict[str, Any], name: str = "team-a") -> dict[str, Any]:
    obj = {"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "PriorityLevelConfiguration",
           "metadata": {"name": name}, "spec": copy.deepcopy(spec)}
    PL.default(obj)
    return obj


def pl_causes(spec: dict[str, Any], name: str = "team-a") -> list[tuple[str, str]]:
    return [(c.field, c.message) for c in PL.validate(level(spec, name))]


def queue(**queuing: Any) -> dict[str, Any]:
    return {"type": "Limited", "limited": {"limitResponse": {"type": "Queue", "queuing": queuing}}}


# ------------------------------------------------------------ defaults

def test_flow_schema_defaults() -> None:
    obj = flow_schema()
    assert obj["spec"]["matchingPrecedence"] == 1000
    assert flow_schema(matchingPrecedence=0)["spec"]["matchingPrecedence"] == 1000
    assert flow_schema(matchingPrecedence=42)["spec"]["matchingPrecedence"] == 42
    bare = {"kind": "FlowSchema", "metadata": {"name": "x"}}
    FS.default(bare)
    assert bare["spec"] == {"matchingPrecedence": 1000}


@pytest.mark.parametrize(("spec", "expected"), [
    ({"type": "Limited", "limited": {"limitResponse": {"type": "Queue", "queuing": {}}}},
     {"type": "Limited", "limited": {"nominalConcurrencyShares": 30, "lendablePercent": 0, "limitResponse": {
         "type": "Queue", "queuing": {"queues": 64, "handSize": 8, "queueLengthLimit": 50}}}}),
    ({"type": "Limited", "limited": {"nominalConcurrencyShares": 0, "limitResponse": {"type": "Reject"}}},
     {"type": "Limited", "limited": {"nominalConcurrencyShares": 0, "lendablePercent": 0,
                                     "limitResponse": {"type": "Reject"}}}),  # an explicit 0 stays (v1 pointer)
    ({"type": "Limited", "limited": {"limitResponse": {"type": "Queue", "queuing": {"queues": 10, "handSize": 2}}}},
     {"type": "Limited", "limited": {"nominalConcurrencyShares": 30, "lendablePercent": 0, "limitResponse": {
         "type": "Queue", "queuing": {"queues": 10, "handSize": 2, "queueLengthLimit": 50}}}}),
    ({"type": "Limited", "limited": {}},  # no limitResponse.type default (validation requires it)
     {"type": "Limited", "limited": {"nominalConcurrencyShares": 30, "lendablePercent": 0}}),
    ({"type": "Exempt", "exempt": {}}, {"type": "Exempt", "exempt": {"nominalConcurrencyShares": 0,
                                                                     "lendablePercent": 0}}),
    ({"type": "Exempt"}, {"type": "Exempt"}),
])
def test_priority_level_defaults(spec: dict[str, Any], expected: dict[str, Any]) -> None:
    assert level(spec)["spec"] == expected


def test_default_objects_are_defaulted_and_valid() -> None:
    """What the flowcontrol service writes straight to storage is what admission would store (kube's
    internalbootstrap test: defaulting changes no bootstrap object)."""
    for resource, obj in defaults.default_objects():
        strategy = FS if resource == defaults.FLOW_SCHEMAS else PL
        defaulted = copy.deepcopy(obj)
        strategy.default(defaulted)
        assert defaulted == obj
        assert strategy.validate(obj) == [], obj["metadata"]["name"]


def test_prepare_for_create_resets_status() -> None:
    obj = flow_schema()
    obj["status"] = {"conditions": [{"type": "Dangling", "status": "True"}]}
    FS.prepare_for_create(obj)
    assert obj["status"] == {}


# ------------------------------------------------------------ FlowSchema spec

@pytest.mark.parametrize(("overrides", "name", "expected"), [
    ({"matchingPrecedence": -1}, "team-a",
     [("spec.matchingPrecedence", "Invalid value: -1: must be a positive value")]),
    ({"matchingPrecedence": 10001}, "team-a",
     [("spec.matchingPrecedence", "Invalid value: 10001: must not be greater than 10000")]),
    ({"matchingPrecedence": 10000}, "team-a", []),
    ({"matchingPrecedence": 1}, "team-a",
     [("spec.matchingPrecedence", "Invalid value: 1: only the schema named 'exempt' may have matchingPrecedence 1")]),
    ({"distinguisherMethod": {"type": "ByGroup"}}, "team-a",
     [("spec.distinguisherMethod.type", 'Unsupported value: flowcontrol.FlowDistinguisherMethod{Type:"ByGroup"}: '
                                        'supported values: "ByNamespace", "ByUser"')]),
    ({"distinguisherMethod": {"type": "ByNamespace"}}, "team-a", []),
    ({"priorityLevelConfiguration": {}}, "team-a",
     [("spec.priorityLevelConfiguration.name", "Required value: must reference a priority level")]),
    ({"priorityLevelConfiguration": {"name": "Bad_Name"}}, "team-a",
     [("spec.priorityLevelConfiguration.name",
       'Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric '
       "characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex "
       "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")]),
    ({"rules": []}, "team-a", []),
])
def test_flow_schema_spec(overrides: dict[str, Any], name: str, expected: list[tuple[str, str]]) -> None:
    assert fs_causes(None, name, **overrides) == expected


@pytest.mark.parametrize(("the_rule", "expected"), [
    (rule(subjects=[]), [("spec.rules[0].subjects", "Required value: subjects must contain at least one value")]),
    (rule(resourceRules=None),
     [("spec.rules[0]", "Required value: at least one of resourceRules and nonResourceRules has to be non-empty")]),
    # subjects
    (rule(subjects=[{"kind": "Robot"}]),
     [("spec.rules[0].subjects[0].kind",
       'Unsupported value: "Robot": supported values: "Group", "ServiceAccount", "User"')]),
    (rule(subjects=[{"kind": "User"}]),
     [("spec.rules[0].subjects[0].user", "Required value: user is required when subject kind is 'User'")]),
    (rule(subjects=[{"kind": "Group"}]),
     [("spec.rules[0].subjects[0].group", "Required value: group is required when subject kind is 'Group'")]),
    (rule(subjects=[{"kind": "ServiceAccount"}]),
     [("spec.rules[0].subjects[0].serviceAccount",
       "Required value: serviceAccount is required when subject kind is 'ServiceAccount'")]),
    (rule(subjects=[{"kind": "User", "user": {}}]), [("spec.rules[0].subjects[0].user.name", "Required value")]),
    (rule(subjects=[{"kind": "Group", "group": {"name": ""}}]),
     [("spec.rules[0].subjects[0].group.name", "Required value")]),
    (rule(subjects=[{"kind": "ServiceAccount", "serviceAccount": {}}]),
     [("spec.rules[0].subjects[0].serviceAccount.name", "Required value"),
      ("spec.rules[0].subjects[0].serviceAccount.namespace",
       "Required value: must specify namespace for service account")]),
    (rule(subjects=[{"kind": "ServiceAccount", "serviceAccount": {"name": "*", "namespace": "kube-system"}}]), []),
    (rule(subjects=[{"kind": "ServiceAccount", "serviceAccount": {"name": "sa", "namespace": "Kube_System"}}]),
     [("spec.rules[0].subjects[0].serviceAccount.namespace", f'Invalid value: "Kube_System": {DNS_LABEL}')]),
    (rule(subjects=[{"kind": "User", "user": {"name": "a"}, "group": {"name": "g"},
                     "serviceAccount": {"name": "s", "namespace": "n"}}]),
     [("spec.rules[0].subjects[0].serviceAccount",
       "Forbidden: serviceAccount is forbidden when subject kind is not 'ServiceAccount'"),
      ("spec.rules[0].subjects[0].group", "Forbidden: group is forbidden when subject kind is not 'Group'")]),
    (rule(subjects=[{"kind": "ServiceAccount", "serviceAccount": {"name": "s", "namespace": "n"},
                     "user": {"name": "a"}}]),
     [("spec.rules[0].subjects[0].user", "Forbidden: user is forbidden when subject kind is not 'User'")]),
    # resource rules
    (rule(resourceRules=[{}]),
     [("spec.rules[0].resourceRules[0].verbs", "Required value: verbs must contain at least one value"),
      ("spec.rules[0].resourceRules[0].apiGroups",
       "Required value: resource rules must supply at least one api group"),
      ("spec.rules[0].resourceRules[0].resources",
       "Required value: resource rules must supply at least one resource"),
      ("spec.rules[0].resourceRules[0].namespaces",
       "Required value: resource rules that are not cluster scoped must supply at least one namespace")]),
    (rule(resourceRules=[{"verbs": ["*", "get"], "apiGroups": ["*", "apps"], "resources": ["pods", "*"],
                          "namespaces": ["*", "a"]}]),
     [("spec.rules[0].resourceRules[0].verbs",
       'Invalid value: []string{"*", "get"}: if \'*\' is present, must not specify other verbs'),
      ("spec.rules[0].resourceRules[0].apiGroups",
       'Invalid value: []string{"*", "apps"}: if \'*\' is present, must not specify other api groups'),
      ("spec.rules[0].resourceRules[0].resources",
       'Invalid value: []string{"pods", "*"}: if \'*\' is present, must not specify other resources'),
      ("spec.rules[0].resourceRules[0].namespaces",
       'Invalid value: []string{"*", "a"}: if \'*\' is present, must not specify other namespaces')]),
    (rule(resourceRules=[{"verbs": ["get", "escalate"], "apiGroups": [""], "resources": ["pods"],
                          "clusterScope": True}]),
     [("spec.rules[0].resourceRules[0].verbs",
       f'Unsupported value: []string{{"get", "escalate"}}: supported values: {VERBS}')]),
    (rule(resourceRules=[{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"], "namespaces": ["ok", "Not_OK"]}]),
     [("spec.rules[0].resourceRules[0].namespaces[1]",
       f"Invalid value: \"Not_OK\": each member of this list must be '*' or a DNS-1123 label; {DNS_LABEL}")]),
    (rule(resourceRules=[{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"], "clusterScope": True}]), []),
    # non-resource rules
    (rule(resourceRules=None, nonResourceRules=[{}]),
     [("spec.rules[0].nonResourceRules[0].verbs", "Required value: verbs must contain at least one value"),
      ("spec.rules[0].nonResourceRules[0].nonResourceURLs",
       "Required value: nonResourceURLs must contain at least one value")]),
    (rule(resourceRules=None, nonResourceRules=[{"verbs": ["get"], "nonResourceURLs": ["*", "/healthz"]}]),
     [("spec.rules[0].nonResourceRules[0].nonResourceURLs",
       'Invalid value: []string{"*", "/healthz"}: if \'*\' is present, must not specify other non-resource URLs')]),
    (rule(resourceRules=None, nonResourceRules=[{"verbs": ["get"], "nonResourceURLs": [
        "", "/", "healthz", "/a b", "/a//b", "/a*", "/a/*/b/*", "/healthz/*"]}]),
     [("spec.rules[0].nonResourceRules[0].nonResourceURLs[0]", 'Invalid value: "": must not be empty'),
      ("spec.rules[0].nonResourceRules[0].nonResourceURLs[2]", 'Invalid value: "healthz": must start with slash'),
      ("spec.rules[0].nonResourceRules[0].nonResourceURLs[3]", 'Invalid value: "/a b": must not contain white-space'),
      ("spec.rules[0].nonResourceRules[0].nonResourceURLs[4]", 'Invalid value: "/a//b": must not contain double slash'),
      ("spec.rules[0].nonResourceRules[0].nonResourceURLs[5]",
       'Invalid value: "/a*": wildcard can only do suffix matching'),
      ("spec.rules[0].nonResourceRules[0].nonResourceURLs[6]",
       'Invalid value: "/a/*/b/*": wildcard can only do suffix matching')]),
    (rule(resourceRules=None, nonResourceRules=[{"verbs": ["get", "post"], "nonResourceURLs": ["/version"]}]),
     [("spec.rules[0].nonResourceRules[0].verbs",
       f'Unsupported value: []string{{"get", "post"}}: supported values: {VERBS}')]),
])
def test_flow_schema_rules(the_rule: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    assert fs_causes(None, rules=[the_rule]) == expected


def test_mandatory_flow_schemas_are_fixed() -> None:
    for name, spec in fc.mandatory_flow_schema_specs().items():
        assert fs_causes(spec, name) == []
        changed = copy.deepcopy(spec)
        changed["rules"][0]["subjects"] = [{"kind": "Group", "group": {"name": "system:masters"}},
                                           {"kind": "Group", "group": {"name": "team-a"}}]
        causes = fs_causes(changed, name)
        assert [f for f, _ in causes] == ["spec"]
        assert causes[0][1].startswith("Invalid value: flowcontrol.FlowSchemaSpec{PriorityLevelConfiguration:"
                                       f'flowcontrol.PriorityLevelConfigurationReference{{Name:"{name}"}}')
        assert causes[0][1].endswith(f": spec of '{name}' must equal the fixed value")
    # omitted empty values compare equal (Go's semantic equality)
    spec = fc.mandatory_flow_schema_specs()["exempt"]
    spec["rules"][0]["resourceRules"][0]["clusterScope"] = True
    spec["rules"][0]["nonResourceRules"][0]["extra"] = []
    assert fs_causes(spec, "exempt") == []


# ------------------------------------------------------------ PriorityLevelConfiguration spec

@pytest.mark.parametrize(("spec", "name", "expected"), [
    ({"type": "Limited", "limited": {"limitResponse": {"type": "Reject"}}}, "team-a", []),
    ({"type": "Exempt", "exempt": {}}, "team-a",
     [("spec.type", "Invalid value: \"Exempt\": type must be 'Exempt' if and only if name is 'exempt'")]),
    ({"type": "Strict"}, "team-a",
     [("spec.type", 'Unsupported value: "Strict": supported values: "Exempt", "Limited"')]),
    ({}, "team-a", [("spec.type", 'Unsupported value: "": supported values: "Exempt", "Limited"')]),
    ({"type": "Limited"}, "team-a", [("spec.limited", "Required value: must not be empty when type is Limited")]),
    ({"type": "Limited", "exempt": {}, "limited": {"limitResponse": {"type": "Reject"}}}, "team-a",
     [("spec.exempt", "Forbidden: must be nil if the type is Limited")]),
    ({"type": "Limited", "limited": {"nominalConcurrencyShares": -1, "lendablePercent": 101,
                                     "borrowingLimitPercent": -5, "limitResponse": {"type": "Reject"}}}, "team-a",
     [("spec.limited.nominalConcurrencyShares", "Invalid value: -1: must be a non-negative integer"),
      ("spec.limited.lendablePercent", "Invalid value: 101: must be between 0 and 100, inclusive"),
      ("spec.limited.borrowingLimitPercent", "Invalid value: -5: if specified, must be a non-negative integer")]),
    ({"type": "Limited", "limited": {"nominalConcurrencyShares": 0, "lendablePercent": 100,
                                     "borrowingLimitPercent": 300, "limitResponse": {"type": "Reject"}}},
     "team-a", []),
    ({"type": "Limited", "limited": {"lendablePercent": -1, "limitResponse": {"type": "Reject"}}}, "team-a",
     [("spec.limited.lendablePercent", "Invalid value: -1: must be between 0 and 100, inclusive")]),
    ({"type": "Limited", "limited": {}}, "team-a",
     [("spec.limited.limitResponse.type", 'Unsupported value: "": supported values: "Queue", "Reject"')]),
    ({"type": "Limited", "limited": {"limitResponse": {"type": "Reject", "queuing": {}}}}, "team-a",
     [("spec.limited.limitResponse.queuing",
       "Forbidden: must be nil if limited.limitResponse.type is not Limited")]),
    ({"type": "Limited", "limited": {"limitResponse": {"type": "Queue"}}}, "team-a",
     [("spec.limited.limitResponse.queuing",
       "Required value: must not be empty if limited.limitResponse.type is Limited")]),
    (queue(), "team-a", []),
    (queue(queues=-1, handSize=-2, queueLengthLimit=-3), "team-a",
     [("spec.limited.limitResponse.queuing.queueLengthLimit", "Invalid value: -3: must be positive"),
      ("spec.limited.limitResponse.queuing.queues", "Invalid value: -1: must be positive"),
      ("spec.limited.limitResponse.queuing.handSize", "Invalid value: -2: must be positive")]),
    (queue(queues=10_000_001, handSize=1), "team-a",
     [("spec.limited.limitResponse.queuing.queues", "Invalid value: 10000001: must not be greater than 10000000")]),
    (queue(queues=4, handSize=5), "team-a",
     [("spec.limited.limitResponse.queuing.handSize", "Invalid value: 5: should not be greater than queues (4)")]),
    (queue(queues=128, handSize=9), "team-a",  # ceil(log2(128) * 9) = 63 bits
     [("spec.limited.limitResponse.queuing.handSize",
       "Invalid value: 9: required entropy bits of deckSize 128 and handSize 9 should not be greater than 60")]),
    (queue(queues=1024, handSize=6), "team-a", []),  # exactly 60 bits
    (queue(queues=1024, handSize=7), "team-a",
     [("spec.limited.limitResponse.queuing.handSize",
       "Invalid value: 7: required entropy bits of deckSize 1024 and handSize 7 should not be greater than 60")]),
    # Exempt
    ({"type": "Limited", "limited": {"limitResponse": {"type": "Reject"}}}, "exempt",
     [("spec.type", "Invalid value: \"Limited\": type must be 'Exempt' if and only if name is 'exempt'"),
      ("spec", "Invalid value: flowcontrol.PriorityLevelConfigurationSpec{Type:\"Limited\", "
               "Limited:(*flowcontrol.LimitedPriorityLevelConfiguration)(0xc000010000), "
               "Exempt:(*flowcontrol.ExemptPriorityLevelConfiguration)(nil)}: "
               "spec of 'exempt' except the 'spec.exempt' field must equal the fixed value")]),
    ({"type": "Exempt", "exempt": {"nominalConcurrencyShares": 7, "lendablePercent": 50}}, "exempt", []),
    ({"type": "Exempt"}, "exempt", []),
    ({"type": "Exempt", "exempt": {"nominalConcurrencyShares": -1, "lendablePercent": 101}}, "exempt",
     [("spec.exempt.nominalConcurrencyShares", "Invalid value: -1: must be a non-negative integer"),
      ("spec.exempt.lendablePercent", "Invalid value: 101: must be between 0 and 100, inclusive")]),
    ({"type": "Exempt", "exempt": {}, "limited": {"limitResponse": {"type": "Reject"}}}, "exempt",
     [("spec.limited", "Forbidden: must be nil if the type is not Limited"),
      ("spec", "Invalid value: flowcontrol.PriorityLevelConfigurationSpec{Type:\"Exempt\", "
               "Limited:(*flowcontrol.LimitedPriorityLevelConfiguration)(0xc000010000), "
               "Exempt:(*flowcontrol.ExemptPriorityLevelConfiguration)(0xc000010000)}: "
               "spec of 'exempt' except the 'spec.exempt' field must equal the fixed value")]),
    # catch-all
    ({"type": "Limited", "limited": {"nominalConcurrencyShares": 5, "limitResponse": {"type": "Reject"}}},
     "catch-all", []),
    ({"type": "Limited", "limited": {"nominalConcurrencyShares": 5, "borrowingLimitPercent": 0,
                                     "limitResponse": {"type": "Reject"}}}, "catch-all",  # 0 is not nil
     [("spec", "Invalid value: flowcontrol.PriorityLevelConfigurationSpec{Type:\"Limited\", "
               "Limited:(*flowcontrol.LimitedPriorityLevelConfiguration)(0xc000010000), "
               "Exempt:(*flowcontrol.ExemptPriorityLevelConfiguration)(nil)}: "
               "spec of 'catch-all' must equal the fixed value")]),
    ({"type": "Limited", "limited": {"limitResponse": {"type": "Reject"}}}, "catch-all",
     [("spec", "Invalid value: flowcontrol.PriorityLevelConfigurationSpec{Type:\"Limited\", "
               "Limited:(*flowcontrol.LimitedPriorityLevelConfiguration)(0xc000010000), "
               "Exempt:(*flowcontrol.ExemptPriorityLevelConfiguration)(nil)}: "
               "spec of 'catch-all' must equal the fixed value")]),
])
def test_priority_level_spec(spec: dict[str, Any], name: str, expected: list[tuple[str, str]]) -> None:
    assert pl_causes(spec, name) == expected


@pytest.mark.parametrize(("deck", "hand", "bits"), [(64, 8, 48), (128, 6, 42), (1024, 6, 60), (3, 2, 4), (1, 1, 0)])
def test_required_entropy_bits(deck: int, hand: int, bits: int) -> None:
    assert fc.required_entropy_bits(deck, hand) == bits


# ------------------------------------------------------------ status and updates

@pytest.mark.parametrize("strategy", [FS, PL])
def test_status_conditions(strategy: Any) -> None:
    obj = flow_schema() if strategy is FS else level({"type": "Limited",
                                                       "limited": {"limitResponse": {"type": "Reject"}}})
    obj["status"] = {"conditions": [{"type": "Dangling"}, {"type": "Dangling"}, {"status": "True"}]}
    expected = [("status.conditions[1].type", 'Duplicate value: "Dangling"'),
                ("status.conditions[2].type", "Required value: must not be empty")]
    assert [(c.field, c.message) for c in strategy.validate_update(obj, obj, "status")] == expected
    assert [(c.field, c.message) for c in strategy.validate(obj)] == expected  # ValidateFlowSchema covers status
    assert strategy.validate_update(obj, obj, "") == []  # the main resource: Validate* runs on the new object


def test_specs_equal_is_semantic() -> None:
    a = {"priorityLevelConfiguration": {"name": "x"}, "rules": [rule()]}
    b = {**a, "matchingPrecedence": 1000, "distinguisherMethod": None}
    assert fc.specs_equal("FlowSchema", a, b)
    assert not fc.specs_equal("FlowSchema", a, {**a, "matchingPrecedence": 999})
    assert fc.specs_equal("PriorityLevelConfiguration", {"type": "Exempt", "exempt": {}},
                          fc.mandatory_priority_level_specs()["exempt"])
