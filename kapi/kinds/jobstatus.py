"""A Job's status updates (PUT/PATCH ``jobs/status``), as kube-apiserver 1.37 validates them.

Source: ``pkg/apis/batch/validation/validation.go`` (ValidateJobUpdateStatus, ValidateJobStatusUpdate,
validateJobStatus, validateFailedIndexesNotOverlapCompleted) and ``pkg/registry/batch/job/strategy.go``
(jobStatusStrategy.ValidateUpdate, getStatusValidationOptions). With JobManagedBy GA every
JobStatusValidationOptions rule of the strengthened set applies; most run only when the status fields they read
changed against the stored Job, so a controller may go on updating unrelated fields of a Job whose status already
breaks a rule. ``AllowForSuccessCriteriaMetInExtendedScope`` is always true (SuccessCriteriaMet is not limited
to Indexed Jobs with a successPolicy).

Reading of the 1.35 fix kubernetes#134769 (resuming a suspended Job): a changed ``startTime`` is allowed when the
stored Job carries the ``Suspended=True`` condition, as the controller resets it on resume.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kapi.errors import Cause
from kapi.kinds.base import Obj
from kapi.kinds.fields import duplicate, go_time_string, parse_time
from kapi.kinds.jobpolicy import index_interval, indexes_total
from kapi.objectmeta import go_quote, invalid, required
from kapi.values import as_dict as _dict

CONDITIONS = "status.conditions"
TERMINAL = ("Failed", "Complete", "FailureTarget")  # the order kube checks them in


def _true(job: Obj, kind: str) -> bool:
    """IsConditionTrue: a ``status.conditions`` entry of type ``kind`` with status True."""
    return any(isinstance(c, dict) and c.get("type") == kind and c.get("status") == "True"
               for c in _dict(job.get("status")).get("conditions") or ())


def _finished(job: Obj) -> bool:
    """IsJobFinished: Complete=True or Failed=True."""
    return _true(job, "Complete") or _true(job, "Failed")


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def go_time(value: Any) -> str:
    """A metav1.Time as field.Invalid prints it (:func:`kapi.kinds.fields.go_time_string`); an unparsable one
    quoted as sent."""
    parsed = parse_time(value)
    return go_quote(str(value)) if parsed is None else go_time_string(parsed)


def _same_time(a: Any, b: Any) -> bool:
    """ptr.Equal of two *metav1.Time: both absent, or the same instant."""
    ta, tb = parse_time(a), parse_time(b)
    if ta is None or tb is None:
        return ta is None and tb is None and (a is None) == (b is None)
    return ta == tb


def _uids(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _go_uncounted(value: Any) -> str:
    """The internal ``batch.UncountedTerminatedPods`` as ``%#v`` prints it."""
    def uids(items: Any) -> str:
        if not isinstance(items, list):
            return "[]types.UID(nil)"
        return "[]types.UID{" + ", ".join(go_quote(str(u)) for u in items) + "}"
    value = _dict(value)
    return (f"batch.UncountedTerminatedPods{{Succeeded:{uids(value.get('succeeded'))}, "
            f"Failed:{uids(value.get('failed'))}}}")


def _uncounted_equal(a: Any, b: Any) -> bool:
    """apiequality.Semantic.DeepEqual of two *UncountedTerminatedPods: nil differs from an empty struct, an empty
    list equals an absent one."""
    if (a is None) != (b is None):
        return False
    da, db = _dict(a), _dict(b)
    return all(_uids(da.get(k)) == _uids(db.get(k)) for k in ("succeeded", "failed"))


def _omit(path: str, detail: str) -> Cause:
    """field.Invalid with field.OmitValueType{}: ``Invalid value: <detail>``."""
    return Cause("FieldValueInvalid", f"Invalid value: {detail}", path)


