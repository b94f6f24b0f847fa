# Fixtures that run a test on the model and on a GPU (skipped without one).
from ptxasync.cuda.fixtures import both_engines, engine  # noqa: F401
