"""Classification against the default FlowSchemas, rule matching, widths and shuffle-sharding deals."""

from __future__ import annotations

import pytest

from kapi.attributes import Attributes, UserInfo
from services.flowcontrol import config as cfg
from services.flowcontrol import defaults
from services.flowcontrol.queueset import deal

AUTH = "system:authenticated"


def classifier() -> cfg.Classifier:
    schemas = [cfg.FlowSchema.from_json(o) for r, o in defaults.default_objects() if r == defaults.FLOW_SCHEMAS]
    return cfg.Classifier(schemas, defaults.priority_level_specs())


def res(user: UserInfo, verb: str, resource: str, namespace: str = "", group: str = "",
        subresource: str = "") -> Attributes:
    return Attributes(user, verb, True, api_group=group, api_version="v1", resource=resource, namespace=namespace,
                      subresource=subresource)


def path(user: UserInfo, url: str, verb: str = "get") -> Attributes:
    return Attributes(user, verb, False, path=url)


ALICE = UserInfo("alice", groups=(AUTH,))
ADMIN = UserInfo("kubernetes-admin", groups=("system:masters", AUTH))
ANON = UserInfo("system:anonymous", groups=("system:unauthenticated",))
NODE = UserInfo("system:node:n1", groups=("system:nodes", AUTH))
KCM = UserInfo("system:kube-controller-manager", groups=(AUTH,))
KUBE_SYSTEM_SA = UserInfo("system:serviceaccount:kube-system:job-controller",
                          groups=("system:serviceaccounts", "system:serviceaccounts:kube-system", AUTH))
ENDPOINT_SA = UserInfo("system:serviceaccount:kube-system:endpoint-controller",
                       groups=("system:serviceaccounts", "system:serviceaccounts:kube-system", AUTH))
APP_SA = UserInfo("system:serviceaccount:app:default",
                  groups=("system:serviceaccounts", "system:serviceaccounts:app", AUTH))


@pytest.mark.parametrize(("attrs", "schema", "distinguisher"), [
    (res(ADMIN, "list", "pods"), "exempt", ""),
    (path(ALICE, "/readyz"), "probes", ""),
    (path(ANON, "/livez"), "probes", ""),
    (path(ALICE, "/readyz", "post"), "global-default", "alice"),
    (res(KCM, "update", "leases", "kube-system", "coordination.k8s.io"), "system-leader-election",
     "system:kube-controller-manager"),
    # kube-system's service accounts are system-leader-election subjects too (kube's bootstrap defaults)
    (res(KUBE_SYSTEM_SA, "get", "leases", "kube-system", "coordination.k8s.io"), "system-leader-election",
     "system:serviceaccount:kube-system:job-controller"),
    (res(KCM, "update", "endpoints", "app"), "endpoint-controller", "system:kube-controller-manager"),
    (res(ENDPOINT_SA, "create", "endpoints", "app"), "endpoint-controller",
     "system:serviceaccount:kube-system:endpoint-controller"),
    (res(KUBE_SYSTEM_SA, "update", "configmaps", "app"), "workload-leader-election",
     "system:serviceaccount:kube-system:job-controller"),
    (res(KUBE_SYSTEM_SA, "update", "endpoints", "app"), "workload-leader-election",
     "system:serviceaccount:kube-system:job-controller"),
    (res(NODE, "patch", "nodes", subresource="status"), "system-node-high", "system:node:n1"),
    (res(NODE, "get", "pods", "default"), "system-nodes", "system:node:n1"),
    (res(KCM, "list", "pods", "app"), "kube-controller-manager", "app"),
    (res(KUBE_SYSTEM_SA, "list", "pods", "app"), "kube-system-service-accounts", "app"),
    (res(APP_SA, "get", "configmaps", "app"), "service-accounts", "system:serviceaccount:app:default"),
    (res(ALICE, "get", "configmaps", "app"), "global-default", "alice"),
    (res(ANON, "get", "namespaces"), "global-default", "system:anonymous"),
    (res(UserInfo("nobody"), "get", "pods", "x"), "catch-all", "nobody"),  # no groups at all
])
def test_default_classification(attrs: Attributes, schema: str, distinguisher: str) -> None:
    got = classifier().classify(attrs)
    assert (got.flow_schema.name, got.distinguisher) == (schema, distinguisher)


def _rule(**kw: object) -> cfg.ResourceRule:
    base: dict[str, object] = {"verbs": frozenset({"*"}), "api_groups": frozenset({"*"}),
                               "resources": frozenset({"*"}), "cluster_scope": False,
                               "namespaces": frozenset({"*"})}
    base.update(kw)
    return cfg.ResourceRule(**base)  # type: ignore[arg-type]


