"""Small kube-parity rows of issue #17 (docs/kube-parity.md) end to end, with the official Python client:

- a CustomResourceDefinition's ``/status`` (PUT and PATCH) changes labels, annotations, finalizers and
  ownerReferences as kube's CRD statusStrategy lets it (the new ObjectMeta is reset from itself), while its
  spec stays the stored one; a Deployment's ``/status`` keeps the stored labels but takes the annotations, a
  Pod's takes the labels but keeps the stored ownerReferences (each kind's statusStrategy); a custom
  resource's ``/status`` changes nothing but the status;
- a StatefulSet's template PodSpec is not validated (ValidatePodTemplateSpecForStatefulSet's TODO) but is
  defaulted, and the selector match, ``restartPolicy`` Always and no ``activeDeadlineSeconds`` still are
  (422 with kube's causes);
- ValidatePodSpec's dnsConfig, readinessGates and hostAliases checks answer kube's 422 causes for a Pod and a
  Deployment's template, and a valid configuration (underscores and "." in searches) is stored.
"""

from __future__ import annotations

import json

import pytest
from kubernetes import client, config
from kubernetes.client.rest import ApiException

from kapi.local.launcher import Stack
from tests.e2e.conftest import wait_for


@pytest.fixture(scope="module")
def api(stack: Stack) -> client.ApiClient:
    return config.new_client_from_config(config_file=str(stack.kubeconfig))


def _crd(group: str) -> client.V1CustomResourceDefinition:
    schema = client.V1CustomResourceValidation(open_apiv3_schema=client.V1JSONSchemaProps(
        type="object", x_kubernetes_preserve_unknown_fields=True))
    return client.V1CustomResourceDefinition(
        metadata=client.V1ObjectMeta(name=f"gadgets.{group}", labels={"tier": "one"}, annotations={"note": "a"}),
        spec=client.V1CustomResourceDefinitionSpec(
            group=group, scope="Namespaced",
            names=client.V1CustomResourceDefinitionNames(plural="gadgets", kind="Gadget"),
            versions=[client.V1CustomResourceDefinitionVersion(name="v1", served=True, storage=True,
                                                               schema=schema)]))


def test_crd_status_writes_change_labels_annotations_finalizers_and_owners(api: client.ApiClient) -> None:
    ext = client.ApiextensionsV1Api(api)
    group = "parity-status.example.com"
    name = f"gadgets.{group}"
    rbac = client.RbacAuthorizationV1Api(api)
    # a real cluster-scoped owner: with a dangling one the garbage collector would delete the CRD mid-test
    owner_role = rbac.create_cluster_role(client.V1ClusterRole(metadata=client.V1ObjectMeta(
        name="parity-status-owner")))
    ext.create_custom_resource_definition(_crd(group))
    try:
        owner = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "name": "parity-status-owner",
                 "uid": owner_role.metadata.uid}
        patched = ext.patch_custom_resource_definition_status(name, {
            "metadata": {"labels": {"tier": "two"}, "annotations": {"note": None, "added": "b"},
                         "finalizers": ["example.com/hold"], "ownerReferences": [owner]},
            "spec": {"scope": "Cluster"}})
        assert patched.metadata.labels == {"tier": "two"}
        assert patched.metadata.annotations == {"added": "b"}
        assert patched.metadata.finalizers == ["example.com/hold"]
        assert [(o.kind, o.name, o.uid) for o in patched.metadata.owner_references] == [
            ("ClusterRole", "parity-status-owner", owner["uid"])]
        assert patched.spec.scope == "Namespaced"  # spec stays the stored one
        assert patched.metadata.generation == 1

        def replace() -> client.V1CustomResourceDefinition:  # retried: the CRD controllers write status too
            current = ext.read_custom_resource_definition_status(name)
            current.metadata.labels = {"tier": "three"}
            current.metadata.finalizers = None
            return ext.replace_custom_resource_definition_status(name, current)
        replaced = wait_for(replace)
        assert replaced.metadata.labels == {"tier": "three"}
        assert replaced.metadata.finalizers is None
        stored = ext.read_custom_resource_definition(name)
        assert stored.metadata.labels == {"tier": "three"}
        assert stored.metadata.annotations == {"added": "b"}
    finally:
        try:
            ext.patch_custom_resource_definition(name, {"metadata": {"finalizers": None}})
            ext.delete_custom_resource_definition(name)
        except ApiException as err:
            if err.status != 404:
                raise
        rbac.delete_cluster_role("parity-status-owner")


