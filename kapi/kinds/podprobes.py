"""Validation of a container's probes and lifecycle hooks (kube 1.37).

From ``pkg/apis/core/validation/validation.go``: ``validateLivenessProbe``,
``validateReadinessProbe``, ``validateStartupProbe``, ``validateProbe``,
``validateLifecycle``, ``validateHandler`` and the actions it dispatches to
(``validateExecAction``, ``validateHTTPGetAction``, ``validateTCPSocketAction``,
``validateGRPCAction``, ``validateSleepAction``, ``ValidatePortNumOrName``),
plus where the container lists call them: ``validateContainers`` (always),
``validateInitContainers`` (only for restartable "sidecar" init containers,
else ``Forbidden``) and ``validateEphemeralContainers`` (never: the
allow-list check forbids the four fields).

Values are the v1 JSON kapi stores, already defaulted (probe thresholds,
``httpGet`` path and scheme). An absent field reads as Go's zero value; a
field of the wrong JSON type is left to the schema layer (no cause, no crash).
PodLifecycleSleepActionAllowZero is GA, so a ``sleep`` of 0 seconds is valid.
"""

from __future__ import annotations

from typing import Any

from kapi.errors import Cause
from kapi.kinds.fields import is_valid_port_name, not_supported
from kapi.objectmeta import forbidden, invalid, required
from kapi.validation import regex_error
from kapi.values import as_int as _int

PORT_RANGE_MSG = "must be between 1 and 65535, inclusive"  # validation.IsValidPortNum / InclusiveRangeError(1, 65535)
NEGATIVE = "must be greater than or equal to 0"  # apimachinery validation.IsNegativeErrorMsg
MUST_BE_ONE = "must be 1"
PROBE_GRACE_POSITIVE = "must be greater than 0"
READINESS_GRACE = "must not be set for readinessProbes"
NO_HANDLER = "must specify a handler type"
MANY_HANDLERS = "may not specify more than 1 handler type"
INIT_FORBIDDEN = "may not be set for init containers without restartPolicy=Always"
EPHEMERAL_FORBIDDEN = "cannot be set for an Ephemeral Container"
HTTP_SCHEMES = ("HTTP", "HTTPS")  # sets.List(supportedHTTPSchemes): sorted
HTTP_HEADER_NAME_FMT = "[-A-Za-z0-9]+"
HTTP_HEADER_NAME_MSG = "a valid HTTP header must consist of alphanumeric characters or '-'"

# commonHandler's members in validateHandler's order; a ProbeHandler has no sleep, a LifecycleHandler no grpc
# (the v1 types lack those fields, so the JSON key never reaches validation).
_PROBE_HANDLERS = ("exec", "httpGet", "tcpSocket", "grpc")
_LIFECYCLE_HANDLERS = ("exec", "httpGet", "tcpSocket", "sleep")
_PROBE_NUMBERS = ("initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold", "failureThreshold")


def _number(obj: dict[str, Any], key: str) -> int | None:
    """An integer field as Go holds it: absent or null is 0; another JSON type is None (the schema's to report)."""
    value = obj.get(key)
    return 0 if value is None else _int(value)


def _str_or_none(obj: dict[str, Any], key: str) -> str | None:
    """A string field: absent or null is ``""``; another JSON type is None (the schema's to report)."""
    value = obj.get(key)
    if value is None:
        return ""
    return value if isinstance(value, str) else None


def _is_http_header_name(name: str) -> list[str]:
    """validation.IsHTTPHeaderName: ``[-A-Za-z0-9]+``."""
    if all(ch == "-" or (ch.isascii() and ch.isalnum()) for ch in name) and name:
        return []
    return [regex_error(HTTP_HEADER_NAME_MSG, HTTP_HEADER_NAME_FMT, "X-Header-Name")]


def validate_port_num_or_name(port: Any, path: str) -> list[Cause]:
    """ValidatePortNumOrName: an IntOrString ``port`` at ``path``; a number must be 1-65535, a string an
    IANA_SVC_NAME (IsValidPortName). Absent or null is Go's zero IntOrString (the number 0)."""

    if port is None:
        port = 0
    if isinstance(port, str):
        return [invalid(path, port, msg) for msg in is_valid_port_name(port)]
    number = _int(port)
    if number is None:
        return []
    return [] if 1 <= number <= 65535 else [invalid(path, number, PORT_RANGE_MSG)]


