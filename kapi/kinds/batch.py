"""The batch group's kinds: Job and CronJob.

From ``pkg/apis/batch/v1/defaults.go``, ``pkg/registry/batch/job/strategy.go``
and ``pkg/apis/batch/validation/validation.go``, "Jobs" ("Specifying your
own Pod selector", "Mutable Scheduling Directives", "Elastic Indexed Jobs"):

- Create (``generateSelector``), unless ``spec.manualSelector`` is true:
  the pod template gets the labels ``batch.kubernetes.io/job-name`` and
  ``job-name`` (the Job's name) and ``batch.kubernetes.io/controller-uid``
  and ``controller-uid`` (its uid), each only when not already given, and
  ``spec.selector.matchLabels`` gets ``batch.kubernetes.io/controller-uid:
  <uid>`` when absent. A Job without labels takes its template's
  (``SetDefaults_Job``; kube applies it when the stored object is read back).
- Validation (manualSelector not true): the template carries those labels
  with exactly those values and the selector selects the uid label
  (``"`selector` not auto-generated"``); with manualSelector the selector is
  required.
- Update (``ValidateJobSpecUpdate``): ``spec.selector``, ``completionMode``,
  ``podFailurePolicy``, ``backoffLimitPerIndex``, ``managedBy`` and
  ``successPolicy`` are immutable; ``spec.completions`` too, except that an
  Indexed Job may change it together with ``spec.parallelism`` (equal
  values); ``spec.template`` is immutable, except that a suspended Job that
  never started may change the template's labels, annotations, node
  affinity, nodeSelector, tolerations and schedulingGates.
"""

from __future__ import annotations

import copy
import re
import zoneinfo
from typing import Any

from kapi.attributes import UserInfo
from kapi.errors import Cause
from kapi.kinds.base import Obj, Strategy, register
from kapi.kinds.fields import (
    go_value,
    immutable_shown,
    not_supported,
    selector_matches,
    selector_string,
)
from kapi.kinds.jobpolicy import pod_failure_policy_causes, success_policy_causes
from kapi.kinds.jobstatus import validate_job_status_update
from kapi.kinds.podspec import default_template, name_warnings, spec_of, validate_workload
from kapi.kinds.podwarnings import template_warnings
from kapi.objectmeta import invalid, required
from kapi.validation import is_dns1123_label
from kapi.values import as_dict as _dict
from kapi.values import as_int

GROUP = "batch"
CONTROLLER_UID = "batch.kubernetes.io/controller-uid"
JOB_NAME = "batch.kubernetes.io/job-name"
LEGACY_CONTROLLER_UID = "controller-uid"
LEGACY_JOB_NAME = "job-name"
NOT_AUTO_GENERATED = "`selector` not auto-generated"
TANDEM = "can only be modified in tandem with spec.parallelism"
MAX_INT32 = 2**31 - 1
CRONJOB_NAME_MAX = 63 - 11  # DNS1035LabelMaxLength minus the controller's "-<timestamp>" suffix
# field.Invalid prints the internal core.PodTemplateSpec with %#v, pointer addresses included: kube's text
# cannot be reproduced byte for byte, so the value is elided (path, type, prefix and detail are kube's).
TEMPLATE_VALUE = "core.PodTemplateSpec{...}"


def _succeeded(job: Obj) -> str:
    """A Job's ``status.successful`` field label: ``status.succeeded`` as a decimal ("0" when unset)."""
    status = job.get("status")
    value = status.get("succeeded") if isinstance(status, dict) else None
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else "0"


def _manual(spec: Obj) -> bool:
    return spec.get("manualSelector") is True


def default_job_spec(spec: Obj) -> None:
    """SetDefaults_Job's spec part: completions/parallelism 1; backoffLimit 6 (2147483647 with
    ``backoffLimitPerIndex``); NonIndexed; suspend false; podReplacementPolicy Failed with a
    ``podFailurePolicy``, else TerminatingOrFailed; each ``onPodConditions`` pattern's ``status`` True; the
    template's PodSpec defaults."""
    if "completions" not in spec and "parallelism" not in spec:
        spec["completions"] = 1
        spec["parallelism"] = 1
    spec.setdefault("parallelism", 1)
    spec.setdefault("backoffLimit", MAX_INT32 if spec.get("backoffLimitPerIndex") is not None else 6)
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    failure_policy = spec.get("podFailurePolicy")
    spec.setdefault("podReplacementPolicy", "Failed" if failure_policy is not None else "TerminatingOrFailed")
    for rule in _dict(failure_policy).get("rules") or () if isinstance(failure_policy, dict) else ():
        for pattern in _dict(rule).get("onPodConditions") or () if isinstance(rule, dict) else ():
            if isinstance(pattern, dict) and not pattern.get("status"):
                pattern["status"] = "True"
    default_template(spec)


