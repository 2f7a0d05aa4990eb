"""``python -m services.storage [flags]``: run the storage service."""

import sys

from services.storage import server

sys.exit(server.main(sys.argv[1:]))
