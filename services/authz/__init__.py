"""The authorization service: a union of authorizers (k8s.io/apiserver pkg/authorization)."""
