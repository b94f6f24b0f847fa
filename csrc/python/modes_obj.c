/* modes_obj.c - binding of the sm_100 load modes, cuTensorMapEncodeIm2colWide,
 * cp.async.bulk.prefetch.tensor and the target table (module functions; the
 * Python classes call them). */
#include "binding.h"

#include <stdlib.h>

int pa_parse_target(const char *name)
{
    int t = pa_target_parse(name);
    if (t < 0)
        PyErr_Format(PyExc_ValueError,
                     "unknown target '%s' (known: sm_90, sm_90a, sm_100, sm_100a, sm_100f, sm_101a, "
                     "sm_101f, sm_103a, sm_103f, sm_110a, sm_110f, sm_120a, sm_120f, sm_121a)",
                     name);
    return t;
}

/* encode_im2col_wide(cls, dtype, rank, addr, gdim, gstrides, lower_w, upper_w, cpp, ppc,
 *                    estrides, interleave, mode, swizzle, l2, oob, tmaddr, target) */
static PyObject *py_encode_im2col_wide(PyObject *Py_UNUSED(mod), PyObject *args)
{
    PyTypeObject *type;
    pa_im2col_wide_params p;
    memset(&p, 0, sizeof p);
    PyObject *gdim, *gstr, *es;
    unsigned long long addr, tmaddr;
    const char *target;
    if (!pa_args(args,
                 "cls dtype rank global_address global_dim global_strides pixel_box_lower_w "
                 "pixel_box_upper_w channels_per_pixel pixels_per_column element_strides interleave "
                 "mode swizzle l2_promotion oob_fill tensormap_address target",
                 "O!iIKOOiiIIOiiiiiKs", &PyType_Type, &type, &p.dtype, &p.rank, &addr, &gdim, &gstr,
                 &p.pixel_box_lower_w, &p.pixel_box_upper_w, &p.channels_per_pixel,
                 &p.pixels_per_column, &es, &p.interleave, &p.mode, &p.swizzle, &p.l2_promotion,
                 &p.oob_fill, &tmaddr, &target) ||
        (p.target = pa_parse_target(target)) < 0)
        return NULL;
    if (!PyType_IsSubtype(type, &TensorMapType))
        return PyErr_Format(PyExc_TypeError, "%s is not a TensorMap class", type->tp_name);
    p.global_address = addr;
    p.tensormap_address = tmaddr;
    if (p.rank >= 3 && p.rank <= PA_MAX_RANK) {
        uint64_t e[PA_MAX_RANK];
        if (pa_fill_u64(gdim, p.global_dim, p.rank, "globalDim") ||
            pa_fill_u64(gstr, p.global_strides, p.rank - 1, "globalStrides") ||
            pa_fill_u64(es, e, p.rank, "elementStrides"))
            return NULL;
        for (uint32_t i = 0; i < p.rank; i++) {
            if (e[i] > UINT32_MAX)
                return PyErr_Format(PyExc_ValueError, "elementStrides[%u] does not fit in 32 bits", i);
            p.element_strides[i] = (uint32_t)e[i];
        }
    }
    pa_tensormap m;
    pa_error err;
    if (pa_tensormap_encode_im2col_wide(&m, &p, &err))
        return pa_raise(&err);
    TensorMapObject *self = (TensorMapObject *)type->tp_alloc(type, 0);
    if (!self)
        return NULL;
    self->map = m;
    pa_tensormap_pack(&m, self->bytes);
    return (PyObject *)self;
}

/* Coordinates: five for gather4 / scatter4 ({col, row0..row3}), else one per dimension. */
static int parse_mode_coords(PyObject *seq, const pa_tensormap *map, int mode, int32_t c[PA_MAX_RANK])
{
    int64_t v[PA_MAX_RANK];
    int n = pa_parse_i64_seq(seq, v, PA_MAX_RANK, "tensorCoords");
    if (n < 0)
        return -1;
    const int four = mode == PA_MODE_TILE_GATHER4 || mode == PA_MODE_TILE_SCATTER4;
    const int want = four ? 5 : (int)map->rank;
    if (n != want) {
        PyErr_Format(PyExc_ValueError, "%d coordinates given; %s needs %d%s", n,
                     pa_mode_name((pa_load_mode)mode), want,
                     four ? " ({col_idx, row_idx0, row_idx1, row_idx2, row_idx3})" : " (the map's rank)");
        return -1;
    }
    return pa_coords_s32(v, n, c);
}

