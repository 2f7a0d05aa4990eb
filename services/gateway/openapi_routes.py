"""The operations the OpenAPI documents list for one served resource, by kube-apiserver's rules.

kube-apiserver does not write its paths by hand: the API installer
(``apiserver/pkg/endpoints/installer.go`` registerResourceHandlers) turns
each storage's verbs into routes — LIST, POST, DELETECOLLECTION and the
deprecated WATCHLIST on the collection, GET, PUT, PATCH, DELETE and the
deprecated WATCH on the object, the same at ``/{name}/<subresource>``,
LIST and WATCHLIST ``ForAllNamespaces`` for namespaced resources, CONNECT
for exec/attach/portforward/proxy — and kube-openapi names each one with
``GetOperationIDAndTags`` (``endpoints/openapi/openapi.go``): the verb, the
group (``.k8s.io`` trimmed, camel-cased) and version, then the rest, so
``listNamespacedPod`` on ``/api/v1`` becomes ``listCoreV1NamespacedPod``
with tag ``core_v1``. Custom resources are named the same way but built
by apiextensions' own builder (``controller/openapi/builder/builder.go``):
no watch routes, JSON and YAML only, a GetOptions ``resourceVersion`` on
reads. :func:`routes` gives those routes as data; services/gateway/openapi.py
renders them as OpenAPI v2 and v3. The client generators (the official
Python client's API classes and method names) come from exactly these.
"""

from __future__ import annotations

from dataclasses import dataclass

from kapi.resources import Resource

# metav1.ListOptions' query parameters (name, JSON type), as AddObjectParams lists them.
LIST_OPTIONS = (
    ("allowWatchBookmarks", "boolean"), ("continue", "string"), ("fieldSelector", "string"),
    ("labelSelector", "string"), ("limit", "integer"), ("resourceVersion", "string"),
    ("resourceVersionMatch", "string"), ("sendInitialEvents", "boolean"), ("timeoutSeconds", "integer"),
    ("watch", "boolean"),
)
# metav1.DeleteOptions' query parameters.
DELETE_OPTIONS = (
    ("dryRun", "string"), ("gracePeriodSeconds", "integer"),
    ("ignoreStoreReadErrorWithClusterBreakingPotential", "boolean"), ("orphanDependents", "boolean"),
    ("propagationPolicy", "string"),
)
# metav1.CreateOptions / UpdateOptions, and PatchOptions (which adds force).
WRITE_OPTIONS = (("dryRun", "string"), ("fieldManager", "string"), ("fieldValidation", "string"))
PATCH_OPTIONS = (*WRITE_OPTIONS, ("force", "boolean"))
PRETTY = (("pretty", "string"),)
# The options of connect and log subresources (core/v1 PodExecOptions, PodAttachOptions, ...).
_SUBRESOURCE_OPTIONS: dict[str, tuple[tuple[str, str], ...]] = {
    "exec": (("command", "string"), ("container", "string"), ("stderr", "boolean"), ("stdin", "boolean"),
             ("stdout", "boolean"), ("tty", "boolean")),
    "attach": (("container", "string"), ("stderr", "boolean"), ("stdin", "boolean"), ("stdout", "boolean"),
               ("tty", "boolean")),
    "portforward": (("ports", "integer"),),
    "proxy": (("path", "string"),),
    "log": (("container", "string"), ("follow", "boolean"), ("insecureSkipTLSVerifyBackend", "boolean"),
            ("limitBytes", "integer"), ("previous", "boolean"), ("sinceSeconds", "integer"), ("stream", "string"),
            ("tailLines", "integer"), ("timestamps", "boolean")),
}
# The HTTP methods a connecter accepts (ConnectMethods of the pods' exec, attach, portforward and proxy REST).
_CONNECT_METHODS = {"exec": ("GET", "POST"), "attach": ("GET", "POST"), "portforward": ("GET", "POST"),
                    "proxy": ("GET", "PUT", "POST", "PATCH", "DELETE", "HEAD", "OPTIONS")}

MEDIA = ("application/json", "application/yaml", "application/vnd.kubernetes.protobuf")
STREAM_MEDIA = ("application/json;stream=watch", "application/vnd.kubernetes.protobuf;stream=watch")
CUSTOM_MEDIA = ("application/json", "application/yaml")
STATUS = "io.k8s.apimachinery.pkg.apis.meta.v1.Status"
WATCH_EVENT = "io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent"
DELETE_BODY = "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions"
PATCH_BODY = "io.k8s.apimachinery.pkg.apis.meta.v1.Patch"


