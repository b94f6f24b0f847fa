"""Where the suite's files are: the repository root and tests/data/ (the recorded cases the
tests compare with). Test files import these names instead of building paths from __file__,
so a test keeps working wherever it sits under tests/."""
import os

TESTS = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(TESTS)
DATA = os.path.join(TESTS, "data")
