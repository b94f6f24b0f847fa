/* module.c - ptxasync._core: exceptions, argument helpers, layout functions. */
#include "binding.h"

#define PY_ARRAY_UNIQUE_SYMBOL ptxasync_ARRAY_API
#include <numpy/arrayobject.h>

PyObject *PaError, *PaEncodeError, *PaIllegalInstruction, *PaIllegalAddress, *PaMisalignedAddress,
    *PaHazard, *PaDeadlock, *PaDeviceAssert;

PyObject *pa_raise(const pa_error *err)
{
    PyObject *cls;
    switch (err->code) {
    case PA_ERR_INVALID_VALUE: cls = PaEncodeError; break;
    case PA_ERR_ILLEGAL_INSTRUCTION: cls = PaIllegalInstruction; break;
    case PA_ERR_ILLEGAL_ADDRESS: cls = PaIllegalAddress; break;
    case PA_ERR_MISALIGNED_ADDRESS: cls = PaMisalignedAddress; break;
    case PA_ERR_HAZARD: cls = PaHazard; break;
    case PA_ERR_DEADLOCK: cls = PaDeadlock; break;
    case PA_ERR_ASSERT: cls = PaDeviceAssert; break;
    case PA_ERR_NO_MEMORY:   /* a limit of the model or the host's memory: the message says which */
        PyErr_SetString(PyExc_MemoryError, err->msg[0] ? err->msg : "out of host memory");
        return NULL;
    default: cls = PaError; break;
    }
    if (cls == PaHazard || cls == PaDeadlock || err->rule)   /* the rule id travels as data: exc.rule */
        return pa_raise_hazard(cls, err);
    PyErr_SetString(cls, err->msg);
    return NULL;
}

int pa_parse_i64_seq(PyObject *seq, int64_t *out, int max, const char *what)
{
    if (PyErr_Occurred())   /* an earlier parse failed: its error is the one raised */
        return -1;
    PyObject *fast = PySequence_Fast(seq, what);
    if (!fast) {
        if (PyErr_ExceptionMatches(PyExc_TypeError)) {   /* CPython's message is `what` alone */
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "%s must be a sequence of integers, not %.100s", what,
                         Py_TYPE(seq)->tp_name);
        }
        return -1;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    if (n > max) {
        Py_DECREF(fast);
        PyErr_Format(PaEncodeError, "%s has %zd entries; at most %d are allowed", what, n, max);
        return -1;
    }
    PyObject **items = PySequence_Fast_ITEMS(fast);
    for (Py_ssize_t i = 0; i < n; i++) {
        if (PyLong_CheckExact(items[i])) {   /* the common case */
            int overflow = 0;   /* an exact int sets no error here (and none is cleared) */
            long long v = PyLong_AsLongLongAndOverflow(items[i], &overflow);
            if (!overflow) {
                out[i] = v;
                continue;
            }
            /* beyond 64 bits signed: the general path below says what */
        }
        if (PyFloat_Check(items[i]) || !PyIndex_Check(items[i])) {
            PyErr_Format(PyExc_TypeError, "%s[%zd] must be an integer, not %.100s", what, i,
                         Py_TYPE(items[i])->tp_name);
            Py_DECREF(fast);
            return -1;
        }
        int overflow = 0;
        long long v = PyLong_AsLongLongAndOverflow(items[i], &overflow);
        if (overflow > 0) {
            /* values up to 2^64-1 are legal for unsigned driver parameters */
            unsigned long long u = PyLong_AsUnsignedLongLong(items[i]);
            if (PyErr_Occurred()) {
                Py_DECREF(fast);
                PyErr_Format(PyExc_OverflowError, "%s[%zd] does not fit in 64 bits", what, i);
                return -1;
            }
            v = (long long)u;
        } else if (overflow < 0 || (v == -1 && PyErr_Occurred())) {
            Py_DECREF(fast);
            if (!PyErr_Occurred())
                PyErr_Format(PyExc_OverflowError, "%s[%zd] does not fit in 64 bits", what, i);
            return -1;
        }
        out[i] = v;
    }
    Py_DECREF(fast);
    return (int)n;
}

