"""``python -m services.authz [flags]``: run the authorization service."""

import sys

from services.authz import server

sys.exit(server.main(sys.argv[1:]))
