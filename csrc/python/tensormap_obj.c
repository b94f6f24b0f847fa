/* tensormap_obj.c - _core.TensorMap: 128 bytes plus their decoded fields.
 *
 * Lends its bytes read-only through the buffer protocol (bytes(tm) is the
 * CUtensorMap image); edits go through replace() so the decoded view stays
 * in step with the bytes.
 */
#include "binding.h"

#define NO_IMPORT_ARRAY
#define PY_ARRAY_UNIQUE_SYMBOL ptxasync_ARRAY_API
#include <numpy/arrayobject.h>

static PyObject *tm_new_from(PyTypeObject *type, const pa_tensormap *m)
{
    TensorMapObject *self = (TensorMapObject *)type->tp_alloc(type, 0);
    if (!self)
        return NULL;
    self->map = *m;
    pa_tensormap_pack(m, self->bytes);
    return (PyObject *)self;
}


static int fill_u32(PyObject *seq, uint32_t *out, uint32_t n, const char *what)
{
    uint64_t v[PA_MAX_RANK];
    if (pa_fill_u64(seq, v, n, what))
        return -1;
    for (uint32_t i = 0; i < n; i++) {
        if (v[i] > UINT32_MAX) {
            PyErr_Format(PyExc_ValueError, "%s[%u] = %llu does not fit in 32 bits", what, i,
                         (unsigned long long)v[i]);
            return -1;
        }
        out[i] = (uint32_t)v[i];
    }
    return 0;
}

static int check_rank(unsigned rank, unsigned lo)
{
    /* Larger ranks are still rejected by the core with the driver's rule;
     * this only bounds the arrays. */
    if (rank > 16) {
        PyErr_Format(PaEncodeError, "tensorRank %u is outside %u..5", rank, lo);
        return -1;
    }
    return 0;
}

static PyObject *tm_encode_tiled(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"dtype", "rank", "global_address", "global_dim", "global_strides",
                             "box_dim", "element_strides", "interleave", "swizzle",
                             "l2_promotion", "oob_fill", "tensormap_address", "target", NULL};
    pa_tiled_params p;
    memset(&p, 0, sizeof p);
    PyObject *gdim, *gstr, *box, *es;
    unsigned long long addr, tmaddr = 0;
    const char *target = "sm_90a";
    if (!pa_args_kw(args, kw, kwlist, "iIKOOOOiiii|Ks", &p.dtype, &p.rank, &addr,
                                     &gdim, &gstr, &box, &es, &p.interleave, &p.swizzle,
                                     &p.l2_promotion, &p.oob_fill, &tmaddr, &target) ||
        (p.target = pa_parse_target(target)) < 0)
        return NULL;
    if (check_rank(p.rank, 1))
        return NULL;
    uint32_t n = p.rank > PA_MAX_RANK ? PA_MAX_RANK : p.rank;
    p.global_address = addr;
    p.tensormap_address = tmaddr;
    if (p.rank >= 1 && p.rank <= PA_MAX_RANK &&
        (pa_fill_u64(gdim, p.global_dim, n, "globalDim") ||
         pa_fill_u64(gstr, p.global_strides, n - 1, "globalStrides") ||
         fill_u32(box, p.box_dim, n, "boxDim") || fill_u32(es, p.element_strides, n, "elementStrides")))
        return NULL;
    pa_tensormap m;
    pa_error err;
    if (pa_tensormap_encode_tiled(&m, &p, &err))
        return pa_raise(&err);
    return tm_new_from(type, &m);
}