def _overlap(completed: str, failed: str, completions: int) -> str | None:
    """validateFailedIndexesNotOverlapCompleted: the error text, or None. Intervals that do not parse are
    skipped (the format checks report them)."""
    if not completed or not failed:
        return None

    def parsed(text: str) -> list[tuple[int, int] | None]:
        out: list[tuple[int, int] | None] = []
        for part in text.split(","):
            try:
                out.append(index_interval(part, completions))
            except ValueError:
                out.append(None)
        return out

    cs, fs = parsed(completed), parsed(failed)
    ci = fi = 0
    while ci < len(cs) and fi < len(fs):
        c, f = cs[ci], fs[fi]
        if c is None:
            ci += 1
        elif f is None:
            fi += 1
        elif c[0] <= f[1] and f[0] <= c[1]:
            return f"failedIndexes and completedIndexes overlap at index: {max(c[0], f[0])}"
        elif c[0] <= f[0]:
            ci += 1
        else:
            fi += 1
    return None


@dataclass(frozen=True)
class StatusOptions:
    """The JobStatusValidationOptions getStatusValidationOptions turns on for one update (the ``Reject*`` rules
    that are always on in 1.37 have no field)."""

    decreasing_succeeded: bool
    invalid_completed_indexes: bool
    invalid_failed_indexes: bool
    overlapping_indexes: bool
    finished_with_active: bool
    finished_without_start_time: bool
    finished_with_uncounted: bool
    start_time_update: bool
    completion_time_before_start: bool
    completion_time_needs_complete: bool
    complete_with_failed: bool
    complete_with_failure_target: bool
    failed_without_failure_target: bool
    complete_without_success_criteria: bool
    finished_with_terminating: bool
    more_ready_than_active: bool


def status_options(new: Obj, old: Obj) -> StatusOptions:
    """getStatusValidationOptions of a status update of ``old`` (stored) to ``new``: which rules run."""
    spec, status, old_status = _dict(new.get("spec")), _dict(new.get("status")), _dict(old.get("status"))
    indexed = spec.get("completionMode") == "Indexed"

    def changed(kind: str) -> bool:
        return _true(old, kind) != _true(new, kind)

    finished = _finished(old) != _finished(new)
    complete, failed, failure_target = changed("Complete"), changed("Failed"), changed("FailureTarget")
    completed_indexes = (old_status.get("completedIndexes") or "") != (status.get("completedIndexes") or "")
    failed_indexes = old_status.get("failedIndexes") != status.get("failedIndexes")
    active = _int(old_status.get("active")) != _int(status.get("active"))
    ready = old_status.get("ready") != status.get("ready")
    terminating = old_status.get("terminating") != status.get("terminating")
    start = not _same_time(old_status.get("startTime"), status.get("startTime"))
    completion = not _same_time(old_status.get("completionTime"), status.get("completionTime"))
    uncounted = not _uncounted_equal(old_status.get("uncountedTerminatedPods"), status.get("uncountedTerminatedPods"))
    suspended_zero = spec.get("suspend") is True and spec.get("completions") == 0
    return StatusOptions(
        decreasing_succeeded=not indexed or spec.get("completions") != spec.get("parallelism"),
        invalid_completed_indexes=completed_indexes,
        invalid_failed_indexes=failed_indexes,
        overlapping_indexes=failed_indexes or completed_indexes,
        finished_with_active=finished or active,
        finished_without_start_time=(finished or start) and not suspended_zero,
        finished_with_uncounted=finished or uncounted,
        start_time_update=start,
        completion_time_before_start=start or completion,
        completion_time_needs_complete=complete or completion,
        complete_with_failed=complete or failed,
        complete_with_failure_target=complete or failure_target,
        failed_without_failure_target=failed or failed_indexes,
        complete_without_success_criteria=complete or changed("SuccessCriteriaMet"),
        finished_with_terminating=finished or terminating,
        more_ready_than_active=ready or active,
    )


