"""One module per verb, as k8s.io/apiserver pkg/endpoints/handlers: get, list, create, update, patch, delete, watch."""
