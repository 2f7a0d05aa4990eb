"""``python -m services.admission [flags]``: run the admission service."""

import sys

from services.admission import server

sys.exit(server.main(sys.argv[1:]))