static PyObject *tm_encode_im2col(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"dtype", "rank", "global_address", "global_dim", "global_strides",
                             "pixel_box_lower", "pixel_box_upper", "channels_per_pixel",
                             "pixels_per_column", "element_strides", "interleave", "swizzle",
                             "l2_promotion", "oob_fill", "tensormap_address", "target", NULL};
    pa_im2col_params p;
    memset(&p, 0, sizeof p);
    PyObject *gdim, *gstr, *lo, *hi, *es;
    unsigned long long addr, tmaddr = 0;
    const char *target = "sm_90a";
    if (!pa_args_kw(args, kw, kwlist, "iIKOOOOIIOiiii|Ks", &p.dtype, &p.rank, &addr,
                                     &gdim, &gstr, &lo, &hi, &p.channels_per_pixel,
                                     &p.pixels_per_column, &es, &p.interleave, &p.swizzle,
                                     &p.l2_promotion, &p.oob_fill, &tmaddr, &target) ||
        (p.target = pa_parse_target(target)) < 0)
        return NULL;
    if (check_rank(p.rank, 3))
        return NULL;
    p.global_address = addr;
    p.tensormap_address = tmaddr;
    if (p.rank >= 3 && p.rank <= PA_MAX_RANK) {
        int64_t l[PA_MAX_RANK], h[PA_MAX_RANK];
        if (pa_fill_u64(gdim, p.global_dim, p.rank, "globalDim") ||
            pa_fill_u64(gstr, p.global_strides, p.rank - 1, "globalStrides") ||
            fill_u32(es, p.element_strides, p.rank, "elementStrides"))
            return NULL;
        int nl, nh;   /* one at a time: a parse after a failed one would lose its error */
        if ((nl = pa_parse_i64_seq(lo, l, PA_MAX_RANK, "pixelBoxLowerCorner")) < 0 ||
            (nh = pa_parse_i64_seq(hi, h, PA_MAX_RANK, "pixelBoxUpperCorner")) < 0)
            return NULL;
        if (nl != (int)p.rank - 2 || nh != (int)p.rank - 2) {
            PyErr_Format(PyExc_ValueError, "pixelBoxLowerCorner/UpperCorner need tensorRank - 2 = %u entries",
                         p.rank - 2);
            return NULL;
        }
        for (int i = 0; i < nl; i++) {
            if (l[i] < INT32_MIN || l[i] > INT32_MAX || h[i] < INT32_MIN || h[i] > INT32_MAX) {
                int low = l[i] < INT32_MIN || l[i] > INT32_MAX;
                PyErr_Format(PyExc_OverflowError, "pixelBox%sCorner[%d] = %lld does not fit in an int",
                             low ? "Lower" : "Upper", i, (long long)(low ? l[i] : h[i]));
                return NULL;
            }
            p.pixel_box_lower[i] = (int32_t)l[i];
            p.pixel_box_upper[i] = (int32_t)h[i];
        }
    }
    pa_tensormap m;
    pa_error err;
    if (pa_tensormap_encode_im2col(&m, &p, &err))
        return pa_raise(&err);
    return tm_new_from(type, &m);
}

static PyObject *tm_from_bytes(PyTypeObject *type, PyObject *arg)
{
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    if (view.len != PA_TENSORMAP_BYTES) {
        PyBuffer_Release(&view);
        return PyErr_Format(PyExc_ValueError, "a tensor map is %d bytes, got %zd", PA_TENSORMAP_BYTES,
                            view.len);
    }
    TensorMapObject *self = (TensorMapObject *)type->tp_alloc(type, 0);
    if (!self) {
        PyBuffer_Release(&view);
        return NULL;
    }
    memcpy(self->bytes, view.buf, PA_TENSORMAP_BYTES);
    PyBuffer_Release(&view);
    pa_error err;
    if (pa_tensormap_unpack(self->bytes, &self->map, &err)) {
        Py_DECREF(self);
        return pa_raise(&err);
    }
    return (PyObject *)self;
}

