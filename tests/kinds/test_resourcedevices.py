"""kapi.kinds.resourcedevices against kube's pkg/apis/resource/validation/validation.go (1.37 tree)."""

from __future__ import annotations

from kapi.kinds import resourcedevices as rd

LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
             "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
             "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
                 "must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation "
                 "is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
C_ID_MSG = ("a valid C identifier must start with alphabetic character or '_', followed by a string of alphanumeric "
            "characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex used for validation is "
            "'[A-Za-z_][A-Za-z0-9_]*')")
REF = rd.REQUEST_REF_MSG
NODE_SEL = rd.NODE_SELECTION_MSG


def pairs(causes):
    return [(c.field, c.message) for c in causes]


def slice_spec(**extra):
    spec = {"driver": "dra.example.com", "pool": {"name": "pool", "generation": 0, "resourceSliceCount": 1},
            "nodeName": "node-1"}
    spec.update(extra)
    return spec


# ------------------------------------------------------------------------------------------ ResourceSlice spec

def test_valid_slice_has_no_causes():
    spec = slice_spec(devices=[{"name": "gpu-0", "attributes": {"model": {"string": "a100"},
                                                                "dra.example.com/ver": {"version": "1.2.3-rc.1"}},
                                "capacity": {"memory": {"value": "40Gi"}},
                                "taints": [{"key": "example.com/broken", "effect": "NoSchedule"}]}])
    assert rd.validate_resource_slice_spec(spec) == []


def test_pool_rules():
    spec = slice_spec(pool={"name": "a/B_c", "generation": -1, "resourceSliceCount": 0})
    assert pairs(rd.validate_resource_slice_spec(spec)) == [
        ("spec.pool.name", f'Invalid value: "B_c": {SUBDOMAIN_MSG}'),
        ("spec.pool.resourceSliceCount", "Invalid value: 0: must be greater than zero"),
        ("spec.pool.generation", "Invalid value: -1: must be greater than or equal to zero")]
    long = "/".join(["a" * 60] * 5)
    assert pairs(rd.validate_resource_slice_spec(slice_spec(pool={"name": long, "resourceSliceCount": 1}))) == [
        ("spec.pool.name", "Too long: may not be more than 253 bytes")]


def test_node_selection_exactly_one():
    assert pairs(rd.validate_resource_slice_spec(slice_spec(nodeName=None))) == [
        ("spec", f"Required value: {NODE_SEL}")]
    assert pairs(rd.validate_resource_slice_spec(slice_spec(allNodes=True, perDeviceNodeSelection=True))) == [
        ("spec", f'Invalid value: "{{`nodeName`, `allNodes`, `perDeviceNodeSelection`}}": {NODE_SEL}, but '
                 "multiple fields are set")]
    spec = slice_spec(nodeName="", allNodes=False, perDeviceNodeSelection=False)
    assert pairs(rd.validate_resource_slice_spec(spec)) == [
        ("spec.nodeName", 'Invalid value: "": must be either unset or set to a non-empty string'),
        ("spec.allNodes", "Invalid value: false: must be either unset or set to true"),
        ("spec.perDeviceNodeSelection", "Invalid value: false: must be either unset or set to true"),
        ("spec", f"Required value: {NODE_SEL}")]
    assert pairs(rd.validate_resource_slice_spec(slice_spec(nodeName="Node_1"))) == [
        ("spec.nodeName", f'Invalid value: "Node_1": {SUBDOMAIN_MSG}')]


