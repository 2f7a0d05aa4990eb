"""kapi.kinds.podaffinity: validateAffinity and validateTopologySpreadConstraints (kube's
pkg/apis/core/validation/validation.go), exact fields, messages and order."""

from __future__ import annotations

from typing import Any

import pytest

from kapi.kinds.podaffinity import (
    validate_affinity,
    validate_match_label_keys,
    validate_node_selector,
    validate_topology_spread_constraints,
)

A = "spec.affinity"
NA = f"{A}.nodeAffinity"
REQ = "requiredDuringSchedulingIgnoredDuringExecution"
PREF = "preferredDuringSchedulingIgnoredDuringExecution"
T = "spec.topologySpreadConstraints"

QN_EMPTY = "name part must be non-empty"
QN_REGEX = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
            "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
            "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
LABEL_VALUE = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
               "must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', "
               "regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")
DNS_LABEL = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
             "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
             "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
DNS_SUBDOMAIN = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
                 "must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation "
                 "is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
IN_VALUES = "Required value: must be specified when `operator` is 'In' or 'NotIn'"
EXISTS_VALUES = "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
NO_SELECTOR = "Forbidden: must not be specified when labelSelector is not set"


def _pairs(causes: list[Any]) -> list[tuple[str, str]]:
    return [(c.field, c.message) for c in causes]


def _affinity(affinity: Any, **kwargs: Any) -> list[tuple[str, str]]:
    return _pairs(validate_affinity(affinity, A, **kwargs))


def _spread(constraints: Any, **kwargs: Any) -> list[tuple[str, str]]:
    return _pairs(validate_topology_spread_constraints(constraints, T, **kwargs))


def _term(**extra: Any) -> dict[str, Any]:
    return {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname", **extra}


def _constraint(**extra: Any) -> dict[str, Any]:
    return {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "web"}}, **extra}


VALID_AFFINITY = {
    "nodeAffinity": {
        REQ: {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]},
                                  {"key": "gpu", "operator": "Exists"},
                                  {"key": "cores", "operator": "Gt", "values": ["4"]}],
             "matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["node-1"]}]},
            {}]},
        PREF: [{"weight": 100, "preference": {"matchExpressions": [{"key": "disk", "operator": "DoesNotExist"}]}}],
    },
    "podAffinity": {REQ: [_term(namespaces=["default"], namespaceSelector={})]},
    "podAntiAffinity": {PREF: [{"weight": 1, "podAffinityTerm": _term(matchLabelKeys=["pod-template-hash"],
                                                                      mismatchLabelKeys=["tenant"])}]},
}


@pytest.mark.parametrize("affinity", [None, {}, "x", [], VALID_AFFINITY,
                                      {"nodeAffinity": None, "podAffinity": None, "podAntiAffinity": "x"}])
def test_valid_or_absent_affinity_has_no_causes(affinity: Any) -> None:
    assert _affinity(affinity) == []


def test_required_node_selector_needs_a_term() -> None:
    assert _affinity({"nodeAffinity": {REQ: {}}}) == [
        (f"{NA}.{REQ}.nodeSelectorTerms", "Required value: must have at least one node selector term")]
    assert _affinity({"nodeAffinity": {REQ: {"nodeSelectorTerms": []}}}) == [
        (f"{NA}.{REQ}.nodeSelectorTerms", "Required value: must have at least one node selector term")]
    # a null required selector is a nil pointer: not validated
    assert _affinity({"nodeAffinity": {REQ: None}}) == []


def test_node_selector_requirements() -> None:
    expressions = [
        {"key": "a", "operator": "In"},
        {"key": "b", "operator": "Exists", "values": ["x"]},
        {"key": "c", "operator": "Gt", "values": ["1", "2"]},
        {"key": "d", "operator": "Lt"},
        {"key": "a/", "operator": "Foo", "values": ["-x"]},
        {"operator": "NotIn", "values": ["ok"]},
    ]
    path = f"{NA}.{REQ}.nodeSelectorTerms[0].matchExpressions"
    assert _affinity({"nodeAffinity": {REQ: {"nodeSelectorTerms": [{"matchExpressions": expressions}]}}}) == [
        (f"{path}[0].values", IN_VALUES),
        (f"{path}[1].values", EXISTS_VALUES),
        (f"{path}[2].values", "Required value: must be specified single value when `operator` is 'Lt' or 'Gt'"),
        (f"{path}[3].values", "Required value: must be specified single value when `operator` is 'Lt' or 'Gt'"),
        (f"{path}[4].operator", 'Invalid value: "Foo": not a valid selector operator'),
        (f"{path}[4].key", f'Invalid value: "a/": {QN_EMPTY}'),
        (f"{path}[4].key", f'Invalid value: "a/": {QN_REGEX}'),
        (f"{path}[4].values[0]", f'Invalid value: "-x": {LABEL_VALUE}'),
        (f"{path}[5].key", f'Invalid value: "": {QN_EMPTY}'),
        (f"{path}[5].key", f'Invalid value: "": {QN_REGEX}'),
    ]


