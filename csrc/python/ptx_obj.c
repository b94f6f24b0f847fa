/* ptx_obj.c - ptxasync._core PTX functions: check (diagnostics) and print (canonical text). */
#include "binding.h"

#include "ptx/text/ptx.h"

#include <stdlib.h>
#include <string.h>

PyObject *pa_ptx_diags_list(const ptx_diags *ds)
{
    PyObject *out = PyList_New(ds->n);
    if (!out)
        return NULL;
    for (int i = 0; i < ds->n; i++) {
        const ptx_diag *d = &ds->d[i];
        /* a message quotes the text: decode it leniently */
        PyObject *msg = PyUnicode_DecodeUTF8(d->msg, (Py_ssize_t)strlen(d->msg), "replace");
        PyObject *t = msg ? Py_BuildValue("(siiN)", d->error ? "error" : "warning", d->line, d->col, msg) : NULL;
        if (!t) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, i, t);
    }
    return out;
}

/* ptx_check(text: bytes, ptxas: int = 135) -> [(severity, line, column, message)] */
static PyObject *py_ptx_check(PyObject *Py_UNUSED(mod), PyObject *args)
{
    PyObject *arg;
    int ptxas = PTX_PTXAS_NEWEST;
    if (!PyArg_ParseTuple(args, "O|i:ptx_check", &arg, &ptxas))
        return NULL;
    if (ptxas != 130 && ptxas != 135) {
        PyErr_Format(PyExc_ValueError, "ptxas release %d is not modelled (130 or 135)", ptxas);
        return NULL;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE))
        return NULL;
    ptx_module m;
    ptx_diags ds = {0};
    size_t len = (size_t)view.len;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = ptx_parse(&m, view.buf, (size_t)view.len, &ds);
    if (!rc && !ds.nerrors)
        ptx_check_as(&m, ptxas, &ds);
    Py_END_ALLOW_THREADS
    ptx_module_free(&m);
    PyBuffer_Release(&view);
    if (rc) {
        ptx_diags_free(&ds);
        return PyErr_Format(PyExc_MemoryError, "out of host memory checking a PTX module of %zu bytes", len);
    }
    PyObject *out = pa_ptx_diags_list(&ds);
    ptx_diags_free(&ds);
    return out;
}

/* ptx_print(text: bytes) -> (canonical text or None, [(severity, line, column, message)]) */
static PyObject *py_ptx_print(PyObject *Py_UNUSED(mod), PyObject *arg)
{
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE))
        return NULL;
    ptx_module m;
    ptx_diags ds = {0};
    char *text = NULL;
    size_t n = 0, len = (size_t)view.len;
    int rc = ptx_parse(&m, view.buf, (size_t)view.len, &ds);
    if (!rc && !ds.nerrors) {
        text = ptx_print(&m, &n);
        if (!text)
            rc = -1;
    }
    ptx_module_free(&m);
    PyBuffer_Release(&view);
    if (rc) {
        ptx_diags_free(&ds);
        return PyErr_Format(PyExc_MemoryError, "out of host memory formatting a PTX module of %zu bytes", len);
    }
    PyObject *diags = pa_ptx_diags_list(&ds);
    ptx_diags_free(&ds);
    if (!diags) {
        free(text);
        return NULL;
    }
    PyObject *s = text ? PyUnicode_DecodeUTF8(text, (Py_ssize_t)n, "replace") : Py_NewRef(Py_None);
    free(text);
    if (!s) {
        Py_DECREF(diags);
        return NULL;
    }
    return Py_BuildValue("(NN)", s, diags);
}

static PyMethodDef ptx_methods[] = {
    {"ptx_check", py_ptx_check, METH_VARARGS,
     "ptx_check(text: bytes, ptxas: int = 135) -> [(severity, line, column, message)]: validate as "
     "ptxas 13.0 (130) or 13.5 (135) does"},
    {"ptx_print", py_ptx_print, METH_O,
     "ptx_print(text: bytes) -> (canonical PTX text or None, syntax diagnostics)"},
    {NULL, NULL, 0, NULL}};

int pa_module_add_ptx(PyObject *m)
{
    return PyModule_AddFunctions(m, ptx_methods);
}
