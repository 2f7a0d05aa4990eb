from kapi_proto.kapi.common.v1 import common_pb2 as _common_pb2
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Mapping as _Mapping
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
