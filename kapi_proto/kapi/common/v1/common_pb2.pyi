from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ExtraValue(_message.Message):
    __slots__ = ("values",)
    VALUES_FIELD_NUMBER: _ClassVar[int]
    values: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, values: _Optional[_Iterable[str]] = ...) -> None: ...

class UserInfo(_message.Message):
    __slots__ = ("username", "uid", "groups", "extra")
    class ExtraEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: ExtraValue
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[ExtraValue, _Mapping]] = ...) -> None: ...
    USERNAME_FIELD_NUMBER: _ClassVar[int]
    UID_FIELD_NUMBER: _ClassVar[int]
    GROUPS_FIELD_NUMBER: _ClassVar[int]
    EXTRA_FIELD_NUMBER: _ClassVar[int]
    username: str
    uid: str
    groups: _containers.RepeatedScalarFieldContainer[str]
    extra: _containers.MessageMap[str, ExtraValue]
    def __init__(self, username: _Optional[str] = ..., uid: _Optional[str] = ..., groups: _Optional[_Iterable[str]] = ..., extra: _Optional[_Mapping[str, ExtraValue]] = ...) -> None: ...

class RequestAttributes(_message.Message):
    __slots__ = ("user", "verb", "resource_request", "api_group", "api_version", "resource", "subresource", "namespace", "name", "path")
    USER_FIELD_NUMBER: _ClassVar[int]
    VERB_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_REQUEST_FIELD_NUMBER: _ClassVar[int]
    API_GROUP_FIELD_NUMBER: _ClassVar[int]
    API_VERSION_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_FIELD_NUMBER: _ClassVar[int]
    SUBRESOURCE_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    user: UserInfo
    verb: str
    resource_request: bool
    api_group: str
    api_version: str
    resource: str
    subresource: str
    namespace: str
    name: str
    path: str
    def __init__(self, user: _Optional[_Union[UserInfo, _Mapping]] = ..., verb: _Optional[str] = ..., resource_request: _Optional[bool] = ..., api_group: _Optional[str] = ..., api_version: _Optional[str] = ..., resource: _Optional[str] = ..., subresource: _Optional[str] = ..., namespace: _Optional[str] = ..., name: _Optional[str] = ..., path: _Optional[str] = ...) -> None: ...

class CallCancel(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class CallError(_message.Message):
    __slots__ = ("code", "message", "status", "warnings", "audit_annotations")
    class AuditAnnotationsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    WARNINGS_FIELD_NUMBER: _ClassVar[int]
    AUDIT_ANNOTATIONS_FIELD_NUMBER: _ClassVar[int]
    code: int
    message: str
    status: bytes
    warnings: _containers.RepeatedScalarFieldContainer[str]
    audit_annotations: _containers.ScalarMap[str, str]
    def __init__(self, code: _Optional[int] = ..., message: _Optional[str] = ..., status: _Optional[bytes] = ..., warnings: _Optional[_Iterable[str]] = ..., audit_annotations: _Optional[_Mapping[str, str]] = ...) -> None: ...
