/* machine_obj.h - the layout of _core.Machine, shared by the files that add its methods. */
#ifndef PA_MACHINE_OBJ_H
#define PA_MACHINE_OBJ_H

#include "binding.h"

typedef struct {
    uint64_t id;
    Py_buffer view;
} HeldBuffer;

typedef struct {
    PyObject_HEAD
    pa_machine m;
    int ready;
    int busy;
    HeldBuffer *held;
    size_t nheld, capheld;
} MachineObject;

/* Add the checker's methods (watch_obj.c) to the ready Machine type. */
int pa_machine_add_watch_methods(PyTypeObject *type);

#endif