def _exec(action: dict[str, Any], path: str) -> list[Cause]:
    """validateExecAction: a non-empty ``command``."""
    command = action.get("command")
    if command is None or (isinstance(command, list) and not command):
        return [required(f"{path}.command")]
    return []


def _http_get(action: dict[str, Any], path: str) -> list[Cause]:
    """validateHTTPGetAction: ``path`` Required, the port, ``scheme`` HTTP/HTTPS, each header name."""
    out: list[Cause] = []
    if _str_or_none(action, "path") == "":
        out.append(required(f"{path}.path"))
    out.extend(validate_port_num_or_name(action.get("port"), f"{path}.port"))
    scheme = _str_or_none(action, "scheme")
    if scheme is not None and scheme not in HTTP_SCHEMES:
        out.append(not_supported(f"{path}.scheme", scheme, HTTP_SCHEMES))
    headers = action.get("httpHeaders")
    for header in headers if isinstance(headers, list) else ():
        if not isinstance(header, dict):
            continue
        name = _str_or_none(header, "name")
        if name is not None:
            # kube reports these at the list's path, not the item's
            out.extend(invalid(f"{path}.httpHeaders", name, msg) for msg in _is_http_header_name(name))
    return out


def _grpc(action: dict[str, Any], path: str) -> list[Cause]:
    """validateGRPCAction: the int32 ``port`` as a port number (0 when absent)."""
    port = _number(action, "port")
    return [] if port is None else validate_port_num_or_name(port, f"{path}.port")


def _sleep(action: dict[str, Any], path: str, grace_period: int | None) -> list[Cause]:
    """validateSleepAction (PodLifecycleSleepActionAllowZero on): 0 <= seconds <= the Pod's grace period;
    no check when the Pod has none (ValidatePodSpec already requires it)."""
    seconds = _number(action, "seconds")
    if seconds is None or grace_period is None or 0 <= seconds <= grace_period:
        return []
    detail = f"must be non-negative and less than terminationGracePeriodSeconds ({grace_period})"
    return [invalid(path, seconds, detail)]


def _action(kind: str, action: Any, path: str, grace_period: int | None) -> list[Cause]:
    if not isinstance(action, dict):
        return []  # a wrong JSON type: the schema's to report
    if kind == "exec":
        return _exec(action, path)
    if kind == "httpGet":
        return _http_get(action, path)
    if kind == "tcpSocket":
        return validate_port_num_or_name(action.get("port"), f"{path}.port")
    if kind == "grpc":
        return _grpc(action, path)
    return _sleep(action, path, grace_period)


def _handler(handler: dict[str, Any], kinds: tuple[str, ...], path: str, grace_period: int | None) -> list[Cause]:
    """validateHandler: the first handler set is validated, each further one Forbidden; none is Required."""
    out: list[Cause] = []
    count = 0
    for kind in kinds:
        if handler.get(kind) is None:
            continue
        if count:
            out.append(forbidden(f"{path}.{kind}", MANY_HANDLERS))
            continue
        count += 1
        out.extend(_action(kind, handler[kind], f"{path}.{kind}", grace_period))
    if not count:
        out.append(required(path, NO_HANDLER))
    return out


def validate_probe(probe: Any, path: str, grace_period: int | None = None) -> list[Cause]:
    """validateProbe: the handler (exec, httpGet, tcpSocket, grpc), the five counters >= 0
    (ValidateNonnegativeField), a set ``terminationGracePeriodSeconds`` > 0.

    ``probe`` is the probe's JSON (None: no probe, nothing to check); ``grace_period`` the Pod's
    ``terminationGracePeriodSeconds``. Returns the causes under ``path``.
    """
    if not isinstance(probe, dict):
        return []
    out = _handler(probe, _PROBE_HANDLERS, path, grace_period)
    for key in _PROBE_NUMBERS:
        value = _number(probe, key)
        if value is not None and value < 0:
            out.append(invalid(f"{path}.{key}", value, NEGATIVE))
    grace = _int(probe.get("terminationGracePeriodSeconds"))
    if grace is not None and grace <= 0:
        out.append(invalid(f"{path}.terminationGracePeriodSeconds", grace, PROBE_GRACE_POSITIVE))
    return out


