/* batch_obj.c - _core.tile_load_batch and _core.replay: many operations in
 * one call (csrc/core/batch.h), the work done without the GIL.
 *
 * An error names the operation: "operation i (kind): <the error a one-by-one
 * issue raises>", and the exception carries it as `.index`.
 */
#include "binding.h"

#include <stdlib.h>
#include <string.h>

/* Raise err (class by code) prefixed with the failing operation; .index = i. */
static PyObject *raise_at(const pa_error *err, size_t i, const char *what)
{
    pa_error e = *err;
    char msg[PA_ERRMSG_LEN + 96];
    snprintf(msg, sizeof msg, "operation %zu (%.60s): %s", i, what, err->msg);
    memcpy(e.msg, msg, sizeof e.msg - 1);   /* the end of a very long message may be cut */
    e.msg[sizeof e.msg - 1] = 0;
    pa_raise(&e);
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (value) {
        PyObject *idx = PyLong_FromSize_t(i);
        if (!idx || PyObject_SetAttrString(value, "index", idx) < 0)
            PyErr_Clear();
        Py_XDECREF(idx);
    }
    PyErr_Restore(type, value, tb);
    return NULL;
}

/* The NumPy name of a buffer format of one native-order item ("float64"), or NULL. */
static const char *format_name(const char *fmt)
{
    static const char *const names[][2] = {
        {"b", "int8"},   {"B", "uint8"},   {"h", "int16"},  {"H", "uint16"},  {"i", "int32"},
        {"I", "uint32"}, {"q", "int64"},   {"Q", "uint64"}, {"e", "float16"}, {"f", "float32"},
        {"d", "float64"}, {"?", "bool"},   {"l", sizeof(long) == 8 ? "int64" : "int32"},
        {"L", sizeof(long) == 8 ? "uint64" : "uint32"}, {"n", "int64"}, {"N", "uint64"}};
    if (!fmt)
        return "uint8";
    if (*fmt == '@' || *fmt == '=' || (*fmt == '<' && PY_LITTLE_ENDIAN))
        fmt++;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(fmt, names[i][0]))
            return names[i][1];
    return NULL;
}

/* A C-contiguous buffer of whole itemsize-byte rows of `dtype` items (the
 * bytes of any other type would be read as these: float64 zeros as loads). */