def test_node_selector_one_term():
    term = {"matchExpressions": [{"key": "k", "operator": "In", "values": ["v"]}]}
    assert rd.validate_resource_slice_spec(slice_spec(nodeName=None, nodeSelector={"nodeSelectorTerms": [term]})) == []
    spec = slice_spec(nodeName=None, nodeSelector={"nodeSelectorTerms": [term, {"matchFields": []}]})
    assert pairs(rd.validate_resource_slice_spec(spec)) == [
        ("spec.nodeSelector.nodeSelectorTerms",
         'Invalid value: []core.NodeSelectorTerm{core.NodeSelectorTerm{MatchExpressions:'
         '[]core.NodeSelectorRequirement{core.NodeSelectorRequirement{Key:"k", Operator:"In", '
         'Values:[]string{"v"}}}, MatchFields:[]core.NodeSelectorRequirement(nil)}, core.NodeSelectorTerm{'
         'MatchExpressions:[]core.NodeSelectorRequirement(nil), MatchFields:[]core.NodeSelectorRequirement{}}}: '
         "must have exactly one node selector term")]
    spec = slice_spec(nodeName=None, nodeSelector={})
    assert pairs(rd.validate_resource_slice_spec(spec)) == [
        ("spec.nodeSelector.nodeSelectorTerms", "Required value: must have at least one node selector term"),
        ("spec.nodeSelector.nodeSelectorTerms",
         "Invalid value: []core.NodeSelectorTerm(nil): must have exactly one node selector term")]


def test_shared_counters_and_devices_exclusive_and_counter_sets():
    spec = slice_spec(devices=[], sharedCounters=[
        {"name": "gpu", "counters": {"memory": {"value": "1"}, "Bad": {"value": "1"}}},
        {"name": "", "counters": {}}, {"name": "gpu", "counters": {"x": {"value": "1"}}}])
    assert pairs(rd.validate_resource_slice_spec(spec)) == [
        ("spec", 'Invalid value: "": only one of `sharedCounters` or `devices` is allowed'),
        ("spec.sharedCounters[0].counters", f'Invalid value: "Bad": {LABEL_MSG}'),
        ("spec.sharedCounters[1].name", "Required value"),
        ("spec.sharedCounters[1].counters", "Required value"),
        ("spec.sharedCounters[2]", 'Duplicate value: "gpu"')]
    spec = slice_spec(sharedCounters=[{"name": f"c{i}", "counters": {"a": {}}} for i in range(9)])
    assert pairs(rd.validate_resource_slice_spec(spec)) == [
        ("spec.sharedCounters", "Too many: 9: must have at most 8 items")]
    many = {f"c{i}": {"value": "1"} for i in range(33)}
    assert pairs(rd.validate_resource_slice_spec(slice_spec(sharedCounters=[{"name": "a", "counters": many}]))) == [
        ("spec.sharedCounters[0].counters", "Too many: 33: must have at most 32 items")]


def test_device_count_names_and_advanced_limit():
    spec = slice_spec(devices=[{"name": "a"}, {"name": "Bad"}, {"name": "a"}])
    assert pairs(rd.validate_resource_slice_spec(spec)) == [
        ("spec.devices[1].name", f'Invalid value: "Bad": {LABEL_MSG}'),
        ("spec.devices[2]", 'Duplicate value: "a"')]
    assert pairs(rd.validate_resource_slice_spec(slice_spec(devices=[{"name": f"d{i}"} for i in range(129)]))) == [
        ("spec.devices", "Too many: 129: must have at most 128 items")]
    tainted = [{"name": f"d{i}", "taints": [{"key": "k", "effect": "NoSchedule"}]} for i in range(65)]
    assert pairs(rd.validate_resource_slice_spec(slice_spec(devices=tainted))) == [
        ("spec.devices", "Too many: 65: must have at most 64 items")]