def _nonnegative_and_uncounted(status: Obj) -> list[Cause]:
    out: list[Cause] = []
    for key in ("active", "succeeded", "failed", "ready", "terminating"):
        value = status.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value < 0:
            out.append(invalid(f"status.{key}", value, "must be greater than or equal to 0"))
    seen: set[str] = set()
    uncounted = _dict(status.get("uncountedTerminatedPods"))
    for which in ("succeeded", "failed"):
        for i, uid in enumerate(_uids(uncounted.get(which))):
            path = f"status.uncountedTerminatedPods.{which}[{i}]"
            if not uid:
                out.append(invalid(path, uid if isinstance(uid, str) else "", "must not be empty"))
            elif uid in seen:
                out.append(duplicate(path, uid))
            else:
                seen.add(str(uid))
    return out


def _indexes(job: Obj, opts: StatusOptions) -> list[Cause]:
    """The completedIndexes / failedIndexes rules of validateJobStatus."""
    spec, status = _dict(job.get("spec")), _dict(job.get("status"))
    raw = spec.get("completions")
    completions = raw if isinstance(raw, int) and not isinstance(raw, bool) else None
    completed = status.get("completedIndexes") or ""
    failed = status.get("failedIndexes")
    per_index = spec.get("backoffLimitPerIndex") is not None
    out: list[Cause] = []
    if opts.invalid_completed_indexes and completions is not None and isinstance(completed, str):
        try:
            indexes_total(completed, completions)
        except ValueError as exc:
            out.append(invalid("status.completedIndexes", completed, f"error parsing completedIndexes: {exc}"))
    if opts.invalid_failed_indexes and completions is not None and per_index and isinstance(failed, str):
        try:
            indexes_total(failed, completions)
        except ValueError as exc:
            out.append(invalid("status.failedIndexes", failed, f"error parsing failedIndexes: {exc}"))
    if opts.invalid_completed_indexes and completed and spec.get("completionMode") != "Indexed":
        out.append(invalid("status.completedIndexes", completed,
                           "cannot set non-empty completedIndexes when non-indexed completion mode"))
    if opts.invalid_failed_indexes and not per_index and failed is not None:
        out.append(invalid("status.failedIndexes", failed,
                           "cannot set non-null failedIndexes when backoffLimitPerIndex is null"))
    if opts.overlapping_indexes and completions is not None and isinstance(failed, str) and isinstance(completed, str):
        overlap = _overlap(completed, failed, completions)
        if overlap:
            out.append(invalid("status.failedIndexes", failed, overlap))
    return out


def _job_status(job: Obj, opts: StatusOptions) -> list[Cause]:
    """validateJobStatus, in kube's order."""
    spec, status = _dict(job.get("spec")), _dict(job.get("status"))
    out = _nonnegative_and_uncounted(status)
    complete, failed = _true(job, "Complete"), _true(job, "Failed")
    failure_target, met = _true(job, "FailureTarget"), _true(job, "SuccessCriteriaMet")
    start, completion = status.get("startTime"), status.get("completionTime")
    if opts.complete_with_failed and complete and failed:
        out.append(_omit(CONDITIONS, "cannot set Complete=True and Failed=true conditions"))
    if opts.complete_with_failure_target and complete and failure_target:
        out.append(_omit(CONDITIONS, "cannot set Complete=True and FailureTarget=true conditions"))
    if opts.completion_time_needs_complete and completion is not None and not complete:
        out.append(Cause("FieldValueInvalid", f"Invalid value: {go_time(completion)}: cannot set completionTime "
                         "when there is no Complete=True condition", "status.completionTime"))
    if opts.completion_time_needs_complete and completion is None and complete:
        out.append(required("status.completionTime", "completionTime is required for Complete jobs"))
    started, ended = parse_time(start), parse_time(completion)
    if opts.completion_time_before_start and started and ended and ended < started:
        out.append(Cause("FieldValueInvalid", f"Invalid value: {go_time(completion)}: completionTime cannot be set "
                         "before startTime", "status.completionTime"))
    if opts.failed_without_failure_target and failed and not failure_target:
        out.append(_omit(CONDITIONS, "cannot set Failed=True condition without the FailureTarget=true condition"))
    if opts.complete_without_success_criteria and complete and not met:
        out.append(_omit(CONDITIONS, "cannot set Complete=True condition without the SuccessCriteriaMet=true "
                                     "condition"))
    finished = complete or failed
    active = _int(status.get("active"))
    if opts.finished_with_active and active > 0 and finished:
        out.append(invalid("status.active", active, "active>0 is invalid for finished job"))
    if opts.finished_without_start_time and start is None and finished:
        out.append(required("status.startTime", "startTime is required for finished job"))
    uncounted = status.get("uncountedTerminatedPods")
    if (opts.finished_with_uncounted and finished and isinstance(uncounted, dict)
            and _uids(uncounted.get("succeeded")) + _uids(uncounted.get("failed"))):
        out.append(Cause("FieldValueInvalid", f"Invalid value: {_go_uncounted(uncounted)}: uncountedTerminatedPods "
                         "needs to be empty for finished job", "status.uncountedTerminatedPods"))
    out.extend(_indexes(job, opts))
    terminating = _int(status.get("terminating"))
    if opts.finished_with_terminating and terminating > 0 and finished:
        out.append(invalid("status.terminating", terminating, "terminating>0 is invalid for finished job"))
    ready = status.get("ready")
    if opts.more_ready_than_active and isinstance(ready, int) and ready > active:
        out.append(invalid("status.ready", ready, "cannot set more ready pods than active"))
    if met and failed:
        out.append(_omit(CONDITIONS, "cannot set SuccessCriteriaMet=True and Failed=true conditions"))
    if met and failure_target:
        out.append(_omit(CONDITIONS, "cannot set SuccessCriteriaMet=True and FailureTarget=true conditions"))
    if spec.get("successPolicy") is not None and not met and complete:
        out.append(_omit(CONDITIONS, "cannot set Complete=True for Job with SuccessPolicy unless "
                                     "SuccessCriteriaMet=True"))
    return out


