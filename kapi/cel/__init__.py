"""Kubernetes' CEL on the ``cel`` package: tokens and name escaping, kube's function libraries, syntax rewrites."""
