"""kapi.crd.openapi / structural / rules: a CRD's own openAPIV3Schema validated as apiextensions-apiserver does.

One row per rule with kube's field path and message (paths at ``spec.validation`` because a single-version
CRD's schema is hoisted in kube's internal form).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kapi.crd import rules, validation
from services.admission import crd_schema

P = "spec.validation.openAPIV3Schema"


def definition(schema: dict[str, Any], **version: Any) -> dict[str, Any]:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                     "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                     "versions": [{"name": "v1", "served": True, "storage": True,
                                   "schema": {"openAPIV3Schema": schema}, **version}]}}


def errors(d: dict[str, Any], old: dict[str, Any] | None = None) -> list[str]:
    return [f"{c.field}: {c.message}" for c in validation.validate(d, old, crd_schema.value_causes)]


def obj(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props}


def spec(**props: Any) -> dict[str, Any]:
    return obj(spec=obj(**props))


S = f"{P}.properties[spec]"
RULE = 'apiextensions.ValidationRule{{Rule:"{0}", Message:"", MessageExpression:"", Reason:(*apiextensions.' \
       'FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}}'

ROWS = [
    # structural schema
    ("type required at a field", obj(spec={"properties": {"a": {"type": "string"}}}),
     [f"{S}.type: Required value: must not be empty for specified object fields"]),
    ("type required at the root", {"properties": {"spec": {"type": "object"}}},
     [f"{P}.type: Required value: must not be empty at the root"]),
    ("type required for items", spec(list={"type": "array", "items": {}}),
     [f"{S}.properties[list].items.type: Required value: must not be empty for specified array items"]),
    ("items required for arrays", spec(list={"type": "array"}),
     [f"{S}.properties[list].items: Required value: must be specified"]),
    ("object at the root", {"type": "string"}, [f'{P}.type: Invalid value: "string": must be object at the root']),
    ("no additionalProperties at the root", {"type": "object", "additionalProperties": {"type": "string"}},
     [f"{P}.additionalProperties: Forbidden: must not be used at the root"]),
    ("int-or-string and preserve-unknown-fields need no type",
     spec(port={"x-kubernetes-int-or-string": True}, raw={"x-kubernetes-preserve-unknown-fields": True}), []),
    ("int-or-string excludes preserve-unknown-fields",
     spec(port={"x-kubernetes-int-or-string": True, "x-kubernetes-preserve-unknown-fields": True}),
     [f"{S}.properties[port].x-kubernetes-preserve-unknown-fields: Invalid value: true: must be false if "
      "x-kubernetes-int-or-string is true"]),
    ("int-or-string anyOf pattern allowed",
     spec(port={"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]}), []),
    ("types forbidden in value validations", spec(a={"type": "string", "anyOf": [{"type": "string"}]}),
     [f"{S}.properties[a].anyOf[0].type: Forbidden: must be empty to be structural"]),
    ("nested value validation keywords", spec(a={"type": "string", "allOf": [
        {"description": "d", "nullable": True, "default": "x", "x-kubernetes-list-type": "set"}]}),
     [f"{S}.properties[a].allOf[0].default: Forbidden: must be undefined to be structural",
      f"{S}.properties[a].allOf[0].description: Forbidden: must be empty to be structural",
      f"{S}.properties[a].allOf[0].nullable: Forbidden: must be false to be structural",
      f"{S}.properties[a].allOf[0].x-kubernetes-list-type: Forbidden: must be undefined to be structural",
      f"{S}.properties[a].allOf[0].type: Required value: must be array if x-kubernetes-list-type is specified"]),
    ("metadata in a nested context", {"type": "object", "not": {"properties": {"metadata": {}}},
                                      "properties": {"metadata": {"type": "object"}}},
     [f"{P}.not.properties[metadata]: Forbidden: must not be specified in a nested context"]),
    ("value validation properties must be structural", {"type": "object", "oneOf": [{"required": ["spec"]},
                                                                                   {"properties": {"x": {}}}]},
     [f"{P}.properties[x]: Required value: because it is defined in {P}.oneOf[1].properties[x]"]),
    ("metadata restricts only name and generateName",
     obj(metadata={"type": "object", "properties": {"labels": {"type": "object"}}}),
     [f"{P}.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but "
      "metadata is implicitly specified"]),
    ("metadata name and generateName allowed", obj(metadata={"type": "object", "properties": {
        "name": {"type": "string", "maxLength": 10}, "generateName": {"type": "string"}}}), []),
    ("metadata must be an object", obj(metadata={"type": "string"}),
     [f'{P}.properties[metadata].type: Invalid value: "string": must be object']),
    ("kind must be a string", obj(kind={"type": "integer"}),
     [f'{P}.properties[kind].type: Invalid value: "integer": must be string']),
    ("embedded resource must be an object", spec(e={"x-kubernetes-embedded-resource": True,
                                                    "x-kubernetes-preserve-unknown-fields": True, "type": "string"}),
     [f'{S}.properties[e].type: Invalid value: "string": must be object if x-kubernetes-embedded-resource is true']),
    ("embedded resource needs properties or preserve", spec(e={"x-kubernetes-embedded-resource": True,
                                                               "type": "object"}),
     [f"{S}.properties[e].properties: Required value: must not be empty if x-kubernetes-embedded-resource is true "
      "without x-kubernetes-preserve-unknown-fields"]),
    ("pattern must compile", spec(a={"type": "string", "pattern": "(?=a)b"}),
     [f'{S}.properties[a].pattern: Invalid value: "(?=a)b": must be a valid regular expression, but isn\'t: '
      "error parsing regexp: invalid or unsupported Perl syntax: `(?=`"]),
    # defaults
    ("default must validate", spec(n={"type": "integer", "default": "three"}),
     [f'{S}.properties[n].default: Invalid value: "string":  in body must be of type integer: "string"']),
    ("default must be pruned", spec(o={"type": "object", "properties": {"a": {"type": "string"}},
                                       "default": {"a": "x", "b": "y"}}),
     [f'{S}.properties[o].default: Invalid value: {{"a":"x","b":"y"}}: must not have unknown fields']),
    ("default nested value", spec(o={"type": "object", "properties": {"a": {"type": "string", "maxLength": 2}},
                                     "default": {"a": "long"}}),
     [f"{S}.properties[o].default.a: Too long: may not be more than 2 bytes"]),
    ("no default in top-level metadata", obj(metadata={"type": "object", "properties": {"name": {
        "type": "string", "default": "x"}}}),
     [f"{P}.properties[metadata].properties[name].default: Forbidden: must not be set in top-level metadata"]),
    # generic keywords
    ("unknown type", spec(a={"type": "float"}),
     [f'{S}.properties[a].type: Unsupported value: "float": supported values: "array", "boolean", "integer", '
      '"number", "object", "string"']),
    ("uniqueItems", spec(a={"type": "array", "items": {"type": "string"}, "uniqueItems": True}),
     [f"{S}.properties[a].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity "
      "becomes quadratic"]),
    ("properties and additionalProperties", spec(m={"type": "object", "properties": {"a": {"type": "string"}},
                                                    "additionalProperties": {"type": "string"}}),
     [f"{S}.properties[m].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive"]),
    ("$ref", spec(a={"type": "string", "$ref": "#/x"}), [f"{S}.properties[a].$ref: Forbidden: $ref is not supported"]),
    ("definitions, dependencies, id, patternProperties",
     spec(a={"type": "object", "id": "x", "definitions": {"d": {"type": "string"}}, "dependencies": {"a": ["b"]},
             "patternProperties": {"^x": {"type": "string"}}}),
     [f"{S}.properties[a].id: Forbidden: id is not supported",
      f"{S}.properties[a].patternProperties: Forbidden: patternProperties is not supported",
      f"{S}.properties[a].definitions: Forbidden: definitions is not supported",
      f"{S}.properties[a].dependencies: Forbidden: dependencies is not supported"]),
    ("type null", spec(a={"type": "null"}),
     [f'{S}.properties[a].type: Unsupported value: "null": supported values: "array", "boolean", "integer", '
      '"number", "object", "string"',
      f"{S}.properties[a].type: Forbidden: type cannot be set to null, use nullable as an alternative"]),
    ("preserve-unknown-fields false", spec(a={"type": "object", "x-kubernetes-preserve-unknown-fields": False}),
     [f"{S}.properties[a].x-kubernetes-preserve-unknown-fields: Invalid value: false: must be true or undefined"]),
    ("nullable root", {"type": "object", "nullable": True},
     [f"{P}.nullable: Forbidden: nullable cannot be true at the root"]),
    ("status subresource restricts the root", {"type": "object", "minProperties": 1},
     [f"{P}: Invalid value: apiextensions.JSONSchemaProps{{...}}: only [Description Type Format Title Maximum "
      "ExclusiveMaximum Minimum ExclusiveMinimum MaxLength MinLength Pattern MaxItems MinItems UniqueItems MultipleOf "
      "Required Items Properties ExternalDocs Example XPreserveUnknownFields XValidations] fields are allowed at the "
      "root of the schema if the status subresource is enabled"]),
    # list and map types
    ("list-type needs an array", spec(a={"type": "object", "x-kubernetes-list-type": "set"}),
     [f'{S}.properties[a].type: Invalid value: "object": must be array if x-kubernetes-list-type is specified']),
    ("list-type values", spec(a={"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "bag"}),
     [f'{S}.properties[a].x-kubernetes-list-type: Unsupported value: "bag": supported values: "atomic", "set", '
      '"map"']),
    ("list-type map needs keys", spec(a={"type": "array", "x-kubernetes-list-type": "map", "items": {
        "type": "object", "properties": {"name": {"type": "string"}}}}),
     [f"{S}.properties[a].x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type "
      "is map"]),
    ("map keys must be item properties", spec(a={"type": "array", "x-kubernetes-list-type": "map",
                                                 "x-kubernetes-list-map-keys": ["id"], "items": {
                                                     "type": "object", "properties": {"name": {"type": "string"}}}}),
     [f'{S}.properties[a].x-kubernetes-list-map-keys: Invalid value: []string{{"id"}}: entries must all be names '
      "of item properties"]),
    ("map keys required or defaulted", spec(a={"type": "array", "x-kubernetes-list-type": "map",
                                               "x-kubernetes-list-map-keys": ["name"], "items": {
                                                   "type": "object", "properties": {"name": {"type": "string"}}}}),
     [f"{S}.properties[a].items.properties[name].default: Required value: this property is in "
      "x-kubernetes-list-map-keys, so it must have a default or be a required property"]),
    ("map keys scalar", spec(a={"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"],
                                "items": {"type": "object", "required": ["k"], "properties": {
                                    "k": {"type": "object"}}}}),
     [f'{S}.properties[a].items.properties[k].type: Invalid value: "object": must be a scalar type if parent '
      "array's x-kubernetes-list-type is map"]),
    ("map-list keys ok", spec(a={"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": [
        "name"], "items": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}}}), []),
    ("map keys need list-type map", spec(a={"type": "array", "items": {"type": "string"},
                                            "x-kubernetes-list-map-keys": ["k"]}),
     [f"{S}.properties[a].x-kubernetes-list-type: Required value: must be map if x-kubernetes-list-map-keys is "
      "non-empty"]),
    ("set items atomic", spec(a={"type": "array", "x-kubernetes-list-type": "set", "items": {
        "type": "object", "properties": {"x": {"type": "string"}}}}),
     [f"{S}.properties[a].items.x-kubernetes-map-type: Invalid value: \"null\": must be atomic as item of a list with "
      "x-kubernetes-list-type=set"]),
    ("map-type values", spec(a={"type": "object", "x-kubernetes-map-type": "loose"}),
     [f'{S}.properties[a].x-kubernetes-map-type: Unsupported value: "loose": supported values: "atomic", '
      '"granular"']),
    ("embedded resource not inside metadata", obj(metadata={"type": "object", "x-kubernetes-embedded-resource": True,
                                                            "x-kubernetes-preserve-unknown-fields": True}),
     [f"{P}.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but "
      "metadata is implicitly specified",
      f"{P}.properties[metadata].x-kubernetes-embedded-resource: Forbidden: must not be used inside of resource "
      "meta"]),
    # x-kubernetes-validations
    ("rule syntax error", spec(n={"type": "integer", "x-kubernetes-validations": [{"rule": "self >"}]}),
     [f"{S}.properties[n].x-kubernetes-validations[0].rule: Invalid value: {RULE.format('self >')}: compilation "
      "failed: ERROR: <input>:1:7: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', "
      "'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n | self >\n | ......^"]),
    ("rule undefined field", {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "replicas": {"type": "integer"}}, "x-kubernetes-validations": [{"rule": "self.replica > 0"}]}}},
     [f"{S}.x-kubernetes-validations[0].rule: Invalid value: {RULE.format('self.replica > 0')}: compilation "
      "failed: ERROR: <input>:1:5: undefined field 'replica'\n | self.replica > 0\n | ....^"]),
    ("rule undeclared reference", {"type": "object", "x-kubernetes-validations": [{"rule": "spec.replicas > 0"}],
                                   "properties": {"spec": {"type": "object"}}},
     [f"{P}.x-kubernetes-validations[0].rule: Invalid value: {RULE.format('spec.replicas > 0')}: compilation "
      "failed: ERROR: <input>:1:1: undeclared reference to 'spec' (in container '')\n | spec.replicas > 0\n | ^"]),
    ("messageExpression compiles", spec(n={"type": "integer", "x-kubernetes-validations": [
        {"rule": "self > 0", "messageExpression": "'bad ' +"}]}),
     [f"{S}.properties[n].x-kubernetes-validations[0].messageExpression: Invalid value: apiextensions.ValidationRule"
      '{Rule:"self > 0", Message:"", MessageExpression:"\'bad \' +", Reason:(*apiextensions.FieldValueErrorReason)'
      '(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}: messageExpression compilation failed: ERROR: <input>:1:9: '
      "Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', "
      "NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n | 'bad ' +\n | ........^"]),
    ("oldSelf on uncorrelatable items", spec(l={"type": "array", "items": {
        "type": "string", "x-kubernetes-validations": [{"rule": "self == oldSelf"}]}}),
     [f'{S}.properties[l].items.x-kubernetes-validations[0].rule: Invalid value: "self == oldSelf": oldSelf cannot '
      f"be used on the uncorrelatable portion of the schema within {S}.properties[l]"]),
    ("oldSelf in list-type map items", spec(l={"type": "array", "x-kubernetes-list-type": "map",
                                               "x-kubernetes-list-map-keys": ["k"], "items": {
                                                   "type": "object", "required": ["k"], "properties": {
                                                       "k": {"type": "string"}},
                                                   "x-kubernetes-validations": [{"rule": "self.k == oldSelf.k"}]}}),
     []),
    ("optionalOldSelf without oldSelf", spec(n={"type": "integer", "x-kubernetes-validations": [
        {"rule": "self > 0", "optionalOldSelf": True}]}),
     [f"{S}.properties[n].x-kubernetes-validations[0].optionalOldSelf: Invalid value: true: may not be set if "
      "oldSelf is not used in rule"]),
    ("rule fields", spec(n={"type": "integer", "x-kubernetes-validations": [
        {"rule": " "}, {"rule": "self > 0", "message": " "}, {"rule": "self > 0", "reason": "Bad"},
        {"rule": "self > 0", "fieldPath": ".nope"}, {"rule": "self > 0\n&& self < 9"}]}),
     [f"{S}.properties[n].x-kubernetes-validations[0].rule: Required value: rule is not specified",
      f'{S}.properties[n].x-kubernetes-validations[1].message: Invalid value: " ": message must be non-empty if '
      "specified",
      f'{S}.properties[n].x-kubernetes-validations[2].reason: Unsupported value: "Bad": supported values: '
      '"FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"',
      f'{S}.properties[n].x-kubernetes-validations[3].fieldPath: Invalid value: ".nope": fieldPath must be a valid '
      "path",
      f"{S}.properties[n].x-kubernetes-validations[4].message: Required value: message must be specified if rule "
      "contains line breaks"]),
    ("rules on the root see metadata.name only", {"type": "object", "x-kubernetes-validations": [
        {"rule": "self.metadata.name.size() < 10 && self.kind == 'Widget'"},
        {"rule": "has(self.metadata.labels)"}]},
     [f"{P}.x-kubernetes-validations[1].rule: Invalid value: {RULE.format('has(self.metadata.labels)')}: "
      "compilation failed: ERROR: <input>:1:4: undefined field 'labels'\n | has(self.metadata.labels)\n | ...^"]),
    ("macros, maps and escaped names compile", spec(
        items={"type": "array", "items": {"type": "object", "properties": {"x-y": {"type": "string"}}}},
        labels={"type": "object", "additionalProperties": {"type": "string"}},
        namespace={"type": "string"}, **{"x-kubernetes-validations": {"type": "string"}}) | {
        "x-kubernetes-validations": [{"rule": "self.spec.items.all(i, i.x__dash__y != '') && self.spec.labels.any == "
                                              "'a' && self.spec.__namespace__ != '' && cel.bind(n, 1, n == 1)"}]},
     []),
]


@pytest.mark.parametrize(("name", "schema", "expected"), ROWS, ids=[r[0] for r in ROWS])
def test_schema_rule(name: str, schema: dict[str, Any], expected: list[str]) -> None:
    subresources = {"status": {}} if name.startswith("status subresource") else {}
    assert errors(definition(schema, subresources=subresources)) == expected


def test_per_version_schema_paths() -> None:
    d = definition(spec(a={"type": "float"}))
    d["spec"]["versions"].append({"name": "v2", "served": True, "storage": False,
                                  "schema": {"openAPIV3Schema": spec(b={"type": "string"})}})
    assert errors(d) == ['spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[a].type: Unsupported '
                         'value: "float": supported values: "array", "boolean", "integer", "number", "object", '
                         '"string"']


def test_structural_errors_hide_cel_and_defaults() -> None:
    schema = spec(n={"type": "integer", "default": "x", "x-kubernetes-validations": [{"rule": "self >"}]},
                  bad={"properties": {}})
    assert errors(definition(schema)) == [
        f"{S}.properties[bad].type: Required value: must not be empty for specified object fields"]


def test_update_ratchets_unchanged_and_preexisting() -> None:
    bad = definition(spec(a={"properties": {}}, n={"type": "integer", "x-kubernetes-validations": [
        {"rule": "self.nope == 1"}]}))
    assert errors(bad)  # refused on create
    stored = copy.deepcopy(bad)
    labelled = copy.deepcopy(bad)
    labelled["metadata"]["labels"] = {"a": "b"}
    assert errors(labelled, stored) == []  # an update that leaves the schema alone
    changed = copy.deepcopy(bad)
    changed["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["c"] = {
        "type": "float"}
    # the old CRD was not structural: structural rules stay off; the old rule is only syntax-checked
    assert errors(changed, stored) == [f'{S}.properties[c].type: Unsupported value: "float": supported values: '
                                       '"array", "boolean", "integer", "number", "object", "string"']
    good = definition(spec(a={"type": "string"}))
    worse = definition(spec(a={"properties": {}}))
    assert errors(worse, good) == [f"{S}.properties[a].type: Required value: must not be empty for specified "
                                   "object fields"]


@pytest.mark.parametrize(("source", "ok"), [
    ("self.a.b == 'x' || has(self.m.key)", True),
    ("self.l.exists(x, x.c > 1) && self.l.all(k, v, true)", True),
    ("self.a.c == 'x'", False),
    ("'k' in self.m && !('b' in self.a) && self.l.exists_one(e, e.c in [1, 2])", True),
    ("a.b == 1", False),
    ("self.?a.orValue({}) == {} && self.l[?0].hasValue()", True),  # optional syntax, as kube's cel-go env
    ("'self.zzz' == self.a.b && r\"x.y\" != \"\"\"self.q\"\"\"", True),
    ("optional.of(1).hasValue() && math.greatest(1, 2) == 2 && type(self) == map", True),
])
def test_cel_type_check(source: str, ok: bool) -> None:
    schema = obj(a=obj(b={"type": "string"}), m={"type": "object", "additionalProperties": {"type": "integer"}},
                 l={"type": "array", "items": obj(c={"type": "integer"})})
    assert (rules.compile_errors(source, schema, resource_root=False) is None) is ok