JOB_COUNTS = ("parallelism", "completions", "activeDeadlineSeconds", "backoffLimit", "ttlSecondsAfterFinished",
              "backoffLimitPerIndex", "maxFailedIndexes")
COMPLETION_MODES = ("NonIndexed", "Indexed")
MAX_INDEXED_PARALLELISM = 100_000  # maxParallelismForIndexedJob
MAX_FAILED_INDEXES = 100_000  # maxFailedIndexesForIndexedJob
COMPLETIONS_SOFT_LIMIT = 100_000  # completionsSoftLimit
HIGH_COMPLETIONS_LIMIT = 10_000  # parallelismLimitForHighCompletions, maxFailedIndexesLimitForHighCompletions
REQUIRES_INDEXED = "requires indexed completion mode"


PARALLELISM_SOFT_LIMIT = 10_000  # parallelismSoftLimitForUnlimitedCompletions
INDEXED_SOFT_LIMITS_WARNING = ("In Indexed Jobs with a number of completions higher than 10^5 and a parallelism "
                               "higher than 10^4, Kubernetes might not be able to track completedIndexes when a "
                               "big number of indexes fail")


def _generation(obj: Obj) -> Any:
    return _dict(obj.get("metadata")).get("generation")


def job_spec_warnings(obj: Obj, path: str) -> list[str]:
    """WarningsForJobSpec (``pkg/api/job/warnings.go``) of the JobSpec at dotted ``path`` in ``obj`` (``spec``,
    ``spec.jobTemplate.spec``): an Indexed Job with more than 10^5 completions and a parallelism above 10^4 gets
    ``<path>: In Indexed Jobs with ...``, then GetWarningsForPodTemplate of ``<path>.template``."""
    node: Any = obj
    for part in path.split("."):
        node = _dict(node).get(part)
    spec = _dict(node)
    out = []
    completions, parallelism = as_int(spec.get("completions")) or 0, as_int(spec.get("parallelism")) or 0
    if (spec.get("completionMode") == "Indexed" and completions > COMPLETIONS_SOFT_LIMIT
            and parallelism > PARALLELISM_SOFT_LIMIT):
        out.append(f"{path}: {INDEXED_SOFT_LIMITS_WARNING}")
    return out + template_warnings(obj, path + ".template")