def test_attribute_and_capacity_names_and_values():
    device = {"name": "d", "attributes": {
        "1bad": {"int": 1}, "a/b/c": {"bool": True}, "/x": {"int": 1}, "dom/": {"int": 1},
        "Bad_Domain/x": {"int": 1}, "s": {"string": "x" * 65}, "v": {"version": "1.2"}, "none": {},
        "two": {"int": 1, "bool": False}, "long_" + "x" * 30: {"int": 1}}}
    assert pairs(rd.validate_resource_slice_spec(slice_spec(devices=[device]))) == [
        ("spec.devices[0].attributes", f'Invalid value: "1bad": {C_ID_MSG}'),
        ("spec.devices[0].attributes", 'Invalid value: "a/b/c": must not contain more than one slash'),
        ("spec.devices[0].attributes", 'Invalid value: "": the domain must not be empty'),
        ("spec.devices[0].attributes", 'Invalid value: "": the name must not be empty'),
        ("spec.devices[0].attributes", f'Invalid value: "Bad_Domain": {SUBDOMAIN_MSG}'),
        ("spec.devices[0].attributes[s].string", "Too long: may not be more than 64 bytes"),
        ("spec.devices[0].attributes[v].version",
         'Invalid value: "1.2": must be a string compatible with semver.org spec 2.0.0'),
        ("spec.devices[0].attributes[none]", 'Invalid value: "": exactly one value must be specified'),
        ("spec.devices[0].attributes[two]", 'Invalid value: {"int":1,"bool":false}: exactly one value must be '
                                            "specified"),
        ("spec.devices[0].attributes", "Too long: may not be more than 32 bytes")]
    device = {"name": "d", "attributes": {f"a{i}": {"int": i} for i in range(20)},
              "capacity": {f"c{i}": {"value": "1"} for i in range(13)}}
    assert pairs(rd.validate_resource_slice_spec(slice_spec(devices=[device]))) == [
        ("spec.devices[0]", "Invalid value: 33: the total number of attributes and capacities must not exceed 32")]


def test_capacity_request_policy():
    single = {"name": "d", "capacity": {"mem": {"value": "10", "requestPolicy": {}}}}
    assert pairs(rd.validate_resource_slice_spec(slice_spec(devices=[single]))) == [
        ("spec.devices[0].capacity[mem].requestPolicy", "Forbidden: allowMultipleAllocations must be true")]
    policies = {
        "a": {"validValues": ["1"], "validRange": {"min": "1"}},
        "b": {"validValues": ["1"]},
        "c": {"default": "3", "validValues": ["2", "1", "20", "1"]},
        "d": {"default": "1", "validRange": {}},
        "e": {"default": "0", "validRange": {"min": "11", "max": "5", "step": "0"}},
        "f": {"default": "3", "validRange": {"min": "1", "max": "8", "step": "2"}},
    }
    device = {"name": "d", "allowMultipleAllocations": True,
              "capacity": {k: {"value": "10", "requestPolicy": v} for k, v in policies.items()}}
    p = "spec.devices[0].capacity"
    assert pairs(rd.validate_resource_slice_spec(slice_spec(devices=[device]))) == [
        (f"{p}[a].requestPolicy", 'Forbidden: exactly one policy can be specified, cannot specify "validValues" '
                                  'and "validRange" at the same time'),
        (f"{p}[b].requestPolicy.default", "Required value: required when validValues is defined"),
        (f"{p}[c].requestPolicy.validValues[1]", 'Invalid value: "1": values must be sorted in ascending order'),
        (f"{p}[c].requestPolicy.validValues[3]", 'Invalid value: "1": values must be sorted in ascending order'),
        (f"{p}[c].requestPolicy.validValues[2]", 'Invalid value: "20": option is larger than capacity value: 10'),
        (f"{p}[c].requestPolicy.validValues[3]", 'Duplicate value: "1"'),
        (f"{p}[c].requestPolicy.validValues",
         'Invalid value: "3": default value is not valid according to the requestPolicy'),
        (f"{p}[d].requestPolicy.validRange.min", "Required value: required when validRange is defined"),
        (f"{p}[e].requestPolicy.validRange.min", 'Invalid value: "11": min is larger than capacity value: 10'),
        (f"{p}[e].requestPolicy.validRange.default", 'Invalid value: "0": default is less than min: 11'),
        (f"{p}[e].requestPolicy.validRange.max", 'Invalid value: "11": min is larger than max: 5'),
        (f"{p}[e].requestPolicy.validRange.step", 'Invalid value: "0": must be greater than zero'),
        (f"{p}[f].requestPolicy.validRange.step",
         'Invalid value: "8": value is not a multiple of a given step (2) from (1)')]


