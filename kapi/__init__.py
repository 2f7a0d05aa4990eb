"""kapi: shared Kubernetes knowledge used by every service.

Modules: ``errors`` (Status errors and the one gRPC/HTTP mapping table),
``resources`` (the served resource table), ``attributes`` (UserInfo and
RequestAttributes), ``jsonutil`` (fast JSON), ``grpcutil`` (channels,
servers, mutual TLS, health), ``flags`` (kube-apiserver-style flags per
service), ``cli`` (the ``kapi`` command).
"""
