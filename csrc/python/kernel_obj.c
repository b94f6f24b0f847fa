/* kernel_obj.c - _core.PtxKernel: a PTX module parsed, checked and lowered
 * once (csrc/core/ptx/exec/lower.c), launched on a _core.Machine by the
 * interpreter (csrc/core/ptx/exec/launch.c) without the GIL. */
#include "binding.h"

#include "ptx/exec/launch.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    PyObject_HEAD
    char *text;
    ptx_module mod;
    pi_prog prog;
    int ready;
} KernelObject;

static void kernel_dealloc(KernelObject *self)
{
    if (self->ready) {
        pi_prog_free(&self->prog);
        ptx_module_free(&self->mod);
    }
    free(self->text);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyTypeObject KernelType;

/* ptx_kernel(text: bytes, entry: str | None) -> (PtxKernel | None, [diagnostics]) */
static PyObject *py_ptx_kernel(PyObject *Py_UNUSED(mod), PyObject *args)
{
    Py_buffer view;
    const char *entry = NULL;
    if (!PyArg_ParseTuple(args, "y*z", &view, &entry))
        return NULL;
    KernelObject *k = PyObject_New(KernelObject, &KernelType);
    if (!k) {
        PyBuffer_Release(&view);
        return NULL;
    }
    k->ready = 0;
    k->text = malloc((size_t)view.len + 1);
    if (!k->text) {
        Py_ssize_t n = view.len;
        PyBuffer_Release(&view);
        Py_DECREF(k);
        return PyErr_Format(PyExc_MemoryError, "out of host memory for a copy of the PTX text (%zd bytes)", n);
    }
    memcpy(k->text, view.buf, (size_t)view.len);   /* (the module's spans point into it) */
    k->text[view.len] = 0;
    size_t len = (size_t)view.len;
    PyBuffer_Release(&view);
    ptx_diags ds = {0};
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = ptx_parse(&k->mod, k->text, len, &ds);
    if (!rc && !ds.nerrors)
        ptx_check(&k->mod, &ds);
    if (!rc && !ds.nerrors)
        rc = pi_lower(&k->prog, &k->mod, entry, &ds);
    else
        memset(&k->prog, 0, sizeof k->prog);
    Py_END_ALLOW_THREADS
    k->ready = 1;
    if (rc) {
        ptx_diags_free(&ds);
        Py_DECREF(k);
        return PyErr_Format(PyExc_MemoryError, "out of host memory parsing or lowering the PTX module (%zu bytes "
                            "of text)", len);
    }
    PyObject *dl = pa_ptx_diags_list(&ds);
    int bad = ds.nerrors > 0;
    ptx_diags_free(&ds);
    if (!dl) {
        Py_DECREF(k);
        return NULL;
    }
    if (bad) {
        Py_DECREF(k);
        return Py_BuildValue("(ON)", Py_None, dl);
    }
    return Py_BuildValue("(NN)", (PyObject *)k, dl);
}

/* params -> [(name, offset, size, is_array)] */
static PyObject *k_params(KernelObject *self, void *Py_UNUSED(c))
{
    PyObject *out = PyList_New(self->prog.nparams);
    if (!out)
        return NULL;
    for (uint32_t i = 0; i < self->prog.nparams; i++) {
        const pi_param *p = &self->prog.params[i];
        PyObject *t = Py_BuildValue("(sIIi)", p->name, p->offset, p->size, p->array);
        if (!t) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, i, t);
    }
    return out;
}

/* variables -> [(name, space 'g' / 'c' / 'l', offset, bytes)]: module variables at offsets of
   module_image, .local ones at local addresses */
static PyObject *k_variables(KernelObject *self, void *Py_UNUSED(c))
{
    PyObject *out = PyList_New(self->prog.nvars);
    if (!out)
        return NULL;
    for (uint32_t i = 0; i < self->prog.nvars; i++) {
        const pi_var *v = &self->prog.vars[i];
        PyObject *t = Py_BuildValue("(sCKK)", v->name, v->space, (unsigned long long)v->offset,
                                    (unsigned long long)v->bytes);
        if (!t) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, i, t);
    }
    return out;
}