static PyObject *tm_replace(TensorMapObject *self, PyObject *args)
{
    int field, ord, target;
    unsigned long long val;
    const char *tname = "sm_90a";
    if (!pa_args(args, "field ord value target", "iiK|s", &field, &ord, &val, &tname) ||
        (target = pa_parse_target(tname)) < 0)
        return NULL;
    if (self->exports > 0) {
        PyErr_SetString(PyExc_BufferError, "tensor map bytes are exported; release the views first");
        return NULL;
    }
    pa_error err;
    if (field < 0 || field >= PA_FIELD_COUNT)
        return PyErr_Format(PyExc_ValueError, "unknown tensormap.replace field %d", field);
    if (pa_tensormap_replace_target(self->bytes, (pa_tmap_field)field, ord, val, target, &err))
        return pa_raise(&err);
    /* Golden R1: the hardware writes .rank 5..7 as given (rank 6..8), so an
     * edit may leave bytes that decode to no map. Keep them (bytes(tm) is what
     * the GPU holds); using the map then raises the decoding error. */
    pa_tensormap m;
    if (pa_tensormap_unpack(self->bytes, &m, &self->undecoded) == PA_OK) {
        self->map = m;
        self->undecoded.code = PA_OK;
    }
    Py_RETURN_NONE;
}

const pa_tensormap *pa_tm_decoded(TensorMapObject *tm)
{
    if (tm->undecoded.code == PA_OK)
        return &tm->map;
    pa_raise(&tm->undecoded);
    return NULL;
}

static PyObject *tm_decodes(TensorMapObject *self, PyObject *Py_UNUSED(ignored))
{
    return PyBool_FromLong(self->undecoded.code == PA_OK);
}

/* An exact copy, also of a map whose edited bytes do not decode. */
static PyObject *tm_copy(TensorMapObject *self, PyObject *Py_UNUSED(ignored))
{
    TensorMapObject *c = (TensorMapObject *)Py_TYPE(self)->tp_alloc(Py_TYPE(self), 0);
    if (!c)
        return NULL;
    memcpy(c->bytes, self->bytes, sizeof c->bytes);
    c->map = self->map;
    c->undecoded = self->undecoded;
    return (PyObject *)c;
}

static PyObject *u64_list(const uint64_t *v, uint32_t n)
{
    PyObject *l = PyList_New(n);
    for (uint32_t i = 0; l && i < n; i++) {
        PyObject *x = PyLong_FromUnsignedLongLong(v[i]);
        if (!x) {
            Py_DECREF(l);
            return NULL;
        }
        PyList_SET_ITEM(l, i, x);
    }
    return l;
}

static PyObject *tm_fields(TensorMapObject *self, PyObject *Py_UNUSED(ignored))
{
    const pa_tensormap *m = pa_tm_decoded(self);
    if (!m)
        return NULL;
    uint64_t box[PA_MAX_RANK], es[PA_MAX_RANK], lo[PA_MAX_RANK], hi[PA_MAX_RANK];
    uint32_t r = m->rank > PA_MAX_RANK ? PA_MAX_RANK : m->rank;
    for (uint32_t i = 0; i < PA_MAX_RANK; i++) {
        box[i] = m->box_dim[i];
        es[i] = m->element_strides[i];
        lo[i] = hi[i] = 0;
    }
    PyObject *lol = PyList_New(0), *hil = PyList_New(0);
    if (!lol || !hil)
        goto fail;
    /* im2col-wide maps hold one W corner pair */
    uint32_t ncorners = m->kind == PA_MAP_IM2COL ? (r > 2 ? r - 2 : 0) : PA_MAP_IS_WIDE(m->kind) ? 1 : 0;
    for (uint32_t i = 0; i < ncorners; i++) {
        PyObject *a = PyLong_FromLong(m->pixel_box_lower[i]), *b = PyLong_FromLong(m->pixel_box_upper[i]);
        int bad = !a || !b || PyList_Append(lol, a) || PyList_Append(hil, b);
        Py_XDECREF(a);
        Py_XDECREF(b);
        if (bad)
            goto fail;
    }
    (void)lo;
    (void)hi;
    PyObject *d = Py_BuildValue(
        "{s:i,s:i,s:I,s:K,s:N,s:N,s:N,s:N,s:N,s:N,s:I,s:I,s:i,s:i,s:i,s:i}", "kind", (int)m->kind,
        "dtype", (int)m->dtype, "rank", m->rank, "global_address", (unsigned long long)m->global_address,
        "global_dim", u64_list(m->global_dim, r), "global_strides", u64_list(m->global_strides, r ? r - 1 : 0),
        "box_dim", u64_list(box, r), "element_strides", u64_list(es, r), "pixel_box_lower", lol,
        "pixel_box_upper", hil, "channels_per_pixel", m->channels_per_pixel, "pixels_per_column",
        m->pixels_per_column, "interleave", (int)m->interleave, "swizzle", (int)m->swizzle,
        "l2_promotion", (int)m->l2_promotion, "oob_fill", (int)m->oob_fill);
    return d;
fail:
    Py_XDECREF(lol);
    Py_XDECREF(hil);
    return NULL;
}

