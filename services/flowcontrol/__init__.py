"""The flow-control service: request concurrency limits over one stream per gateway.

See docs/architecture.md, "The request path".
"""
