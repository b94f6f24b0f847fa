/* async_obj.c - the cp.async, cp.async.bulk, st.async and st.bulk engines as
 * functions of _core taking the Machine first (thin: convert, delegate, raise).
 * Integer operands are range-checked by pa_args (args.c), values by the core. */
#include "binding.h"

static PyObject *done(int rc, const pa_error *err)
{
    if (rc)
        return pa_raise(err);
    Py_RETURN_NONE;
}

/* cp_async(cta, thread, dst, src, cp_size, cg, src_size, ignore_src, prefetch, cache_hint) */
static PyObject *py_cp_async(PyObject *mo, PyObject *args)
{
    unsigned cta, thread, dst, cp_size, src_size, prefetch;
    unsigned long long src;
    int cg, ignore, hint;
    if (!pa_args(args, "cta thread dst src cp_size cg src_size ignore_src prefetch cache_hint",
                 "IIIKIpIpIp", &cta, &thread, &dst, &src, &cp_size, &cg, &src_size, &ignore,
                 &prefetch, &hint))
        return NULL;
    pa_machine *m = pa_machine_enter(mo);
    if (!m)
        return NULL;
    pa_cp_async_args a = {cp_size, src_size, ignore, cg, prefetch, hint};
    pa_error err;
    int rc;
    UNLOCKED(mo, rc = pa_issue_cp_async(m, cta, thread, dst, src, &a, &err));
    return done(rc, &err);
}

/* cp_async_group(cta, thread, what, n): what 0 commit_group, 1 wait_group n, 2 wait_all */
static PyObject *py_cp_async_group(PyObject *mo, PyObject *args)
{
    unsigned cta, thread, n;
    int what;
    if (!pa_args(args, "cta thread what n", "IIiI", &cta, &thread, &what, &n))
        return NULL;
    pa_machine *m = pa_machine_enter(mo);
    if (!m)
        return NULL;
    pa_error err;
    int rc;
    if (what == 0)
        rc = pa_cp_async_commit_group(m, cta, thread, &err);
    else if (what == 1)
        UNLOCKED(mo, rc = pa_cp_async_wait_group(m, cta, thread, n, &err));
    else
        UNLOCKED(mo, rc = pa_cp_async_wait_all(m, cta, thread, &err));
    return done(rc, &err);
}

/* cp_async_mbarrier_arrive(cta, thread, mbar, noinc) */
static PyObject *py_cp_async_mbarrier_arrive(PyObject *mo, PyObject *args)
{
    unsigned cta, thread, mbar;
    int noinc;
    if (!pa_args(args, "cta thread mbar noinc", "IIIp", &cta, &thread, &mbar, &noinc))
        return NULL;
    pa_machine *m = pa_machine_enter(mo);
    if (!m)
        return NULL;
    pa_error err;
    int rc;
    UNLOCKED(mo, rc = pa_cp_async_mbarrier_arrive(m, cta, thread, mbar, noinc, &err));
    return done(rc, &err);
}

/* bulk_copy(cta, thread, dir, dst, src, size, mbar, multicast, cta_mask, cp_mask, byte_mask, hint) */
static PyObject *py_bulk_copy(PyObject *mo, PyObject *args)
{
    unsigned cta, thread, size, mbar, cta_mask, byte_mask;
    unsigned long long dst, src;
    int dir, multicast, cp_mask, hint;
    if (!pa_args(args, "cta thread dir dst src size mbar multicast cta_mask cp_mask byte_mask hint",
                 "IIiKKIIpIpIp", &cta, &thread, &dir, &dst, &src, &size, &mbar, &multicast,
                 &cta_mask, &cp_mask, &byte_mask, &hint))
        return NULL;
    pa_machine *m = pa_machine_enter(mo);
    if (!m)
        return NULL;
    pa_bulk_copy_args a = {multicast, (uint16_t)cta_mask, cp_mask, (uint16_t)byte_mask, hint};
    pa_error err;
    int rc;
    UNLOCKED(mo, rc = pa_issue_bulk_copy(m, cta, thread, (pa_bulk_dir)dir, dst, src, size, mbar, &a, &err));
    return done(rc, &err);
}

/* bulk_prefetch_l2(cta, thread, src, size) */
static PyObject *py_bulk_prefetch_l2(PyObject *mo, PyObject *args)
{
    unsigned cta, thread, size;
    unsigned long long src;
    if (!pa_args(args, "cta thread src size", "IIKI", &cta, &thread, &src, &size))
        return NULL;
    pa_machine *m = pa_machine_enter(mo);
    if (!m)
        return NULL;
    pa_error err;
    return done(pa_bulk_prefetch_l2(m, cta, thread, src, size, &err), &err);
}