/* The box of a tiled map, or the column (pixelsPerColumn x channelsPerPixel)
 * of an im2col map. */
static int layout_of(TensorMapObject *self, pa_box_layout *l)
{
    pa_error err;
    if (!pa_tm_decoded(self))
        return -1;
    const pa_tensormap *m = &self->map;
    int rc;
    if (PA_MAP_IS_WIDE(m->kind) || pa_dtype_get(m->dtype)->is_packed) {
        /* im2col-wide maps and packed types (copy/copy.h): the box of a load whose
         * start pixel is the lower corner, without halo */
        int32_t c[PA_MAX_RANK] = {0, 0, 0, 0, 0};
        const uint16_t info[PA_MAX_RANK - 2] = {0, 0, 0};
        for (uint32_t i = 0; m->kind != PA_MAP_TILED && i + 2 < m->rank && i < PA_MAX_RANK - 2; i++)
            c[1 + i] = m->pixel_box_lower[i];
        pa_load_mode mode = m->kind == PA_MAP_IM2COL_W    ? PA_MODE_IM2COL_W
                            : m->kind == PA_MAP_IM2COL_W128 ? PA_MODE_IM2COL_W128
                            : m->kind == PA_MAP_IM2COL      ? PA_MODE_IM2COL
                                                            : PA_MODE_TILE;
        pa_copy_plan plan;
        rc = pa_copy_plan_make(&plan, PA_TARGET_DEFAULT, m, mode, PA_DIR_LOAD, c, -1, info, -1, &err);
        *l = plan.l;
    } else {
        rc = m->kind == PA_MAP_IM2COL ? pa_box_layout_im2col(m, l, &err) : pa_box_layout_tile(m, l, &err);
    }
    if (rc) {
        pa_raise(&err);
        return -1;
    }
    return 0;
}

static PyObject *tm_box_layout(TensorMapObject *self, PyObject *Py_UNUSED(ignored))
{
    pa_box_layout l;
    if (layout_of(self, &l))
        return NULL;
    return Py_BuildValue("{s:I,s:(IIIII),s:I,s:I,s:K,s:K,s:i}", "esize", l.esize, "n", l.n[0], l.n[1],
                         l.n[2], l.n[3], l.n[4], "row_bytes", l.row_bytes, "pitch", l.pitch, "rows",
                         (unsigned long long)l.rows, "tx_bytes", (unsigned long long)l.tx_bytes,
                         "swizzle", (int)l.swizzle);
}

/* Shared address of every box element (array in NumPy order: n4, .., n0). */
static PyObject *tm_address_table(TensorMapObject *self, PyObject *args)
{
    unsigned dst;
    if (!pa_args(args, "dst", "I", &dst))
        return NULL;
    pa_box_layout l;
    if (layout_of(self, &l))
        return NULL;
    npy_intp dims[PA_MAX_RANK];
    int nd = (int)l.rank;
    for (int i = 0; i < nd; i++)
        dims[i] = l.n[nd - 1 - i];
    PyArrayObject *arr = (PyArrayObject *)PyArray_SimpleNew(nd, dims, NPY_UINT32);
    if (!arr)
        return NULL;
    uint32_t *out = (uint32_t *)PyArray_DATA(arr);
    uint64_t total = l.rows * l.n[0];
    uint32_t k[PA_MAX_RANK] = {0};
    for (uint64_t t = 0; t < total; t++) {
        uint64_t rem = t;
        for (uint32_t i = 0; i < l.rank; i++) {
            k[i] = (uint32_t)(rem % l.n[i]);
            rem /= l.n[i];
        }
        out[t] = pa_layout_forward(&l, dst, k, 0);
    }
    return (PyObject *)arr;
}

