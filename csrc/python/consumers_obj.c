/* consumers_obj.c - binding of the consumer views: wgmma descriptors, ldmatrix /
 * stmatrix, bank conflicts (csrc/core/consumers/). Thin: convert, delegate, raise. */
#include "binding.h"

#define NO_IMPORT_ARRAY
#define PY_ARRAY_UNIQUE_SYMBOL ptxasync_ARRAY_API
#include <numpy/arrayobject.h>

/* 32 per-thread shared addresses (each 0..2^32-1). */
static int parse_addrs(PyObject *seq, uint32_t out[32])
{
    int64_t v[32];
    int n = pa_parse_i64_seq(seq, v, 32, "thread addresses");
    if (n < 0)
        return -1;
    if (n != 32) {
        PyErr_Format(PyExc_ValueError, "a warp gives 32 thread addresses, not %d", n);
        return -1;
    }
    for (int t = 0; t < 32; t++) {
        if (v[t] < 0 || v[t] > 0xFFFFFFFFll) {
            PyErr_Format(PyExc_ValueError, "thread %d: shared address %lld is outside 0..2^32-1", t,
                         (long long)v[t]);
            return -1;
        }
        out[t] = (uint32_t)v[t];
    }
    return 0;
}

static PyObject *py_wgmma_desc_encode(PyObject *Py_UNUSED(m), PyObject *args)
{
    unsigned long long start, lbo, sbo, bo, swz, other;
    if (!pa_args(args, "start lbo sbo base_offset swizzle other",
                 "KKKKKK", &start, &lbo, &sbo, &bo, &swz, &other))
        return NULL;
    if (start > 0xFFFFFFFFull || lbo > 0xFFFFFFFFull || sbo > 0xFFFFFFFFull || bo > 0xFFFFFFFFull ||
        swz > 0xFFFFFFFFull)
        return PyErr_Format(PaEncodeError, "descriptor field does not fit: start %llu, LBO %llu, SBO %llu, "
                            "base offset %llu, swizzle %llu", start, lbo, sbo, bo, swz);
    pa_wgmma_desc d = {(uint32_t)start, (uint32_t)lbo, (uint32_t)sbo, (uint32_t)bo, (uint32_t)swz, other};
    uint64_t v;
    pa_error err;
    if (pa_wgmma_desc_encode(&d, &v, &err))
        return pa_raise(&err);
    return PyLong_FromUnsignedLongLong(v);
}

static PyObject *py_wgmma_desc_decode(PyObject *Py_UNUSED(m), PyObject *args)
{
    unsigned long long v;
    if (!pa_args(args, "value", "K", &v))
        return NULL;
    pa_wgmma_desc d;
    pa_wgmma_desc_decode(v, &d);
    return Py_BuildValue("{s:I,s:I,s:I,s:I,s:I,s:K}", "start", d.start, "lbo", d.lbo, "sbo", d.sbo,
                         "base_offset", d.base_offset, "swizzle", d.swizzle, "other_bits",
                         (unsigned long long)d.other_bits);
}

/* (value, type, major, operand_b, rows) -> operand, or -1 with an exception. */
static int parse_operand(PyObject *args, pa_wgmma_operand *op, Py_buffer *smem, int with_smem)
{
    unsigned long long v;
    int type, major, b;
    unsigned rows;
    int ok = with_smem ? pa_args(args, "value type major operand_b rows smem",
                                 "KiipIy*", &v, &type, &major, &b, &rows, smem)
                       : pa_args(args, "value type major operand_b rows",
                                 "KiipI", &v, &type, &major, &b, &rows);
    if (!ok)
        return -1;
    pa_wgmma_desc_decode(v, &op->desc);
    op->type = (pa_wgmma_type)type;
    op->major = (pa_wgmma_major)major;
    op->operand_b = b;
    op->rows = rows;
    op->k = 0;
    pa_error err;
    if (pa_wgmma_operand_check(op, &err)) {
        if (with_smem)
            PyBuffer_Release(smem);
        pa_raise(&err);
        return -1;
    }
    return 0;
}

