/* mbarrier_obj.c - _core.Mbarrier: an mbarrier object in a CTA's shared
 * memory, with the operations a pipeline's loop calls (arrive,
 * arrive_expect_tx, test_wait, try_wait) as C methods: one call from Python
 * straight to the core. ptxasync.Mbarrier subclasses it for the rest.
 *
 * The checks and their messages are those of the Python methods they
 * replace: a parity that is not 0 or 1 is a ValueError naming it, a tx count
 * outside .u32 a ValueError, a non-integer a TypeError naming the parameter.
 */
#include "binding.h"

#include <structmember.h>

typedef struct {
    PyObject_HEAD
    PyObject *machine;   /* the _core.Machine */
    PyObject *cta;       /* the executing CTA's rank */
    PyObject *addr;      /* the barrier's shared address as that CTA sees it */
    uint32_t cta_u, addr_u;   /* their values, where known (below) */
    int known;                /* KNOWN_CTA | KNOWN_ADDR */
} MbarrierObject;

enum { KNOWN_CTA = 1, KNOWN_ADDR = 2 };

/* An exact int never changes, so it is kept converted; any other object is
 * converted at each use, so its __index__ or its error runs then. */
static void learn(MbarrierObject *self)
{
    self->known = (pa_exact_u32(self->cta, &self->cta_u) ? KNOWN_CTA : 0) |
                  (pa_exact_u32(self->addr, &self->addr_u) ? KNOWN_ADDR : 0);
}

/* Both are plain attributes (a test may point one elsewhere); each call
 * converts them as the operands they are (an exact int once, when set). */
static int operands(MbarrierObject *self, uint32_t *cta, uint32_t *addr)
{
    if (self->known == (KNOWN_CTA | KNOWN_ADDR) && self->machine) {
        *cta = self->cta_u;
        *addr = self->addr_u;
        return 0;
    }
    if (!self->machine || !self->cta || !self->addr) {
        PyErr_SetString(PyExc_RuntimeError, "Mbarrier is not initialised");
        return -1;
    }
    PyObject *c = self->cta, *a = self->addr;
    Py_INCREF(c);   /* an __index__ may reassign the attributes meanwhile */
    Py_INCREF(a);
    int rc = pa_u32(c, "cta", cta) || pa_u32(a, "addr", addr) ? -1 : 0;
    Py_DECREF(c);
    Py_DECREF(a);
    return rc;
}

/* Mbarrier(machine, cta, addr): machine is a _core.Machine (ptxasync.Machine is one). */
static int mb_init(MbarrierObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"machine", "cta", "addr", NULL};
    PyObject *machine, *cta, *addr;
    if (!pa_args_kw(args, kw, kwlist, "OOO", &machine, &cta, &addr))
        return -1;
    if (!PyObject_TypeCheck(machine, &MachineType)) {
        PyErr_Format(PyExc_TypeError, "machine must be a Machine, not %.100s", Py_TYPE(machine)->tp_name);
        return -1;
    }
    Py_INCREF(machine);
    Py_XSETREF(self->machine, machine);
    Py_INCREF(cta);
    Py_XSETREF(self->cta, cta);
    Py_INCREF(addr);
    Py_XSETREF(self->addr, addr);
    learn(self);
    return 0;
}

static int mb_traverse(MbarrierObject *self, visitproc visit, void *arg)
{
    Py_VISIT(self->machine);
    Py_VISIT(self->cta);
    Py_VISIT(self->addr);
    return 0;
}

static int mb_clear(MbarrierObject *self)
{
    self->known = 0;
    Py_CLEAR(self->machine);
    Py_CLEAR(self->cta);
    Py_CLEAR(self->addr);
    return 0;
}