def _job_fields(spec: Obj) -> list[Cause]:
    """validateJobSpec's checks of the Job's own fields (paths under ``spec``): the counts >= 0;
    ``maxFailedIndexes`` needs ``backoffLimitPerIndex``; ``completionMode`` NonIndexed or Indexed, Indexed
    needing ``completions`` and bounding parallelism and maxFailedIndexes; the per-index fields only for
    Indexed; the podFailurePolicy and successPolicy rules (:mod:`kapi.kinds.jobpolicy`); ``podReplacementPolicy``
    Failed with a ``podFailurePolicy``, else Failed or TerminatingOrFailed."""
    out: list[Cause] = []
    for key in JOB_COUNTS:
        value = spec.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value < 0:
            out.append(invalid(f"spec.{key}", value, "must be greater than or equal to 0"))
    completions, parallelism = spec.get("completions"), spec.get("parallelism")
    per_index, max_failed = spec.get("backoffLimitPerIndex"), spec.get("maxFailedIndexes")
    if max_failed is not None and per_index is None:
        out.append(required("spec.backoffLimitPerIndex", "when maxFailedIndexes is specified"))
    mode = spec.get("completionMode")
    if isinstance(mode, str) and mode not in COMPLETION_MODES:
        out.append(not_supported("spec.completionMode", mode, COMPLETION_MODES))
    if mode == "Indexed":
        if completions is None:
            out.append(required("spec.completions", "when completion mode is Indexed"))
        if isinstance(parallelism, int) and parallelism > MAX_INDEXED_PARALLELISM:
            out.append(invalid("spec.parallelism", parallelism, f"must be less than or equal to "
                               f"{MAX_INDEXED_PARALLELISM} when completion mode is Indexed"))
        if isinstance(completions, int) and isinstance(max_failed, int) and max_failed > completions:
            out.append(invalid("spec.maxFailedIndexes", max_failed, "must be less than or equal to completions"))
        if isinstance(max_failed, int) and max_failed > MAX_FAILED_INDEXES:
            out.append(invalid("spec.maxFailedIndexes", max_failed,
                               f"must be less than or equal to {MAX_FAILED_INDEXES}"))
        if isinstance(completions, int) and completions > COMPLETIONS_SOFT_LIMIT and per_index is not None:
            high = f"when completions are above {COMPLETIONS_SOFT_LIMIT} and used with backoff limit per index"
            if max_failed is None:
                out.append(required("spec.maxFailedIndexes",
                                    f"must be specified when completions is above {COMPLETIONS_SOFT_LIMIT}"))
            if isinstance(parallelism, int) and parallelism > HIGH_COMPLETIONS_LIMIT:
                out.append(invalid("spec.parallelism", parallelism,
                                   f"must be less than or equal to {HIGH_COMPLETIONS_LIMIT} {high}"))
            if isinstance(max_failed, int) and max_failed > HIGH_COMPLETIONS_LIMIT:
                out.append(invalid("spec.maxFailedIndexes", max_failed,
                                   f"must be less than or equal to {HIGH_COMPLETIONS_LIMIT} {high}"))
    elif mode in (None, "NonIndexed"):
        if per_index is not None:
            out.append(invalid("spec.backoffLimitPerIndex", per_index, REQUIRES_INDEXED))
        if max_failed is not None:
            out.append(invalid("spec.maxFailedIndexes", max_failed, REQUIRES_INDEXED))
    out.extend(pod_failure_policy_causes(spec))
    out.extend(success_policy_causes(spec))
    replacement = spec.get("podReplacementPolicy")
    if isinstance(replacement, str):
        if spec.get("podFailurePolicy") is not None:
            if replacement != "Failed":
                out.append(not_supported("spec.podReplacementPolicy", replacement, ("Failed",)))
        elif replacement not in ("Failed", "TerminatingOrFailed"):
            out.append(not_supported("spec.podReplacementPolicy", replacement, ("Failed", "TerminatingOrFailed")))
    return out


def _job_restart_policy(spec: Obj) -> list[Cause]:
    """validateJobSpec's template restartPolicy: Always or empty is ``Required value: valid values: "OnFailure",
    "Never"``; another value NotSupported; with a ``podFailurePolicy`` only Never."""
    policy = _dict(_dict(spec.get("template")).get("spec")).get("restartPolicy")
    path = "spec.template.spec.restartPolicy"
    if policy in (None, "", "Always"):
        return [required(path, 'valid values: "OnFailure", "Never"')]
    if isinstance(policy, str) and policy not in ("OnFailure", "Never"):
        return [not_supported(path, policy, ("OnFailure", "Never"))]
    if spec.get("podFailurePolicy") is not None and policy != "Never":
        return [invalid(path, policy, 'only "Never" is supported when podFailurePolicy is specified')]
    return []


def job_spec_causes(spec: Any, prefix: str) -> list[Cause]:
    """validateJobSpec under ``prefix`` (``spec`` of a Job, ``spec.jobTemplate.spec`` of a CronJob): the Job's
    fields (:func:`_job_fields`), the workload checks shared with apps and core, the template restartPolicy."""
    spec = _dict(spec)
    causes = _job_fields(spec)
    causes += validate_workload(spec, "job", None, selector_required=False, replicas=False)
    causes += _job_restart_policy(spec)
    return [Cause(c.type, c.message, prefix + c.field[len("spec"):]) for c in causes] if prefix != "spec" else causes


def _go_map(value: Obj) -> str:
    return "map[string]string{" + ", ".join(f'"{k}":"{v}"' for k, v in sorted(value.items())) + "}"


def _has_label(labels: Obj, path: str, key: str, expected: str) -> list[Cause]:
    """apivalidation.ValidateHasLabel."""
    if key not in labels:
        return [required(f"{path}.labels[{key}]", expected)]
    if labels[key] != expected:
        return [Cause("FieldValueInvalid", f"Invalid value: {_go_map(labels)}: must be '{expected}'",
                      f"{path}.labels[{key}]")]
    return []


