from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ResourceKey(_message.Message):
    __slots__ = ("group", "resource", "namespace", "name")
    GROUP_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    group: str
    resource: str
    namespace: str
    name: str
    def __init__(self, group: _Optional[str] = ..., resource: _Optional[str] = ..., namespace: _Optional[str] = ..., name: _Optional[str] = ...) -> None: ...

class CreateRequest(_message.Message):
    __slots__ = ("key", "object")
    KEY_FIELD_NUMBER: _ClassVar[int]
    OBJECT_FIELD_NUMBER: _ClassVar[int]
    key: ResourceKey
    object: bytes
    def __init__(self, key: _Optional[_Union[ResourceKey, _Mapping]] = ..., object: _Optional[bytes] = ...) -> None: ...

class GetRequest(_message.Message):
    __slots__ = ("key", "resource_version")
    KEY_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_VERSION_FIELD_NUMBER: _ClassVar[int]
    key: ResourceKey
    resource_version: str
    def __init__(self, key: _Optional[_Union[ResourceKey, _Mapping]] = ..., resource_version: _Optional[str] = ...) -> None: ...

class ObjectResponse(_message.Message):
    __slots__ = ("object", "resource_version", "deletion_pending")
    OBJECT_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_VERSION_FIELD_NUMBER: _ClassVar[int]
    DELETION_PENDING_FIELD_NUMBER: _ClassVar[int]
    object: bytes
    resource_version: int
    deletion_pending: bool
    def __init__(self, object: _Optional[bytes] = ..., resource_version: _Optional[int] = ..., deletion_pending: _Optional[bool] = ...) -> None: ...

class ListRequest(_message.Message):
    __slots__ = ("key", "label_selector", "field_selector", "limit", "resource_version", "resource_version_match", "selectable_fields")
    KEY_FIELD_NUMBER: _ClassVar[int]
    LABEL_SELECTOR_FIELD_NUMBER: _ClassVar[int]
    FIELD_SELECTOR_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    CONTINUE_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_VERSION_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_VERSION_MATCH_FIELD_NUMBER: _ClassVar[int]
    SELECTABLE_FIELDS_FIELD_NUMBER: _ClassVar[int]
    key: ResourceKey
    label_selector: str
    field_selector: str
    limit: int
    resource_version: str
    resource_version_match: str
    selectable_fields: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, key: _Optional[_Union[ResourceKey, _Mapping]] = ..., label_selector: _Optional[str] = ..., field_selector: _Optional[str] = ..., limit: _Optional[int] = ..., resource_version: _Optional[str] = ..., resource_version_match: _Optional[str] = ..., selectable_fields: _Optional[_Iterable[str]] = ..., **kwargs) -> None: ...

class ListResponse(_message.Message):
    __slots__ = ("items", "resource_version", "remaining_item_count", "has_remaining_item_count")
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_VERSION_FIELD_NUMBER: _ClassVar[int]
    CONTINUE_FIELD_NUMBER: _ClassVar[int]
    REMAINING_ITEM_COUNT_FIELD_NUMBER: _ClassVar[int]
    HAS_REMAINING_ITEM_COUNT_FIELD_NUMBER: _ClassVar[int]
    items: _containers.RepeatedScalarFieldContainer[bytes]
    resource_version: int
    remaining_item_count: int
    has_remaining_item_count: bool
    def __init__(self, items: _Optional[_Iterable[bytes]] = ..., resource_version: _Optional[int] = ..., remaining_item_count: _Optional[int] = ..., has_remaining_item_count: _Optional[bool] = ..., **kwargs) -> None: ...

class UpdateRequest(_message.Message):
    __slots__ = ("key", "object", "expected_resource_version")
    KEY_FIELD_NUMBER: _ClassVar[int]
    OBJECT_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_RESOURCE_VERSION_FIELD_NUMBER: _ClassVar[int]
    key: ResourceKey
    object: bytes
    expected_resource_version: int
    def __init__(self, key: _Optional[_Union[ResourceKey, _Mapping]] = ..., object: _Optional[bytes] = ..., expected_resource_version: _Optional[int] = ...) -> None: ...

class DeleteRequest(_message.Message):
    __slots__ = ("key", "expected_resource_version", "expected_uid")
    KEY_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_RESOURCE_VERSION_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_UID_FIELD_NUMBER: _ClassVar[int]
    key: ResourceKey
    expected_resource_version: int
    expected_uid: str
    def __init__(self, key: _Optional[_Union[ResourceKey, _Mapping]] = ..., expected_resource_version: _Optional[int] = ..., expected_uid: _Optional[str] = ...) -> None: ...