def test_capacity_and_taints_unchanged_are_not_validated_again():
    device = {"name": "d", "capacity": {"mem": {"value": "1", "requestPolicy": {}}},
              "taints": [{"key": "k", "effect": "Bogus"}]}
    spec = slice_spec(devices=[device])
    assert [c.field for c in rd.validate_resource_slice_spec(spec)] == [
        "spec.devices[0].capacity[mem].requestPolicy", "spec.devices[0].taints[0].effect"]
    assert rd.validate_resource_slice_spec(spec, spec) == []


def test_taints():
    taints = [{"key": "", "value": "bad value", "effect": ""}, {"key": "k", "effect": "Evict"}]
    assert pairs(rd.validate_resource_slice_spec(slice_spec(devices=[{"name": "d", "taints": taints}]))) == [
        ("spec.devices[0].taints[0].key", 'Invalid value: "": name part must be non-empty'),
        ("spec.devices[0].taints[0].key",
         "Invalid value: \"\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start "
         "and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
         "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"),
        ("spec.devices[0].taints[0].value",
         "Invalid value: \"bad value\": a valid label must be an empty string or consist of alphanumeric "
         "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
         "'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"),
        ("spec.devices[0].taints[0].effect", "Required value"),
        ("spec.devices[0].taints[1].effect",
         'Unsupported value: "Evict": supported values: "NoExecute", "NoSchedule", "None"')]
    many = [{"key": f"k{i}", "effect": "None"} for i in range(17)]
    assert pairs(rd.validate_resource_slice_spec(slice_spec(devices=[{"name": "d", "taints": many}]))) == [
        ("spec.devices[0].taints", "Too many: 17: must have at most 16 items")]


def test_consumes_counters():
    device = {"name": "d", "consumesCounters": [{"counterSet": "", "counters": {}},
                                                {"counterSet": "gpu", "counters": {"Mem": {"value": "1"}}},
                                                ]}
    assert pairs(rd.validate_resource_slice_spec(slice_spec(devices=[device]))) == [
        ("spec.devices[0].consumesCounters[0].counterSet", "Required value"),
        ("spec.devices[0].consumesCounters[0].counters", "Required value"),
        ("spec.devices[0].consumesCounters[1].counters", f'Invalid value: "Mem": {LABEL_MSG}')]
    device = {"name": "d", "consumesCounters": [{"counterSet": "a", "counters": {"x": {}}}] * 2}
    assert pairs(rd.validate_resource_slice_spec(slice_spec(devices=[device]))) == [
        ("spec.devices[0].consumesCounters[1]", 'Duplicate value: "a"')]
    device = {"name": "d", "consumesCounters": [{"counterSet": f"c{i}", "counters": {"x": {}}} for i in range(3)]}
    assert pairs(rd.validate_resource_slice_spec(slice_spec(devices=[device]))) == [
        ("spec.devices[0].consumesCounters", "Too many: 3: must have at most 2 items")]


def test_per_device_node_selection():
    base = slice_spec(nodeName=None, perDeviceNodeSelection=True)
    devices = [{"name": "a", "nodeName": "n"}, {"name": "b"}, {"name": "c", "nodeName": "", "allNodes": False},
               {"name": "d", "nodeName": "n", "allNodes": True}]
    msg = rd.DEVICE_NODE_SELECTION_MSG
    assert pairs(rd.validate_resource_slice_spec({**base, "devices": devices})) == [
        ("spec.devices[1]", f"Required value: {msg}"),
        ("spec.devices[2].nodeName", 'Invalid value: "": must not be empty'),
        ("spec.devices[2].allNodes", "Invalid value: false: must be either unset or set to true"),
        ("spec.devices[2]", f"Required value: {msg}"),
        ("spec.devices[3]", f'Invalid value: "{{`nodeName`, `allNodes`}}": {msg}')]
    assert pairs(rd.validate_resource_slice_spec(slice_spec(devices=[{"name": "a", "allNodes": True}]))) == [
        ("spec.devices[0]", 'Invalid value: "null": `nodeName`, `nodeSelector` and `allNodes` can only be set if '
                            "`perDeviceNodeSelection` is set to true in the ResourceSlice spec")]


