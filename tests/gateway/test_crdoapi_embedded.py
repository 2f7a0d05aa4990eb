"""services.gateway.openapi.with_embedded_meta: apiextensions' addEmbeddedProperties on a CRD schema."""

from __future__ import annotations

from services.gateway import openapi

CONVENTIONS = "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md"
API_VERSION = {"type": "string", "description": "apiVersion defines the versioned schema of this representation of "
               f"an object. More info: {CONVENTIONS}#resources"}
KIND = {"type": "string", "description": "kind is a string value representing the type of this object. In "
        f"CamelCase. More info: {CONVENTIONS}#types-kinds"}
METADATA = {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
            "description": f"Standard object's metadata. More info: {CONVENTIONS}#metadata"}


def _embedded(**extra: object) -> dict[str, object]:
    return {"type": "object", "x-kubernetes-embedded-resource": True, **extra}


def test_embedded_objects_get_meta_fields_at_any_depth() -> None:
    schema = {"type": "object", "properties": {
        "one": _embedded(properties={"spec": {"type": "object"}}, required=["spec", "kind"]),
        "many": {"type": "array", "items": _embedded()},
        "byName": {"type": "object", "additionalProperties": _embedded(properties={"inner": _embedded()})},
        "plain": {"type": "object", "properties": {"a": {"type": "string"}}}}}
    out = openapi.with_embedded_meta(schema, v2=False)
    one = out["properties"]["one"]
    assert one["properties"] == {"spec": {"type": "object"}, "apiVersion": API_VERSION, "kind": KIND,
                                 "metadata": METADATA}
    assert one["required"] == ["spec", "kind", "apiVersion"]
    assert out["properties"]["many"]["items"]["required"] == ["kind", "apiVersion"]
    by_name = out["properties"]["byName"]["additionalProperties"]
    assert set(by_name["properties"]) == {"inner", "apiVersion", "kind", "metadata"}
    assert set(by_name["properties"]["inner"]["properties"]) == {"apiVersion", "kind", "metadata"}
    assert out["properties"]["plain"] == schema["properties"]["plain"]
    assert "apiVersion" not in schema["properties"]["one"]["properties"]  # a new value


def test_v2_skips_embedded_objects_that_preserve_unknown_fields() -> None:
    loose = _embedded(**{"x-kubernetes-preserve-unknown-fields": True})
    assert openapi.with_embedded_meta(loose, v2=True) == loose
    assert set(openapi.with_embedded_meta(loose, v2=False)["properties"]) == {"apiVersion", "kind", "metadata"}
    assert openapi.with_embedded_meta(_embedded(), v2=True)["required"] == ["kind", "apiVersion"]
