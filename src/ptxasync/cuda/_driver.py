"""The CUDA driver through cuda-bindings (``cuda.bindings.driver``): loading it,
one context, device memory, the JIT, launches and the tensor-map encoders.

Nothing here knows the model; the worker process (``worker.py``) calls it.
Without cuda-bindings, without libcuda or without a GPU, ``why_unavailable()``
says which, and every other function raises ``Unavailable`` with that text.
"""
import ctypes

__all__ = ["Unavailable", "CudaError", "NotExpressible", "why_unavailable", "Device"]


class Unavailable(RuntimeError):
    """No GPU can be used here (the message says why)."""


class NotExpressible(ValueError):
    """Parameters that cuda-bindings cannot pass to the driver (the reason)."""


class CudaError(RuntimeError):
    """A driver call failed: ``.name`` is the CUresult name, ``.code`` its number."""

    def __init__(self, call, code, name, log=""):
        self.call, self.code, self.name, self.log = call, int(code), name, log
        super().__init__(f"{call}: {name} ({int(code)})" + (f"\n{log}" if log else ""))


# Errors after which the context is lost (the process must start again).
STICKY = frozenset({
    "CUDA_ERROR_ILLEGAL_ADDRESS", "CUDA_ERROR_ILLEGAL_INSTRUCTION", "CUDA_ERROR_MISALIGNED_ADDRESS",
    "CUDA_ERROR_INVALID_ADDRESS_SPACE", "CUDA_ERROR_INVALID_PC", "CUDA_ERROR_LAUNCH_FAILED",
    "CUDA_ERROR_HARDWARE_STACK_ERROR", "CUDA_ERROR_LAUNCH_TIMEOUT", "CUDA_ERROR_ASSERT",
    "CUDA_ERROR_CONTEXT_IS_DESTROYED", "CUDA_ERROR_TENSOR_MEMORY_LEAK"})

_state = {"driver": None, "reason": None, "tried": False}


def _load():
    """cuda.bindings.driver after cuInit(0), or None with the reason kept."""
    if _state["tried"]:
        return _state["driver"]
    _state["tried"] = True
    try:
        from cuda.bindings import driver
    except ImportError as e:
        _state["reason"] = (f"cuda-bindings is not installed ({e}); "
                            "install it with: pip install 'cuda-bindings>=12.8' (or pip install '.[cuda]' in the repository)")
        return None
    try:
        (err,) = driver.cuInit(0)
    except Exception as e:  # libcuda.so missing: cuda.pathfinder's DynamicLibNotFoundError, OSError
        _state["reason"] = f"the CUDA driver library could not be loaded ({type(e).__name__}: {e})"
        return None
    if err != driver.CUresult.CUDA_SUCCESS:
        _state["reason"] = f"cuInit failed: {err.name}" + (
            " (no CUDA-capable GPU is visible)" if err.name == "CUDA_ERROR_NO_DEVICE" else "")
        return None
    err, n = driver.cuDeviceGetCount()
    if err != driver.CUresult.CUDA_SUCCESS or n == 0:
        _state["reason"] = "cuDeviceGetCount: no CUDA device (CUDA_ERROR_NO_DEVICE)"
        return None
    _state["driver"] = driver
    return driver


def why_unavailable():
    """None when a GPU can be used, else the reason as one sentence."""
    _load()
    return _state["reason"]


def driver():
    d = _load()
    if d is None:
        raise Unavailable(_state["reason"])
    return d


def _check(call, out):
    """The values a cuda-bindings call returned after its CUresult, or CudaError."""
    d = driver()
    err, rest = (out[0], out[1:]) if isinstance(out, tuple) else (out, ())
    if err != d.CUresult.CUDA_SUCCESS:
        raise CudaError(call, int(err), err.name)
    return rest[0] if len(rest) == 1 else rest


