/* binding.h - shared declarations of the CPython binding (thin: convert, delegate, raise). */
#ifndef PA_BINDING_H
#define PA_BINDING_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "../include/ptxasync.h"

/* Exception classes, created at module init. */
extern PyObject *PaError, *PaEncodeError, *PaIllegalInstruction, *PaIllegalAddress,
    *PaMisalignedAddress, *PaHazard;

/* Raise the exception that matches err->code; returns NULL for `return pa_raise(&err);`. */
PyObject *pa_raise(const pa_error *err);

/* Read a sequence of at most max integers into out; returns count or -1. */
int pa_parse_i64_seq(PyObject *seq, int64_t *out, int max, const char *what);

/* The tensor-map object. */
typedef struct {
    PyObject_HEAD
    uint8_t bytes[PA_TENSORMAP_BYTES];
    pa_tensormap map;   /* decoded from bytes; kept in step with them */
    pa_error undecoded; /* code != 0: an edit left bytes no field can hold (map is stale) */
    Py_ssize_t exports; /* live buffer views */
} TensorMapObject;

/* The decoded map, or NULL with the decoding error raised. */
const pa_tensormap *pa_tm_decoded(TensorMapObject *tm);

extern PyTypeObject TensorMapType;
extern PyTypeObject MachineType;

int pa_module_add_tensormap(PyObject *m);
int pa_module_add_machine(PyObject *m);
int pa_module_add_batch(PyObject *m);

/* For binding files other than machine_obj.c: the core machine of a Machine
 * object, marked in use like any method's work (so other threads get an
 * exception, not a race, while the GIL is released); NULL with an exception
 * when it cannot be used now. Every success is paired with a release. */
pa_machine *pa_machine_acquire(PyObject *obj);
void pa_machine_release(PyObject *obj);

#endif