/* im2colInfo: {wHalo, wOffset} (.im2col::w*), the offsets (.im2col), or None. */
static int parse_info(PyObject *seq, const pa_tensormap *map, int mode, uint16_t info[PA_MAX_RANK - 2])
{
    memset(info, 0, sizeof(uint16_t) * (PA_MAX_RANK - 2));
    const int wide = mode == PA_MODE_IM2COL_W || mode == PA_MODE_IM2COL_W128;
    const int want = wide ? 2 : mode == PA_MODE_IM2COL ? (int)map->rank - 2 : 0;
    if (seq == Py_None) {
        if (want) {
            PyErr_Format(PyExc_ValueError, "%s needs im2colInfo (%s)", pa_mode_name((pa_load_mode)mode),
                         wide ? "{wHalo, wOffset}" : "one offset per W/H/D dimension");
            return -1;
        }
        return 0;
    }
    int64_t v[PA_MAX_RANK];
    int n = pa_parse_i64_seq(seq, v, PA_MAX_RANK, "im2colInfo");
    if (n < 0)
        return -1;
    if (mode == PA_MODE_IM2COL && map->rank < 3) {
        PyErr_Format(PyExc_ValueError, "%s needs an im2col tensor map of rank 3 to 5; this one has rank %u",
                     pa_mode_name((pa_load_mode)mode), map->rank);
        return -1;
    }
    if (!want || n != want) {
        PyErr_Format(PyExc_ValueError, "%d im2colInfo values given; %s takes %d", n,
                     pa_mode_name((pa_load_mode)mode), want);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        if (v[i] < 0 || v[i] > UINT16_MAX) {
            PyErr_Format(PyExc_OverflowError, "im2colInfo[%d] = %lld does not fit in .u16", i,
                         (long long)v[i]);
            return -1;
        }
        info[i] = (uint16_t)v[i];
    }
    return 0;
}

static int check_mode(int mode)
{
    if (mode < 0 || mode >= PA_MODE_COUNT) {
        PyErr_Format(PyExc_ValueError, "unknown load mode %d", mode);
        return -1;
    }
    return 0;
}

/* modes_load(machine, cta, thread, tmap, mode, coords, info, dst, cluster, mbar, multicast, mask,
 *            cta_group=0) */
static PyObject *py_modes_load(PyObject *mobj, PyObject *args)
{
    PyObject *coords_obj, *info_obj;
    TensorMapObject *tm;
    unsigned cta, thread, dst, mbar, mask;
    int mode, cluster, multicast, cta_group = 0;
    if (!pa_args(args, "cta thread tmap mode coords info dst cluster_space mbar multicast "
                 "cta_mask cta_group",
                 "IIO!iOOIpIpI|i", &cta, &thread, &TensorMapType, &tm, &mode, &coords_obj,
                 &info_obj, &dst, &cluster, &mbar, &multicast, &mask, &cta_group) ||
        check_mode(mode))
        return NULL;
    /* arguments first: no Python code runs between enter and the core call */
    const pa_tensormap *map = pa_tm_decoded(tm);
    int32_t coords[PA_MAX_RANK];
    uint16_t info[PA_MAX_RANK - 2];
    if (!map || parse_mode_coords(coords_obj, map, mode, coords) || parse_info(info_obj, map, mode, info))
        return NULL;
    if (mask > 0xFFFF)
        return PyErr_Format(PyExc_ValueError, "ctaMask 0x%x does not fit in 16 bits", mask);
    pa_machine *m = pa_machine_enter(mobj);
    if (!m)
        return NULL;
    pa_error err;
    if (pa_issue_tensor_load_group(m, cta, thread, map, (pa_load_mode)mode, coords, info, dst, cluster,
                                   mbar, multicast, (uint16_t)mask, cta_group, &err))
        return pa_raise(&err);
    Py_RETURN_NONE;
}

/* modes_store(machine, cta, thread, tmap, mode, coords, src, redop) */
static PyObject *py_modes_store(PyObject *mobj, PyObject *args)
{
    PyObject *coords_obj;
    TensorMapObject *tm;
    unsigned cta, thread, src;
    int mode, redop;
    if (!pa_args(args, "cta thread tmap mode coords src redop", "IIO!iOIi", &cta,
                 &thread, &TensorMapType, &tm, &mode, &coords_obj, &src, &redop) ||
        check_mode(mode))
        return NULL;
    if (redop >= PA_RED_COUNT)
        return PyErr_Format(PyExc_ValueError, "unknown reduction operation %d", redop);
    const pa_tensormap *map = pa_tm_decoded(tm);
    int32_t coords[PA_MAX_RANK];
    if (!map || parse_mode_coords(coords_obj, map, mode, coords))
        return NULL;
    pa_machine *m = pa_machine_enter(mobj);
    if (!m)
        return NULL;
    pa_error err;
    if (pa_issue_tensor_store(m, cta, thread, map, (pa_load_mode)mode, coords, src, redop >= 0,
                              redop >= 0 ? (pa_redop)redop : PA_RED_ADD, &err))
        return pa_raise(&err);
    Py_RETURN_NONE;
}