def test_required_node_affinity_label_values_may_be_allowed() -> None:
    affinity = {"nodeAffinity": {REQ: {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "a", "operator": "In", "values": ["-x"]}]}]}}}
    assert _affinity(affinity) == [(f"{NA}.{REQ}.nodeSelectorTerms[0].matchExpressions[0].values[0]",
                                    f'Invalid value: "-x": {LABEL_VALUE}')]
    assert _affinity(affinity, allow_invalid_label_value_in_required_node_affinity=True) == []


def test_node_field_selector_requirements() -> None:
    fields = [
        {"key": "metadata.namespace", "operator": "In", "values": ["x"]},
        {"key": "metadata.name", "operator": "Exists"},
        {"key": "metadata.name", "operator": "In", "values": ["a", "b"]},
        {"key": "metadata.name", "operator": "NotIn", "values": ["Bad_Name"]},
        {"key": "metadata.name", "operator": "Gt", "values": ["1"]},
    ]
    path = f"{NA}.{REQ}.nodeSelectorTerms[0].matchFields"
    assert _affinity({"nodeAffinity": {REQ: {"nodeSelectorTerms": [{"matchFields": fields}]}}}) == [
        (f"{path}[0].key", 'Invalid value: "metadata.namespace": not a valid field selector key'),
        (f"{path}[1].operator", 'Invalid value: "Exists": not a valid selector operator'),
        (f"{path}[2].values", "Required value: must be only one value when `operator` is 'In' or 'NotIn' for node "
                              "field selector"),
        (f"{path}[3].values[0]", f'Invalid value: "Bad_Name": {DNS_SUBDOMAIN}'),
        (f"{path}[4].operator", 'Invalid value: "Gt": not a valid selector operator'),
    ]


def test_terms_check_expressions_before_fields_and_in_term_order() -> None:
    selector = {"nodeSelectorTerms": [
        {"matchFields": [{"key": "x", "operator": "In", "values": ["n"]}],
         "matchExpressions": [{"key": "a", "operator": "In"}]},
        {"matchExpressions": [{"key": "b", "operator": "Exists", "values": ["v"]}]}]}
    assert _pairs(validate_node_selector(selector, "p")) == [
        ("p.nodeSelectorTerms[0].matchExpressions[0].values", IN_VALUES),
        ("p.nodeSelectorTerms[0].matchFields[0].key", 'Invalid value: "x": not a valid field selector key'),
        ("p.nodeSelectorTerms[1].matchExpressions[0].values", EXISTS_VALUES),
    ]


def test_preferred_node_terms_weight_and_preference() -> None:
    affinity = {"nodeAffinity": {PREF: [
        {"weight": 0, "preference": {"matchExpressions": [{"key": "a", "operator": "In", "values": ["-x"]}]}},
        {"weight": 101, "preference": {"matchExpressions": [{"key": "/b", "operator": "Exists"}]}},
        {"preference": {}},
        {"weight": 50},
    ]}}
    assert _affinity(affinity) == [
        (f"{NA}.{PREF}[0].weight", "Invalid value: 0: must be in the range 1-100"),
        # preferred terms always allow invalid label values
        (f"{NA}.{PREF}[1].weight", "Invalid value: 101: must be in the range 1-100"),
        (f"{NA}.{PREF}[1].preference.matchExpressions[0].key", 'Invalid value: "/b": prefix part must be non-empty'),
        (f"{NA}.{PREF}[2].weight", "Invalid value: 0: must be in the range 1-100"),
    ]


def test_node_affinity_required_before_preferred() -> None:
    affinity = {"nodeAffinity": {PREF: [{"weight": -1, "preference": {}}], REQ: {}}}
    assert _affinity(affinity) == [
        (f"{NA}.{REQ}.nodeSelectorTerms", "Required value: must have at least one node selector term"),
        (f"{NA}.{PREF}[0].weight", "Invalid value: -1: must be in the range 1-100"),
    ]


