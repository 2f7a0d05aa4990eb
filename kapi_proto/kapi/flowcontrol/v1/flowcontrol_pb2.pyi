from kapi_proto.kapi.common.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Start(_message.Message):
    __slots__ = ("request_id", "attributes", "mutating", "long_running", "list_limit", "accept_leases", "queue_wait_limit_seconds")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    MUTATING_FIELD_NUMBER: _ClassVar[int]
    LONG_RUNNING_FIELD_NUMBER: _ClassVar[int]
    LIST_LIMIT_FIELD_NUMBER: _ClassVar[int]
    ACCEPT_LEASES_FIELD_NUMBER: _ClassVar[int]
    QUEUE_WAIT_LIMIT_SECONDS_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    attributes: _common_pb2.RequestAttributes
    mutating: bool
    long_running: bool
    list_limit: int
    accept_leases: bool
    queue_wait_limit_seconds: float
    def __init__(self, request_id: _Optional[int] = ..., attributes: _Optional[_Union[_common_pb2.RequestAttributes, _Mapping]] = ..., mutating: _Optional[bool] = ..., long_running: _Optional[bool] = ..., list_limit: _Optional[int] = ..., accept_leases: _Optional[bool] = ..., queue_wait_limit_seconds: _Optional[float] = ...) -> None: ...

class Finish(_message.Message):
    __slots__ = ("request_id",)
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    def __init__(self, request_id: _Optional[int] = ...) -> None: ...

class LeaseReturn(_message.Message):
    __slots__ = ("priority_level", "seats")
    PRIORITY_LEVEL_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    priority_level: str
    seats: int
    def __init__(self, priority_level: _Optional[str] = ..., seats: _Optional[int] = ...) -> None: ...

class LocalCount(_message.Message):
    __slots__ = ("flow_schema", "priority_level", "dispatched", "finished", "executing")
    FLOW_SCHEMA_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_LEVEL_FIELD_NUMBER: _ClassVar[int]
    DISPATCHED_FIELD_NUMBER: _ClassVar[int]
    FINISHED_FIELD_NUMBER: _ClassVar[int]
    EXECUTING_FIELD_NUMBER: _ClassVar[int]
    flow_schema: str
    priority_level: str
    dispatched: int
    finished: int
    executing: int
    def __init__(self, flow_schema: _Optional[str] = ..., priority_level: _Optional[str] = ..., dispatched: _Optional[int] = ..., finished: _Optional[int] = ..., executing: _Optional[int] = ...) -> None: ...

class LevelDemand(_message.Message):
    __slots__ = ("priority_level", "peak_in_flight")
    PRIORITY_LEVEL_FIELD_NUMBER: _ClassVar[int]
    PEAK_IN_FLIGHT_FIELD_NUMBER: _ClassVar[int]
    priority_level: str
    peak_in_flight: int
    def __init__(self, priority_level: _Optional[str] = ..., peak_in_flight: _Optional[int] = ...) -> None: ...

class LocalReport(_message.Message):
    __slots__ = ("counts", "demand", "sequence")
    COUNTS_FIELD_NUMBER: _ClassVar[int]
    DEMAND_FIELD_NUMBER: _ClassVar[int]
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    counts: _containers.RepeatedCompositeFieldContainer[LocalCount]
    demand: _containers.RepeatedCompositeFieldContainer[LevelDemand]
    sequence: int
    def __init__(self, counts: _Optional[_Iterable[_Union[LocalCount, _Mapping]]] = ..., demand: _Optional[_Iterable[_Union[LevelDemand, _Mapping]]] = ..., sequence: _Optional[int] = ...) -> None: ...

class DispatchRequests(_message.Message):
    __slots__ = ("requests",)
    REQUESTS_FIELD_NUMBER: _ClassVar[int]
    requests: _containers.RepeatedCompositeFieldContainer[DispatchRequest]
    def __init__(self, requests: _Optional[_Iterable[_Union[DispatchRequest, _Mapping]]] = ...) -> None: ...