def test_deployment_status_writes_keep_the_stored_labels(api: client.ApiClient, namespace: str) -> None:
    # deploymentStatusStrategy.PrepareForUpdate resets spec and labels only: the annotation is the request's
    apps = client.AppsV1Api(api)
    body = client.V1Deployment(
        metadata=client.V1ObjectMeta(name="keep", labels={"tier": "one"}),
        spec=client.V1DeploymentSpec(
            replicas=0, selector=client.V1LabelSelector(match_labels={"app": "keep"}),
            template=client.V1PodTemplateSpec(
                metadata=client.V1ObjectMeta(labels={"app": "keep"}),
                spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="busybox")]))))
    apps.create_namespaced_deployment(namespace, body)
    patched = apps.patch_namespaced_deployment_status("keep", namespace, {
        "metadata": {"labels": {"tier": "two"}, "annotations": {"note": "from-status"}}})
    assert patched.metadata.labels == {"tier": "one"}
    assert patched.metadata.annotations == {"note": "from-status"}
    stored = apps.read_namespaced_deployment("keep", namespace)
    assert stored.metadata.labels == {"tier": "one"} and stored.metadata.annotations == {"note": "from-status"}


def test_pod_status_writes_take_labels_but_not_owner_references(api: client.ApiClient, namespace: str) -> None:
    # podStatusStrategy.PrepareForUpdate resets spec, deletionTimestamp and ownerReferences only
    core = client.CoreV1Api(api)
    owner = core.create_namespaced_config_map(namespace, client.V1ConfigMap(metadata=client.V1ObjectMeta(
        name="owner")))
    core.create_namespaced_pod(namespace, client.V1Pod(
        metadata=client.V1ObjectMeta(name="labelled", labels={"tier": "one"}),
        spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="busybox")])))
    reference = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner.metadata.uid}
    patched = core.patch_namespaced_pod_status("labelled", namespace, {
        "metadata": {"labels": {"tier": "two"}, "ownerReferences": [reference]}})
    assert patched.metadata.labels == {"tier": "two"}
    assert patched.metadata.owner_references is None
    pod = core.read_namespaced_pod("labelled", namespace)
    pod.metadata.labels = {"tier": "three"}
    pod.metadata.owner_references = [client.V1OwnerReference(api_version="v1", kind="ConfigMap", name="owner",
                                                             uid=owner.metadata.uid)]
    replaced = core.replace_namespaced_pod_status("labelled", namespace, pod)
    assert replaced.metadata.labels == {"tier": "three"}
    assert replaced.metadata.owner_references is None
    stored = core.read_namespaced_pod("labelled", namespace)
    assert stored.metadata.labels == {"tier": "three"} and stored.metadata.owner_references is None


def test_custom_resource_status_writes_change_only_the_status(api: client.ApiClient, namespace: str) -> None:
    # customresource statusStrategy.PrepareForUpdate: the stored object but for status and managedFields
    ext = client.ApiextensionsV1Api(api)
    objects = client.CustomObjectsApi(api)
    group = "parity-cr-status.example.com"
    schema = client.V1CustomResourceValidation(open_apiv3_schema=client.V1JSONSchemaProps(
        type="object", x_kubernetes_preserve_unknown_fields=True))
    ext.create_custom_resource_definition(client.V1CustomResourceDefinition(
        metadata=client.V1ObjectMeta(name=f"widgets.{group}"),
        spec=client.V1CustomResourceDefinitionSpec(
            group=group, scope="Namespaced", names=client.V1CustomResourceDefinitionNames(plural="widgets",
                                                                                          kind="Widget"),
            versions=[client.V1CustomResourceDefinitionVersion(
                name="v1", served=True, storage=True, schema=schema,
                subresources=client.V1CustomResourceSubresources(status={}))])))
    try:
        body = {"apiVersion": f"{group}/v1", "kind": "Widget",
                "metadata": {"name": "w", "labels": {"tier": "one"}}, "data": {"k": "one"}, "spec": {"size": 1}}
        wait_for(lambda: objects.create_namespaced_custom_object(group, "v1", namespace, "widgets", body))
        patched = objects.patch_namespaced_custom_object_status(group, "v1", namespace, "widgets", "w", {
            "metadata": {"labels": {"tier": "two"}, "annotations": {"note": "a"}},
            "data": {"k": "two"}, "spec": {"size": 2}, "status": {"ready": True}})
        assert patched["metadata"]["labels"] == {"tier": "one"}
        assert "annotations" not in patched["metadata"]
        assert (patched["data"], patched["spec"], patched["status"]) == ({"k": "one"}, {"size": 1}, {"ready": True})
        stored = objects.get_namespaced_custom_object(group, "v1", namespace, "widgets", "w")
        assert stored["metadata"]["labels"] == {"tier": "one"} and stored["status"] == {"ready": True}
    finally:
        ext.delete_custom_resource_definition(f"widgets.{group}")


def _statefulset(name: str, pod_spec: dict) -> dict:
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": name},
            "spec": {"serviceName": name, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}}, "spec": pod_spec}}}


