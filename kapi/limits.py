"""kube-apiserver's request size limits, enforced alike by every HTTP front of kapi.

The gateways apply both (services.gateway.server, negotiation) and Envoy's
configuration (kapi.local.envoy) the header limit, so a request Envoy lets
through is not refused by a gateway for its size, nor the other way round.
"""

MAX_BODY_BYTES = 3 * 1024 * 1024  # request bodies: kube-apiserver's maxRequestBodyBytes (3 MiB)
MAX_HEADER_BYTES = 1 << 20  # the request line and header fields: Go net/http's DefaultMaxHeaderBytes (1 MiB)