/* module_image -> (bytes: the .const then .global variables as initialised, const_bytes) */
static PyObject *k_module_image(KernelObject *self, void *Py_UNUSED(c))
{
    return Py_BuildValue("(y#K)", (const char *)self->prog.gimage, (Py_ssize_t)self->prog.gvar_bytes,
                         (unsigned long long)self->prog.const_bytes);
}

/* image_at(base) -> bytes: the module image as loaded at global address base */
static PyObject *k_image_at(KernelObject *self, PyObject *arg)
{
    unsigned long long base = PyLong_AsUnsignedLongLong(arg);
    if (base == (unsigned long long)-1 && PyErr_Occurred())
        return NULL;
    PyObject *out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)self->prog.gvar_bytes);
    if (out && self->prog.gvar_bytes)
        pi_image_at(&self->prog, base, (uint8_t *)PyBytes_AS_STRING(out));
    return out;
}

static PyObject *k_entry(KernelObject *self, void *Py_UNUSED(c))
{
    return PyUnicode_FromString(self->prog.entry ? self->prog.entry : "");
}

static PyObject *k_info(KernelObject *self, void *Py_UNUSED(c))
{
    return Py_BuildValue("{sI,sI,sI,sI,sI,sI,si}", "instructions", self->prog.nins, "registers", self->prog.nregs,
                         "param_bytes", self->prog.param_bytes, "static_smem", self->prog.static_smem,
                         "dynamic_smem_offset", self->prog.dyn_smem, "functions", self->prog.nfuncs,
                         "uses_heap", self->prog.uses_heap);
}

static int dims(PyObject *o, uint32_t out[3], const char *name)
{
    int64_t v[3] = {1, 1, 1};
    int n = pa_parse_i64_seq(o, v, 3, name);
    if (n < 0)
        return -1;
    for (int i = 0; i < 3; i++) {
        if (v[i] < 1 || v[i] > 0x7FFFFFFF) {
            PyErr_Format(PyExc_ValueError, "%s[%d] = %lld must be in [1, 2^31)", name, i, (long long)v[i]);
            return -1;
        }
        out[i] = (uint32_t)v[i];
    }
    return 0;
}

/* printf's output as [((ctaid x, y, z), (tid x, y, z), text)], in the launch's order */
static PyObject *printf_list(const pi_stats *st)
{
    PyObject *out = PyList_New(st->nprints);
    if (!out)
        return NULL;
    for (uint32_t i = 0; i < st->nprints; i++) {
        const pi_print *p = &st->prints[i];
        PyObject *t = Py_BuildValue("((III)(III)s#)", p->ctaid[0], p->ctaid[1], p->ctaid[2], p->tid[0], p->tid[1],
                                    p->tid[2], p->text, (Py_ssize_t)p->len);
        if (!t) {      /* not UTF-8: the bytes as Latin-1 */
            PyErr_Clear();
            t = Py_BuildValue("((III)(III)N)", p->ctaid[0], p->ctaid[1], p->ctaid[2], p->tid[0], p->tid[1], p->tid[2],
                              PyUnicode_DecodeLatin1(p->text, (Py_ssize_t)p->len, NULL));
        }
        if (!t) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, i, t);
    }
    return out;
}

/* launch(machine, grid, block, cluster, params: bytes, seed, max_burst, max_instructions, max_pending
   [, gvar_base, heap_base, heap_bytes]) -> (instructions, ext, steps, printf, printf_dropped) */