def test_pod_affinity_term_rules_in_order() -> None:
    term = {
        "labelSelector": {"matchExpressions": [{"key": "app", "operator": "Bad"}]},
        "namespaceSelector": {"matchLabels": {"team": "-x"}},
        "namespaces": ["ok", "Bad_NS"],
        "matchLabelKeys": ["/simple"],
    }
    path = f"{A}.podAffinity.{REQ}[0]"
    assert _affinity({"podAffinity": {REQ: [term]}}) == [
        (f"{path}.labelSelector.matchExpressions[0].operator", 'Invalid value: "Bad": not a valid selector operator'),
        (f"{path}.namespaceSelector.matchLabels", f'Invalid value: "-x": {LABEL_VALUE}'),
        (f"{path}.namespace", f'Invalid value: "Bad_NS": {DNS_LABEL}'),
        (f"{path}.matchLabelKeys[0]", 'Invalid value: "/simple": prefix part must be non-empty'),
        (f"{path}.topologyKey", "Required value: can not be empty"),
        (f"{path}.topologyKey", f'Invalid value: "": {QN_EMPTY}'),
        (f"{path}.topologyKey", f'Invalid value: "": {QN_REGEX}'),
    ]


def test_topology_key_must_be_a_qualified_name() -> None:
    path = f"{A}.podAntiAffinity.{REQ}[0].topologyKey"
    assert _affinity({"podAntiAffinity": {REQ: [_term(topologyKey="a/b/c")]}}) == [
        (path, 'Invalid value: "a/b/c": a qualified name must consist of alphanumeric characters, \'-\', \'_\' or '
               "'.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
               "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an "
               "optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')")]


def test_weighted_pod_affinity_terms() -> None:
    section = {PREF: [{"weight": 0, "podAffinityTerm": _term()},
                      {"weight": 101},
                      {"weight": 7, "podAffinityTerm": _term(topologyKey="")}]}
    for kind in ("podAffinity", "podAntiAffinity"):
        path = f"{A}.{kind}.{PREF}"
        assert _affinity({kind: section}) == [
            (f"{path}[0].weight", "Invalid value: 0: must be in the range 1-100"),
            (f"{path}[1].weight", "Invalid value: 101: must be in the range 1-100"),
            (f"{path}[1].podAffinityTerm.topologyKey", "Required value: can not be empty"),
            (f"{path}[1].podAffinityTerm.topologyKey", f'Invalid value: "": {QN_EMPTY}'),
            (f"{path}[1].podAffinityTerm.topologyKey", f'Invalid value: "": {QN_REGEX}'),
            (f"{path}[2].podAffinityTerm.topologyKey", "Required value: can not be empty"),
            (f"{path}[2].podAffinityTerm.topologyKey", f'Invalid value: "": {QN_EMPTY}'),
            (f"{path}[2].podAffinityTerm.topologyKey", f'Invalid value: "": {QN_REGEX}'),
        ]


def test_affinity_sections_in_kube_order_required_before_preferred() -> None:
    bad = {"topologyKey": "k", "namespaces": ["X"]}
    affinity = {"podAntiAffinity": {REQ: [bad]}, "podAffinity": {PREF: [{"weight": 1, "podAffinityTerm": bad}],
                                                                  REQ: [bad]},
                "nodeAffinity": {REQ: {}}}
    assert [field for field, _ in _affinity(affinity)] == [
        f"{NA}.{REQ}.nodeSelectorTerms",
        f"{A}.podAffinity.{REQ}[0].namespace",
        f"{A}.podAffinity.{PREF}[0].podAffinityTerm.namespace",
        f"{A}.podAntiAffinity.{REQ}[0].namespace",
    ]


def test_pod_affinity_selector_label_values_may_be_allowed() -> None:
    affinity = {"podAffinity": {REQ: [_term(labelSelector={"matchExpressions": [
        {"key": "a", "operator": "In", "values": ["-x"]}]})]}}
    path = f"{A}.podAffinity.{REQ}[0].labelSelector.matchExpressions[0].values[0]"
    assert _affinity(affinity) == [(path, f'Invalid value: "-x": {LABEL_VALUE}')]
    assert _affinity(affinity, allow_invalid_label_value_in_selector=True) == []


