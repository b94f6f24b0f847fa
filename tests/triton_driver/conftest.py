# The driver's tests need Triton (the optional extra ptxasync[triton]); without it each module
# skips, saying so (pytest.importorskip at its top). Every test starts from the driver's
# defaults (sm_90a, hazards raise).
import pytest


@pytest.fixture(autouse=True)
def model_driver():
    import ptxasync.triton as pt
    pt.activate()
    pt.configure(**vars(pt.Options()))
    yield pt
    pt.activate()
    pt.configure(**vars(pt.Options()))
