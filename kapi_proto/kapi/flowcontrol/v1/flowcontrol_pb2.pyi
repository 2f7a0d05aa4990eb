from kapi_proto.kapi.common.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Start(_message.Message):
    __slots__ = ("request_id", "attributes", "mutating", "long_running", "list_limit")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    MUTATING_FIELD_NUMBER: _ClassVar[int]
    LONG_RUNNING_FIELD_NUMBER: _ClassVar[int]
    LIST_LIMIT_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    attributes: _common_pb2.RequestAttributes
    mutating: bool
    long_running: bool
    list_limit: int
    def __init__(self, request_id: _Optional[int] = ..., attributes: _Optional[_Union[_common_pb2.RequestAttributes, _Mapping]] = ..., mutating: _Optional[bool] = ..., long_running: _Optional[bool] = ..., list_limit: _Optional[int] = ...) -> None: ...

class Finish(_message.Message):
    __slots__ = ("request_id",)
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    def __init__(self, request_id: _Optional[int] = ...) -> None: ...

class DispatchRequests(_message.Message):
    __slots__ = ("requests",)
    REQUESTS_FIELD_NUMBER: _ClassVar[int]
    requests: _containers.RepeatedCompositeFieldContainer[DispatchRequest]
    def __init__(self, requests: _Optional[_Iterable[_Union[DispatchRequest, _Mapping]]] = ...) -> None: ...

class DispatchResponses(_message.Message):
    __slots__ = ("responses",)
    RESPONSES_FIELD_NUMBER: _ClassVar[int]
    responses: _containers.RepeatedCompositeFieldContainer[DispatchResponse]
    def __init__(self, responses: _Optional[_Iterable[_Union[DispatchResponse, _Mapping]]] = ...) -> None: ...

class DispatchRequest(_message.Message):
    __slots__ = ("start", "finish")
    START_FIELD_NUMBER: _ClassVar[int]
    FINISH_FIELD_NUMBER: _ClassVar[int]
    start: Start
    finish: Finish
    def __init__(self, start: _Optional[_Union[Start, _Mapping]] = ..., finish: _Optional[_Union[Finish, _Mapping]] = ...) -> None: ...

class DispatchResponse(_message.Message):
    __slots__ = ("request_id", "execute", "retry_after_seconds", "flow_schema", "priority_level", "reason", "flow_schema_uid", "priority_level_uid")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    EXECUTE_FIELD_NUMBER: _ClassVar[int]
    RETRY_AFTER_SECONDS_FIELD_NUMBER: _ClassVar[int]
    FLOW_SCHEMA_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_LEVEL_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    FLOW_SCHEMA_UID_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_LEVEL_UID_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    execute: bool
    retry_after_seconds: int
    flow_schema: str
    priority_level: str
    reason: str
    flow_schema_uid: str
    priority_level_uid: str
    def __init__(self, request_id: _Optional[int] = ..., execute: _Optional[bool] = ..., retry_after_seconds: _Optional[int] = ..., flow_schema: _Optional[str] = ..., priority_level: _Optional[str] = ..., reason: _Optional[str] = ..., flow_schema_uid: _Optional[str] = ..., priority_level_uid: _Optional[str] = ...) -> None: ...

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