/* wgmma_addresses(desc_value, type, major, operand_b, rows) -> uint64 [rows, K] */
static PyObject *py_wgmma_addresses(PyObject *Py_UNUSED(m), PyObject *args)
{
    pa_wgmma_operand op;
    if (parse_operand(args, &op, NULL, 0))
        return NULL;
    npy_intp dims[2] = {op.rows, pa_wgmma_type_k(op.type)};
    PyArrayObject *out = (PyArrayObject *)PyArray_SimpleNew(2, dims, NPY_UINT64);
    if (!out)
        return NULL;
    pa_error err;
    if (pa_wgmma_addresses(&op, (uint64_t *)PyArray_DATA(out), &err)) {
        Py_DECREF(out);
        return pa_raise(&err);
    }
    return (PyObject *)out;
}

/* wgmma_read(desc_value, type, major, operand_b, rows, smem) -> uint8 [rows, K * esize] */
static PyObject *py_wgmma_read(PyObject *Py_UNUSED(m), PyObject *args)
{
    pa_wgmma_operand op;
    Py_buffer smem;
    if (parse_operand(args, &op, &smem, 1))
        return NULL;
    npy_intp dims[2] = {op.rows, (npy_intp)pa_wgmma_type_k(op.type) * pa_wgmma_type_bytes(op.type)};
    PyArrayObject *out = NULL;
    if (smem.len > 0xFFFFFFFFll) {
        PyErr_SetString(PyExc_ValueError, "shared memory larger than 4 GiB");
        goto done;
    }
    out = (PyArrayObject *)PyArray_SimpleNew(2, dims, NPY_UINT8);
    if (!out)
        goto done;
    pa_error err;
    if (pa_wgmma_read(&op, smem.buf, (uint32_t)smem.len, PyArray_DATA(out), &err)) {
        Py_CLEAR(out);
        pa_raise(&err);
    }
done:
    PyBuffer_Release(&smem);
    return (PyObject *)out;
}

/* ldmatrix_map(num, trans, addrs) -> uint32 [32, num, 2] */
static PyObject *py_ldmatrix_map(PyObject *Py_UNUSED(m), PyObject *args)
{
    unsigned num;
    int trans;
    PyObject *seq;
    uint32_t addr[32];
    if (!pa_args(args, "num trans addrs", "IpO", &num, &trans, &seq) || parse_addrs(seq, addr))
        return NULL;
    uint32_t map[32 * 4 * 2];
    pa_error err;
    if (pa_ldmatrix_map(num, trans, addr, map, &err))
        return pa_raise(&err);
    npy_intp dims[3] = {32, num, 2};
    PyArrayObject *out = (PyArrayObject *)PyArray_SimpleNew(3, dims, NPY_UINT32);
    if (out)
        memcpy(PyArray_DATA(out), map, sizeof(uint32_t) * 32 * num * 2);
    return (PyObject *)out;
}

/* ldmatrix(smem, num, trans, addrs) -> uint32 [32, num] */
static PyObject *py_ldmatrix(PyObject *Py_UNUSED(m), PyObject *args)
{
    Py_buffer smem;
    unsigned num;
    int trans;
    PyObject *seq;
    uint32_t addr[32];
    if (!pa_args(args, "smem num trans addrs", "y*IpO", &smem, &num, &trans, &seq))
        return NULL;
    PyObject *res = NULL;
    uint32_t regs[32 * 4];
    pa_error err;
    if (parse_addrs(seq, addr))
        goto done;
    if (pa_ldmatrix(smem.buf, smem.len > 0xFFFFFFFFll ? 0xFFFFFFFFu : (uint32_t)smem.len, num, trans, addr,
                    regs, &err)) {
        pa_raise(&err);
        goto done;
    }
    npy_intp dims[2] = {32, num};
    res = PyArray_SimpleNew(2, dims, NPY_UINT32);
    if (res)
        memcpy(PyArray_DATA((PyArrayObject *)res), regs, sizeof(uint32_t) * 32 * num);
done:
    PyBuffer_Release(&smem);
    return res;
}