@dataclass(frozen=True)
class Route:
    """One operation of the OpenAPI documents.

    ``body`` and ``response`` name what is read and answered: ``"object"``
    (the route's kind: the resource's, or the subresource's such as Scale),
    ``"list"`` (the ``<Kind>List``), ``"status"``, ``"watch"`` (WatchEvent),
    ``"delete"`` (DeleteOptions), ``"patch"`` (metav1.Patch), ``"deleted"``
    (a DELETE's answer: the object or a Status), ``"string"``, or None.
    ``codes`` are the success codes; every operation also answers 401.
    """

    method: str  # HTTP method, upper case
    path: str  # /api/v1/namespaces/{namespace}/pods/{name}/status
    operation: str  # kube's route name before GetOperationIDAndTags: readNamespacedPodStatus
    action: str  # x-kubernetes-action: get, list, post, put, patch, delete, deletecollection, watch, watchlist,
    #              connect
    doc: str
    gvk: tuple[str, str, str]
    path_params: tuple[str, ...]  # namespace, name, path, in the path's order
    query: tuple[tuple[str, str], ...]  # (name, JSON type)
    body: str | None
    response: str
    codes: tuple[str, ...]
    produces: tuple[str, ...]
    consumes: tuple[str, ...]


def friendly(segment: str, capitalize: bool) -> str:
    """kube-openapi's ToValidOperationID: drop punctuation, capitalising the letter after it (and the first)."""
    out = []
    upper = capitalize
    for i, ch in enumerate(segment):
        if ch.isalpha() or ch == "_" or (i and ch.isdigit()):
            out.append(ch.upper() if upper else ch)
            upper = False
        else:
            upper = True
    return "".join(out)


# kube-openapi's verb trie; GetPrefix answers the shortest verb that starts the name, so
# ``deletecollectionNamespacedPod`` is ``delete`` + ``CoreV1`` + ``CollectionNamespacedPod``.
_VERB_PREFIXES = ("get", "log", "read", "list", "patch", "proxy", "watch", "create", "delete", "connect", "replace",
                  "deletecollection")


def operation_id_and_tag(route: Route) -> tuple[str, str]:
    """(operationId, tag) of a route, as kube-openapi's GetOperationIDAndTags derives them from its path.

    ``readNamespacedPod`` on ``/api/v1/...`` -> (``readCoreV1NamespacedPod``, ``core_v1``),
    ``deletecollectionNamespacedPod`` -> ``deleteCoreV1CollectionNamespacedPod``; the group is
    trimmed of ``.k8s.io``: ``rbac.authorization.k8s.io/v1`` -> ``RbacAuthorizationV1``, ``rbacAuthorization_v1``.
    """
    verb = min((p for p in _VERB_PREFIXES if route.operation.startswith(p)), key=len)
    rest = route.operation[len(verb):]
    parts = route.path.strip("/").split("/")
    if parts[0] == "api":
        parts = ["apis", "core", *parts[1:]]
    group = parts[1].removesuffix(".k8s.io")
    return (verb + friendly(group, True) + friendly(parts[2], True) + friendly(rest, True),
            friendly(group, False) + "_" + friendly(parts[2], False))


def _article(noun: str) -> str:
    """The installer's GetArticleForNoun with padding: none for plurals (``Endpoints``), else " a " / " an "."""
    if noun[-2:] != "ss" and noun[-1:] == "s":
        return " "
    return " an " if noun[0].lower() in "aeiou" else " a "


def routes(r: Resource, subresources: dict[str, tuple[tuple[str, str, str], tuple[str, ...]]],
           builtin: bool) -> list[Route]:
    """The operations of resource ``r`` in kube's order (see the module docstring).

    ``subresources`` maps each of ``r.subresources`` to ((group, version, kind) it answers, verbs), as
    discovery lists them; ``builtin`` picks the installer's rules over the custom-resource builder's.
    """
    return _builtin_routes(r, subresources) if builtin else _custom_routes(r)


def _root(r: Resource) -> str:
    return f"/apis/{r.group}/{r.version}" if r.group else f"/api/{r.version}"