def validate_generated_selector(obj: Obj, require_prefixed_labels: bool | None = None) -> list[Cause]:
    """The Job's selector checks (validateGeneratedSelector; selector required with manualSelector).

    ``require_prefixed_labels`` (kube's RequirePrefixedLabels: true on create,
    on update only when the stored Job has them) defaults to whether the
    template carries ``batch.kubernetes.io/controller-uid``. Never raises.
    """
    meta, spec = _dict(obj.get("metadata")), _dict(obj.get("spec"))
    selector = spec.get("selector")
    if _manual(spec):
        return [required("spec.selector")] if selector is None else []
    tmeta = _dict(_dict(spec.get("template")).get("metadata"))
    if not isinstance(tmeta.get("labels"), dict) or not isinstance(selector, dict):
        return []
    labels = tmeta["labels"]
    name, uid = str(meta.get("name") or ""), str(meta.get("uid") or "")
    if require_prefixed_labels is None:
        require_prefixed_labels = CONTROLLER_UID in labels
    path = "spec.template.metadata"
    out = _has_label(labels, path, LEGACY_CONTROLLER_UID, uid) + _has_label(labels, path, LEGACY_JOB_NAME, name)
    if require_prefixed_labels:
        out += _has_label(labels, path, CONTROLLER_UID, uid) + _has_label(labels, path, JOB_NAME, name)
        expected = {CONTROLLER_UID: uid}
    else:
        expected = {LEGACY_CONTROLLER_UID: uid}
    if selector_matches(selector, expected) is not True:
        out.append(Cause("FieldValueInvalid", f"Invalid value: {selector_string(selector)}: {NOT_AUTO_GENERATED}",
                         "spec.selector"))
    return out


def _scalar(value: Any) -> str:
    """A pointer-to-scalar field's value as field.Error prints it (``null`` when unset)."""
    return go_value(value) if value is None or isinstance(value, (str, int, bool)) else str(value)


def _template_sans_scheduling(template: Any, new_template: Obj) -> Any:
    """The stored template with the directives a suspended, never-started Job may change taken from the new one
    (validatePodTemplateUpdate with AllowMutableSchedulingDirectives)."""
    out = copy.deepcopy(_dict(template))
    new_meta, new_spec = _dict(new_template.get("metadata")), _dict(new_template.get("spec"))
    meta = out.setdefault("metadata", {})
    spec = out.setdefault("spec", {})
    if not isinstance(meta, dict) or not isinstance(spec, dict):
        return template
    for key in ("labels", "annotations"):
        _copy_key(new_meta, meta, key)
    for key in ("nodeSelector", "tolerations", "schedulingGates"):
        _copy_key(new_spec, spec, key)
    affinity, old_affinity = new_spec.get("affinity"), spec.get("affinity")
    if affinity is None and isinstance(old_affinity, dict):
        rest = {k: v for k, v in old_affinity.items() if k != "nodeAffinity"}
        if rest:
            spec["affinity"] = rest
        else:
            spec.pop("affinity", None)
    elif isinstance(affinity, dict):
        merged = dict(old_affinity) if isinstance(old_affinity, dict) else {}
        _copy_key(affinity, merged, "nodeAffinity")
        spec["affinity"] = merged
    if not meta:
        out.pop("metadata", None)
    return out


def _copy_key(source: Obj, target: Obj, key: str) -> None:
    if key in source:
        target[key] = source[key]
    else:
        target.pop(key, None)


def _empty_metadata(template: Any) -> Any:
    """A template whose metadata is ``{}`` compares equal to one without metadata (Go's zero ObjectMeta)."""
    if isinstance(template, dict) and template.get("metadata") == {}:
        return {k: v for k, v in template.items() if k != "metadata"}
    return template