static PyObject *k_launch(KernelObject *self, PyObject *args)
{
    PyObject *machine, *grid, *block, *cluster;
    Py_buffer params;
    unsigned long long seed, maxi, gbase = 0, hbase = 0, hbytes = 0;
    unsigned burst, maxp;
    if (!PyArg_ParseTuple(args, "OOOOy*KIKI|KKK", &machine, &grid, &block, &cluster, &params, &seed, &burst, &maxi,
                          &maxp, &gbase, &hbase, &hbytes))
        return NULL;
    pi_launch_args a;
    memset(&a, 0, sizeof a);
    if (dims(grid, a.grid, "grid") || dims(block, a.block, "block") || dims(cluster, a.cluster, "cluster")) {
        PyBuffer_Release(&params);
        return NULL;
    }
    if ((uint64_t)params.len != self->prog.param_bytes) {
        PyBuffer_Release(&params);
        return PyErr_Format(PyExc_ValueError, "the parameter block is %zd bytes; the kernel's is %u", params.len,
                            self->prog.param_bytes);
    }
    /* a private copy: nothing Python owns is read without the GIL */
    uint8_t *pb = malloc(params.len ? (size_t)params.len : 1);
    if (!pb) {
        PyBuffer_Release(&params);
        return PyErr_Format(PyExc_MemoryError, "out of host memory for the parameter block (%u bytes)",
                            self->prog.param_bytes);
    }
    memcpy(pb, params.buf, (size_t)params.len);
    PyBuffer_Release(&params);
    a.params = pb;
    a.seed = seed;
    a.max_burst = burst;
    a.max_instructions = maxi;
    a.max_pending = maxp;
    a.gvar_base = gbase;
    a.heap_base = hbase;
    a.heap_bytes = hbase ? hbytes : 0;
    pa_machine *m = pa_machine_enter(machine);
    if (!m) {
        free(pb);
        return NULL;
    }
    pa_error err;
    memset(&err, 0, sizeof err);
    pi_stats st;
    memset(&st, 0, sizeof st);
    int rc;
    UNLOCKED(machine, rc = pi_launch(m, &self->prog, &a, &st, &err));
    free(pb);
    PyObject *prints = printf_list(&st);
    pi_stats_free(&st);
    if (!prints)
        return NULL;
    if (rc) {
        /* the output made before the error travels with it: exc.printf */
        pa_raise(&err);
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        PyErr_NormalizeException(&type, &value, &tb);
        if (value && PyObject_SetAttrString(value, "printf", prints))
            PyErr_Clear();
        Py_DECREF(prints);
        PyErr_Restore(type, value, tb);
        return NULL;
    }
    return Py_BuildValue("(KKKNI)", (unsigned long long)st.instructions, (unsigned long long)st.ext,
                         (unsigned long long)st.steps, prints, st.print_dropped);
}

static PyMethodDef kernel_methods[] = {
    {"launch", (PyCFunction)k_launch, METH_VARARGS,
     "launch(machine, grid, block, cluster, params, seed, max_burst, max_instructions, max_pending[, gvar_base, "
     "heap_base, heap_bytes]) -> (instructions, ext, steps, printf, printf_dropped)"},
    {"image_at", (PyCFunction)k_image_at, METH_O,
     "image_at(base) -> bytes: the module image loaded at global address base (variables' addresses in it made "
     "absolute)"},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef kernel_getset[] = {
    {"params", (getter)k_params, NULL, "[(name, offset, size, is_array)]", NULL},
    {"entry", (getter)k_entry, NULL, "the .entry's name", NULL},
    {"variables", (getter)k_variables, NULL, "[(name, space, offset, bytes)]", NULL},
    {"module_image", (getter)k_module_image, NULL, "(image bytes, const bytes)", NULL},
    {"info", (getter)k_info, NULL, "sizes of the lowered program", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject KernelType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ptxasync._core.PtxKernel",
    .tp_basicsize = sizeof(KernelObject),
    .tp_dealloc = (destructor)kernel_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A PTX .entry lowered for the interpreter (made by ptx_kernel).",
    .tp_methods = kernel_methods,
    .tp_getset = kernel_getset,
};

static PyMethodDef module_methods[] = {
    {"ptx_kernel", py_ptx_kernel, METH_VARARGS,
     "ptx_kernel(text: bytes, entry: str | None) -> (PtxKernel or None, diagnostics)"},
    {NULL, NULL, 0, NULL}};

int pa_module_add_kernel(PyObject *m)
{
    if (PyType_Ready(&KernelType) < 0)
        return -1;
    Py_INCREF(&KernelType);
    if (PyModule_AddObject(m, "PtxKernel", (PyObject *)&KernelType) < 0) {
        Py_DECREF(&KernelType);
        return -1;
    }
    return PyModule_AddFunctions(m, module_methods);
}
