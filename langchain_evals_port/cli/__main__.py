"""``python -m langchain_evals_port.cli``: the ``langchain-evals`` command."""

import sys

from . import main

sys.exit(main())