def _builtin_routes(r: Resource, subresources: dict[str, tuple[tuple[str, str, str], tuple[str, ...]]]
                    ) -> list[Route]:
    root = _root(r)
    scope = "Namespaced" if r.namespaced else ""
    ns = ("namespace",) if r.namespaced else ()
    collection = f"namespaces/{{namespace}}/{r.resource}" if r.namespaced else r.resource
    gvk = (r.group, r.version, r.kind)
    kind = r.kind
    verbs = set(r.verbs)
    out: list[Route] = []

    def add(method: str, path: str, operation: str, action: str, doc: str, params: tuple[str, ...],
            query: tuple[tuple[str, str], ...], body: str | None, response: str, codes: tuple[str, ...],
            produces: tuple[str, ...] = MEDIA, consumes: tuple[str, ...] = ("*/*",),
            route_gvk: tuple[str, str, str] = gvk) -> None:
        pretty = () if action == "connect" else PRETTY  # connect routes take only their options
        out.append(Route(method, f"{root}/{path}", operation, action, doc, route_gvk, params,
                         tuple(sorted((*pretty, *query))), body, response, codes, produces, consumes))

    watch_list = "watch" in verbs and "list" in verbs
    if "list" in verbs:
        add("GET", collection, f"list{scope}{kind}", "list",
            f"list or watch objects of kind {kind}" if "watch" in verbs else f"list objects of kind {kind}",
            ns, LIST_OPTIONS, None, "list", ("200",), MEDIA + STREAM_MEDIA)
    if "create" in verbs:
        add("POST", collection, f"create{scope}{kind}", "post", f"create{_article(kind)}{kind}", ns,
            WRITE_OPTIONS, "object", "object", ("200", "201", "202"))
    if "deletecollection" in verbs:
        query = tuple(sorted({*DELETE_OPTIONS, *(o for o in LIST_OPTIONS
                                                 if o[0] not in ("watch", "allowWatchBookmarks"))}))
        add("DELETE", collection, f"deletecollection{scope}{kind}", "deletecollection",
            f"delete collection of {kind}", ns, query, "delete", "status", ("200",))
    if watch_list:
        add("GET", f"watch/{collection}", f"watch{scope}{kind}List", "watchlist",
            f"watch individual changes to a list of {kind}. deprecated: use the 'watch' parameter with a list "
            "operation instead.", ns, LIST_OPTIONS, None, "watch", ("200",), MEDIA + STREAM_MEDIA)
    item = f"{collection}/{{name}}"
    named = (*ns, "name")
    if "get" in verbs:
        add("GET", item, f"read{scope}{kind}", "get", f"read the specified {kind}", named, (), None, "object",
            ("200",))
    if "update" in verbs:
        add("PUT", item, f"replace{scope}{kind}", "put", f"replace the specified {kind}", named, WRITE_OPTIONS,
            "object", "object", ("200", "201"))
    if "patch" in verbs:
        add("PATCH", item, f"patch{scope}{kind}", "patch", f"partially update the specified {kind}", named,
            PATCH_OPTIONS, "patch", "object", ("200", "201"), consumes=PATCH_TYPES)
    if "delete" in verbs:
        add("DELETE", item, f"delete{scope}{kind}", "delete", f"delete{_article(kind)}{kind}", named,
            DELETE_OPTIONS, "delete", "deleted", ("200", "202"))
    if "watch" in verbs:
        add("GET", f"watch/{item}", f"watch{scope}{kind}", "watch",
            f"watch changes to an object of kind {kind}. deprecated: use the 'watch' parameter with a list "
            "operation instead, filtered to a single item with the 'fieldSelector' parameter.", named,
            LIST_OPTIONS, None, "watch", ("200",), MEDIA + STREAM_MEDIA)
    for sub in r.subresources:
        sub_gvk, sub_verbs = subresources[sub]
        path = f"{item}/{sub}"
        title = sub[:1].upper() + sub[1:]
        if sub in _CONNECT_METHODS:
            for method in _CONNECT_METHODS[sub]:
                m = method[:1] + method[1:].lower()
                paths = [(path, named, "")] + ([(f"{path}/{{path}}", (*named, "path"), "WithPath")]
                                               if sub == "proxy" else [])
                for p, params, suffix in paths:
                    add(method, p, f"connect{m}{scope}{kind}{title}{suffix}", "connect",
                        f"connect {method} requests to {sub} of {kind}", params, _SUBRESOURCE_OPTIONS[sub], None,
                        "string", ("200",), ("*/*",), route_gvk=sub_gvk)
            continue
        if sub == "log":
            add("GET", path, f"read{scope}{kind}Log", "get", f"read log of the specified {kind}", named,
                _SUBRESOURCE_OPTIONS["log"], None, "string", ("200",), ("text/plain", *MEDIA), route_gvk=sub_gvk)
            continue
        if "get" in sub_verbs:
            add("GET", path, f"read{scope}{kind}{title}", "get", f"read {sub} of the specified {kind}", named, (),
                None, "object", ("200",), route_gvk=sub_gvk)
        if "create" in sub_verbs:
            add("POST", path, f"create{scope}{kind}{title}", "post", f"create {sub} of{_article(kind)}{kind}",
                named, WRITE_OPTIONS, "object", "object", ("200", "201", "202"), route_gvk=sub_gvk)
        if "update" in sub_verbs:
            add("PUT", path, f"replace{scope}{kind}{title}", "put", f"replace {sub} of the specified {kind}",
                named, WRITE_OPTIONS, "object", "object", ("200", "201"), route_gvk=sub_gvk)
        if "patch" in sub_verbs:
            add("PATCH", path, f"patch{scope}{kind}{title}", "patch",
                f"partially update {sub} of the specified {kind}", named, PATCH_OPTIONS, "patch", "object",
                ("200", "201"), consumes=PATCH_TYPES, route_gvk=sub_gvk)
    if r.namespaced:
        if "list" in verbs:
            add("GET", r.resource, f"list{kind}ForAllNamespaces", "list",
                f"list or watch objects of kind {kind}" if "watch" in verbs else f"list objects of kind {kind}",
                (), LIST_OPTIONS, None, "list", ("200",), MEDIA + STREAM_MEDIA)
        if watch_list:
            add("GET", f"watch/{r.resource}", f"watch{kind}ListForAllNamespaces", "watchlist",
                f"watch individual changes to a list of {kind}. deprecated: use the 'watch' parameter with a list "
                "operation instead.", (), LIST_OPTIONS, None, "watch", ("200",), MEDIA + STREAM_MEDIA)
    return out