class WatchRequest(_message.Message):
    __slots__ = ("key", "resource_version", "label_selector", "field_selector", "allow_bookmarks", "send_initial_events", "selectable_fields", "skip_initial_events")
    KEY_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_VERSION_FIELD_NUMBER: _ClassVar[int]
    LABEL_SELECTOR_FIELD_NUMBER: _ClassVar[int]
    FIELD_SELECTOR_FIELD_NUMBER: _ClassVar[int]
    ALLOW_BOOKMARKS_FIELD_NUMBER: _ClassVar[int]
    SEND_INITIAL_EVENTS_FIELD_NUMBER: _ClassVar[int]
    SELECTABLE_FIELDS_FIELD_NUMBER: _ClassVar[int]
    SKIP_INITIAL_EVENTS_FIELD_NUMBER: _ClassVar[int]
    key: ResourceKey
    resource_version: str
    label_selector: str
    field_selector: str
    allow_bookmarks: bool
    send_initial_events: bool
    selectable_fields: _containers.RepeatedScalarFieldContainer[str]
    skip_initial_events: bool
    def __init__(self, key: _Optional[_Union[ResourceKey, _Mapping]] = ..., resource_version: _Optional[str] = ..., label_selector: _Optional[str] = ..., field_selector: _Optional[str] = ..., allow_bookmarks: _Optional[bool] = ..., send_initial_events: _Optional[bool] = ..., selectable_fields: _Optional[_Iterable[str]] = ..., skip_initial_events: _Optional[bool] = ...) -> None: ...

class WatchEvent(_message.Message):
    __slots__ = ("type", "object", "resource_version")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    OBJECT_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_VERSION_FIELD_NUMBER: _ClassVar[int]
    type: str
    object: bytes
    resource_version: int
    def __init__(self, type: _Optional[str] = ..., object: _Optional[bytes] = ..., resource_version: _Optional[int] = ...) -> None: ...

class WatchResponse(_message.Message):
    __slots__ = ("events",)
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[WatchEvent]
    def __init__(self, events: _Optional[_Iterable[_Union[WatchEvent, _Mapping]]] = ...) -> None: ...

class CallRequests(_message.Message):
    __slots__ = ("requests",)
    REQUESTS_FIELD_NUMBER: _ClassVar[int]
    requests: _containers.RepeatedCompositeFieldContainer[CallRequest]
    def __init__(self, requests: _Optional[_Iterable[_Union[CallRequest, _Mapping]]] = ...) -> None: ...

class CallRequest(_message.Message):
    __slots__ = ("id", "get", "list", "create", "update", "delete", "cancel", "timeout_seconds")
    ID_FIELD_NUMBER: _ClassVar[int]
    GET_FIELD_NUMBER: _ClassVar[int]
    LIST_FIELD_NUMBER: _ClassVar[int]
    CREATE_FIELD_NUMBER: _ClassVar[int]
    UPDATE_FIELD_NUMBER: _ClassVar[int]
    DELETE_FIELD_NUMBER: _ClassVar[int]
    CANCEL_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_SECONDS_FIELD_NUMBER: _ClassVar[int]
    id: int
    get: GetRequest
    list: ListRequest
    create: CreateRequest
    update: UpdateRequest
    delete: DeleteRequest
    cancel: CallCancel
    timeout_seconds: float
    def __init__(self, id: _Optional[int] = ..., get: _Optional[_Union[GetRequest, _Mapping]] = ..., list: _Optional[_Union[ListRequest, _Mapping]] = ..., create: _Optional[_Union[CreateRequest, _Mapping]] = ..., update: _Optional[_Union[UpdateRequest, _Mapping]] = ..., delete: _Optional[_Union[DeleteRequest, _Mapping]] = ..., cancel: _Optional[_Union[CallCancel, _Mapping]] = ..., timeout_seconds: _Optional[float] = ...) -> None: ...

class CallCancel(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class CallResponses(_message.Message):
    __slots__ = ("responses",)
    RESPONSES_FIELD_NUMBER: _ClassVar[int]
    responses: _containers.RepeatedCompositeFieldContainer[CallResponse]
    def __init__(self, responses: _Optional[_Iterable[_Union[CallResponse, _Mapping]]] = ...) -> None: ...

class CallResponse(_message.Message):
    __slots__ = ("id", "object", "list", "error")
    ID_FIELD_NUMBER: _ClassVar[int]
    OBJECT_FIELD_NUMBER: _ClassVar[int]
    LIST_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    id: int
    object: ObjectResponse
    list: ListResponse
    error: CallError
    def __init__(self, id: _Optional[int] = ..., object: _Optional[_Union[ObjectResponse, _Mapping]] = ..., list: _Optional[_Union[ListResponse, _Mapping]] = ..., error: _Optional[_Union[CallError, _Mapping]] = ...) -> None: ...

class CallError(_message.Message):
    __slots__ = ("code", "message", "status")
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    code: int
    message: str
    status: bytes
    def __init__(self, code: _Optional[int] = ..., message: _Optional[str] = ..., status: _Optional[bytes] = ...) -> None: ...