def test_statefulset_template_pod_spec_is_defaulted_not_validated(api: client.ApiClient, namespace: str) -> None:
    apps = client.AppsV1Api(api)
    bad = {"containers": [{"name": "Bad_Name", "image": "busybox",
                           "volumeMounts": [{"name": "missing", "mountPath": "/m"}]}], "dnsPolicy": "Nowhere"}
    created = apps.create_namespaced_stateful_set(namespace, _statefulset("lax", bad))
    container = created.spec.template.spec.containers[0]
    assert container.name == "Bad_Name"
    assert container.termination_message_path == "/dev/termination-log"
    assert container.image_pull_policy == "Always"
    assert created.spec.template.spec.restart_policy == "Always"
    assert created.spec.template.spec.dns_policy == "Nowhere"

    strict = _statefulset("strict", {"containers": [{"name": "c", "image": "busybox"}], "restartPolicy": "Never",
                                     "activeDeadlineSeconds": 5})
    strict["spec"]["template"]["metadata"]["labels"] = {"app": "other"}
    with pytest.raises(ApiException) as err:
        apps.create_namespaced_stateful_set(namespace, strict)
    assert err.value.status == 422
    status = json.loads(err.value.body)
    assert [(c["field"], c["message"]) for c in status["details"]["causes"]] == [
        ("spec.template.metadata.labels",
         'Invalid value: map[string]string{"app":"other"}: `selector` does not match template `labels`'),
        ("spec.template.spec.restartPolicy", 'Unsupported value: "Never": supported values: "Always"'),
        ("spec.template.spec.activeDeadlineSeconds",
         "Forbidden: activeDeadlineSeconds in StatefulSet is not Supported")]


def test_deployment_template_pod_spec_is_still_validated(api: client.ApiClient, namespace: str) -> None:
    apps = client.AppsV1Api(api)
    body = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "strict"},
            "spec": {"selector": {"matchLabels": {"app": "d"}}, "template": {
                "metadata": {"labels": {"app": "d"}},
                "spec": {"containers": [{"name": "c", "image": "busybox",
                                         "volumeMounts": [{"name": "missing", "mountPath": "/m"}]}]}}}}
    with pytest.raises(ApiException) as err:
        apps.create_namespaced_deployment(namespace, body)
    assert err.value.status == 422
    causes = [(c["field"], c["message"]) for c in json.loads(err.value.body)["details"]["causes"]]
    assert causes == [("spec.template.spec.containers[0].volumeMounts[0].name", 'Not found: "missing"')]


IP_MSG = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"


def _pod(name: str, **spec: object) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "busybox"}], **spec}}


def test_pod_dns_config_readiness_gates_and_host_aliases(api: client.ApiClient, namespace: str) -> None:
    core = client.CoreV1Api(api)
    bad = _pod("bad", dnsPolicy="None",
               dnsConfig={"nameservers": ["10.0.0.10", "nope"], "searches": ["Bad.example"], "options": [{}]},
               readinessGates=[{"conditionType": "bad type"}],
               hostAliases=[{"ip": "1.2.3", "hostnames": ["ok.local", "Not_OK"]}])
    with pytest.raises(ApiException) as err:
        core.create_namespaced_pod(namespace, bad)
    assert err.value.status == 422
    status = json.loads(err.value.body)
    fields = [(c["field"], c["message"].split(": ")[0]) for c in status["details"]["causes"]]
    assert fields == [("spec.dnsConfig.nameservers[1]", "Invalid value"),
                      ("spec.dnsConfig.searches[0]", "Invalid value"),
                      ("spec.dnsConfig.options[0]", "Required value"),
                      ("spec.readinessGates[0].conditionType", "Invalid value"),
                      ("spec.hostAliases[0].ip", "Invalid value"),
                      ("spec.hostAliases[0].hostnames[1]", "Invalid value")]
    causes = status["details"]["causes"]
    assert causes[0]["message"] == f'Invalid value: "nope": {IP_MSG}'
    assert causes[2]["message"] == "Required value: must not be empty"
    assert causes[4]["message"] == f'Invalid value: "1.2.3": {IP_MSG}'
    assert status["message"].startswith('Pod "bad" is invalid: [spec.dnsConfig.nameservers[1]: Invalid value: "nope"')

    good = _pod("good", dnsPolicy="None",
                dnsConfig={"nameservers": ["10.0.0.10"], "searches": ["_sip._tcp.example.com", "."],
                           "options": [{"name": "ndots", "value": "2"}]},
                readinessGates=[{"conditionType": "example.com/ready"}],
                hostAliases=[{"ip": "10.1.2.3", "hostnames": ["foo.local"]}])
    created = core.create_namespaced_pod(namespace, good)
    assert created.spec.dns_config.searches == ["_sip._tcp.example.com", "."]
    assert created.spec.host_aliases[0].hostnames == ["foo.local"]


def test_deployment_template_dns_policy_none_needs_a_config(api: client.ApiClient, namespace: str) -> None:
    apps = client.AppsV1Api(api)
    body = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "dns"},
            "spec": {"selector": {"matchLabels": {"app": "dns"}}, "template": {
                "metadata": {"labels": {"app": "dns"}},
                "spec": {"dnsPolicy": "None", "containers": [{"name": "c", "image": "busybox"}]}}}}
    with pytest.raises(ApiException) as err:
        apps.create_namespaced_deployment(namespace, body)
    assert err.value.status == 422
    assert json.loads(err.value.body)["details"]["causes"] == [{
        "reason": "FieldValueRequired", "field": "spec.template.spec.dnsConfig",
        "message": "Required value: must provide `dnsConfig` when `dnsPolicy` is None"}]
