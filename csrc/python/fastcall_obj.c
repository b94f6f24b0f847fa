/* fastcall_obj.c - the common form of Machine.cp_async_bulk_tensor_load in C.
 *
 * A loop that issues one small tile load at a time spends most of its time
 * in the call itself. _core.tile_load_method(f) wraps the Python method f
 * (every form, every check) as a method descriptor: a call that passes
 * only (tmap, coords, dst, mbar) and optionally cta and thread - the plain
 * .tile load into shared::cta, which is what the defaults of the other
 * parameters say - goes straight to the binding, with the same checks and
 * the same messages; any other call is f's. help() and inspect see f.
 */
#include "binding.h"

typedef struct {
    PyObject_HEAD
    PyObject *func;              /* the Python method: every form */
    vectorcallfunc vectorcall;
} TileLoadMethod;

static PyObject *str_m, *str_cta, *str_thread;

/* Is key the name cta (1) or thread (2)? 0 if neither. */
static int which_keyword(PyObject *key)
{
    if (key == str_cta || PyUnicode_Compare(key, str_cta) == 0)
        return 1;
    if (key == str_thread || PyUnicode_Compare(key, str_thread) == 0)
        return 2;
    PyErr_Clear();
    return 0;
}

/* (self, tmap, coords, dst, mbar[, cta[, thread]]) with cta and thread also
 * by keyword: the common form. */
static PyObject *tlm_vectorcall(TileLoadMethod *tlm, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    PyObject *opt[2] = {NULL, NULL};   /* cta, thread */
    /* a map held in global memory (an address) takes the Python path */
    int common = nargs >= 5 && nargs <= 7 && PyObject_TypeCheck(args[1], &TensorMapType);
    for (Py_ssize_t i = 5; common && i < nargs; i++)
        opt[i - 5] = args[i];
    for (Py_ssize_t k = 0; common && k < nkw; k++) {
        int w = which_keyword(PyTuple_GET_ITEM(kwnames, k));
        common = w && !opt[w - 1];
        if (common)
            opt[w - 1] = args[nargs + k];
    }
    if (!common)
        return PyObject_Vectorcall(tlm->func, args, nargsf, kwnames);
    uint32_t cta = 0, thread = 0;
    if ((opt[0] && pa_u32(opt[0], "cta", &cta)) || (opt[1] && pa_u32(opt[1], "thread", &thread)))
        return NULL;
    PyObject *core = PyObject_GetAttr(args[0], str_m);
    if (!core)
        return NULL;
    PyObject *res = PyObject_TypeCheck(core, &MachineType)
                        ? pa_machine_tile_load(core, cta, thread, args[1], args[2], args[3], args[4])
                        : PyErr_Format(PyExc_TypeError, "%.100s._m is not a ptxasync._core.Machine",
                                       Py_TYPE(args[0])->tp_name);
    Py_DECREF(core);
    return res;
}

static PyObject *tlm_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    PyObject *func;
    if (kw && PyDict_GET_SIZE(kw)) {
        PyErr_SetString(PyExc_TypeError, "tile_load_method() takes no keyword arguments");
        return NULL;
    }
    if (!PyArg_UnpackTuple(args, "tile_load_method", 1, 1, &func))
        return NULL;
    if (!PyCallable_Check(func))
        return PyErr_Format(PyExc_TypeError, "tile_load_method() needs a function, not %.100s",
                            Py_TYPE(func)->tp_name);
    TileLoadMethod *self = (TileLoadMethod *)type->tp_alloc(type, 0);
    if (!self)
        return NULL;
    Py_INCREF(func);
    self->func = func;
    self->vectorcall = (vectorcallfunc)tlm_vectorcall;
    return (PyObject *)self;
}

static void tlm_dealloc(TileLoadMethod *self)
{
    Py_XDECREF(self->func);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Machine.method is the descriptor; machine.method a bound method. */
static PyObject *tlm_get(PyObject *self, PyObject *obj, PyObject *Py_UNUSED(type))
{
    if (!obj || obj == Py_None) {
        Py_INCREF(self);
        return self;
    }
    return PyMethod_New(self, obj);
}

/* __doc__, __name__, __qualname__ and __wrapped__ are the function's (data
 * descriptors of the type, so pydoc and inspect find them too). */
static PyObject *tlm_attr(TileLoadMethod *self, void *name)
{
    return PyObject_GetAttrString(self->func, (const char *)name);
}

static PyObject *tlm_wrapped(TileLoadMethod *self, void *Py_UNUSED(c))
{
    Py_INCREF(self->func);
    return self->func;
}

static PyGetSetDef tlm_getset[] = {
    {"__doc__", (getter)tlm_attr, NULL, NULL, "__doc__"},
    {"__name__", (getter)tlm_attr, NULL, NULL, "__name__"},
    {"__qualname__", (getter)tlm_attr, NULL, NULL, "__qualname__"},
    {"__wrapped__", (getter)tlm_wrapped, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject TileLoadMethodType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ptxasync._core.tile_load_method",
    .tp_basicsize = sizeof(TileLoadMethod),
    .tp_dealloc = (destructor)tlm_dealloc,
    .tp_vectorcall_offset = offsetof(TileLoadMethod, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_descr_get = tlm_get,
    .tp_getset = tlm_getset,
    .tp_new = tlm_new,
};

int pa_module_add_fastcall(PyObject *m)
{
    if (!(str_m = PyUnicode_InternFromString("_m")) || !(str_cta = PyUnicode_InternFromString("cta")) ||
        !(str_thread = PyUnicode_InternFromString("thread")) || PyType_Ready(&TileLoadMethodType) < 0)
        return -1;
    Py_INCREF(&TileLoadMethodType);
    if (PyModule_AddObject(m, "tile_load_method", (PyObject *)&TileLoadMethodType) < 0) {
        Py_DECREF(&TileLoadMethodType);
        return -1;
    }
    return 0;
}