static PyObject *tm_inverse(TensorMapObject *self, PyObject *args)
{
    unsigned dst, addr;
    if (!pa_args(args, "dst addr", "II", &dst, &addr))
        return NULL;
    pa_box_layout l;
    if (layout_of(self, &l))
        return NULL;
    uint32_t k[PA_MAX_RANK], byte;
    if (!pa_layout_inverse(&l, dst, addr, k, &byte))
        Py_RETURN_NONE;
    PyObject *kt = PyTuple_New(l.rank);
    for (uint32_t i = 0; kt && i < l.rank; i++)
        PyTuple_SET_ITEM(kt, i, PyLong_FromUnsignedLong(k[i]));
    return kt ? Py_BuildValue("(NI)", kt, byte) : NULL;
}

static int tm_getbuffer(TensorMapObject *self, Py_buffer *view, int flags)
{
    if (PyBuffer_FillInfo(view, (PyObject *)self, self->bytes, PA_TENSORMAP_BYTES, 1, flags) < 0)
        return -1;
    self->exports++;
    return 0;
}

static void tm_releasebuffer(TensorMapObject *self, Py_buffer *Py_UNUSED(view))
{
    self->exports--;
}

static PyBufferProcs tm_as_buffer = {(getbufferproc)tm_getbuffer, (releasebufferproc)tm_releasebuffer};

static PyMethodDef tm_methods[] = {
    {"_encode_tiled", (PyCFunction)(void (*)(void))tm_encode_tiled, METH_VARARGS | METH_KEYWORDS | METH_CLASS,
     "cuTensorMapEncodeTiled (validates like the sm_90 driver)."},
    {"_encode_im2col", (PyCFunction)(void (*)(void))tm_encode_im2col, METH_VARARGS | METH_KEYWORDS | METH_CLASS,
     "cuTensorMapEncodeIm2col (validates like the sm_90 driver)."},
    {"from_bytes", (PyCFunction)tm_from_bytes, METH_O | METH_CLASS,
     "Decode a 128-byte CUtensorMap image."},
    {"_replace", (PyCFunction)tm_replace, METH_VARARGS, "tensormap.replace.tile(field, ord, new_val)."},
    {"_decodes", (PyCFunction)tm_decodes, METH_NOARGS, "False if an edit left bytes that decode to no map."},
    {"_copy", (PyCFunction)tm_copy, METH_NOARGS, "An exact copy (bytes and decoded fields)."},
    {"_fields", (PyCFunction)tm_fields, METH_NOARGS, "Decoded fields as a dict."},
    {"_box_layout", (PyCFunction)tm_box_layout, METH_NOARGS, "Shape of the box in shared memory."},
    {"_address_table", (PyCFunction)tm_address_table, METH_VARARGS,
     "Shared address of every box element for a box written at dst."},
    {"_inverse", (PyCFunction)tm_inverse, METH_VARARGS,
     "Box element (k0 first) and byte held at a shared address, or None."},
    {NULL, NULL, 0, NULL}};

PyTypeObject TensorMapType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ptxasync._core.TensorMap",
    .tp_basicsize = sizeof(TensorMapObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "A 128-byte tensor-map descriptor (CUtensorMap).",
    .tp_methods = tm_methods,
    .tp_as_buffer = &tm_as_buffer,
};

int pa_module_add_tensormap(PyObject *m)
{
    if (PyType_Ready(&TensorMapType) < 0)
        return -1;
    Py_INCREF(&TensorMapType);
    if (PyModule_AddObject(m, "TensorMap", (PyObject *)&TensorMapType) < 0) {
        Py_DECREF(&TensorMapType);
        return -1;
    }
    return 0;
}