/* A driver array parameter of exactly n entries (tensorRank or tensorRank-1). */
int pa_fill_u64(PyObject *seq, uint64_t *out, uint32_t n, const char *what)
{
    int64_t v[PA_MAX_RANK];
    int got = pa_parse_i64_seq(seq, v, PA_MAX_RANK, what);
    if (got < 0)
        return -1;
    if ((uint32_t)got != n) {
        PyErr_Format(PyExc_ValueError, "%s has %d entries; tensorRank needs %u", what, got, n);
        return -1;
    }
    for (int i = 0; i < got; i++)
        out[i] = (uint64_t)v[i];
    return 0;
}

/* tensorCoords: n .s32 operands, the rest of the PA_MAX_RANK slots zero. */
int pa_coords_s32(const int64_t *v, int n, int32_t out[PA_MAX_RANK])
{
    for (int i = 0; i < PA_MAX_RANK; i++) {
        if (i < n && (v[i] < INT32_MIN || v[i] > INT32_MAX)) {
            PyErr_Format(PyExc_OverflowError, "tensorCoords[%d] = %lld does not fit in .s32", i,
                         (long long)v[i]);
            return -1;
        }
        out[i] = i < n ? (int32_t)v[i] : 0;
    }
    return 0;
}

static PyObject *py_swizzle_addr(PyObject *Py_UNUSED(mod), PyObject *args)
{
    int sw;
    unsigned addr;
    if (!pa_args(args, "mode addr", "iI", &sw, &addr))
        return NULL;
    if (!pa_swizzle_name(sw))
        return PyErr_Format(PyExc_ValueError, "unknown swizzle mode %d", sw);
    return PyLong_FromUnsignedLong(pa_swizzle_addr((pa_swizzle)sw, addr));
}

static PyObject *py_swizzle_info(PyObject *Py_UNUSED(mod), PyObject *args)
{
    int sw;
    if (!pa_args(args, "mode", "i", &sw))
        return NULL;
    if (!pa_swizzle_name(sw))
        return PyErr_Format(PyExc_ValueError, "unknown swizzle mode %d", sw);
    return Py_BuildValue("{s:I,s:I,s:I}", "span", pa_swizzle_span((pa_swizzle)sw), "repeat",
                         pa_swizzle_repeat((pa_swizzle)sw), "atom", pa_swizzle_atom((pa_swizzle)sw));
}

/* Vectorised swizzle of a uint32 array of addresses (for drawing layouts). */
static PyObject *py_swizzle_array(PyObject *Py_UNUSED(mod), PyObject *args)
{
    int sw;
    PyObject *obj;
    if (!pa_args(args, "mode addresses", "iO", &sw, &obj))
        return NULL;
    if (!pa_swizzle_name(sw))
        return PyErr_Format(PyExc_ValueError, "unknown swizzle mode %d", sw);
    PyArrayObject *in = (PyArrayObject *)PyArray_FROMANY(obj, NPY_UINT32, 0, 0, NPY_ARRAY_CARRAY_RO);
    if (!in)
        return NULL;
    PyArrayObject *out = (PyArrayObject *)PyArray_NewLikeArray(in, NPY_CORDER, NULL, 0);
    if (!out) {
        Py_DECREF(in);
        return NULL;
    }
    const uint32_t *s = PyArray_DATA(in);
    uint32_t *d = PyArray_DATA(out);
    npy_intp n = PyArray_SIZE(in);
    for (npy_intp i = 0; i < n; i++)
        d[i] = pa_swizzle_addr((pa_swizzle)sw, s[i]);
    Py_DECREF(in);
    return (PyObject *)out;
}

static PyObject *py_dtype_info(PyObject *Py_UNUSED(mod), PyObject *args)
{
    int dt;
    if (!pa_args(args, "dtype", "i", &dt))
        return NULL;
    const pa_dtype_info *d = pa_dtype_get(dt);
    if (!d)
        return PyErr_Format(PyExc_ValueError, "unknown CUtensorMapDataType %d", dt);
    return Py_BuildValue("{s:s,s:s,s:I,s:I,s:I,s:O,s:O}", "name", d->name, "ptx", d->ptx, "bits",
                         d->elem_bits, "bytes", d->elem_bytes, "ptx_elemtype", d->ptx_elemtype, "is_float",
                         d->is_float ? Py_True : Py_False, "is_packed", d->is_packed ? Py_True : Py_False);
}

static PyObject *py_tf32_round(PyObject *Py_UNUSED(mod), PyObject *args)
{
    unsigned bits;
    if (!pa_args(args, "bits", "I", &bits))
        return NULL;
    return PyLong_FromUnsignedLong(pa_tf32_round(bits));
}

