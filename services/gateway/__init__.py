"""The HTTP gateway: kube-apiserver's REST surface in front of the kapi gRPC services."""
