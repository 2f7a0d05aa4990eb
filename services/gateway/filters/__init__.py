"""Generic filters of the gateway's handler chain (kube's k8s.io/apiserver pkg/server/filters).

They know nothing of Kubernetes resources: panic recovery (every error a
Status), health endpoints, the request deadline, API Priority and Fairness
seats, tracing. The API-aware ones (request info, authentication,
impersonation, authorization) are services/gateway/apifilters/; the order
of both is services/gateway/chain.py.
"""
