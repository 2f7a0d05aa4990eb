"""The storage service: the only etcd client (DESIGN.md section 5)."""
