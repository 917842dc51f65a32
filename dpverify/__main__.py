"""``python -m dpverify``: the same as the ``dpverify`` console script."""

import sys

from dpverify.cli import main

sys.exit(main())
