"""``python -m services.flowcontrol [flags]``: run the flow-control service."""

import sys

from services.flowcontrol import server

sys.exit(server.main(sys.argv[1:]))