/* The runs a prefetch names, kept in C until the machine is left. */
typedef struct {
    uint64_t (*v)[3];
    size_t n, cap;
} range_list;

static int append_range(void *ctx, uint64_t row, uint64_t addr, uint64_t n, pa_error *err)
{
    range_list *r = ctx;
    if (r->n == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 64;
        void *p = realloc(r->v, cap * sizeof *r->v);
        if (!p)
            return pa_fail(err, PA_ERR_NO_MEMORY, "out of host memory recording a prefetch");
        r->v = p;
        r->cap = cap;
    }
    r->v[r->n][0] = row;
    r->v[r->n][1] = addr;
    r->v[r->n][2] = n;
    r->n++;
    return PA_OK;
}

/* prefetch_tensor(machine, tmap, mode, coords, info) -> [(row, address, bytes), ...] */
static PyObject *py_prefetch_tensor(PyObject *mobj, PyObject *args)
{
    PyObject *coords_obj, *info_obj;
    TensorMapObject *tm;
    int mode;
    if (!pa_args(args, "tmap mode coords info", "O!iOO", &TensorMapType, &tm, &mode,
                 &coords_obj, &info_obj) ||
        check_mode(mode))
        return NULL;
    const pa_tensormap *map = pa_tm_decoded(tm);
    int32_t coords[PA_MAX_RANK];
    uint16_t info[PA_MAX_RANK - 2];
    if (!map || parse_mode_coords(coords_obj, map, mode, coords) || parse_info(info_obj, map, mode, info))
        return NULL;
    pa_machine *m = pa_machine_enter(mobj);
    if (!m)
        return NULL;
    range_list rl = {NULL, 0, 0};
    pa_error err;
    int rc = pa_issue_prefetch_tensor(m, map, (pa_load_mode)mode, coords, info, append_range, &rl, &err);
    PyObject *out = rc ? pa_raise(&err) : PyList_New((Py_ssize_t)rl.n);
    for (size_t i = 0; out && i < rl.n; i++) {
        PyObject *t = Py_BuildValue("(KKK)", (unsigned long long)rl.v[i][0], (unsigned long long)rl.v[i][1],
                                    (unsigned long long)rl.v[i][2]);
        if (!t) {
            Py_CLEAR(out);
            break;
        }
        PyList_SET_ITEM(out, (Py_ssize_t)i, t);
    }
    free(rl.v);
    return out;
}

/* target_table() -> {feature name: (needs, [targets that have it])} */
static PyObject *py_target_table(PyObject *Py_UNUSED(mod), PyObject *Py_UNUSED(args))
{
    PyObject *d = PyDict_New();
    for (int f = 0; d && f < PA_FEAT_COUNT; f++) {
        PyObject *l = PyList_New(0);
        for (int t = 0; l && t < PA_TARGET_COUNT; t++) {
            if (!pa_target_has((pa_target)t, (pa_feature)f))
                continue;
            PyObject *s = PyUnicode_FromString(pa_target_name(t));
            if (!s || PyList_Append(l, s)) {
                Py_XDECREF(s);
                Py_CLEAR(l);
                break;
            }
            Py_DECREF(s);
        }
        PyObject *v = l ? Py_BuildValue("(sN)", pa_feature_needs((pa_feature)f), l) : NULL;
        if (!v || PyDict_SetItemString(d, pa_feature_name((pa_feature)f), v)) {
            Py_XDECREF(v);
            Py_CLEAR(d);
            break;
        }
        Py_DECREF(v);
    }
    return d;
}

static PyMethodDef modes_functions[] = {
    {"encode_im2col_wide", py_encode_im2col_wide, METH_VARARGS,
     "cuTensorMapEncodeIm2colWide(cls, ...) -> TensorMap"},
    {"target_table", py_target_table, METH_NOARGS, "which targets have which feature"},
    {NULL, NULL, 0, NULL}};

/* Methods of a Machine (machine_obj.c gathers every file's table). */
PyMethodDef pa_modes_machine_methods[] = {
    {"modes_load", py_modes_load, METH_VARARGS,
     "cp.async.bulk.tensor load in any mode (cta, thread, tmap, mode, coords, info, dst, cluster, mbar, "
     "multicast, mask)"},
    {"modes_store", py_modes_store, METH_VARARGS,
     "cp{.reduce}.async.bulk.tensor store in any mode (cta, thread, tmap, mode, coords, src, redop)"},
    {"prefetch_tensor", py_prefetch_tensor, METH_VARARGS,
     "cp.async.bulk.prefetch.tensor (tmap, mode, coords, info) -> [(row, addr, bytes)]"},
    {NULL, NULL, 0, NULL}};

int pa_module_add_modes(PyObject *m)
{
    return PyModule_AddFunctions(m, modes_functions);
}