def test_binding_conditions():
    device = {"name": "d", "bindingConditions": ["a", "a", "b"], "bindingFailureConditions": ["b", "c", "c"]}
    assert pairs(rd.validate_resource_slice_spec(slice_spec(devices=[device]))) == [
        ("spec.devices[0].bindingConditions[1]", 'Duplicate value: "a"'),
        ("spec.devices[0].bindingFailureConditions[0]",
         'Invalid value: "b": bindingFailureConditions must not overlap with bindingConditions'),
        ("spec.devices[0].bindingFailureConditions[2]", 'Duplicate value: "c"')]
    assert pairs(rd.validate_resource_slice_spec(slice_spec(devices=[{"name": "d", "bindingConditions": ["a"]}]))) \
        == [("spec.devices[0].bindingFailureConditions", "Invalid value: []string(nil): bindingFailureConditions "
                                                          "are required to use bindingConditions")]
    device = {"name": "d", "bindingConditions": [], "bindingFailureConditions": ["x/"]}
    assert pairs(rd.validate_resource_slice_spec(slice_spec(devices=[device]))) == [
        ("spec.devices[0].bindingFailureConditions[0]", 'Invalid value: "x/": name part must be non-empty'),
        ("spec.devices[0].bindingFailureConditions[0]",
         "Invalid value: \"x/\": name part must consist of alphanumeric characters, '-', '_' or '.', and must "
         "start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used "
         "for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"),
        ("spec.devices[0].bindingConditions",
         "Invalid value: []string{}: bindingConditions are required to use bindingFailureConditions")]
    device = {"name": "d", "bindingConditions": list("abcde"), "bindingFailureConditions": ["f"]}
    assert pairs(rd.validate_resource_slice_spec(slice_spec(devices=[device]))) == [
        ("spec.devices[0].bindingConditions", "Too many: 5: must have at most 4 items")]


def test_update_immutable_fields():
    old = slice_spec()
    new = slice_spec(driver="other.example.com", pool={"name": "p2", "resourceSliceCount": 1}, nodeName="node-2")
    assert pairs(rd.validate_resource_slice_spec(new, old)) == [
        ("spec.pool.name", 'Invalid value: "p2": field is immutable'),
        ("spec.driver", 'Invalid value: "other.example.com": field is immutable'),
        ("spec.nodeName", 'Invalid value: "node-2": field is immutable')]
    assert pairs(rd.validate_resource_slice_spec(slice_spec(nodeName=None, allNodes=True), old)) == [
        ("spec.nodeName", 'Invalid value: "null": field is immutable')]


def test_wrong_types_do_not_raise():
    assert rd.validate_resource_slice_spec({"driver": 1, "pool": "x", "nodeName": 3, "devices": "x",
                                            "sharedCounters": 1}) is not None
    device = {"name": 1, "attributes": [], "capacity": "x", "taints": {}, "consumesCounters": "x",
              "bindingConditions": 1, "allowMultipleAllocations": True}
    assert rd.validate_resource_slice_spec(slice_spec(devices=[device, 1])) is not None
    assert rd.validate_claim_status_update({"status": {"reservedFor": "x", "devices": [1], "allocation": []}},
                                           {"status": 1}) is not None


# ------------------------------------------------------------------------------------ names, CEL, tolerations

def test_qualified_names():
    assert rd.validate_qualified_name("dra.example.com/model", "p") == []
    assert pairs(rd.validate_fully_qualified_name("model", "p")) == [
        ("p", 'Invalid value: "model": a fully qualified name must be a domain and a name separated by a slash')]
    assert pairs(rd.validate_qualified_name("x" * 33, "p")) == [("p", "Too long: may not be more than 32 bytes")]