def validate_job_spec_update(spec: Obj, old_spec: Obj, mutable_scheduling: bool) -> list[Cause]:
    """ValidateJobSpecUpdate's comparisons of ``spec`` with the stored ``old_spec`` (paths under ``spec``).

    ``mutable_scheduling``: kube's AllowMutableSchedulingDirectives (the stored Job is suspended and has no
    ``status.startTime``).
    """
    out: list[Cause] = []
    completions, old_completions = spec.get("completions"), old_spec.get("completions")
    if completions != old_completions:
        if spec.get("completionMode") != "Indexed":
            out.append(immutable_shown("spec.completions", _scalar(completions)))
        elif completions is not None and completions != spec.get("parallelism"):
            out.append(Cause("FieldValueInvalid", f"Invalid value: {_scalar(completions)}: {TANDEM}",
                             "spec.completions"))
    if spec.get("selector") != old_spec.get("selector"):
        out.append(immutable_shown("spec.selector", selector_string(spec.get("selector"))))
    template, old_template = _dict(spec.get("template")), old_spec.get("template")
    if mutable_scheduling:
        old_template = _template_sans_scheduling(old_template, template)
    if _empty_metadata(template) != _empty_metadata(_dict(old_template)):
        out.append(immutable_shown("spec.template", TEMPLATE_VALUE))
    for key in ("completionMode", "backoffLimitPerIndex", "managedBy"):
        if spec.get(key) != old_spec.get(key):
            out.append(immutable_shown(f"spec.{key}", _scalar(spec.get(key))))
    for key, go_type in (("podFailurePolicy", "batch.PodFailurePolicy"), ("successPolicy", "batch.SuccessPolicy")):
        if spec.get(key) != old_spec.get(key):
            shown = '"null"' if spec.get(key) is None else go_type + "{...}"  # a nil pointer, quoted
            out.append(immutable_shown(f"spec.{key}", shown))
    return out


@register
class JobStrategy(Strategy):
    """Job: defaults, the generated selector and template labels, their validation, the immutable spec."""

    group, kind = GROUP, "Job"
    #: jobStatusStrategy.PrepareForUpdate resets only spec: /status may change the metadata
    status_reset_metadata = ()
    revalidates_first = True  # the strategy: ValidateJob, then ValidateJobUpdate (spec, then immutability)
    status_zero: dict[str, Any] = {}  # JobStatus: every field omitempty
    #: JobToSelectableFields: status.successful is strconv.Itoa(Status.Succeeded), "0" when unset
    selectable_fields = {"status.successful": _succeeded}

    def default(self, obj: Obj) -> None:
        """SetDefaults_Job (spec part, see :func:`default_job_spec`)."""
        default_job_spec(spec_of(obj))

    def prepare_for_create(self, obj: Obj, *, user: UserInfo | None = None) -> None:
        """generateSelector (unless ``spec.manualSelector``) in place, with the object's final ``metadata.uid`` and
        ``metadata.name``; then the Job's labels default to the template's when it has none."""
        meta = _dict(obj.get("metadata"))
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return
        name, uid = str(meta.get("name") or ""), str(meta.get("uid") or "")
        template = spec.get("template")
        if not isinstance(template, dict):
            template = spec["template"] = {}
        if not _manual(spec):
            tmeta = template.get("metadata")
            if not isinstance(tmeta, dict):
                tmeta = template["metadata"] = {}
            labels = tmeta.get("labels")
            if not isinstance(labels, dict):
                labels = tmeta["labels"] = {}
            for key in (LEGACY_JOB_NAME, JOB_NAME):
                labels.setdefault(key, name)
            for key in (LEGACY_CONTROLLER_UID, CONTROLLER_UID):
                labels.setdefault(key, uid)
            selector = spec.get("selector")
            if not isinstance(selector, dict):
                selector = spec["selector"] = {}
            match = selector.get("matchLabels")
            if not isinstance(match, dict):
                match = selector["matchLabels"] = {}
            match.setdefault(CONTROLLER_UID, uid)
        template_labels = _dict(_dict(template.get("metadata")).get("labels"))
        if template_labels and not _dict(meta.get("labels")) and isinstance(obj.get("metadata"), dict):
            obj["metadata"]["labels"] = dict(template_labels)

    def warnings_on_create(self, obj: Obj) -> list[str]:
        """WarningsOnCreate: the name warning (:func:`kapi.kinds.podspec.name_warnings`), then
        :func:`job_spec_warnings` of ``spec``."""
        return name_warnings(obj) + job_spec_warnings(obj, "spec")

    def warnings_on_update(self, new: Obj, old: Obj) -> list[str]:
        """WarningsOnUpdate: :func:`job_spec_warnings` of ``spec`` when the generation moved on."""
        if _generation(new) == _generation(old):
            return []
        return job_spec_warnings(new, "spec")

    def validate(self, obj: Obj) -> list[Cause]:
        """ValidateJob: the generated selector's checks, validateJobSpec's, then, for an Indexed Job, the name of
        its last pod (``<name>-<completions-1>``) a DNS label (``will not able to create pod with invalid DNS
        label: <hostname>``)."""
        out = validate_generated_selector(obj) + job_spec_causes(obj.get("spec"), "spec")
        spec, name = _dict(obj.get("spec")), _dict(obj.get("metadata")).get("name")
        completions = spec.get("completions")
        if (spec.get("completionMode") == "Indexed" and isinstance(completions, int) and completions > 0
                and isinstance(name, str)):
            hostname = f"{name}-{completions - 1}"
            if is_dns1123_label(hostname):
                out.append(invalid("metadata.name", name,
                                   f"will not able to create pod with invalid DNS label: {hostname}"))
        return out

    def validate_update(self, new: Obj, old: Obj, subresource: str = "") -> list[Cause]:
        """ValidateJobUpdate for the main resource; ``status``: ValidateJobUpdateStatus
        (:func:`kapi.kinds.jobstatus.validate_job_status_update`)."""
        if subresource == "status":
            return validate_job_status_update(new, old)
        if subresource:
            return []
        old_spec = _dict(old.get("spec"))
        suspended = old_spec.get("suspend") is True
        not_started = not _dict(old.get("status")).get("startTime")
        return validate_job_spec_update(_dict(new.get("spec")), old_spec, suspended and not_started)