static void mb_dealloc(MbarrierObject *self)
{
    PyObject_GC_UnTrack(self);
    mb_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* A phase parity: 0 or 1 (anything equal to them, then an integer). */
static int parse_parity(PyObject *p, unsigned *out)
{
    if (PyLong_CheckExact(p)) {
        int overflow;
        long v = PyLong_AsLongAndOverflow(p, &overflow);   /* an exact int sets no error */
        if (!overflow && (v == 0 || v == 1)) {
            *out = (unsigned)v;
            return 0;
        }
    } else {
        PyObject *one = PyLong_FromLong(1), *zero = PyLong_FromLong(0);
        int is1 = one ? PyObject_RichCompareBool(p, one, Py_EQ) : -1;
        int is0 = is1 == 0 && zero ? PyObject_RichCompareBool(p, zero, Py_EQ) : 0;
        Py_XDECREF(one);
        Py_XDECREF(zero);
        if (is1 < 0 || is0 < 0)
            PyErr_Clear();   /* not comparable: not a parity */
        else if (is1 || is0)
            return pa_check_int(p, "parity", 0, 32) ? -1 : (*out = (unsigned)is1, 0);
    }
    PyErr_Format(PyExc_ValueError, "phase parity %R must be 0 or 1", p);
    return -1;
}

/* A txCount operand (.u32). */
static int parse_tx(PyObject *t, unsigned *out)
{
    if (PyLong_CheckExact(t)) {   /* the loop's call: no Python-level conversion */
        int overflow = 0;   /* an exact int sets no error */
        long long x = PyLong_AsLongLongAndOverflow(t, &overflow);
        if (!overflow && x >= 0 && x <= UINT32_MAX) {
            *out = (unsigned)x;
            return 0;
        }
    }
    if (PyFloat_Check(t) || !PyIndex_Check(t)) {
        PyErr_Format(PyExc_TypeError, "tx must be an integer, not %.100s", Py_TYPE(t)->tp_name);
        return -1;
    }
    PyObject *v = PyNumber_Index(t);
    if (!v)
        return -1;
    int overflow;
    long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow || x < 0 || x > UINT32_MAX) {
        PyErr_Format(PyExc_ValueError, "tx count %S does not fit the .u32 operand", v);
        Py_DECREF(v);
        return -1;
    }
    Py_DECREF(v);
    *out = (unsigned)x;
    return 0;
}

/* The loop's call: one positional operand, thread left at 0 (no parsing). */
static int one_operand(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, PyObject **operand)
{
    if (nargs != 1 || kwnames)
        return 0;
    *operand = args[0];
    return 1;
}

static PyObject *arrive(MbarrierObject *self, uint32_t cta, uint32_t addr, uint32_t count, uint32_t tx,
                        uint32_t thread)
{
    PyObject *machine = self->machine;
    Py_INCREF(machine);
    PyObject *res = pa_machine_mbar_arrive(machine, cta, addr, count, tx, 0, thread);
    Py_DECREF(machine);
    return res;
}

static PyObject *mb_arrive(MbarrierObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    unsigned count = 1, thread = 0;
    uint32_t cta, addr;
    if (!pa_fast_args(args, nargs, kwnames, "arrive", "count thread", "|I$I", &count, &thread) ||
        operands(self, &cta, &addr))
        return NULL;
    return arrive(self, cta, addr, count, 0, thread);
}

static PyObject *mb_arrive_expect_tx(MbarrierObject *self, PyObject *const *args, Py_ssize_t nargs,
                                     PyObject *kwnames)
{
    PyObject *tx_obj;
    unsigned tx, thread = 0;
    uint32_t cta, addr;
    if (!one_operand(args, nargs, kwnames, &tx_obj) &&
        !pa_fast_args(args, nargs, kwnames, "arrive_expect_tx", "tx thread", "O|$I", &tx_obj, &thread))
        return NULL;
    if (parse_tx(tx_obj, &tx) || operands(self, &cta, &addr))
        return NULL;
    return arrive(self, cta, addr, 1, tx, thread);
}

static PyObject *wait(MbarrierObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                      const char *name, int is_try)
{
    PyObject *parity_obj;
    unsigned parity, thread = 0;
    uint32_t cta, addr;
    if (!one_operand(args, nargs, kwnames, &parity_obj) &&
        !pa_fast_args(args, nargs, kwnames, name, "parity thread", "O|$I", &parity_obj, &thread))
        return NULL;
    if (parse_parity(parity_obj, &parity) || operands(self, &cta, &addr))
        return NULL;
    PyObject *machine = self->machine;
    Py_INCREF(machine);   /* kept while the core may run without the GIL */
    PyObject *res = pa_machine_mbar_wait(machine, cta, addr, parity, thread, is_try);
    Py_DECREF(machine);
    return res;
}

static PyObject *mb_test_wait(MbarrierObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return wait(self, args, nargs, kwnames, "test_wait", 0);
}

static PyObject *mb_try_wait(MbarrierObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return wait(self, args, nargs, kwnames, "try_wait", 1);
}

int pa_mbar_known_addr(PyObject *obj, uint32_t *addr)
{
    static PyTypeObject *sub;
    if (!pa_type_check(obj, &MbarrierType, &sub) || !(((MbarrierObject *)obj)->known & KNOWN_ADDR))
        return 0;
    *addr = ((MbarrierObject *)obj)->addr_u;
    return 1;
}