def test_cel_expression():
    assert rd.validate_cel_expression('device.driver == "x"', "p") == []
    [cause] = rd.validate_cel_expression("device.driver ==", "p")
    assert cause.field == "p" and cause.message.startswith(
        'Invalid value: "device.driver ==": compilation failed: ERROR: <input>:1:17: Syntax error: ')
    assert rd.validate_cel_expression("device.driver ==", "p", stored=True) == []
    assert pairs(rd.validate_cel_expression("a" * 10241, "p")) == [("p", "Too long: may not be more than 10240 bytes")]


def test_selectors():
    selectors = [{}, {"cel": {"expression": "true"}}, {"cel": {"expression": "("}}]
    causes = rd.validate_selectors(selectors, "s")
    assert [(c.field, c.message.split(":")[0]) for c in causes] == [
        ("s[0].cel", "Required value"), ("s[2].cel.expression", "Invalid value")]
    assert pairs(rd.validate_selectors([{}] * 33, "s")) == [("s", "Too many: 33: must have at most 32 items")]


def test_device_tolerations():
    tolerations = [{"key": "k", "operator": "Exists", "value": "v"}, {"operator": "Equal", "value": "a b"},
                   {"key": "k"}, {"operator": "Gt", "effect": "Evict"}, {"operator": "Exists", "effect": "None"}]
    assert pairs(rd.validate_tolerations(tolerations, "t")) == [
        ("t[0].value", 'Invalid value: "v": must be empty for operator `Exists`'),
        ("t[1].value",
         "Invalid value: \"a b\": a valid label must be an empty string or consist of alphanumeric characters, "
         "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
         "'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"),
        ("t[2].operator", "Required value"),
        ("t[3].operator", 'Unsupported value: "Gt": supported values: "Equal", "Exists"'),
        ("t[3].effect", 'Unsupported value: "Evict": supported values: "NoExecute", "NoSchedule", "None"')]


def test_request_name_refs_constraints_and_config():
    names = rd.gather_request_names({"devices": {"requests": [
        {"name": "a"}, {"name": "b", "firstAvailable": [{"name": "x"}]}]}})
    assert names == {"a": None, "b": {"x"}}
    assert rd.validate_request_name_ref("b/x", "p", names) == []
    assert pairs(rd.validate_request_name_ref("a/b/c", "p", names)) == [("p", f'Invalid value: "a/b/c": {REF}')]
    assert pairs(rd.validate_request_name_ref("A/y", "p", names)) == [
        ("p", f'Invalid value: "A": {LABEL_MSG}'), ("p", f'Invalid value: "A/y": {REF}')]
    constraints = [{"requests": ["a", "a", "c"], "matchAttribute": "model"}, {"distinctAttribute": "d.com/x"}, {}]
    assert pairs(rd.validate_constraints(constraints, "c", names)) == [
        ("c[0].requests[2]", f'Invalid value: "c": {REF}'),
        ("c[0].requests[1]", 'Duplicate value: "a"'),
        ("c[0].matchAttribute",
         'Invalid value: "model": a fully qualified name must be a domain and a name separated by a slash'),
        ("c[2]", 'Required value: exactly one of "matchAttribute" or "distinctAttribute" is required, but '
                 "multiple fields are set")]
    configs = [{"requests": ["z"], "opaque": {"driver": "d.example.com", "parameters": {"a": 1}}},
               {}, {"opaque": {"driver": "d.example.com"}}, {"opaque": {"driver": "d.example.com", "parameters": []}},
               {"opaque": {"driver": "d.example.com", "parameters": {"x": "y" * 10240}}}]
    assert pairs(rd.validate_claim_config(configs, "k", names)) == [
        ("k[0].requests[0]", f'Invalid value: "z": {REF}'),
        ("k[1].opaque", "Required value"),
        ("k[2].opaque.parameters", "Required value"),
        ("k[3].opaque.parameters", 'Invalid value: "<value omitted>": must be a valid JSON object'),
        ("k[4].opaque.parameters", "Too long: may not be more than 10240 bytes")]


