"""``python -m ptxc.cli``: the ``ptxc`` command."""
import sys

from ptxc.cli.main import main

sys.exit(main())
