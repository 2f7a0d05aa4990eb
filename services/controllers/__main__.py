"""``python -m services.controllers [flags]``: run the controller manager."""

import sys

from services.controllers.server import main

sys.exit(main(sys.argv[1:]))
