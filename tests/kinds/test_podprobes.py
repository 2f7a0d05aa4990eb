"""kapi.kinds.podprobes: kube's probe and lifecycle-handler validation (pkg/apis/core/validation/validation.go)."""

from __future__ import annotations

from typing import Any

import pytest

from kapi.kinds.podprobes import (
    validate_container_probes,
    validate_lifecycle,
    validate_liveness_probe,
    validate_port_num_or_name,
    validate_probe,
    validate_readiness_probe,
    validate_startup_probe,
)

P = "spec.containers[0]"
LP = f"{P}.livenessProbe"
DEFAULTS = {"timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3}
RANGE = "Invalid value: {}: must be between 1 and 65535, inclusive"
HEADER = ("a valid HTTP header must consist of alphanumeric characters or '-' (e.g. 'X-Header-Name', "
          "regex used for validation is '[-A-Za-z0-9]+')")


def _probe(**extra: Any) -> dict[str, Any]:
    return {**DEFAULTS, **extra}


def _pairs(causes: list[Any]) -> list[tuple[str, str]]:
    return [(c.field, c.message) for c in causes]


def _http(**extra: Any) -> dict[str, Any]:
    return {"path": "/", "port": 8080, "scheme": "HTTP", **extra}


# ----------------------------------------------------------------- happy paths

def test_valid_container_has_no_causes() -> None:
    container = {
        "name": "c", "image": "x",
        "livenessProbe": _probe(httpGet=_http(httpHeaders=[{"name": "X-Custom", "value": "v"}])),
        "readinessProbe": _probe(tcpSocket={"port": "http"}),
        "startupProbe": _probe(grpc={"port": 9090, "service": "svc"}, terminationGracePeriodSeconds=5),
        "lifecycle": {"postStart": {"exec": {"command": ["true"]}}, "preStop": {"sleep": {"seconds": 0}}},
    }
    assert validate_container_probes(container, P, grace_period=30) == []


def test_no_probes_no_causes() -> None:
    assert validate_container_probes({"name": "c"}, P) == []
    assert validate_container_probes({"name": "c", "lifecycle": {}}, P) == []
    assert validate_container_probes({"livenessProbe": None, "lifecycle": None}, P, init=True) == []


def test_wrong_types_do_not_crash() -> None:
    container = {"livenessProbe": "x", "readinessProbe": [], "lifecycle": 3}
    assert validate_container_probes(container, P) == []
    assert validate_container_probes("nope", P) == []
    # a handler of the wrong type counts as set but is not validated inside
    assert _pairs(validate_probe(_probe(exec="x"), LP)) == []
    probe = _probe(httpGet={"path": 3, "port": 1.5, "scheme": 7, "httpHeaders": ["x", {"name": 4}]},
                   initialDelaySeconds="5", terminationGracePeriodSeconds="1")
    assert _pairs(validate_probe(probe, LP)) == []
    assert _pairs(validate_lifecycle({"preStop": {"sleep": {"seconds": "9"}}}, f"{P}.lifecycle", 1)) == []


# ----------------------------------------------------------------- validateHandler

def test_probe_without_handler_is_required() -> None:
    assert _pairs(validate_liveness_probe(_probe(), LP)) == [(LP, "Required value: must specify a handler type")]


def test_more_than_one_handler_forbidden_after_the_first() -> None:
    probe = _probe(exec={}, httpGet=_http(port=0), tcpSocket={"port": 80}, grpc={"port": 1})
    assert _pairs(validate_probe(probe, LP)) == [
        (f"{LP}.exec.command", "Required value"),
        (f"{LP}.httpGet", "Forbidden: may not specify more than 1 handler type"),
        (f"{LP}.tcpSocket", "Forbidden: may not specify more than 1 handler type"),
        (f"{LP}.grpc", "Forbidden: may not specify more than 1 handler type"),
    ]


def test_probe_ignores_sleep_and_lifecycle_ignores_grpc() -> None:
    # v1 ProbeHandler has no sleep and LifecycleHandler no grpc: such keys never reach validation
    assert _pairs(validate_probe(_probe(sleep={"seconds": 1}), LP)) == [
        (LP, "Required value: must specify a handler type")]
    path = f"{P}.lifecycle"
    assert _pairs(validate_lifecycle({"preStop": {"grpc": {"port": 1}}}, path)) == [
        (f"{path}.preStop", "Required value: must specify a handler type")]


# ----------------------------------------------------------------- actions

@pytest.mark.parametrize("command", [None, []])
def test_exec_command_required(command: Any) -> None:
    probe = _probe(exec={} if command is None else {"command": command})
    assert _pairs(validate_probe(probe, LP)) == [(f"{LP}.exec.command", "Required value")]


def test_http_get_checks_in_order() -> None:
    action = {"path": "", "port": 0, "scheme": "FTP", "httpHeaders": [{"name": "bad name"}, {"name": "Ok-1"},
                                                                      {"name": ""}]}
    hp = f"{LP}.httpGet"
    assert _pairs(validate_probe(_probe(httpGet=action), LP)) == [
        (f"{hp}.path", "Required value"),
        (f"{hp}.port", RANGE.format(0)),
        (f"{hp}.scheme", 'Unsupported value: "FTP": supported values: "HTTP", "HTTPS"'),
        (f"{hp}.httpHeaders", f'Invalid value: "bad name": {HEADER}'),
        (f"{hp}.httpHeaders", f'Invalid value: "": {HEADER}'),
    ]


def test_http_get_absent_fields_are_go_zero_values() -> None:
    hp = f"{LP}.httpGet"
    assert _pairs(validate_probe(_probe(httpGet={}), LP)) == [
        (f"{hp}.path", "Required value"),
        (f"{hp}.port", RANGE.format(0)),
        (f"{hp}.scheme", 'Unsupported value: "": supported values: "HTTP", "HTTPS"'),
    ]


def test_https_scheme_accepted() -> None:
    assert validate_probe(_probe(httpGet=_http(scheme="HTTPS")), LP) == []


@pytest.mark.parametrize(("port", "messages"), [
    (1, []),
    (65535, []),
    (65536, [RANGE.format(65536)]),
    (-1, [RANGE.format(-1)]),
    (None, [RANGE.format(0)]),
    ("http", []),
    ("80", ['Invalid value: "80": must contain at least one letter (a-z)']),
    ("Http", ['Invalid value: "Http": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)']),
    ("a--b", ['Invalid value: "a--b": must not contain consecutive hyphens']),
    ("-ab", ['Invalid value: "-ab": must not begin or end with a hyphen']),
    ("abcdefghijklmnop", ['Invalid value: "abcdefghijklmnop": must be no more than 15 characters']),
    ("", ['Invalid value: "": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)',
          'Invalid value: "": must contain at least one letter (a-z)']),
    (True, []),
])
def test_port_num_or_name(port: Any, messages: list[str]) -> None:
    assert [c.message for c in validate_port_num_or_name(port, "x.port")] == messages


def test_tcp_socket_port() -> None:
    assert _pairs(validate_probe(_probe(tcpSocket={"port": 70000}), LP)) == [
        (f"{LP}.tcpSocket.port", RANGE.format(70000))]
    assert _pairs(validate_probe(_probe(tcpSocket={"port": "no_underscore"}), LP)) == [
        (f"{LP}.tcpSocket.port",
         'Invalid value: "no_underscore": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)')]


def test_grpc_port() -> None:
    assert _pairs(validate_probe(_probe(grpc={}), LP)) == [(f"{LP}.grpc.port", RANGE.format(0))]
    assert _pairs(validate_probe(_probe(grpc={"port": 65536}), LP)) == [(f"{LP}.grpc.port", RANGE.format(65536))]
    assert validate_probe(_probe(grpc={"port": "name"}), LP) == []  # an int32 field: a string is the schema's


# ----------------------------------------------------------------- probe numbers

def test_negative_probe_fields() -> None:
    probe = _probe(exec={"command": ["x"]}, initialDelaySeconds=-1, timeoutSeconds=-2, periodSeconds=-3,
                   successThreshold=-4, failureThreshold=-5)
    assert _pairs(validate_readiness_probe(probe, LP)) == [
        (f"{LP}.initialDelaySeconds", "Invalid value: -1: must be greater than or equal to 0"),
        (f"{LP}.timeoutSeconds", "Invalid value: -2: must be greater than or equal to 0"),
        (f"{LP}.periodSeconds", "Invalid value: -3: must be greater than or equal to 0"),
        (f"{LP}.successThreshold", "Invalid value: -4: must be greater than or equal to 0"),
        (f"{LP}.failureThreshold", "Invalid value: -5: must be greater than or equal to 0"),
    ]


@pytest.mark.parametrize(("grace", "expected"), [
    (1, []),
    (0, [(f"{LP}.terminationGracePeriodSeconds", "Invalid value: 0: must be greater than 0")]),
    (-3, [(f"{LP}.terminationGracePeriodSeconds", "Invalid value: -3: must be greater than 0")]),
    (None, []),
])
def test_probe_termination_grace_period(grace: Any, expected: list[tuple[str, str]]) -> None:
    assert _pairs(validate_liveness_probe(_probe(exec={"command": ["x"]}, terminationGracePeriodSeconds=grace),
                                          LP)) == expected


def test_handler_causes_come_before_number_causes() -> None:
    probe = _probe(initialDelaySeconds=-1)
    assert _pairs(validate_probe(probe, LP)) == [
        (LP, "Required value: must specify a handler type"),
        (f"{LP}.initialDelaySeconds", "Invalid value: -1: must be greater than or equal to 0"),
    ]


# ----------------------------------------------------------------- liveness / readiness / startup specifics

@pytest.mark.parametrize("validate", [validate_liveness_probe, validate_startup_probe])
def test_success_threshold_must_be_one(validate: Any) -> None:
    assert _pairs(validate(_probe(exec={"command": ["x"]}, successThreshold=2), LP)) == [
        (f"{LP}.successThreshold", "Invalid value: 2: must be 1")]
    # absent is Go's 0: not 1
    probe = {"exec": {"command": ["x"]}}
    assert _pairs(validate(probe, LP)) == [(f"{LP}.successThreshold", "Invalid value: 0: must be 1")]
    # after the probe's own causes
    assert _pairs(validate(_probe(exec={"command": ["x"]}, successThreshold=-1), LP)) == [
        (f"{LP}.successThreshold", "Invalid value: -1: must be greater than or equal to 0"),
        (f"{LP}.successThreshold", "Invalid value: -1: must be 1"),
    ]


def test_readiness_allows_any_success_threshold() -> None:
    assert validate_readiness_probe(_probe(exec={"command": ["x"]}, successThreshold=3), LP) == []


def test_readiness_termination_grace_period_not_allowed() -> None:
    assert _pairs(validate_readiness_probe(_probe(exec={"command": ["x"]}, terminationGracePeriodSeconds=5),
                                           LP)) == [
        (f"{LP}.terminationGracePeriodSeconds", "Invalid value: 5: must not be set for readinessProbes")]
    assert _pairs(validate_readiness_probe(_probe(exec={"command": ["x"]}, terminationGracePeriodSeconds=0),
                                           LP)) == [
        (f"{LP}.terminationGracePeriodSeconds", "Invalid value: 0: must be greater than 0"),
        (f"{LP}.terminationGracePeriodSeconds", "Invalid value: 0: must not be set for readinessProbes"),
    ]


# ----------------------------------------------------------------- lifecycle

def test_lifecycle_hooks_in_order() -> None:
    path = f"{P}.lifecycle"
    lifecycle = {"preStop": {}, "postStart": {"httpGet": _http(port="Bad"), "exec": {"command": []}}}
    assert _pairs(validate_lifecycle(lifecycle, path, 30)) == [
        (f"{path}.postStart.exec.command", "Required value"),
        (f"{path}.postStart.httpGet", "Forbidden: may not specify more than 1 handler type"),
        (f"{path}.preStop", "Required value: must specify a handler type"),
    ]


@pytest.mark.parametrize(("seconds", "grace", "ok"), [
    (0, 30, True),
    (30, 30, True),
    (31, 30, False),
    (-1, 30, False),
    (None, 30, True),  # absent: 0
    (100, None, True),  # no grace period: not checked
])
def test_sleep_action(seconds: Any, grace: Any, ok: bool) -> None:
    path = f"{P}.lifecycle"
    sleep = {} if seconds is None else {"seconds": seconds}
    causes = _pairs(validate_lifecycle({"preStop": {"sleep": sleep}}, path, grace))
    expected = [] if ok else [(f"{path}.preStop.sleep", f"Invalid value: {seconds}: must be non-negative and less "
                                                        f"than terminationGracePeriodSeconds ({grace})")]
    assert causes == expected


def test_lifecycle_tcp_socket_and_sleep_conflict() -> None:
    path = f"{P}.lifecycle"
    assert _pairs(validate_lifecycle({"postStart": {"tcpSocket": {"port": 0}, "sleep": {"seconds": 99}}}, path, 1)) == [
        (f"{path}.postStart.tcpSocket.port", RANGE.format(0)),
        (f"{path}.postStart.sleep", "Forbidden: may not specify more than 1 handler type"),
    ]


# ----------------------------------------------------------------- container kinds

BAD = {
    "lifecycle": {"postStart": {}},
    "livenessProbe": _probe(),
    "readinessProbe": _probe(),
    "startupProbe": _probe(),
}


@pytest.mark.parametrize("options", [{}, {"init": True, "sidecar": True}])
def test_regular_and_sidecar_order(options: dict[str, bool]) -> None:
    assert _pairs(validate_container_probes(dict(BAD), P, **options)) == [
        (f"{P}.lifecycle.postStart", "Required value: must specify a handler type"),
        (f"{P}.livenessProbe", "Required value: must specify a handler type"),
        (f"{P}.readinessProbe", "Required value: must specify a handler type"),
        (f"{P}.startupProbe", "Required value: must specify a handler type"),
    ]


def test_init_container_without_restart_always_forbidden() -> None:
    path = "spec.initContainers[1]"
    msg = "Forbidden: may not be set for init containers without restartPolicy=Always"
    assert _pairs(validate_container_probes(dict(BAD), path, init=True)) == [
        (f"{path}.lifecycle", msg),
        (f"{path}.livenessProbe", msg),
        (f"{path}.readinessProbe", msg),
        (f"{path}.startupProbe", msg),
    ]
    # an empty object is set (a non-nil pointer)
    assert _pairs(validate_container_probes({"startupProbe": {}}, path, init=True)) == [(f"{path}.startupProbe", msg)]


def test_ephemeral_container_forbidden_in_field_order() -> None:
    path = "spec.ephemeralContainers[0]"
    msg = "Forbidden: cannot be set for an Ephemeral Container"
    assert _pairs(validate_container_probes(dict(BAD), path, ephemeral=True)) == [
        (f"{path}.livenessProbe", msg),
        (f"{path}.readinessProbe", msg),
        (f"{path}.startupProbe", msg),
        (f"{path}.lifecycle", msg),
    ]
    assert validate_container_probes({"name": "debug"}, path, ephemeral=True) == []


def test_grace_period_reaches_probes_and_hooks() -> None:
    container = {"lifecycle": {"preStop": {"sleep": {"seconds": 10}}}, "livenessProbe": _probe(exec={"command": ["x"]})}
    assert _pairs(validate_container_probes(container, P, grace_period=5)) == [
        (f"{P}.lifecycle.preStop.sleep",
         "Invalid value: 10: must be non-negative and less than terminationGracePeriodSeconds (5)")]


def test_cause_types() -> None:
    causes = validate_probe(_probe(httpGet={"port": 0, "scheme": "x"}, exec={"command": []}), LP)
    assert [c.type for c in causes] == ["FieldValueRequired", "FieldValueForbidden"]
    causes = validate_probe(_probe(httpGet=_http(port=0, scheme="x")), LP)
    assert [c.type for c in causes] == ["FieldValueInvalid", "FieldValueNotSupported"]
