"""``python -m services.authn [flags]``: run the authentication service."""

import sys

from services.authn import server

sys.exit(server.main(sys.argv[1:]))
