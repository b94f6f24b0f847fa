# The driver's tests need Triton (the optional extra ptxasync[triton]); without it they skip,
# saying so. Every test starts from the driver's defaults (sm_90a, hazards raise).
import pytest

triton = pytest.importorskip("triton", reason="Triton is not installed (pip install 'ptxasync[triton]')")


@pytest.fixture(autouse=True)
def model_driver():
    import ptxasync.triton as pt
    pt.activate()
    pt.configure(**vars(pt.Options()))
    yield pt
    pt.activate()
    pt.configure(**vars(pt.Options()))