def _success_must_be_one(probe: dict[str, Any], path: str) -> list[Cause]:
    success = _number(probe, "successThreshold")
    return [invalid(f"{path}.successThreshold", success, MUST_BE_ONE)] if success is not None and success != 1 else []


def validate_liveness_probe(probe: Any, path: str, grace_period: int | None = None) -> list[Cause]:
    """validateLivenessProbe: :func:`validate_probe`, then ``successThreshold`` must be 1."""
    if not isinstance(probe, dict):
        return []
    return validate_probe(probe, path, grace_period) + _success_must_be_one(probe, path)


def validate_readiness_probe(probe: Any, path: str, grace_period: int | None = None) -> list[Cause]:
    """validateReadinessProbe: :func:`validate_probe`, then no ``terminationGracePeriodSeconds``."""
    if not isinstance(probe, dict):
        return []
    out = validate_probe(probe, path, grace_period)
    grace = _int(probe.get("terminationGracePeriodSeconds"))
    if grace is not None:
        out.append(invalid(f"{path}.terminationGracePeriodSeconds", grace, READINESS_GRACE))
    return out


def validate_startup_probe(probe: Any, path: str, grace_period: int | None = None) -> list[Cause]:
    """validateStartupProbe: :func:`validate_probe`, then ``successThreshold`` must be 1."""
    if not isinstance(probe, dict):
        return []
    return validate_probe(probe, path, grace_period) + _success_must_be_one(probe, path)


def validate_lifecycle(lifecycle: Any, path: str, grace_period: int | None = None) -> list[Cause]:
    """validateLifecycle: ``postStart`` then ``preStop``, each a handler (exec, httpGet, tcpSocket, sleep;
    a sleep within the Pod's ``grace_period``). Returns the causes under ``path`` (``...lifecycle``)."""
    if not isinstance(lifecycle, dict):
        return []
    out: list[Cause] = []
    for hook in ("postStart", "preStop"):
        handler = lifecycle.get(hook)
        if isinstance(handler, dict):
            out.extend(_handler(handler, _LIFECYCLE_HANDLERS, f"{path}.{hook}", grace_period))
    return out


def validate_container_probes(container: Any, path: str, *, init: bool = False, sidecar: bool = False,
                              ephemeral: bool = False, grace_period: int | None = None) -> list[Cause]:
    """The probe and lifecycle checks of one container at ``path`` (e.g. ``spec.containers[0]``).

    - a regular container (neither ``init`` nor ``ephemeral``), or an init container with ``sidecar``
      (its ``restartPolicy`` is ``Always``): validateLifecycle, validateLivenessProbe,
      validateReadinessProbe, validateStartupProbe, in that order (validateContainers /
      validateInitContainers);
    - an init container without ``sidecar``: ``Forbidden`` for each of lifecycle, livenessProbe,
      readinessProbe, startupProbe that is set (validateInitContainers' default case);
    - ``ephemeral``: ``Forbidden: cannot be set for an Ephemeral Container`` for each of livenessProbe,
      readinessProbe, startupProbe, lifecycle that is set (validateFieldAllowList, field order), nothing else.

    ``container`` is the container's JSON; ``grace_period`` the Pod's ``terminationGracePeriodSeconds``
    (``sleep`` hooks are checked against it; None skips that check). Returns the causes in kube's order.
    """
    if not isinstance(container, dict):
        return []
    if ephemeral:
        return [forbidden(f"{path}.{key}", EPHEMERAL_FORBIDDEN)
                for key in ("livenessProbe", "readinessProbe", "startupProbe", "lifecycle")
                if container.get(key) is not None]
    if init and not sidecar:
        return [forbidden(f"{path}.{key}", INIT_FORBIDDEN)
                for key in ("lifecycle", "livenessProbe", "readinessProbe", "startupProbe")
                if container.get(key) is not None]
    out = validate_lifecycle(container.get("lifecycle"), f"{path}.lifecycle", grace_period)
    out.extend(validate_liveness_probe(container.get("livenessProbe"), f"{path}.livenessProbe", grace_period))
    out.extend(validate_readiness_probe(container.get("readinessProbe"), f"{path}.readinessProbe", grace_period))
    out.extend(validate_startup_probe(container.get("startupProbe"), f"{path}.startupProbe", grace_period))
    return out