/* bulk_wait_group_read(cta, thread, n): cp.async.bulk.wait_group.read N */
static PyObject *py_bulk_wait_group_read(PyObject *mo, PyObject *args)
{
    unsigned cta, thread, n;
    if (!pa_args(args, "cta thread n", "III", &cta, &thread, &n))
        return NULL;
    pa_machine *m = pa_machine_enter(mo);
    if (!m)
        return NULL;
    pa_error err;
    int rc;
    UNLOCKED(mo, rc = pa_bulk_wait_group_read(m, cta, thread, n, &err));
    return done(rc, &err);
}

/* st_async(cta, thread, dst, mbar, data: bytes, elem_bytes, vec) */
static PyObject *py_st_async(PyObject *mo, PyObject *args)
{
    unsigned cta, thread, dst, mbar, elem, vec;
    Py_buffer data;
    if (!pa_args(args, "cta thread dst mbar data elem_bytes vec",
                 "IIIIy*II", &cta, &thread, &dst, &mbar, &data, &elem, &vec))
        return NULL;
    pa_machine *m = pa_machine_enter(mo);
    if (!m) {
        PyBuffer_Release(&data);
        return NULL;
    }
    uint8_t bytes[16] = {0};
    if (elem > 16 || vec > 16 || (Py_ssize_t)(elem * vec) != data.len) {
        PyBuffer_Release(&data);
        return PyErr_Format(PyExc_ValueError, "st.async value: %zd bytes given for %u x %u-byte elements",
                            data.len, vec, elem);
    }
    if (data.len <= 16)
        memcpy(bytes, data.buf, (size_t)data.len);
    PyBuffer_Release(&data);
    pa_error err;
    return done(pa_issue_st_async(m, cta, thread, dst, mbar, bytes, elem, vec, &err), &err);
}

/* st_async_release(cta, thread, dst, data: bytes, scope_sys, mmio) */
static PyObject *py_st_async_release(PyObject *mo, PyObject *args)
{
    unsigned cta, thread;
    unsigned long long dst;
    int scope_sys, mmio;
    Py_buffer data;
    if (!pa_args(args, "cta thread dst data scope_sys mmio", "IIKy*pp", &cta, &thread, &dst,
                 &data, &scope_sys, &mmio))
        return NULL;
    pa_machine *m = pa_machine_enter(mo);
    uint8_t bytes[8] = {0};
    Py_ssize_t n = data.len;
    if (m && n >= 1 && n <= 8)
        memcpy(bytes, data.buf, (size_t)n);
    PyBuffer_Release(&data);
    if (!m)
        return NULL;
    if (n < 1 || n > 8)
        return PyErr_Format(PyExc_ValueError, "st.async.release.global value: %zd bytes, not 1, 2, 4 or 8", n);
    pa_error err;
    return done(pa_issue_st_async_release(m, cta, thread, dst, bytes, (uint32_t)n, scope_sys, mmio, &err),
                &err);
}

/* st_bulk(cta, thread, dst, size, initval) */
static PyObject *py_st_bulk(PyObject *mo, PyObject *args)
{
    unsigned cta, thread, dst;
    unsigned long long size, initval;
    if (!pa_args(args, "cta thread dst size initval",
                 "IIIKK", &cta, &thread, &dst, &size, &initval))
        return NULL;
    pa_machine *m = pa_machine_enter(mo);
    if (!m)
        return NULL;
    pa_error err;
    return done(pa_st_bulk(m, cta, thread, dst, size, initval, &err), &err);
}

/* Methods of a Machine (machine_obj.c gathers every file's table). */
PyMethodDef pa_async_machine_methods[] = {
    {"_cp_async", py_cp_async, METH_VARARGS,
     "cp_async(cta, thread, dst, src, cp_size, cg, src_size, ignore_src, prefetch, cache_hint)"},
    {"_cp_async_group", py_cp_async_group, METH_VARARGS,
     "cp_async_group(cta, thread, what, n): 0 commit_group, 1 wait_group n, 2 wait_all"},
    {"_cp_async_mbarrier_arrive", py_cp_async_mbarrier_arrive, METH_VARARGS,
     "cp_async_mbarrier_arrive(cta, thread, mbar, noinc)"},
    {"_bulk_copy", py_bulk_copy, METH_VARARGS,
     "bulk_copy(cta, thread, dir, dst, src, size, mbar, multicast, cta_mask, cp_mask, byte_mask, "
     "cache_hint)"},
    {"_bulk_prefetch_l2", py_bulk_prefetch_l2, METH_VARARGS, "bulk_prefetch_l2(cta, thread, src, size)"},
    {"_bulk_wait_group_read", py_bulk_wait_group_read, METH_VARARGS,
     "bulk_wait_group_read(cta, thread, n): cp.async.bulk.wait_group.read N"},
    {"_st_async", py_st_async, METH_VARARGS, "st_async(cta, thread, dst, mbar, data, elem_bytes, vec)"},
    {"_st_async_release", py_st_async_release, METH_VARARGS,
     "st_async_release(cta, thread, dst, data, scope_sys, mmio)"},
    {"_st_bulk", py_st_bulk, METH_VARARGS, "st_bulk(cta, thread, dst, size, initval)"},
    {NULL, NULL, 0, NULL}};
