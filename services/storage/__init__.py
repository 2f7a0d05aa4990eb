"""The storage service: the only etcd client (docs/architecture.md, "Storage semantics")."""
