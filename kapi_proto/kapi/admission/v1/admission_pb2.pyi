from kapi_proto.kapi.common.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class AdmitRequest(_message.Message):
    __slots__ = ("operation", "attributes", "kind", "object", "old_object", "dry_run", "field_validation", "patch_type", "patch_value", "options", "skip_plugins")
    OPERATION_FIELD_NUMBER: _ClassVar[int]
    ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    OBJECT_FIELD_NUMBER: _ClassVar[int]
    OLD_OBJECT_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    FIELD_VALIDATION_FIELD_NUMBER: _ClassVar[int]
    PATCH_TYPE_FIELD_NUMBER: _ClassVar[int]
    PATCH_VALUE_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    SKIP_PLUGINS_FIELD_NUMBER: _ClassVar[int]
    operation: str
    attributes: _common_pb2.RequestAttributes
    kind: str
    object: bytes
    old_object: bytes
    dry_run: bool
    field_validation: str
    patch_type: str
    patch_value: str
    options: bytes
    skip_plugins: bool
    def __init__(self, operation: _Optional[str] = ..., attributes: _Optional[_Union[_common_pb2.RequestAttributes, _Mapping]] = ..., kind: _Optional[str] = ..., object: _Optional[bytes] = ..., old_object: _Optional[bytes] = ..., dry_run: _Optional[bool] = ..., field_validation: _Optional[str] = ..., patch_type: _Optional[str] = ..., patch_value: _Optional[str] = ..., options: _Optional[bytes] = ..., skip_plugins: _Optional[bool] = ...) -> None: ...

class AdmitResponse(_message.Message):
    __slots__ = ("object", "warnings", "audit_annotations")
    class AuditAnnotationsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    OBJECT_FIELD_NUMBER: _ClassVar[int]
    WARNINGS_FIELD_NUMBER: _ClassVar[int]
    AUDIT_ANNOTATIONS_FIELD_NUMBER: _ClassVar[int]
    object: bytes
    warnings: _containers.RepeatedScalarFieldContainer[str]
    audit_annotations: _containers.ScalarMap[str, str]
    def __init__(self, object: _Optional[bytes] = ..., warnings: _Optional[_Iterable[str]] = ..., audit_annotations: _Optional[_Mapping[str, str]] = ...) -> None: ...

class AdmitCallRequests(_message.Message):
    __slots__ = ("requests",)
    REQUESTS_FIELD_NUMBER: _ClassVar[int]
    requests: _containers.RepeatedCompositeFieldContainer[AdmitCallRequest]
    def __init__(self, requests: _Optional[_Iterable[_Union[AdmitCallRequest, _Mapping]]] = ...) -> None: ...

class AdmitCallRequest(_message.Message):
    __slots__ = ("id", "admit", "cancel", "timeout_seconds")
    ID_FIELD_NUMBER: _ClassVar[int]
    ADMIT_FIELD_NUMBER: _ClassVar[int]
    CANCEL_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_SECONDS_FIELD_NUMBER: _ClassVar[int]
    id: int
    admit: AdmitRequest
    cancel: _common_pb2.CallCancel
    timeout_seconds: float
    def __init__(self, id: _Optional[int] = ..., admit: _Optional[_Union[AdmitRequest, _Mapping]] = ..., cancel: _Optional[_Union[_common_pb2.CallCancel, _Mapping]] = ..., timeout_seconds: _Optional[float] = ...) -> None: ...

class AdmitCallResponses(_message.Message):
    __slots__ = ("responses",)
    RESPONSES_FIELD_NUMBER: _ClassVar[int]
    responses: _containers.RepeatedCompositeFieldContainer[AdmitCallResponse]
    def __init__(self, responses: _Optional[_Iterable[_Union[AdmitCallResponse, _Mapping]]] = ...) -> None: ...

class AdmitCallResponse(_message.Message):
    __slots__ = ("id", "admit", "error")
    ID_FIELD_NUMBER: _ClassVar[int]
    ADMIT_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    id: int
    admit: AdmitResponse
    error: _common_pb2.CallError
    def __init__(self, id: _Optional[int] = ..., admit: _Optional[_Union[AdmitResponse, _Mapping]] = ..., error: _Optional[_Union[_common_pb2.CallError, _Mapping]] = ...) -> None: ...