class Device:
    """Device 0 and its primary context, current on this thread."""

    def __init__(self, ordinal=0):
        d = driver()
        self.d = d
        self.dev = _check("cuDeviceGet", d.cuDeviceGet(ordinal))
        self.ctx = _check("cuDevicePrimaryCtxRetain", d.cuDevicePrimaryCtxRetain(self.dev))
        _check("cuCtxSetCurrent", d.cuCtxSetCurrent(self.ctx))

    def info(self):
        d = self.d
        name = _check("cuDeviceGetName", d.cuDeviceGetName(256, self.dev))
        name = bytes(name).split(b"\0")[0].decode()
        A = d.CUdevice_attribute
        major = _check("cuDeviceGetAttribute", d.cuDeviceGetAttribute(A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, self.dev))
        minor = _check("cuDeviceGetAttribute", d.cuDeviceGetAttribute(A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, self.dev))
        smem = _check("cuDeviceGetAttribute", d.cuDeviceGetAttribute(
            A.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, self.dev))
        ver = _check("cuDriverGetVersion", d.cuDriverGetVersion())
        return {"gpu": name, "compute_capability": f"{major}.{minor}",
                "cuda_driver_version": f"{ver // 1000}.{ver % 1000 // 10}",
                "max_dynamic_smem": int(smem), "driver_version": _nvidia_driver_version()}

    # --- memory -------------------------------------------------------------------
    def alloc(self, nbytes):
        return int(_check("cuMemAlloc", self.d.cuMemAlloc(max(1, int(nbytes)))))

    def free(self, ptr):
        _check("cuMemFree", self.d.cuMemFree(ptr))

    def upload(self, ptr, data):
        data = bytes(data)
        if data:
            _check("cuMemcpyHtoD", self.d.cuMemcpyHtoD(ptr, data, len(data)))

    def download(self, ptr, nbytes):
        buf = bytearray(nbytes)
        if nbytes:
            _check("cuMemcpyDtoH", self.d.cuMemcpyDtoH(buf, ptr, nbytes))
        return bytes(buf)

    # --- code -------------------------------------------------------------------------
    def load_ptx(self, ptx, entry):
        """The kernel ``entry`` of a PTX module, JIT-compiled by the driver; a
        CudaError carries the JIT's error log."""
        d = self.d
        size = 1 << 16
        log = bytearray(size)
        opts = [d.CUjit_option.CU_JIT_ERROR_LOG_BUFFER, d.CUjit_option.CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES]
        image = ptx.encode() + b"\0"
        err, mod = d.cuModuleLoadDataEx(image, len(opts), opts, [log, size])
        if err != d.CUresult.CUDA_SUCCESS:
            raise CudaError("cuModuleLoadDataEx", int(err), err.name, bytes(log).split(b"\0")[0].decode(errors="replace"))
        func = _check("cuModuleGetFunction", d.cuModuleGetFunction(mod, entry.encode()))
        return mod, func

    def unload(self, mod):
        _check("cuModuleUnload", self.d.cuModuleUnload(mod))

    def launch(self, func, params, threads, smem_bytes, ctas=1):
        """One CTA of ``threads`` threads, or one cluster of ``ctas`` such CTAs
        (cuLaunchKernelEx with CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION); ``params``
        are the kernel's parameters as bytes objects (each laid out as the PTX
        .param it fills). Returns None, or the CUresult name of the launch / of the
        synchronisation after it."""
        d = self.d
        _check("cuFuncSetAttribute", d.cuFuncSetAttribute(
            func, d.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, int(smem_bytes)))
        bufs = [ctypes.create_string_buffer(p, max(len(p), 1)) for p in params]
        ptrs = (ctypes.c_void_p * max(1, len(bufs)))(*[ctypes.addressof(b) for b in bufs])
        if ctas > 1:
            cfg = d.CUlaunchConfig()
            cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ = int(ctas), 1, 1
            cfg.blockDimX, cfg.blockDimY, cfg.blockDimZ = int(threads), 1, 1
            cfg.sharedMemBytes = int(smem_bytes)
            cfg.hStream = 0
            attr = d.CUlaunchAttribute()
            attr.id = d.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
            attr.value.clusterDim.x, attr.value.clusterDim.y, attr.value.clusterDim.z = int(ctas), 1, 1
            cfg.attrs = [attr]
            cfg.numAttrs = 1
            (err,) = d.cuLaunchKernelEx(cfg, func, ctypes.addressof(ptrs), 0)
        else:
            (err,) = d.cuLaunchKernel(func, 1, 1, 1, threads, 1, 1, int(smem_bytes), 0, ctypes.addressof(ptrs), 0)
        if err != d.CUresult.CUDA_SUCCESS:
            return err.name
        (err,) = d.cuCtxSynchronize()
        return None if err == d.CUresult.CUDA_SUCCESS else err.name

    # --- tensor maps ------------------------------------------------------------------
    def encode(self, kind, args):
        """(CUresult name, 128 bytes or None) of cuTensorMapEncode<kind>; args are
        the driver's parameters as plain integers (Program.tensor_map_* gives them)."""
        d = self.d
        try:
            return self._encode(d, kind, args)
        except (ValueError, TypeError, OverflowError) as e:
            # cuda-bindings refuses the value before the driver sees it (an enum value
            # out of range, an array longer than 5, a number too wide for its type)
            raise NotExpressible(f"cuda-bindings cannot pass these parameters: {e}") from None

    def _encode(self, d, kind, args):
        # an empty list reaches the driver as NULL, which it rejects: a rank-1 map has no
        # strides to read, so one unused element keeps the pointer valid
        u64 = lambda xs: [d.cuuint64_t(int(x)) for x in xs] or [d.cuuint64_t(0)]   # noqa: E731
        u32 = lambda xs: [d.cuuint32_t(int(x)) for x in xs] or [d.cuuint32_t(0)]   # noqa: E731
        common_tail = (d.CUtensorMapInterleave(args["interleave"]),)
        if kind == "tiled":
            out = d.cuTensorMapEncodeTiled(
                d.CUtensorMapDataType(args["dtype"]), args["rank"], args["global_address"],
                u64(args["global_dim"]), u64(args["global_strides"]), u32(args["box_dim"]),
                u32(args["element_strides"]), *common_tail, d.CUtensorMapSwizzle(args["swizzle"]),
                d.CUtensorMapL2promotion(args["l2_promotion"]), d.CUtensorMapFloatOOBfill(args["oob_fill"]))
        elif kind == "im2col":
            out = d.cuTensorMapEncodeIm2col(
                d.CUtensorMapDataType(args["dtype"]), args["rank"], args["global_address"],
                u64(args["global_dim"]), u64(args["global_strides"]), list(args["pixel_box_lower"]),
                list(args["pixel_box_upper"]), args["channels_per_pixel"], args["pixels_per_column"],
                u32(args["element_strides"]), *common_tail, d.CUtensorMapSwizzle(args["swizzle"]),
                d.CUtensorMapL2promotion(args["l2_promotion"]), d.CUtensorMapFloatOOBfill(args["oob_fill"]))
        elif kind == "im2col_wide":
            out = d.cuTensorMapEncodeIm2colWide(
                d.CUtensorMapDataType(args["dtype"]), args["rank"], args["global_address"],
                u64(args["global_dim"]), u64(args["global_strides"]), int(args["pixel_box_lower_w"]),
                int(args["pixel_box_upper_w"]), args["channels_per_pixel"], args["pixels_per_column"],
                u32(args["element_strides"]), *common_tail, d.CUtensorMapIm2ColWideMode(args["mode"]),
                d.CUtensorMapSwizzle(args["swizzle"]), d.CUtensorMapL2promotion(args["l2_promotion"]),
                d.CUtensorMapFloatOOBfill(args["oob_fill"]))
        else:
            raise ValueError(f"unknown encoder {kind!r}")
        err, tm = out
        if err != d.CUresult.CUDA_SUCCESS:
            return err.name, None
        raw = b"".join(int(w).to_bytes(8, "little") for w in tm.opaque)
        return err.name, raw


def _nvidia_driver_version():
    """The kernel driver's version string (580.159.04), read as nvidia-smi reads it."""
    try:
        with open("/proc/driver/nvidia/version") as f:
            for tok in f.read().split():
                if tok.count(".") >= 1 and tok.replace(".", "").isdigit():
                    return tok
    except OSError:
        pass
    try:
        lib = ctypes.CDLL("libnvidia-ml.so.1")
        buf = ctypes.create_string_buffer(96)
        if lib.nvmlInit_v2() == 0 and lib.nvmlSystemGetDriverVersion(buf, 96) == 0:
            return buf.value.decode()
    except OSError:
        pass
    return None
