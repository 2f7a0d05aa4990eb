from kapi_proto.kapi.common.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Decision(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DECISION_NO_OPINION: _ClassVar[Decision]
    DECISION_ALLOW: _ClassVar[Decision]
    DECISION_DENY: _ClassVar[Decision]
DECISION_NO_OPINION: Decision
DECISION_ALLOW: Decision
DECISION_DENY: Decision

class AuthorizeRequest(_message.Message):
    __slots__ = ("attributes",)
    ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    attributes: _common_pb2.RequestAttributes
    def __init__(self, attributes: _Optional[_Union[_common_pb2.RequestAttributes, _Mapping]] = ...) -> None: ...

class AuthorizeResponse(_message.Message):
    __slots__ = ("decision", "reason", "evaluation_error", "policy_revision", "no_cache", "name_independent")
    DECISION_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    EVALUATION_ERROR_FIELD_NUMBER: _ClassVar[int]
    POLICY_REVISION_FIELD_NUMBER: _ClassVar[int]
    NO_CACHE_FIELD_NUMBER: _ClassVar[int]
    NAME_INDEPENDENT_FIELD_NUMBER: _ClassVar[int]
    decision: Decision
    reason: str
    evaluation_error: str
    policy_revision: int
    no_cache: bool
    name_independent: bool
    def __init__(self, decision: _Optional[_Union[Decision, str]] = ..., reason: _Optional[str] = ..., evaluation_error: _Optional[str] = ..., policy_revision: _Optional[int] = ..., no_cache: _Optional[bool] = ..., name_independent: _Optional[bool] = ...) -> None: ...

class RulesReviewRequest(_message.Message):
    __slots__ = ("user", "namespace")
    USER_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    user: _common_pb2.UserInfo
    namespace: str
    def __init__(self, user: _Optional[_Union[_common_pb2.UserInfo, _Mapping]] = ..., namespace: _Optional[str] = ...) -> None: ...

class ResourceRule(_message.Message):
    __slots__ = ("verbs", "api_groups", "resources", "resource_names")
    VERBS_FIELD_NUMBER: _ClassVar[int]
    API_GROUPS_FIELD_NUMBER: _ClassVar[int]
    RESOURCES_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_NAMES_FIELD_NUMBER: _ClassVar[int]
    verbs: _containers.RepeatedScalarFieldContainer[str]
    api_groups: _containers.RepeatedScalarFieldContainer[str]
    resources: _containers.RepeatedScalarFieldContainer[str]
    resource_names: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, verbs: _Optional[_Iterable[str]] = ..., api_groups: _Optional[_Iterable[str]] = ..., resources: _Optional[_Iterable[str]] = ..., resource_names: _Optional[_Iterable[str]] = ...) -> None: ...

class NonResourceRule(_message.Message):
    __slots__ = ("verbs", "non_resource_urls")
    VERBS_FIELD_NUMBER: _ClassVar[int]
    NON_RESOURCE_URLS_FIELD_NUMBER: _ClassVar[int]
    verbs: _containers.RepeatedScalarFieldContainer[str]
    non_resource_urls: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, verbs: _Optional[_Iterable[str]] = ..., non_resource_urls: _Optional[_Iterable[str]] = ...) -> None: ...

class RulesReviewResponse(_message.Message):
    __slots__ = ("resource_rules", "non_resource_rules", "incomplete", "evaluation_error")
    RESOURCE_RULES_FIELD_NUMBER: _ClassVar[int]
    NON_RESOURCE_RULES_FIELD_NUMBER: _ClassVar[int]
    INCOMPLETE_FIELD_NUMBER: _ClassVar[int]
    EVALUATION_ERROR_FIELD_NUMBER: _ClassVar[int]
    resource_rules: _containers.RepeatedCompositeFieldContainer[ResourceRule]
    non_resource_rules: _containers.RepeatedCompositeFieldContainer[NonResourceRule]
    incomplete: bool
    evaluation_error: str
    def __init__(self, resource_rules: _Optional[_Iterable[_Union[ResourceRule, _Mapping]]] = ..., non_resource_rules: _Optional[_Iterable[_Union[NonResourceRule, _Mapping]]] = ..., incomplete: _Optional[bool] = ..., evaluation_error: _Optional[str] = ...) -> None: ...

class CheckEscalationRequest(_message.Message):
    __slots__ = ("attributes", "object", "old_object")
    ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    OBJECT_FIELD_NUMBER: _ClassVar[int]
    OLD_OBJECT_FIELD_NUMBER: _ClassVar[int]
    attributes: _common_pb2.RequestAttributes
    object: bytes
    old_object: bytes
    def __init__(self, attributes: _Optional[_Union[_common_pb2.RequestAttributes, _Mapping]] = ..., object: _Optional[bytes] = ..., old_object: _Optional[bytes] = ...) -> None: ...

class CheckEscalationResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class WatchPolicyRevisionRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class PolicyRevision(_message.Message):
    __slots__ = ("revision",)
    REVISION_FIELD_NUMBER: _ClassVar[int]
    revision: int
    def __init__(self, revision: _Optional[int] = ...) -> None: ...