def test_uid():
    assert rd.validate_uid("0b3c3f7e-7f1e-4c5e-9d64-3a0e1f2a3b4c", "u") == []
    assert pairs(rd.validate_uid("abc", "u")) == [("u", 'Invalid value: "abc": error validating uid: invalid UUID '
                                                        "length: 3")]
    assert pairs(rd.validate_uid("0B3C3F7E-7F1E-4C5E-9D64-3A0E1F2A3B4C", "u")) == [
        ("u", f'Invalid value: "0B3C3F7E-7F1E-4C5E-9D64-3A0E1F2A3B4C": {rd.UID_FORM_MSG}')]
    assert pairs(rd.validate_uid("0b3c3f7e-7f1e-4c5e-9d64-3a0e1f2a3bzz", "u")) == [
        ("u", 'Invalid value: "0b3c3f7e-7f1e-4c5e-9d64-3a0e1f2a3bzz": error validating uid: invalid UUID format')]


# ------------------------------------------------------------------------------------------- claim /status

CLAIM_SPEC = {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "c"}}]}}
RESULT = {"request": "gpu", "driver": "dra.example.com", "pool": "p", "device": "d0"}


def status_claim(status, **meta):
    return {"metadata": {"name": "c", **meta}, "spec": CLAIM_SPEC, "status": status}


def test_valid_status_update():
    status = {"allocation": {"devices": {"results": [RESULT]}},
              "reservedFor": [{"resource": "pods", "name": "p", "uid": "u1"}],
              "devices": [{"driver": "dra.example.com", "pool": "p", "device": "d0",
                           "networkData": {"ips": ["10.0.0.1/24", "2001:db8::1/64"]}}]}
    assert rd.validate_claim_status_update(status_claim(status), status_claim({})) == []


def test_reserved_for_rules():
    status = {"reservedFor": [{}, {"resource": "pods", "name": "p", "uid": "u"},
                              {"resource": "pods", "name": "q", "uid": "u"}]}
    assert pairs(rd.validate_claim_status_update(status_claim(status), status_claim({}))) == [
        ("status.reservedFor[0].resource", "Required value"), ("status.reservedFor[0].name", "Required value"),
        ("status.reservedFor[0].uid", "Required value"), ("status.reservedFor[2]", 'Duplicate value: "u"'),
        ("status.reservedFor", "Forbidden: may not be specified when `allocated` is not set")]
    many = {"reservedFor": [{"resource": "pods", "name": "p", "uid": str(i)} for i in range(257)],
            "allocation": {"devices": {"results": [RESULT]}}}
    assert pairs(rd.validate_claim_status_update(status_claim(many), status_claim({}))) == [
        ("status.reservedFor", "Too many: 257: must have at most 256 items")]
    allocated = {"allocation": {"devices": {"results": [RESULT]}}}
    old = status_claim({**allocated, "reservedFor": [{"resource": "pods", "name": "p", "uid": "1"}]})
    new = status_claim({**allocated, "reservedFor": [{"resource": "pods", "name": "p", "uid": "1"},
                                                    {"resource": "pods", "name": "q", "uid": "2"}]},
                       deletionTimestamp="2026-01-01T00:00:00Z")
    assert pairs(rd.validate_claim_status_update(new, old)) == [
        ("status.reservedFor", "Forbidden: new entries may not be added while `deallocationRequested` or "
                               "`deletionTimestamp` are set")]
    assert rd.validate_claim_status_update(status_claim(old["status"], deletionTimestamp="x"), old) == []