# ------------------------------------------------------------ CronJob schedules (robfig/cron v3 ParseStandard)

# (min, max, names) of the five standard fields: minute, hour, day of month, month, day of week
_CRON_FIELDS: tuple[tuple[int, int, dict[str, int]], ...] = ((0, 59, {}), (0, 23, {}), (1, 31, {}),
                (1, 12, {m: i + 1 for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug",
                                                         "sep", "oct", "nov", "dec"))}),
                (0, 6, {d: i for i, d in enumerate(("sun", "mon", "tue", "wed", "thu", "fri", "sat"))}))
_CRON_DESCRIPTORS = frozenset({"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"})
_GO_DURATION = re.compile(r"[-+]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:ns|us|µs|μs|ms|s|m|h))+|[-+]?0")


def _cron_int(expr: str) -> int:
    """robfig's mustParseInt: strconv.Atoi, then no negatives (ValueError carries the parser's message)."""
    if not re.fullmatch(r"[+-]?[0-9]+", expr):
        raise ValueError(f'failed to parse int from {expr}: strconv.Atoi: parsing {go_value(expr)}: invalid syntax')
    number = int(expr)
    if not -2**63 <= number < 2**63:
        raise ValueError(f'failed to parse int from {expr}: strconv.Atoi: parsing {go_value(expr)}: value out of '
                         'range')
    if number < 0:
        raise ValueError(f"negative number ({number}) not allowed: {expr}")
    return number


def _cron_range(expr: str, low: int, high: int, names: dict[str, int]) -> None:
    """robfig's getRange: ``*``/``?``, ``N``, ``N-M``, each optionally ``/step``, within [low, high]."""
    range_and_step = expr.split("/")
    low_and_high = range_and_step[0].split("-")
    if low_and_high[0] in ("*", "?"):
        start, end = low, high
    else:
        first = low_and_high[0].lower()
        start = names[first] if first in names else _cron_int(low_and_high[0])
        if len(low_and_high) == 1:
            end = start
        elif len(low_and_high) == 2:
            end = names[low_and_high[1].lower()] if low_and_high[1].lower() in names else _cron_int(low_and_high[1])
        else:
            raise ValueError(f"too many hyphens: {expr}")
    if len(range_and_step) == 2:
        step = _cron_int(range_and_step[1])
        if len(low_and_high) == 1:
            end = high
    elif len(range_and_step) > 2:
        raise ValueError(f"too many slashes: {expr}")
    else:
        step = 1
    if start < low:
        raise ValueError(f"beginning of range ({start}) below minimum ({low}): {expr}")
    if end > high:
        raise ValueError(f"end of range ({end}) above maximum ({high}): {expr}")
    if start > end:
        raise ValueError(f"beginning of range ({start}) beyond end of range ({end}): {expr}")
    if step == 0:
        raise ValueError(f"step of range should be a positive number: {expr}")


