from kapi_proto.kapi.common.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class AuthenticateRequest(_message.Message):
    __slots__ = ("authorization", "client_certificate_chain", "forwarded_client_cert")
    AUTHORIZATION_FIELD_NUMBER: _ClassVar[int]
    CLIENT_CERTIFICATE_CHAIN_FIELD_NUMBER: _ClassVar[int]
    FORWARDED_CLIENT_CERT_FIELD_NUMBER: _ClassVar[int]
    authorization: str
    client_certificate_chain: str
    forwarded_client_cert: str
    def __init__(self, authorization: _Optional[str] = ..., client_certificate_chain: _Optional[str] = ..., forwarded_client_cert: _Optional[str] = ...) -> None: ...

class AuthenticateResponse(_message.Message):
    __slots__ = ("user", "authenticator", "cache_ttl_seconds")
    USER_FIELD_NUMBER: _ClassVar[int]
    AUTHENTICATOR_FIELD_NUMBER: _ClassVar[int]
    CACHE_TTL_SECONDS_FIELD_NUMBER: _ClassVar[int]
    user: _common_pb2.UserInfo
    authenticator: str
    cache_ttl_seconds: int
    def __init__(self, user: _Optional[_Union[_common_pb2.UserInfo, _Mapping]] = ..., authenticator: _Optional[str] = ..., cache_ttl_seconds: _Optional[int] = ...) -> None: ...

class ReviewTokenRequest(_message.Message):
    __slots__ = ("token", "audiences")
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    AUDIENCES_FIELD_NUMBER: _ClassVar[int]
    token: str
    audiences: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, token: _Optional[str] = ..., audiences: _Optional[_Iterable[str]] = ...) -> None: ...

class ReviewTokenResponse(_message.Message):
    __slots__ = ("authenticated", "user", "audiences", "error")
    AUTHENTICATED_FIELD_NUMBER: _ClassVar[int]
    USER_FIELD_NUMBER: _ClassVar[int]
    AUDIENCES_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    authenticated: bool
    user: _common_pb2.UserInfo
    audiences: _containers.RepeatedScalarFieldContainer[str]
    error: str
    def __init__(self, authenticated: _Optional[bool] = ..., user: _Optional[_Union[_common_pb2.UserInfo, _Mapping]] = ..., audiences: _Optional[_Iterable[str]] = ..., error: _Optional[str] = ...) -> None: ...

class BoundObjectReference(_message.Message):
    __slots__ = ("kind", "api_version", "name", "uid")
    KIND_FIELD_NUMBER: _ClassVar[int]
    API_VERSION_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    UID_FIELD_NUMBER: _ClassVar[int]
    kind: str
    api_version: str
    name: str
    uid: str
    def __init__(self, kind: _Optional[str] = ..., api_version: _Optional[str] = ..., name: _Optional[str] = ..., uid: _Optional[str] = ...) -> None: ...

class IssueServiceAccountTokenRequest(_message.Message):
    __slots__ = ("namespace", "name", "uid", "audiences", "expiration_seconds", "bound_object")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    UID_FIELD_NUMBER: _ClassVar[int]
    AUDIENCES_FIELD_NUMBER: _ClassVar[int]
    EXPIRATION_SECONDS_FIELD_NUMBER: _ClassVar[int]
    BOUND_OBJECT_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    name: str
    uid: str
    audiences: _containers.RepeatedScalarFieldContainer[str]
    expiration_seconds: int
    bound_object: BoundObjectReference
    def __init__(self, namespace: _Optional[str] = ..., name: _Optional[str] = ..., uid: _Optional[str] = ..., audiences: _Optional[_Iterable[str]] = ..., expiration_seconds: _Optional[int] = ..., bound_object: _Optional[_Union[BoundObjectReference, _Mapping]] = ...) -> None: ...

class IssueServiceAccountTokenResponse(_message.Message):
    __slots__ = ("token", "expiration_timestamp", "audiences", "expiration_seconds")
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    EXPIRATION_TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    AUDIENCES_FIELD_NUMBER: _ClassVar[int]
    EXPIRATION_SECONDS_FIELD_NUMBER: _ClassVar[int]
    token: str
    expiration_timestamp: int
    audiences: _containers.RepeatedScalarFieldContainer[str]
    expiration_seconds: int
    def __init__(self, token: _Optional[str] = ..., expiration_timestamp: _Optional[int] = ..., audiences: _Optional[_Iterable[str]] = ..., expiration_seconds: _Optional[int] = ...) -> None: ...

class GetIssuerDiscoveryRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetIssuerDiscoveryResponse(_message.Message):
    __slots__ = ("openid_configuration", "jwks")
    OPENID_CONFIGURATION_FIELD_NUMBER: _ClassVar[int]
    JWKS_FIELD_NUMBER: _ClassVar[int]
    openid_configuration: bytes
    jwks: bytes
    def __init__(self, openid_configuration: _Optional[bytes] = ..., jwks: _Optional[bytes] = ...) -> None: ...
