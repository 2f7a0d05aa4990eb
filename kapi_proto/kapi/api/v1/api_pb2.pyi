from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class PatchType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PATCH_TYPE_UNSPECIFIED: _ClassVar[PatchType]
    JSON_PATCH: _ClassVar[PatchType]
    MERGE_PATCH: _ClassVar[PatchType]
    STRATEGIC_MERGE_PATCH: _ClassVar[PatchType]
    APPLY_PATCH: _ClassVar[PatchType]
PATCH_TYPE_UNSPECIFIED: PatchType
JSON_PATCH: PatchType
MERGE_PATCH: PatchType
STRATEGIC_MERGE_PATCH: PatchType
APPLY_PATCH: PatchType

class ResourceRef(_message.Message):
    __slots__ = ("group", "version", "resource", "namespace", "name", "subresource")
    GROUP_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    SUBRESOURCE_FIELD_NUMBER: _ClassVar[int]
    group: str
    version: str
    resource: str
    namespace: str
    name: str
    subresource: str
    def __init__(self, group: _Optional[str] = ..., version: _Optional[str] = ..., resource: _Optional[str] = ..., namespace: _Optional[str] = ..., name: _Optional[str] = ..., subresource: _Optional[str] = ...) -> None: ...

class WriteOptions(_message.Message):
    __slots__ = ("dry_run", "field_manager", "field_validation")
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    FIELD_MANAGER_FIELD_NUMBER: _ClassVar[int]
    FIELD_VALIDATION_FIELD_NUMBER: _ClassVar[int]
    dry_run: _containers.RepeatedScalarFieldContainer[str]
    field_manager: str
    field_validation: str
    def __init__(self, dry_run: _Optional[_Iterable[str]] = ..., field_manager: _Optional[str] = ..., field_validation: _Optional[str] = ...) -> None: ...

class GetRequest(_message.Message):
    __slots__ = ("ref", "resource_version")
    REF_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_VERSION_FIELD_NUMBER: _ClassVar[int]
    ref: ResourceRef
    resource_version: str
    def __init__(self, ref: _Optional[_Union[ResourceRef, _Mapping]] = ..., resource_version: _Optional[str] = ...) -> None: ...

class ListRequest(_message.Message):
    __slots__ = ("ref", "label_selector", "field_selector", "limit", "resource_version", "resource_version_match")
    REF_FIELD_NUMBER: _ClassVar[int]
    LABEL_SELECTOR_FIELD_NUMBER: _ClassVar[int]
    FIELD_SELECTOR_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    CONTINUE_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_VERSION_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_VERSION_MATCH_FIELD_NUMBER: _ClassVar[int]
    ref: ResourceRef
    label_selector: str
    field_selector: str
    limit: int
    resource_version: str
    resource_version_match: str
    def __init__(self, ref: _Optional[_Union[ResourceRef, _Mapping]] = ..., label_selector: _Optional[str] = ..., field_selector: _Optional[str] = ..., limit: _Optional[int] = ..., resource_version: _Optional[str] = ..., resource_version_match: _Optional[str] = ..., **kwargs) -> None: ...

class CreateRequest(_message.Message):
    __slots__ = ("ref", "object", "options")
    REF_FIELD_NUMBER: _ClassVar[int]
    OBJECT_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    ref: ResourceRef
    object: bytes
    options: WriteOptions
    def __init__(self, ref: _Optional[_Union[ResourceRef, _Mapping]] = ..., object: _Optional[bytes] = ..., options: _Optional[_Union[WriteOptions, _Mapping]] = ...) -> None: ...

class UpdateRequest(_message.Message):
    __slots__ = ("ref", "object", "options")
    REF_FIELD_NUMBER: _ClassVar[int]
    OBJECT_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    ref: ResourceRef
    object: bytes
    options: WriteOptions
    def __init__(self, ref: _Optional[_Union[ResourceRef, _Mapping]] = ..., object: _Optional[bytes] = ..., options: _Optional[_Union[WriteOptions, _Mapping]] = ...) -> None: ...