static int get_buffer(PyObject *obj, Py_buffer *view, Py_ssize_t itemsize, const char *what, const char *dtype)
{
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
        return -1;
    const char *name = format_name(view->format);
    if (!name || strcmp(name, dtype)) {
        PyErr_Format(PyExc_TypeError, "%s must be an array of %s, not %s (format '%s')", what, dtype,
                     name ? name : "another type", view->format ? view->format : "B");
        PyBuffer_Release(view);
        return -1;
    }
    if (view->len % itemsize) {
        PyErr_Format(PyExc_ValueError, "%s: %zd bytes is not a whole number of %zd-byte items", what, view->len,
                     itemsize);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

/* The loads of a batch issued without the GIL; None, or NULL with the
 * failing operation's error raised. */
static PyObject *issue_batch(PyObject *mobj, uint32_t cta, uint32_t thread, const pa_tensormap *decoded,
                             const int32_t *coords, int ncoords, const uint32_t *dst, size_t n, uint32_t mbar)
{
    pa_tensormap map = *decoded;   /* the object may be edited while the GIL is released */
    pa_machine *m = pa_machine_enter(mobj);
    if (!m)
        return NULL;
    pa_error err;
    size_t failed = 0;
    int rc;
    UNLOCKED(mobj, rc = pa_issue_tile_load_batch(m, cta, thread, &map, n, coords, ncoords, dst, mbar, &failed, &err));
    if (rc)
        return raise_at(&err, failed, "cp.async.bulk.tensor load");
    Py_RETURN_NONE;
}

/* tile_load_batch(machine, cta, thread, tmap, coords: int32[n][5], dst: uint32[n], mbar, ncoords=-1):
 * ncoords, the coordinates each row was given before padding to 5 (-1: the map's rank) */
static PyObject *py_tile_load_batch(PyObject *mobj, PyObject *args)
{
    PyObject *cobj, *dobj;
    TensorMapObject *tm;
    unsigned cta, thread, mbar;
    int ncoords = -1;
    if (!pa_args(args, "cta thread tmap coords dst mbar ncoords", "IIO!OOI|i", &cta, &thread,
                 &TensorMapType, &tm, &cobj, &dobj, &mbar, &ncoords))
        return NULL;
    const pa_tensormap *decoded = pa_tm_decoded(tm);
    if (!decoded)
        return NULL;
    Py_buffer cv, dv;
    if (get_buffer(cobj, &cv, 4 * PA_MAX_RANK, "coords", "int32"))
        return NULL;
    if (get_buffer(dobj, &dv, 4, "dst", "uint32")) {
        PyBuffer_Release(&cv);
        return NULL;
    }
    const size_t n = (size_t)dv.len / 4;
    PyObject *res;
    if ((size_t)cv.len / (4 * PA_MAX_RANK) != n)
        res = PyErr_Format(PyExc_ValueError, "%zd coordinate rows for %zu destinations", cv.len / (4 * PA_MAX_RANK),
                           n);
    else
        res = issue_batch(mobj, cta, thread, decoded, cv.buf, ncoords, dv.buf, n, mbar);
    PyBuffer_Release(&cv);
    PyBuffer_Release(&dv);
    return res;
}

/* A C-contiguous buffer of 4-byte `dtype` items in ndim dimensions, or 0
 * with nothing held and no error set. */
static int take_array(PyObject *obj, Py_buffer *view, const char *dtype, int ndim)
{
    if (!PyObject_CheckBuffer(obj))
        return 0;
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
        PyErr_Clear();
        return 0;
    }
    const char *name = format_name(view->format);
    if (name && !strcmp(name, dtype) && view->itemsize == 4 && view->ndim == ndim && view->shape)
        return 1;
    PyBuffer_Release(view);
    return 0;
}

/* tile_load_batch_fast(cta, thread, tmap, coords, dst, mbar) -> bool: the
 * common call of Machine.cp_async_bulk_tensor_load_batch without its Python
 * conversions: coords an int32 (n, rank) array, dst a uint32 (n,) one, both
 * C-contiguous (their values fit the operands by type), tmap a TensorMap,
 * mbar an Mbarrier at an int address or an int, cta and thread ints. Any
 * other form returns False having done nothing: the method then converts
 * and checks the arguments as before, so its errors are unchanged. */
static PyObject *py_tile_load_batch_fast(PyObject *mobj, PA_FASTCALL_PARAMS)
{
    static PyTypeObject *sub;
    uint32_t cta, thread, mbar;
    if (nargs != 6 || kwnames || !pa_exact_u32(args[0], &cta) || !pa_exact_u32(args[1], &thread) ||
        !pa_type_check(args[2], &TensorMapType, &sub) ||
        !(pa_exact_u32(args[5], &mbar) || pa_mbar_known_addr(args[5], &mbar)))
        Py_RETURN_FALSE;
    Py_buffer cv, dv;
    if (!take_array(args[3], &cv, "int32", 2))
        Py_RETURN_FALSE;
    const Py_ssize_t n = cv.shape[0], k = cv.shape[1];
    if (k < 1 || k > PA_MAX_RANK || !take_array(args[4], &dv, "uint32", 1)) {
        PyBuffer_Release(&cv);
        Py_RETURN_FALSE;
    }
    PyObject *res = Py_False;
    int32_t local[64 * PA_MAX_RANK], *rows = local;   /* the rows padded to PA_MAX_RANK with zeros */
    if (dv.shape[0] != n)
        goto out;
    if (n > 64 && !(rows = PyMem_Calloc((size_t)n, sizeof(int32_t) * PA_MAX_RANK))) {
        res = PyErr_Format(PyExc_MemoryError, "out of host memory for the coordinates of %zd loads", n);
        goto out;
    }
    const int32_t *c = cv.buf;
    for (Py_ssize_t i = 0; i < n; i++)
        for (Py_ssize_t d = 0; d < PA_MAX_RANK; d++)
            rows[i * PA_MAX_RANK + d] = d < k ? c[i * k + d] : 0;
    const pa_tensormap *decoded = pa_tm_decoded((TensorMapObject *)args[2]);
    res = decoded ? issue_batch(mobj, cta, thread, decoded, rows, (int)k, dv.buf, (size_t)n, mbar) : NULL;
    if (res == Py_None) {
        Py_DECREF(res);
        res = Py_True;
    }
    if (rows != local)
        PyMem_Free(rows);
out:
    PyBuffer_Release(&cv);
    PyBuffer_Release(&dv);
    if (res == Py_True || res == Py_False)
        Py_INCREF(res);
    return res;
}

/* replay(machine, records: int64[n][16], maps: tuple of TensorMap, threads=1) */
static PyObject *py_replay(PyObject *mobj, PyObject *args)
{
    PyObject *robj, *maps_obj;
    unsigned threads = 1;
    if (!pa_args(args, "records maps threads", "OO!|I", &robj, &PyTuple_Type, &maps_obj,
                 &threads))
        return NULL;
    if (threads < 1 || threads > 64)
        return PyErr_Format(PyExc_ValueError, "threads must be in [1, 64]; got %u", threads);
    const Py_ssize_t nmaps = PyTuple_GET_SIZE(maps_obj);
    pa_tensormap *maps = PyMem_Malloc((size_t)(nmaps ? nmaps : 1) * sizeof *maps);
    const pa_tensormap **ptrs = PyMem_Malloc((size_t)(nmaps ? nmaps : 1) * sizeof *ptrs);
    if (!maps || !ptrs) {
        PyMem_Free(maps);
        PyMem_Free(ptrs);
        return PyErr_Format(PyExc_MemoryError, "out of host memory for %zd tensor maps", nmaps);
    }
    for (Py_ssize_t i = 0; i < nmaps; i++) {
        PyObject *t = PyTuple_GET_ITEM(maps_obj, i);
        const pa_tensormap *d = PyObject_TypeCheck(t, &TensorMapType) ? pa_tm_decoded((TensorMapObject *)t) : NULL;
        if (!d) {
            if (!PyErr_Occurred())
                PyErr_Format(PyExc_TypeError, "maps[%zd] is not a TensorMap", i);
            PyMem_Free(maps);
            PyMem_Free(ptrs);
            return NULL;
        }
        maps[i] = *d;   /* copies: the objects may be edited while the GIL is released */
        ptrs[i] = &maps[i];
    }
    Py_buffer rv;
    if (get_buffer(robj, &rv, sizeof(pa_rec), "records", "int64")) {
        PyMem_Free(maps);
        PyMem_Free(ptrs);
        return NULL;
    }
    pa_machine *m = pa_machine_enter(mobj);
    if (!m) {
        PyBuffer_Release(&rv);
        PyMem_Free(maps);
        PyMem_Free(ptrs);
        return NULL;
    }
    pa_error err;
    size_t failed = 0;
    int rc;
    UNLOCKED(mobj, rc = pa_replay_threads(m, rv.buf, (size_t)rv.len / sizeof(pa_rec), ptrs, (size_t)nmaps, threads,
                                          &failed, &err));
    int64_t kind = rc ? ((const pa_rec *)rv.buf)[failed].f[PA_REC_KIND] : 0;
    PyBuffer_Release(&rv);
    PyMem_Free(maps);
    PyMem_Free(ptrs);
    if (rc) {
        const char *name = pa_rec_kind_name((int)(kind >= 0 && kind < PA_REC_KIND_COUNT ? kind : -1));
        return raise_at(&err, failed, name ? name : "unknown kind");
    }
    Py_RETURN_NONE;
}

/* Methods of a Machine (machine_obj.c gathers every file's table). */
PyMethodDef pa_batch_machine_methods[] = {
    {"_tile_load_batch", py_tile_load_batch, METH_VARARGS,
     "tile_load_batch(cta, thread, tmap, coords int32[n][5], dst uint32[n], mbar, ncoords=-1)"},
    {"_tile_load_batch_fast", (PyCFunction)(void (*)(void))py_tile_load_batch_fast, METH_FASTCALL | METH_KEYWORDS,
     "tile_load_batch_fast(cta, thread, tmap, coords int32[n][rank], dst uint32[n], mbar) -> bool: "
     "the common form, or False having done nothing"},
    {"_replay", py_replay, METH_VARARGS, "replay(records int64[n][16], maps tuple, threads=1)"},
    {NULL, NULL, 0, NULL}};

int pa_module_add_batch(PyObject *m)
{
    static const char *const kinds[PA_REC_KIND_COUNT] = {
        "REC_TENSOR_LOAD", "REC_TENSOR_STORE", "REC_TENSOR_REDUCE", "REC_BULK_REDUCE", "REC_COMMIT_GROUP",
        "REC_WAIT_GROUP", "REC_MBAR_INIT", "REC_MBAR_ARRIVE", "REC_MBAR_EXPECT_TX", "REC_MBAR_WAIT", "REC_RUN"};
    for (int k = 0; k < PA_REC_KIND_COUNT; k++)
        if (PyModule_AddIntConstant(m, kinds[k], k) < 0)
            return -1;
    return PyModule_AddIntConstant(m, "REC_FIELDS", PA_REC_FIELDS);
}