class DispatchResponses(_message.Message):
    __slots__ = ("responses", "lease_changes", "config_generation", "report_ack")
    RESPONSES_FIELD_NUMBER: _ClassVar[int]
    LEASE_CHANGES_FIELD_NUMBER: _ClassVar[int]
    CONFIG_GENERATION_FIELD_NUMBER: _ClassVar[int]
    REPORT_ACK_FIELD_NUMBER: _ClassVar[int]
    responses: _containers.RepeatedCompositeFieldContainer[DispatchResponse]
    lease_changes: _containers.RepeatedCompositeFieldContainer[LeaseChange]
    config_generation: int
    report_ack: int
    def __init__(self, responses: _Optional[_Iterable[_Union[DispatchResponse, _Mapping]]] = ..., lease_changes: _Optional[_Iterable[_Union[LeaseChange, _Mapping]]] = ..., config_generation: _Optional[int] = ..., report_ack: _Optional[int] = ...) -> None: ...

class LeaseChange(_message.Message):
    __slots__ = ("priority_level", "grant", "revoke", "keep")
    PRIORITY_LEVEL_FIELD_NUMBER: _ClassVar[int]
    GRANT_FIELD_NUMBER: _ClassVar[int]
    REVOKE_FIELD_NUMBER: _ClassVar[int]
    KEEP_FIELD_NUMBER: _ClassVar[int]
    priority_level: str
    grant: int
    revoke: bool
    keep: int
    def __init__(self, priority_level: _Optional[str] = ..., grant: _Optional[int] = ..., revoke: _Optional[bool] = ..., keep: _Optional[int] = ...) -> None: ...

class DispatchRequest(_message.Message):
    __slots__ = ("start", "finish", "lease_return", "report")
    START_FIELD_NUMBER: _ClassVar[int]
    FINISH_FIELD_NUMBER: _ClassVar[int]
    LEASE_RETURN_FIELD_NUMBER: _ClassVar[int]
    REPORT_FIELD_NUMBER: _ClassVar[int]
    start: Start
    finish: Finish
    lease_return: LeaseReturn
    report: LocalReport
    def __init__(self, start: _Optional[_Union[Start, _Mapping]] = ..., finish: _Optional[_Union[Finish, _Mapping]] = ..., lease_return: _Optional[_Union[LeaseReturn, _Mapping]] = ..., report: _Optional[_Union[LocalReport, _Mapping]] = ...) -> None: ...

class DispatchResponse(_message.Message):
    __slots__ = ("request_id", "execute", "retry_after_seconds", "flow_schema", "priority_level", "reason", "flow_schema_uid", "priority_level_uid", "config_generation", "exempt", "leasable")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    EXECUTE_FIELD_NUMBER: _ClassVar[int]
    RETRY_AFTER_SECONDS_FIELD_NUMBER: _ClassVar[int]
    FLOW_SCHEMA_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_LEVEL_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    FLOW_SCHEMA_UID_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_LEVEL_UID_FIELD_NUMBER: _ClassVar[int]
    CONFIG_GENERATION_FIELD_NUMBER: _ClassVar[int]
    EXEMPT_FIELD_NUMBER: _ClassVar[int]
    LEASABLE_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    execute: bool
    retry_after_seconds: int
    flow_schema: str
    priority_level: str
    reason: str
    flow_schema_uid: str
    priority_level_uid: str
    config_generation: int
    exempt: bool
    leasable: bool
    def __init__(self, request_id: _Optional[int] = ..., execute: _Optional[bool] = ..., retry_after_seconds: _Optional[int] = ..., flow_schema: _Optional[str] = ..., priority_level: _Optional[str] = ..., reason: _Optional[str] = ..., flow_schema_uid: _Optional[str] = ..., priority_level_uid: _Optional[str] = ..., config_generation: _Optional[int] = ..., exempt: _Optional[bool] = ..., leasable: _Optional[bool] = ...) -> None: ...

class DumpRequest(_message.Message):
    __slots__ = ("kind", "include_request_details")
    KIND_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_REQUEST_DETAILS_FIELD_NUMBER: _ClassVar[int]
    kind: str
    include_request_details: bool
    def __init__(self, kind: _Optional[str] = ..., include_request_details: _Optional[bool] = ...) -> None: ...

class DumpResponse(_message.Message):
    __slots__ = ("text",)
    TEXT_FIELD_NUMBER: _ClassVar[int]
    text: str
    def __init__(self, text: _Optional[str] = ...) -> None: ...