def test_allocation_results_and_immutability():
    allocation = {"devices": {
        "results": [{"request": "cpu", "driver": "", "pool": "", "device": "D", "shareID": "x",
                     "tolerations": [{"operator": "Bogus"}]}],
        "config": [{"requests": ["gpu"], "opaque": {"driver": "dra.example.com", "parameters": {}}},
                   {"source": "FromNowhere", "opaque": {"driver": "dra.example.com", "parameters": {}}}]},
        "nodeSelector": {"nodeSelectorTerms": []}}
    r = "status.allocation.devices.results[0]"
    assert pairs(rd.validate_claim_status_update(status_claim({"allocation": allocation}), status_claim({}))) == [
        (f"{r}.request", f'Invalid value: "cpu": {REF}'),
        (f"{r}.driver", "Required value"),
        (f"{r}.driver", f'Invalid value: "": {SUBDOMAIN_MSG}'),
        (f"{r}.pool", "Required value"),
        (f"{r}.device", f'Invalid value: "D": {LABEL_MSG}'),
        (f"{r}.tolerations[0].operator", 'Unsupported value: "Bogus": supported values: "Equal", "Exists"'),
        (f"{r}.shareID", 'Invalid value: "x": error validating uid: invalid UUID length: 1'),
        ("status.allocation.devices.config[0].source", "Required value"),
        ("status.allocation.devices.config[1].source",
         'Unsupported value: "FromNowhere": supported values: "FromClaim", "FromClass"'),
        ("status.allocation.nodeSelector.nodeSelectorTerms", "Required value: must have at least one node selector "
                                                             "term")]
    old = status_claim({"allocation": {"devices": {"results": [RESULT]}}})
    changed = status_claim({"allocation": {"devices": {"results": [{**RESULT, "device": "d1"}]}}})
    assert pairs(rd.validate_claim_status_update(changed, old)) == [
        ("status.allocation", 'Invalid value: {"devices":{"results":[{"request":"gpu","driver":"dra.example.com",'
                              '"pool":"p","device":"d1"}]}}: field is immutable')]
    assert rd.validate_claim_status_update(old, old) == []


def test_device_status():
    allocation = {"devices": {"results": [RESULT]}}
    devices = [{"driver": "dra.example.com", "pool": "p", "device": "d9", "data": [1],
                "conditions": [{"type": "Ready", "status": "True", "reason": "Ok",
                                "lastTransitionTime": "2026-01-01T00:00:00Z"}] * 1,
                "networkData": {"interfaceName": "i" * 257, "hardwareAddress": "h" * 129,
                                "ips": ["10.0.0.1", "010.0.0.1/24", "::ffff:10.0.0.1/120", "10.0.0.1/24",
                                        "10.0.0.1/24"]}},
               {"driver": "dra.example.com", "pool": "p", "device": "d0"},
               {"driver": "dra.example.com", "pool": "p", "device": "d0"}]
    d = "status.devices[0]"
    assert pairs(rd.validate_claim_status_update(status_claim({"allocation": allocation, "devices": devices}),
                                                 status_claim({}))) == [
        (d, "Invalid value: dra.example.com/p/d9: must be an allocated device in the claim"),
        (f"{d}.data", 'Invalid value: "<value omitted>": must be a valid JSON object'),
        (f"{d}.networkData.interfaceName", "Too long: may not be more than 256 bytes"),
        (f"{d}.networkData.hardwareAddress", "Too long: may not be more than 128 bytes"),
        (f"{d}.networkData.ips[0]",
         'Invalid value: "10.0.0.1": must be a valid address in CIDR form, (e.g. 10.9.8.7/24 or 2001:db8::1/64)'),
        (f"{d}.networkData.ips[1]", 'Invalid value: "010.0.0.1/24": must be in canonical form ("10.0.0.1/24")'),
        (f"{d}.networkData.ips[2]",
         'Invalid value: "::ffff:10.0.0.1/120": must be in canonical form ("10.0.0.1/24")'),
        (f"{d}.networkData.ips[4]", 'Duplicate value: "10.0.0.1/24"'),
        ("status.devices[2]", "Duplicate value: dra.example.com/p/d0")]
    many = [{"driver": "dra.example.com", "pool": "p", "device": "d0",
             "conditions": [{"type": f"T{i}", "status": "True", "reason": "R", "lastTransitionTime": "t"}
                            for i in range(9)]}]
    assert pairs(rd.validate_claim_status_update(status_claim({"allocation": allocation, "devices": many}),
                                                 status_claim({}))) == [
        ("status.devices[0].conditions", "Too many: 9: must have at most 8 items")]