def test_label_keys_need_a_label_selector() -> None:
    term = {"topologyKey": "k", "matchLabelKeys": ["a", "/bad"], "mismatchLabelKeys": ["b"]}
    path = f"{A}.podAffinity.{REQ}[0]"
    assert _affinity({"podAffinity": {REQ: [term]}}) == [
        (f"{path}.matchLabelKeys", NO_SELECTOR),
        (f"{path}.mismatchLabelKeys", NO_SELECTOR),
    ]
    # empty lists need nothing
    assert _affinity({"podAffinity": {REQ: [{"topologyKey": "k", "matchLabelKeys": [], "mismatchLabelKeys": []}]}}) \
        == []


def test_mismatch_label_keys_are_label_names() -> None:
    term = _term(mismatchLabelKeys=["ok", "a/"])
    path = f"{A}.podAffinity.{REQ}[0]"
    assert _affinity({"podAffinity": {REQ: [term]}}) == [
        (f"{path}.mismatchLabelKeys[1]", f'Invalid value: "a/": {QN_EMPTY}'),
        (f"{path}.mismatchLabelKeys[1]", f'Invalid value: "a/": {QN_REGEX}'),
    ]


def test_match_label_key_in_label_selector_after_the_merge() -> None:
    # the Pod's label "key" was merged as {key In [value1]}: the authored matchLabels entry makes it appear twice
    selector = {"matchLabels": {"key": "value1"},
                "matchExpressions": [{"key": "key", "operator": "In", "values": ["value1"]}]}
    term = {"labelSelector": selector, "topologyKey": "k8s.io/zone", "matchLabelKeys": ["other", "key"]}
    path = f"{A}.podAffinity.{PREF}[0].podAffinityTerm"
    assert _affinity({"podAffinity": {PREF: [{"weight": 1, "podAffinityTerm": term}]}}) == [
        (f"{path}[1]", 'Invalid value: "key": exists in both matchLabelKeys and labelSelector')]


def test_match_label_key_once_in_selector_is_not_flagged() -> None:
    # a single occurrence (no merge happened, e.g. a pod template) passes, as in kube
    selector: dict[str, Any] = {"matchExpressions": [{"key": "key", "operator": "Exists"}]}
    assert _pairs(validate_match_label_keys("p", ["key"], None, selector)) == []
    # an authored expression and the merged one: the second occurrence is flagged, at the key's last index
    selector = {"matchExpressions": [{"key": "key", "operator": "Exists"},
                                     {"key": "key", "operator": "In", "values": ["v"]}]}
    assert _pairs(validate_match_label_keys("p", ["key", "x", "key"], None, selector)) == [
        ("p[2]", 'Invalid value: "key": exists in both matchLabelKeys and labelSelector')]
    # mismatch keys are not compared with the selector
    selector = {"matchLabels": {"key": "v"}, "matchExpressions": [{"key": "key", "operator": "NotIn", "values": ["v"]}]}
    assert _pairs(validate_match_label_keys("p", [], ["key"], selector)) == []


def test_match_label_key_also_a_mismatch_label_key() -> None:
    term = _term(matchLabelKeys=["a", "b"], mismatchLabelKeys=["b", "c"])
    path = f"{A}.podAntiAffinity.{REQ}[0]"
    assert _affinity({"podAntiAffinity": {REQ: [term]}}) == [
        (f"{path}.matchLabelKeys[1]", 'Invalid value: "b": exists in both matchLabelKeys and mismatchLabelKeys')]


def test_mismatch_overlap_reported_even_without_selector() -> None:
    assert _pairs(validate_match_label_keys("p", ["a"], ["a"], None)) == [
        ("p.matchLabelKeys", NO_SELECTOR),
        ("p.mismatchLabelKeys", NO_SELECTOR),
        ("p.matchLabelKeys[0]", 'Invalid value: "a": exists in both matchLabelKeys and mismatchLabelKeys'),
    ]


def test_affinity_wrong_types_do_not_raise() -> None:
    affinity = {"nodeAffinity": {REQ: {"nodeSelectorTerms": ["x", {"matchExpressions": "y", "matchFields": [1]}]},
                                 PREF: "z"},
                "podAffinity": {REQ: [None, 3], PREF: [{"weight": "5", "podAffinityTerm": []}]},
                "podAntiAffinity": {REQ: "x"}}
    causes = _affinity(affinity)
    assert (f"{NA}.{REQ}.nodeSelectorTerms[1].matchFields[0].operator",
            'Invalid value: "": not a valid selector operator') in causes
    # a string weight is the schema's to report
    assert not any(field.endswith(".weight") for field, _ in causes)