class PatchRequest(_message.Message):
    __slots__ = ("ref", "type", "patch", "options", "force")
    REF_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    PATCH_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    FORCE_FIELD_NUMBER: _ClassVar[int]
    ref: ResourceRef
    type: PatchType
    patch: bytes
    options: WriteOptions
    force: bool
    def __init__(self, ref: _Optional[_Union[ResourceRef, _Mapping]] = ..., type: _Optional[_Union[PatchType, str]] = ..., patch: _Optional[bytes] = ..., options: _Optional[_Union[WriteOptions, _Mapping]] = ..., force: _Optional[bool] = ...) -> None: ...

class Preconditions(_message.Message):
    __slots__ = ("uid", "resource_version")
    UID_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_VERSION_FIELD_NUMBER: _ClassVar[int]
    uid: str
    resource_version: str
    def __init__(self, uid: _Optional[str] = ..., resource_version: _Optional[str] = ...) -> None: ...

class DeleteOptions(_message.Message):
    __slots__ = ("grace_period_seconds", "preconditions", "propagation_policy", "dry_run")
    GRACE_PERIOD_SECONDS_FIELD_NUMBER: _ClassVar[int]
    PRECONDITIONS_FIELD_NUMBER: _ClassVar[int]
    PROPAGATION_POLICY_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    grace_period_seconds: int
    preconditions: Preconditions
    propagation_policy: str
    dry_run: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, grace_period_seconds: _Optional[int] = ..., preconditions: _Optional[_Union[Preconditions, _Mapping]] = ..., propagation_policy: _Optional[str] = ..., dry_run: _Optional[_Iterable[str]] = ...) -> None: ...

class DeleteRequest(_message.Message):
    __slots__ = ("ref", "options")
    REF_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    ref: ResourceRef
    options: DeleteOptions
    def __init__(self, ref: _Optional[_Union[ResourceRef, _Mapping]] = ..., options: _Optional[_Union[DeleteOptions, _Mapping]] = ...) -> None: ...

class WatchRequest(_message.Message):
    __slots__ = ("ref", "label_selector", "field_selector", "resource_version", "allow_watch_bookmarks", "send_initial_events", "timeout_seconds", "resource_version_match")
    REF_FIELD_NUMBER: _ClassVar[int]
    LABEL_SELECTOR_FIELD_NUMBER: _ClassVar[int]
    FIELD_SELECTOR_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_VERSION_FIELD_NUMBER: _ClassVar[int]
    ALLOW_WATCH_BOOKMARKS_FIELD_NUMBER: _ClassVar[int]
    SEND_INITIAL_EVENTS_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_SECONDS_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_VERSION_MATCH_FIELD_NUMBER: _ClassVar[int]
    ref: ResourceRef
    label_selector: str
    field_selector: str
    resource_version: str
    allow_watch_bookmarks: bool
    send_initial_events: bool
    timeout_seconds: int
    resource_version_match: str
    def __init__(self, ref: _Optional[_Union[ResourceRef, _Mapping]] = ..., label_selector: _Optional[str] = ..., field_selector: _Optional[str] = ..., resource_version: _Optional[str] = ..., allow_watch_bookmarks: _Optional[bool] = ..., send_initial_events: _Optional[bool] = ..., timeout_seconds: _Optional[int] = ..., resource_version_match: _Optional[str] = ...) -> None: ...

class Response(_message.Message):
    __slots__ = ("object", "code", "warnings")
    OBJECT_FIELD_NUMBER: _ClassVar[int]
    CODE_FIELD_NUMBER: _ClassVar[int]
    WARNINGS_FIELD_NUMBER: _ClassVar[int]
    object: bytes
    code: int
    warnings: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, object: _Optional[bytes] = ..., code: _Optional[int] = ..., warnings: _Optional[_Iterable[str]] = ...) -> None: ...

class WatchEvent(_message.Message):
    __slots__ = ("type", "object")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    OBJECT_FIELD_NUMBER: _ClassVar[int]
    type: str
    object: bytes
    def __init__(self, type: _Optional[str] = ..., object: _Optional[bytes] = ...) -> None: ...

class StatusDetail(_message.Message):
    __slots__ = ("status", "warnings")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    WARNINGS_FIELD_NUMBER: _ClassVar[int]
    status: bytes
    warnings: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, status: _Optional[bytes] = ..., warnings: _Optional[_Iterable[str]] = ...) -> None: ...