def cron_schedule_error(schedule: str) -> str | None:
    """The error text of robfig/cron v3 ``ParseStandard(schedule)`` (kube's CronJob schedule parser); None when it
    parses: five fields (minute, hour, day of month, month, day of week; ranges, lists, steps, month and weekday
    names) or a descriptor (``@hourly``, ``@every 1h``, ...), optionally after ``TZ=<zone>``/``CRON_TZ=<zone>``."""
    spec = schedule
    if not spec:
        return "empty spec string"
    if spec.startswith(("TZ=", "CRON_TZ=")):
        space, eq = spec.find(" "), spec.find("=")
        zone = spec[eq + 1:space] if space > eq else spec[eq + 1:]
        if not _time_zone_exists(zone):
            return f"provided bad location {zone}: unknown time zone {zone}"
        spec = spec[space:].strip() if space > eq else ""
    if spec.startswith("@"):
        if spec in _CRON_DESCRIPTORS:
            return None
        if spec.startswith("@every "):
            duration = spec[len("@every "):]
            return None if _GO_DURATION.fullmatch(duration) else \
                f'failed to parse duration {spec}: time: invalid duration {go_value(duration)}'
        return f"unrecognized descriptor: {spec}"
    fields = spec.split()
    if len(fields) != len(_CRON_FIELDS):
        return f"expected exactly {len(_CRON_FIELDS)} fields, found {len(fields)}: [{' '.join(fields)}]"
    try:
        for text, (low, high, names) in zip(fields, _CRON_FIELDS, strict=True):
            for expr in (part for part in text.split(",") if part):
                _cron_range(expr, low, high, names)
    except ValueError as err:
        return str(err)
    return None