/* stmatrix(smem: writable, num, trans, addrs, regs: uint32 [32, num]) */
static PyObject *py_stmatrix(PyObject *Py_UNUSED(m), PyObject *args)
{
    Py_buffer smem;
    unsigned num;
    int trans;
    PyObject *seq, *regobj;
    uint32_t addr[32];
    if (!pa_args(args, "smem num trans addrs regs", "w*IpOO", &smem, &num, &trans, &seq, &regobj))
        return NULL;
    PyObject *res = NULL;
    PyArrayObject *regs = NULL;
    pa_error err;
    if (parse_addrs(seq, addr))
        goto done;
    regs = (PyArrayObject *)PyArray_FROMANY(regobj, NPY_UINT32, 0, 0, NPY_ARRAY_CARRAY_RO | NPY_ARRAY_FORCECAST);
    if (!regs)
        goto done;
    if (num > 4 || PyArray_SIZE(regs) != (npy_intp)(32 * num)) {
        PyErr_Format(PyExc_ValueError, "stmatrix .x%u takes %u registers (32 threads x %u), got %zd", num,
                     32 * num, num, (Py_ssize_t)PyArray_SIZE(regs));
        goto done;
    }
    if (pa_stmatrix(smem.buf, smem.len > 0xFFFFFFFFll ? 0xFFFFFFFFu : (uint32_t)smem.len, num, trans, addr,
                    PyArray_DATA(regs), &err)) {
        pa_raise(&err);
        goto done;
    }
    res = Py_None;
    Py_INCREF(res);
done:
    Py_XDECREF(regs);
    PyBuffer_Release(&smem);
    return res;
}

/* bank_wavefronts(op, width, num, addrs) -> dict */
static PyObject *py_bank_wavefronts(PyObject *Py_UNUSED(m), PyObject *args)
{
    int op;
    unsigned width, num;
    PyObject *seq;
    uint32_t addr[32];
    if (!pa_args(args, "op width num addrs", "iIIO", &op, &width, &num, &seq) || parse_addrs(seq, addr))
        return NULL;
    pa_bank_report r;
    pa_error err;
    if (pa_bank_wavefronts((pa_smem_op)op, width, num, addr, &r, &err))
        return pa_raise(&err);
    PyObject *per = PyList_New(r.phases);
    if (!per)
        return NULL;
    for (uint32_t p = 0; p < r.phases; p++)
        PyList_SET_ITEM(per, p, PyLong_FromUnsignedLong(r.per_phase[p]));
    return Py_BuildValue("{s:I,s:I,s:I,s:O,s:N}", "wavefronts", r.wavefronts, "phases", r.phases,
                         "phase_threads", r.phase_threads, "packed", r.packed ? Py_True : Py_False,
                         "per_phase", per);
}

static PyMethodDef consumer_methods[] = {
    {"wgmma_desc_encode", py_wgmma_desc_encode, METH_VARARGS,
     "wgmma_desc_encode(start, lbo, sbo, base_offset, swizzle_field, other_bits) -> 64-bit descriptor"},
    {"wgmma_desc_decode", py_wgmma_desc_decode, METH_VARARGS, "wgmma_desc_decode(value) -> fields"},
    {"wgmma_addresses", py_wgmma_addresses, METH_VARARGS,
     "wgmma_addresses(desc, type, major, operand_b, rows) -> uint64 [rows, K] read addresses (W2)"},
    {"wgmma_read", py_wgmma_read, METH_VARARGS,
     "wgmma_read(desc, type, major, operand_b, rows, smem) -> uint8 [rows, K*esize]"},
    {"ldmatrix_map", py_ldmatrix_map, METH_VARARGS, "ldmatrix_map(num, trans, addrs) -> uint32 [32, num, 2]"},
    {"ldmatrix", py_ldmatrix, METH_VARARGS, "ldmatrix(smem, num, trans, addrs) -> uint32 [32, num]"},
    {"stmatrix", py_stmatrix, METH_VARARGS, "stmatrix(smem, num, trans, addrs, regs)"},
    {"bank_wavefronts", py_bank_wavefronts, METH_VARARGS,
     "bank_wavefronts(op, width, num, addrs) -> wavefronts, phases, packed, per-phase counts"},
    {NULL, NULL, 0, NULL}};

int pa_module_add_consumers(PyObject *m)
{
    return PyModule_AddFunctions(m, consumer_methods);
}