VALID_CONSTRAINTS = [
    _constraint(),
    _constraint(whenUnsatisfiable="ScheduleAnyway", nodeAffinityPolicy="Honor", nodeTaintsPolicy="Ignore"),
    _constraint(topologyKey="kubernetes.io/hostname", minDomains=3, matchLabelKeys=["pod-template-hash"]),
    _constraint(topologyKey="not/a/qualified/name", labelSelector=None),
]


@pytest.mark.parametrize("constraints", [None, [], "x", VALID_CONSTRAINTS])
def test_valid_or_absent_constraints_have_no_causes(constraints: Any) -> None:
    assert _spread(constraints) == []


@pytest.mark.parametrize(("skew", "shown"), [(0, "0"), (-2, "-2"), (None, "0")])
def test_max_skew_must_be_positive(skew: Any, shown: str) -> None:
    assert _spread([_constraint(maxSkew=skew)]) == [(f"{T}[0].maxSkew", f"Invalid value: {shown}: must be greater "
                                                                        "than zero")]


def test_absent_max_skew_is_zero() -> None:
    constraint = _constraint()
    del constraint["maxSkew"]
    assert _spread([constraint]) == [(f"{T}[0].maxSkew", "Invalid value: 0: must be greater than zero")]


def test_topology_key_required_only() -> None:
    assert _spread([_constraint(topologyKey="")]) == [(f"{T}[0].topologyKey", "Required value: can not be empty")]


@pytest.mark.parametrize("action", ["Foo", ""])
def test_when_unsatisfiable_values(action: str) -> None:
    assert _spread([_constraint(whenUnsatisfiable=action)]) == [
        (f"{T}[0].whenUnsatisfiable",
         f'Unsupported value: "{action}": supported values: "DoNotSchedule", "ScheduleAnyway"')]


def test_duplicate_pairs_flag_the_earlier_constraint() -> None:
    constraints = [_constraint(), _constraint(whenUnsatisfiable="ScheduleAnyway"), _constraint(), _constraint()]
    assert _spread(constraints) == [
        (f"{T}[0].{{topologyKey, whenUnsatisfiable}}",
         'Duplicate value: "{topology.kubernetes.io/zone, DoNotSchedule}"'),
        (f"{T}[2].{{topologyKey, whenUnsatisfiable}}",
         'Duplicate value: "{topology.kubernetes.io/zone, DoNotSchedule}"'),
    ]


def test_min_domains() -> None:
    assert _spread([_constraint(minDomains=0)]) == [(f"{T}[0].minDomains",
                                                     "Invalid value: 0: must be greater than zero")]
    assert _spread([_constraint(minDomains=2, whenUnsatisfiable="ScheduleAnyway")]) == [
        (f"{T}[0].minDomains",
         "Invalid value: 2: can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway")]
    assert _spread([_constraint(minDomains=-1, whenUnsatisfiable="ScheduleAnyway")]) == [
        (f"{T}[0].minDomains", "Invalid value: -1: must be greater than zero"),
        (f"{T}[0].minDomains",
         "Invalid value: -1: can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway")]
    assert _spread([_constraint(minDomains=None, whenUnsatisfiable="ScheduleAnyway")]) == []


def test_node_inclusion_policies() -> None:
    assert _spread([_constraint(nodeAffinityPolicy="Always", nodeTaintsPolicy="")]) == [
        (f"{T}[0].nodeAffinityPolicy", 'Unsupported value: "Always": supported values: "Honor", "Ignore"'),
        (f"{T}[0].nodeTaintsPolicy", 'Unsupported value: "": supported values: "Honor", "Ignore"'),
    ]