def _time_zone_exists(zone: str) -> bool:
    """time.LoadLocation's success for ``zone`` (UTC and the IANA database); a name that is a directory of the
    database (``America/Argentina``) or too long for a file name is no zone either (never a 500)."""
    if zone in ("", "UTC"):
        return True
    try:
        zoneinfo.ZoneInfo(zone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        return False
    return True


CONCURRENCY_POLICIES = ("Allow", "Forbid", "Replace")


def validate_cronjob_spec(spec: Obj, old_spec: Obj | None = None) -> list[Cause]:
    """validateCronJobSpec's own checks, in kube's order: ``schedule`` required and parseable (robfig's message),
    without ``TZ``/``CRON_TZ`` (``cannot use TZ or CRON_TZ in schedule, use timeZone field instead``) unless
    ``old_spec`` (an update's stored spec) had one, and then not with ``timeZone`` (``cannot use both timeZone
    field and TZ or CRON_TZ in schedule``); ``startingDeadlineSeconds`` >= 0; ``timeZone`` non-empty, not
    ``Local``, a known zone; ``concurrencyPolicy`` Allow, Forbid or Replace."""
    out: list[Cause] = []
    schedule = spec.get("schedule")
    if not isinstance(schedule, str) or not schedule:
        out.append(required("spec.schedule"))
    else:
        error = cron_schedule_error(schedule)
        if error:
            out.append(invalid("spec.schedule", schedule, error))
        old_schedule = _dict(old_spec).get("schedule")
        allow_tz = isinstance(old_schedule, str) and "TZ" in old_schedule
        if allow_tz and "TZ" in schedule and spec.get("timeZone") is not None:
            out.append(invalid("spec.schedule", schedule,
                               "cannot use both timeZone field and TZ or CRON_TZ in schedule"))
        elif not allow_tz and "TZ" in schedule:
            out.append(invalid("spec.schedule", schedule,
                               "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"))
    deadline = spec.get("startingDeadlineSeconds")
    if isinstance(deadline, int) and deadline < 0:
        out.append(invalid("spec.startingDeadlineSeconds", deadline, "must be greater than or equal to 0"))
    zone = spec.get("timeZone")
    if isinstance(zone, str):
        if not zone:
            out.append(invalid("spec.timeZone", zone, "timeZone must be nil or non-empty string"))
        else:
            if zone.lower() == "local":
                out.append(invalid("spec.timeZone", zone,
                                   "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"))
            if not _time_zone_exists(zone):
                out.append(invalid("spec.timeZone", zone, f"unknown time zone {zone}"))
    policy = spec.get("concurrencyPolicy")
    if isinstance(policy, str) and policy not in CONCURRENCY_POLICIES:
        out.append(required("spec.concurrencyPolicy") if not policy else
                   not_supported("spec.concurrencyPolicy", policy, CONCURRENCY_POLICIES))
    return out


@register
class CronJobStrategy(Strategy):
    """CronJob: concurrencyPolicy Allow, history limits 3/1, the job template's defaults and checks."""

    group, kind = GROUP, "CronJob"
    #: cronJobStatusStrategy.PrepareForUpdate resets only spec: /status may change the metadata
    status_reset_metadata = ()
    status_zero: dict[str, Any] = {}  # CronJobStatus: every field omitempty

    def default(self, obj: Obj) -> None:
        """SetDefaults_CronJob: concurrencyPolicy Allow, suspend false, history limits 3 and 1; the job template's
        pod template gets the PodSpec defaults, not SetDefaults_Job's (that one takes a whole Job: the generated
        SetObjectDefaults_CronJob defaults only ``jobTemplate.spec.template``)."""
        spec = spec_of(obj)
        spec.setdefault("concurrencyPolicy", "Allow")
        spec.setdefault("suspend", False)
        spec.setdefault("successfulJobsHistoryLimit", 3)
        spec.setdefault("failedJobsHistoryLimit", 1)
        template = spec.get("jobTemplate")
        if isinstance(template, dict) and isinstance(template.get("spec"), dict):
            default_template(template["spec"])

    def warnings_on_create(self, obj: Obj) -> list[str]:
        """WarningsOnCreate: the name warning (:func:`kapi.kinds.podspec.name_warnings`), then
        :func:`job_spec_warnings` of ``spec.jobTemplate.spec``."""
        return name_warnings(obj) + job_spec_warnings(obj, "spec.jobTemplate.spec")

    def warnings_on_update(self, new: Obj, old: Obj) -> list[str]:
        """WarningsOnUpdate: :func:`job_spec_warnings` of ``spec.jobTemplate.spec`` when the generation moved on,
        then, for a schedule with ``TZ`` (kept from the stored CronJob, which validation allows), kube's warning
        with its path as kube spells it (``spec.spec.schedule``)."""
        out = [] if _generation(new) == _generation(old) else job_spec_warnings(new, "spec.jobTemplate.spec")
        schedule = _dict(new.get("spec")).get("schedule")
        if isinstance(schedule, str) and "TZ" in schedule:
            out.append("cannot use TZ or CRON_TZ in spec.spec.schedule, use timeZone instead, see "
                       "https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details")
        return out

    def validate(self, obj: Obj) -> list[Cause]:
        """ValidateCronJobCreate: :func:`validate_cronjob_spec`, ValidateJobTemplateSpec's workload checks under
        ``spec.jobTemplate.spec``, the history limits >= 0, and a name of at most 52 characters (the controller
        appends an 11-character ``-<timestamp>`` to name Jobs)."""
        out = self._spec_causes(obj, None)
        name = _dict(obj.get("metadata")).get("name")
        if isinstance(name, str) and len(name) > CRONJOB_NAME_MAX:
            out.append(invalid("metadata.name", name, f"must be no more than {CRONJOB_NAME_MAX} characters"))
        return out

    def validate_again(self, new: Obj, old: Obj) -> list[Cause]:
        """ValidateCronJobUpdate's spec checks: a ``TZ`` schedule may stay when the stored one had it, and the
        52-character name limit is skipped (old CronJobs with longer names can still be updated)."""
        return self._spec_causes(new, _dict(old.get("spec")))

    @staticmethod
    def _spec_causes(obj: Obj, old_spec: Obj | None) -> list[Cause]:
        spec = _dict(obj.get("spec"))
        out = validate_cronjob_spec(spec, old_spec)
        out.extend(job_spec_causes(_dict(spec.get("jobTemplate")).get("spec"), "spec.jobTemplate.spec"))
        for key in ("successfulJobsHistoryLimit", "failedJobsHistoryLimit"):
            limit = spec.get(key)
            if isinstance(limit, int) and limit < 0:
                out.append(invalid(f"spec.{key}", limit, "must be greater than or equal to 0"))
        return out
