"""The flow-control service: request concurrency limits over one stream per gateway (DESIGN.md section 6)."""