def test_spread_match_label_keys() -> None:
    assert _spread([_constraint(labelSelector=None, matchLabelKeys=["a"])]) == [
        (f"{T}[0].matchLabelKeys", NO_SELECTOR)]
    assert _spread([_constraint(matchLabelKeys=["ok", "a/"])]) == [
        (f"{T}[0].matchLabelKeys[1]", f'Invalid value: "a/": {QN_EMPTY}'),
        (f"{T}[0].matchLabelKeys[1]", f'Invalid value: "a/": {QN_REGEX}'),
    ]
    # the merged {app In [web]} next to the authored matchLabels: app is named twice (kube indexes the constraint)
    merged = {"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "app", "operator": "In", "values": ["web"]}]}
    assert _spread([_constraint(), _constraint(whenUnsatisfiable="ScheduleAnyway", labelSelector=merged,
                                               matchLabelKeys=["app"])]) == [
        (f"{T}[1][0]", 'Invalid value: "app": exists in both matchLabelKeys and labelSelector')]


def test_spread_label_selector() -> None:
    selector = {"matchLabels": {"a/": "x"}, "matchExpressions": [{"key": "k", "operator": "In"}]}
    assert _spread([_constraint(labelSelector=selector)]) == [
        (f"{T}[0].labelSelector.matchLabels", f'Invalid value: "a/": {QN_EMPTY}'),
        (f"{T}[0].labelSelector.matchLabels", f'Invalid value: "a/": {QN_REGEX}'),
        (f"{T}[0].labelSelector.matchExpressions[0].values", IN_VALUES),
    ]
    assert _spread([_constraint(labelSelector=selector)], allow_invalid_label_selector=True) == []


def test_spread_rules_in_kube_order() -> None:
    constraint = {"maxSkew": 0, "topologyKey": "", "whenUnsatisfiable": "Never", "minDomains": 0,
                  "nodeAffinityPolicy": "X", "nodeTaintsPolicy": "Y", "matchLabelKeys": ["a"],
                  "labelSelector": {"matchExpressions": [{"key": "k", "operator": "Exists", "values": ["v"]}]}}
    assert _spread([constraint, dict(constraint)]) == [
        (f"{T}[0].maxSkew", "Invalid value: 0: must be greater than zero"),
        (f"{T}[0].topologyKey", "Required value: can not be empty"),
        (f"{T}[0].whenUnsatisfiable", 'Unsupported value: "Never": supported values: "DoNotSchedule", '
                                      '"ScheduleAnyway"'),
        (f"{T}[0].{{topologyKey, whenUnsatisfiable}}", 'Duplicate value: "{, Never}"'),
        (f"{T}[0].minDomains", "Invalid value: 0: must be greater than zero"),
        (f"{T}[0].minDomains", "Invalid value: 0: can only use minDomains if whenUnsatisfiable=DoNotSchedule, "
                               "not Never"),
        (f"{T}[0].nodeAffinityPolicy", 'Unsupported value: "X": supported values: "Honor", "Ignore"'),
        (f"{T}[0].nodeTaintsPolicy", 'Unsupported value: "Y": supported values: "Honor", "Ignore"'),
        (f"{T}[0].labelSelector.matchExpressions[0].values", EXISTS_VALUES),
        (f"{T}[1].maxSkew", "Invalid value: 0: must be greater than zero"),
        (f"{T}[1].topologyKey", "Required value: can not be empty"),
        (f"{T}[1].whenUnsatisfiable", 'Unsupported value: "Never": supported values: "DoNotSchedule", '
                                      '"ScheduleAnyway"'),
        (f"{T}[1].minDomains", "Invalid value: 0: must be greater than zero"),
        (f"{T}[1].minDomains", "Invalid value: 0: can only use minDomains if whenUnsatisfiable=DoNotSchedule, "
                               "not Never"),
        (f"{T}[1].nodeAffinityPolicy", 'Unsupported value: "X": supported values: "Honor", "Ignore"'),
        (f"{T}[1].nodeTaintsPolicy", 'Unsupported value: "Y": supported values: "Honor", "Ignore"'),
        (f"{T}[1].labelSelector.matchExpressions[0].values", EXISTS_VALUES),
    ]


def test_spread_wrong_types_do_not_raise() -> None:
    constraints = ["x", None, {"maxSkew": "1", "topologyKey": 3, "whenUnsatisfiable": "DoNotSchedule",
                               "minDomains": "2", "nodeAffinityPolicy": 1, "matchLabelKeys": "k",
                               "labelSelector": "sel"}]
    causes = _spread(constraints)
    assert (f"{T}[0].maxSkew", "Invalid value: 0: must be greater than zero") in causes
    assert not any(field.startswith(f"{T}[2].maxSkew") or field.startswith(f"{T}[2].minDomains")
                   or field.startswith(f"{T}[2].node") for field, _ in causes)