/* reduce_apply(op, type, dst: writable buffer, src: buffer, tensor: bool) */
static PyObject *py_reduce_apply(PyObject *Py_UNUSED(mod), PyObject *args)
{
    int op, type, tensor;
    Py_buffer dst, src;
    if (!pa_args(args, "op type dst src tensor", "iiw*y*p", &op, &type, &dst, &src, &tensor))
        return NULL;
    PyObject *res = NULL;
    unsigned esize = 0;
    if (op < 0 || op >= PA_RED_COUNT) {
        PyErr_Format(PyExc_ValueError, "unknown reduction op %d", op);
        goto done;
    }
    if (tensor) {
        const pa_dtype_info *d = pa_dtype_get(type);
        esize = d && !d->is_packed ? d->elem_bytes : 0;
    } else if (type >= 0 && type < PA_RT_COUNT) {
        esize = pa_rtype_bytes((pa_rtype)type);
    }
    if (!esize) {
        PyErr_Format(PyExc_ValueError, "unknown element type %d", type);
        goto done;
    }
    if (dst.len != src.len || dst.len % esize) {
        PyErr_Format(PyExc_ValueError, "dst (%zd B) and src (%zd B) must be equal whole numbers of %u-byte elements",
                     dst.len, src.len, esize);
        goto done;
    }
    if (tensor)
        pa_reduce_tensor_apply((pa_redop)op, (pa_dtype)type, dst.buf, src.buf, (size_t)dst.len / esize);
    else
        pa_reduce_bulk_apply((pa_redop)op, (pa_rtype)type, dst.buf, src.buf, (size_t)dst.len / esize);
    res = Py_None;
    Py_INCREF(res);
done:
    PyBuffer_Release(&dst);
    PyBuffer_Release(&src);
    return res;
}

/* simd_level(cap=-1): (level in use, the CPU's level) as names, after capping
 * the level at `cap` (0 none, 1 sse2, 2 avx2, 3 avx512) when cap >= 0. Tests run the
 * vector loops of every level against the references this way. */
static PyObject *py_simd_level(PyObject *Py_UNUSED(mod), PyObject *args)
{
    int cap = -1;
    if (!pa_args(args, "cap", "|i", &cap))
        return NULL;
    if (cap < -1 || cap >= PA_SIMD_COUNT) {
        PyErr_Format(PyExc_ValueError, "SIMD level %d: the levels are 0 (none) to %d", cap, PA_SIMD_COUNT - 1);
        return NULL;
    }
    if (cap >= 0)
        pa_simd_cap((pa_simd)cap);
    return Py_BuildValue("(ss)", pa_simd_name(pa_simd_level()), pa_simd_name(pa_simd_cpu()));
}

/* simd_bf16(on=-1), simd_fp16(on=-1): (the extension in use, the CPU has it)
 * after switching its use off (0) or on (1) when on >= 0; tests run the
 * AVX512 level's bf16 / f16 add with and without it. */
static PyObject *simd_extension(PyObject *args, const char *name, int (*allow)(int), int (*in_use)(void),
                                int (*cpu)(void))
{
    int on = -1;
    if (!pa_args(args, "on", "|i", &on))
        return NULL;
    if (on < -1 || on > 1) {
        PyErr_Format(PyExc_ValueError, "%s(on=%d): on is 0 (off), 1 (on) or -1 (unchanged)", name, on);
        return NULL;
    }
    if (on >= 0)
        allow(on);
    return Py_BuildValue("(OO)", in_use() ? Py_True : Py_False, cpu() ? Py_True : Py_False);
}

static PyObject *py_simd_bf16(PyObject *Py_UNUSED(mod), PyObject *args)
{
    return simd_extension(args, "simd_bf16", pa_simd_bf16_allow, pa_simd_bf16, pa_simd_bf16_cpu);
}

static PyObject *py_simd_fp16(PyObject *Py_UNUSED(mod), PyObject *args)
{
    return simd_extension(args, "simd_fp16", pa_simd_fp16_allow, pa_simd_fp16, pa_simd_fp16_cpu);
}

/* mbar_pending_count(state): mbarrier.pending_count.b64 (R8) */
static PyObject *py_mbar_pending_count(PyObject *Py_UNUSED(mod), PyObject *args)
{
    unsigned long long state;
    if (!pa_args(args, "state", "K", &state))
        return NULL;
    return PyLong_FromUnsignedLong(pa_mbar_pending_count(state));
}