PATCH_TYPES = ("application/json-patch+json", "application/merge-patch+json",
               "application/strategic-merge-patch+json", "application/apply-patch+yaml")
CUSTOM_PATCH_TYPES = ("application/json-patch+json", "application/merge-patch+json", "application/apply-patch+yaml")


def _custom_routes(r: Resource) -> list[Route]:
    """apiextensions' builder: the same names, no watch routes, JSON/YAML, GetOptions on reads."""
    root = _root(r)
    scope = "Namespaced" if r.namespaced else ""
    ns = ("namespace",) if r.namespaced else ()
    collection = f"namespaces/{{namespace}}/{r.resource}" if r.namespaced else r.resource
    gvk = (r.group, r.version, r.kind)
    kind = r.kind
    get_options = (("resourceVersion", "string"),)
    list_options = LIST_OPTIONS
    out: list[Route] = []

    def add(method: str, path: str, operation: str, action: str, doc: str, params: tuple[str, ...],
            query: tuple[tuple[str, str], ...], body: str | None, response: str, codes: tuple[str, ...]) -> None:
        consumes = CUSTOM_PATCH_TYPES if method == "PATCH" else CUSTOM_MEDIA
        out.append(Route(method, f"{root}/{path}", operation, action, doc, gvk, params,
                         tuple(sorted((*PRETTY, *query))), body, response, codes, CUSTOM_MEDIA, consumes))

    if r.namespaced:
        add("GET", r.resource, f"list{kind}ForAllNamespaces", "list", f"list objects of kind {kind}", (),
            list_options, None, "list", ("200",))
    add("GET", collection, f"list{scope}{kind}", "list", f"list objects of kind {kind}", ns, list_options, None,
        "list", ("200",))
    add("POST", collection, f"create{scope}{kind}", "post", f"create{_article(kind)}{kind}", ns, WRITE_OPTIONS,
        "object", "object", ("200", "201", "202"))
    add("DELETE", collection, f"deletecollection{scope}{kind}", "deletecollection", f"delete collection of {kind}",
        ns, list_options, None, "status", ("200",))
    item = f"{collection}/{{name}}"
    named = (*ns, "name")
    add("GET", item, f"read{scope}{kind}", "get", f"read the specified {kind}", named, get_options, None, "object",
        ("200",))
    add("PUT", item, f"replace{scope}{kind}", "put", f"replace the specified {kind}", named, WRITE_OPTIONS,
        "object", "object", ("200", "201"))
    add("DELETE", item, f"delete{scope}{kind}", "delete", f"delete{_article(kind)}{kind}", named, DELETE_OPTIONS,
        "delete", "status", ("200", "202"))
    add("PATCH", item, f"patch{scope}{kind}", "patch", f"partially update the specified {kind}", named,
        PATCH_OPTIONS, "patch", "object", ("200",))
    for sub in r.subresources:
        title = sub[:1].upper() + sub[1:]
        path = f"{item}/{sub}"
        response = "scale" if sub == "scale" else "object"
        add("GET", path, f"read{scope}{kind}{title}", "get", f"read {sub} of the specified {kind}", named,
            get_options, None, response, ("200",))
        add("PUT", path, f"replace{scope}{kind}{title}", "put", f"replace {sub} of the specified {kind}", named,
            WRITE_OPTIONS, response, response, ("200", "201"))
        add("PATCH", path, f"patch{scope}{kind}{title}", "patch", f"partially update {sub} of the specified {kind}",
            named, PATCH_OPTIONS, "patch", response, ("200",))
    return out
