"""API-aware filters of the gateway's handler chain (kube's k8s.io/apiserver pkg/endpoints/filters).

Request info (what the URL addresses), authentication (who is this: 401),
impersonation (``Impersonate-*``: who acts), authorization (may they: 403).
Auditing is services/gateway/audit.py. The generic filters are
services/gateway/filters/; the order of both is services/gateway/chain.py.
"""
