"""python -m ptxasync: the same as the ``ptxasync`` command (see ``ptxasync --help``)."""
import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