static PyMethodDef module_methods[] = {
    {"swizzle_addr", py_swizzle_addr, METH_VARARGS, "swizzle_addr(mode, addr) -> swizzled shared address"},
    {"swizzle_array", py_swizzle_array, METH_VARARGS, "swizzle_array(mode, uint32 array) -> array"},
    {"swizzle_info", py_swizzle_info, METH_VARARGS, "span, repeat and atom of a swizzle mode"},
    {"dtype_info", py_dtype_info, METH_VARARGS, "facts about a CUtensorMapDataType"},
    {"tf32_round", py_tf32_round, METH_VARARGS, "round f32 bits as a TFLOAT32 map load does"},
    {"reduce_apply", py_reduce_apply, METH_VARARGS, "element-wise reduction dst = dst op src"},
    {"simd_level", py_simd_level, METH_VARARGS, "vector level in use and the CPU's: simd_level(cap=-1)"},
    {"simd_bf16", py_simd_bf16, METH_VARARGS, "AVX512_BF16 in use and the CPU's: simd_bf16(on=-1)"},
    {"simd_fp16", py_simd_fp16, METH_VARARGS, "AVX512_FP16 in use and the CPU's: simd_fp16(on=-1)"},
    {"mbar_pending_count", py_mbar_pending_count, METH_VARARGS,
     "mbarrier.pending_count.b64: the pending count a state carries"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef moduledef = {PyModuleDef_HEAD_INIT, "ptxasync._core",
                                       "C core of ptxasync (thin binding).", -1, module_methods,
                                       NULL, NULL, NULL, NULL};

static int add_exception(PyObject *m, PyObject **slot, const char *name, PyObject *bases,
                         const char *doc)
{
    char full[96];
    snprintf(full, sizeof full, "ptxasync.%s", name);
    *slot = PyErr_NewExceptionWithDoc(full, doc, bases, NULL);
    if (!*slot)
        return -1;
    Py_INCREF(*slot);
    return PyModule_AddObject(m, name, *slot);
}

PyMODINIT_FUNC PyInit__core(void)
{
    import_array();
    PyObject *m = PyModule_Create(&moduledef);
    if (!m)
        return NULL;
    PyObject *b = NULL;
    if (add_exception(m, &PaError, "PtxAsyncError", NULL, "Base class of every ptxasync error."))
        goto fail;
    b = PyTuple_Pack(2, PaError, PyExc_ValueError);
    if (!b || add_exception(m, &PaEncodeError, "InvalidValue", b,
                            "A parameter breaks a rule (CUDA_ERROR_INVALID_VALUE)."))
        goto fail;
    Py_CLEAR(b);
    if (add_exception(m, &PaIllegalInstruction, "IllegalInstruction", PaError,
                      "The hardware faults on this operation (cudaErrorIllegalInstruction).") ||
        add_exception(m, &PaIllegalAddress, "IllegalAddress", PaError,
                      "No memory at this address (cudaErrorIllegalAddress).") ||
        add_exception(m, &PaMisalignedAddress, "MisalignedAddress", PaError,
                      "An address breaks an alignment rule (cudaErrorMisalignedAddress).") ||
        add_exception(m, &PaHazard, "Hazard", PaError, "Undefined behaviour named by the PTX ISA.") ||
        add_exception(m, &PaDeadlock, "Deadlock", PaHazard,
                      "A thread blocked in a wait that nothing pending can release (the kernel would hang)."))
        goto fail;
    b = PyTuple_Pack(2, PaError, PyExc_AssertionError);
    if (!b || add_exception(m, &PaDeviceAssert, "DeviceAssert", b,
                            "A kernel's assert() failed: __assertfail (cudaErrorAssert)."))
        goto fail;
    Py_CLEAR(b);
    if (pa_module_add_tensormap(m) || pa_module_add_machine(m) ||
        pa_module_add_batch(m) || pa_module_add_watch(m))
        goto fail;
    if (pa_module_add_consumers(m) || pa_module_add_modes(m) || pa_module_add_mbarrier(m) ||
        pa_module_add_ptx(m) || pa_module_add_kernel(m))
        goto fail;
    return m;
fail:
    Py_XDECREF(b);
    Py_DECREF(m);
    return NULL;
}
