"""The authentication service: a union of authenticators (k8s.io/apiserver pkg/authentication)."""
