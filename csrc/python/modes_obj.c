/* modes_obj.c - cuTensorMapEncodeIm2colWide and the target table (module
 * functions; the Python classes call them). The copies in every mode are
 * Machine methods (tensor_obj.c). */
#include "binding.h"


int pa_parse_target(const char *name)
{
    int t = pa_target_parse(name);
    if (t < 0) {
        char known[256];
        pa_target_list(known, sizeof known);
        PyErr_Format(PyExc_ValueError, "unknown target '%s' (known: %s)", name, known);
    }
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

int pa_module_add_modes(PyObject *m)
{
    return PyModule_AddFunctions(m, modes_functions);
}
