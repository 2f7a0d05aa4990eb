"""The local launcher: ``kapi up`` (etcd, Envoy and every service as processes), the ``kapi`` command, the PKI."""