int pa_mbar_operand(PyObject *obj, uint32_t *addr)
{
    static PyTypeObject *sub;
    if (!pa_type_check(obj, &MbarrierType, &sub))
        return pa_u32(obj, "mbar", addr);
    if (((MbarrierObject *)obj)->known & KNOWN_ADDR) {
        *addr = ((MbarrierObject *)obj)->addr_u;
        return 0;
    }
    PyObject *a = ((MbarrierObject *)obj)->addr;
    if (!a) {
        PyErr_SetString(PyExc_RuntimeError, "Mbarrier is not initialised");
        return -1;
    }
    Py_INCREF(a);   /* held while an __index__ may run */
    int rc = pa_u32(a, "mbar", addr);
    Py_DECREF(a);
    return rc;
}

#define FAST (METH_FASTCALL | METH_KEYWORDS)

static PyMethodDef mb_methods[] = {
    {"arrive", (PyCFunction)(void (*)(void))mb_arrive, FAST,
     "arrive($self, count=1, *, thread=0)\n--\n\n"
     "mbarrier.arrive.shared::cta.b64 state, [addr]{, count}; returns the 64-bit state."},
    {"arrive_expect_tx", (PyCFunction)(void (*)(void))mb_arrive_expect_tx, FAST,
     "arrive_expect_tx($self, tx, *, thread=0)\n--\n\n"
     "mbarrier.arrive.expect_tx.shared::cta.b64 state, [addr], txCount; returns the state.\n"
     "No count operand: ptxas rejects one (\"Arguments mismatch\", golden R12)."},
    {"test_wait", (PyCFunction)(void (*)(void))mb_test_wait, FAST,
     "test_wait($self, parity, *, thread=0)\n--\n\n"
     "mbarrier.test_wait.parity: non-blocking, advances nothing. ``why(parity)``\nexplains a False."},
    {"try_wait", (PyCFunction)(void (*)(void))mb_try_wait, FAST,
     "try_wait($self, parity, *, thread=0)\n--\n\n"
     "mbarrier.try_wait.parity: completes the pending operations that signal\n"
     "this barrier (in policy order) until the phase completes or none is left.\n"
     "``why(parity)`` explains a False."},
    {NULL, NULL, 0, NULL}};

static PyMemberDef mb_members[] = {
    {"_m", T_OBJECT, offsetof(MbarrierObject, machine), READONLY, "the machine"},
    {NULL, 0, 0, 0, NULL}};

/* cta / addr: plain attributes, as members were (AttributeError once deleted). */
static PyObject *get_field(PyObject **field, const char *name)
{
    if (!*field)
        return PyErr_Format(PyExc_AttributeError, "'Mbarrier' object has no attribute '%s'", name);
    Py_INCREF(*field);
    return *field;
}

static int set_field(MbarrierObject *self, PyObject **field, PyObject *value, const char *name)
{
    if (!value && !*field) {
        PyErr_Format(PyExc_AttributeError, "'Mbarrier' object has no attribute '%s'", name);
        return -1;
    }
    Py_XINCREF(value);
    Py_XSETREF(*field, value);
    learn(self);
    return 0;
}

static PyObject *mb_get_cta(MbarrierObject *self, void *Py_UNUSED(c))
{
    return get_field(&self->cta, "cta");
}

static int mb_set_cta(MbarrierObject *self, PyObject *value, void *Py_UNUSED(c))
{
    return set_field(self, &self->cta, value, "cta");
}

static PyObject *mb_get_addr(MbarrierObject *self, void *Py_UNUSED(c))
{
    return get_field(&self->addr, "addr");
}

static int mb_set_addr(MbarrierObject *self, PyObject *value, void *Py_UNUSED(c))
{
    return set_field(self, &self->addr, value, "addr");
}

static PyGetSetDef mb_getset[] = {
    {"cta", (getter)mb_get_cta, (setter)mb_set_cta, "the executing CTA's rank", NULL},
    {"addr", (getter)mb_get_addr, (setter)mb_set_addr, "the shared address, as that CTA sees it", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject MbarrierType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ptxasync._core.Mbarrier",
    .tp_basicsize = sizeof(MbarrierObject),
    .tp_dealloc = (destructor)mb_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "An mbarrier object in a CTA's shared memory: Mbarrier(machine, cta, addr).",
    .tp_traverse = (traverseproc)mb_traverse,
    .tp_clear = (inquiry)mb_clear,
    .tp_methods = mb_methods,
    .tp_members = mb_members,
    .tp_getset = mb_getset,
    .tp_init = (initproc)mb_init,
    .tp_new = PyType_GenericNew,
};

int pa_module_add_mbarrier(PyObject *m)
{
    if (PyType_Ready(&MbarrierType) < 0)
        return -1;
    Py_INCREF(&MbarrierType);
    if (PyModule_AddObject(m, "Mbarrier", (PyObject *)&MbarrierType) < 0) {
        Py_DECREF(&MbarrierType);
        return -1;
    }
    return 0;
}