@pytest.mark.parametrize(("rule", "attrs", "expected"), [
    (_rule(), res(ALICE, "get", "pods", "x"), True),
    (_rule(), res(ALICE, "get", "nodes"), False),  # cluster-scoped needs clusterScope
    (_rule(cluster_scope=True, namespaces=frozenset()), res(ALICE, "get", "nodes"), True),
    (_rule(namespaces=frozenset({"a"})), res(ALICE, "get", "pods", "b"), False),
    (_rule(verbs=frozenset({"get"})), res(ALICE, "list", "pods", "x"), False),
    (_rule(api_groups=frozenset({"apps"})), res(ALICE, "get", "pods", "x"), False),
    (_rule(resources=frozenset({"pods"})), res(ALICE, "get", "pods", "x", subresource="log"), False),
    (_rule(resources=frozenset({"pods/log"})), res(ALICE, "get", "pods", "x", subresource="log"), True),
])
def test_resource_rules(rule: cfg.ResourceRule, attrs: Attributes, expected: bool) -> None:
    assert rule.matches(attrs) is expected


@pytest.mark.parametrize(("urls", "url", "expected"), [
    ({"*"}, "/anything", True),
    ({"/healthz"}, "/healthz", True),
    ({"/healthz"}, "/healthz/etcd", False),
    ({"/healthz/*"}, "/healthz/etcd", True),
    ({"/healthz/*"}, "/healthz", True),
    ({"/healthz/*"}, "/healthzx", False),
])
def test_non_resource_rules(urls: set[str], url: str, expected: bool) -> None:
    assert cfg.NonResourceRule(frozenset({"get"}), frozenset(urls)).matches(path(ALICE, url)) is expected


@pytest.mark.parametrize(("subject", "user", "expected"), [
    (cfg.Subject("User", "*"), ALICE, True),
    (cfg.Subject("Group", "*"), ANON, True),
    (cfg.Subject("ServiceAccount", "*", "kube-system"), KUBE_SYSTEM_SA, True),
    (cfg.Subject("ServiceAccount", "*", "kube-system"), APP_SA, False),
    (cfg.Subject("ServiceAccount", "default", "app"), APP_SA, True),
    (cfg.Subject("ServiceAccount", "other", "app"), APP_SA, False),
])
def test_subjects(subject: cfg.Subject, user: UserInfo, expected: bool) -> None:
    assert subject.matches(res(user, "get", "pods", "x")) is expected


def test_ties_in_precedence_go_by_name() -> None:
    def schema(name: str) -> cfg.FlowSchema:
        return cfg.FlowSchema(name, "", "global-default", 10, "", (
            cfg.PolicyRule((cfg.Subject("Group", "*"),), (_rule(),), ()),))
    ordered = cfg.Classifier([schema("b"), schema("a")], ["global-default"])
    assert ordered.classify(res(ALICE, "get", "pods", "x")).flow_schema.name == "a"


@pytest.mark.parametrize(("verb", "limit", "seats"), [
    ("get", 0, 1), ("list", 0, 10), ("list", 500, 5), ("list", 50, 1), ("list", 5000, 10), ("create", 0, 1),
])
def test_width(verb: str, limit: int, seats: int) -> None:
    assert cfg.width(res(ALICE, verb, "pods", "x"), limit) == seats


def test_deal_is_distinct_and_stable() -> None:
    for value in (0, 1, 2**63 + 12345, 987654321):
        hand = deal(value, 128, 6)
        assert len(set(hand)) == 6 and all(0 <= c < 128 for c in hand)
        assert hand == deal(value, 128, 6)
    assert sorted(deal(7, 4, 4)) == [0, 1, 2, 3]


def test_priority_level_parsing_v1_and_beta_names() -> None:
    levels = {n: cfg.PriorityLevel.from_json({"metadata": {"name": n}, "spec": s})
              for n, s in defaults.priority_level_specs().items()}
    assert levels["exempt"].exempt and levels["catch-all"].queues == 0
    assert (levels["leader-election"].queues, levels["leader-election"].hand_size) == (16, 4)
    beta = cfg.PriorityLevel.from_json({"metadata": {"name": "x"}, "spec": {"type": "Limited", "limited": {
        "assuredConcurrencyShares": 7, "limitResponse": {"type": "Queue"}}}})
    assert (beta.nominal_concurrency_shares, beta.queues, beta.hand_size, beta.queue_length_limit) == (7, 64, 8, 50)