def validate_job_status_update(new: Obj, old: Obj) -> list[Cause]:
    """ValidateJobStatusUpdate of a status update of the stored Job ``old`` to ``new`` (whose ``spec`` is the
    stored one), with the options of :func:`status_options`: validateJobStatus's rules, then terminal conditions
    (Failed, Complete, FailureTarget) not disabled, the failed and (unless an Indexed Job with completions equal
    to parallelism) succeeded counters not decreasing, completionTime not changed once set, startTime not changed
    once set on an unsuspended Job, SuccessCriteriaMet not disabled nor added to a Job already Complete.
    Returns the causes ([] when valid); paths under ``status``, messages kube's."""
    opts = status_options(new, old)
    out = _job_status(new, opts)
    status, old_status = _dict(new.get("status")), _dict(old.get("status"))
    for kind in TERMINAL:
        if _true(old, kind) and not _true(new, kind):
            out.append(_omit(CONDITIONS, f"cannot disable the terminal {kind}=True condition"))
    for key, rejected in (("failed", True), ("succeeded", opts.decreasing_succeeded)):
        value = _int(status.get(key))
        if rejected and value < _int(old_status.get(key)):
            out.append(invalid(f"status.{key}", value, f"cannot decrease the {key} counter"))
    completion, old_completion = status.get("completionTime"), old_status.get("completionTime")
    if completion is not None and old_completion is not None and not _same_time(completion, old_completion):
        out.append(Cause("FieldValueInvalid", f"Invalid value: {go_time(completion)}: completionTime cannot be "
                         "mutated", "status.completionTime"))
    if (opts.start_time_update and old_status.get("startTime") is not None
            and _dict(new.get("spec")).get("suspend") is not True and not _true(old, "Suspended")):
        out.append(required("status.startTime", "startTime cannot be removed for unsuspended job"))
    met = _true(new, "SuccessCriteriaMet")
    if _true(old, "SuccessCriteriaMet") and not met:
        out.append(_omit(CONDITIONS, "cannot disable the SuccessCriteriaMet=True condition"))
    if _true(old, "Complete") and not _true(old, "SuccessCriteriaMet") and met:
        out.append(_omit(CONDITIONS, "cannot set SuccessCriteriaMet=True for Job already has Complete=true "
                                     "conditions"))
    return out
