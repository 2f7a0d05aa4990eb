from kapi_proto.kapi.common.v1 import common_pb2 as _common_pb2
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Start(_message.Message):
    __slots__ = ("request_id", "attributes", "mutating", "long_running")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    MUTATING_FIELD_NUMBER: _ClassVar[int]
    LONG_RUNNING_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    attributes: _common_pb2.RequestAttributes
    mutating: bool
    long_running: bool
    def __init__(self, request_id: _Optional[int] = ..., attributes: _Optional[_Union[_common_pb2.RequestAttributes, _Mapping]] = ..., mutating: _Optional[bool] = ..., long_running: _Optional[bool] = ...) -> None: ...

class Finish(_message.Message):
    __slots__ = ("request_id",)
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    def __init__(self, request_id: _Optional[int] = ...) -> None: ...

class DispatchRequest(_message.Message):
    __slots__ = ("start", "finish")
    START_FIELD_NUMBER: _ClassVar[int]
    FINISH_FIELD_NUMBER: _ClassVar[int]
    start: Start
    finish: Finish
    def __init__(self, start: _Optional[_Union[Start, _Mapping]] = ..., finish: _Optional[_Union[Finish, _Mapping]] = ...) -> None: ...

class DispatchResponse(_message.Message):
    __slots__ = ("request_id", "execute", "retry_after_seconds", "flow_schema", "priority_level", "reason")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    EXECUTE_FIELD_NUMBER: _ClassVar[int]
    RETRY_AFTER_SECONDS_FIELD_NUMBER: _ClassVar[int]
    FLOW_SCHEMA_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_LEVEL_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    execute: bool
    retry_after_seconds: int
    flow_schema: str
    priority_level: str
    reason: str
    def __init__(self, request_id: _Optional[int] = ..., execute: _Optional[bool] = ..., retry_after_seconds: _Optional[int] = ..., flow_schema: _Optional[str] = ..., priority_level: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...
